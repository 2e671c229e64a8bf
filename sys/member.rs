//! Member block devices, opened read-write and claimed exclusively for one array.

use super::pagebuf::PageBuf;
use super::{
    BlkStatus, BLK_FEAT_FUA, BLK_FEAT_NOWAIT, BLK_FEAT_WRITE_CACHE, BLK_FEAT_ZONED, REQ_FAILFAST,
    REQ_FUA, REQ_META, REQ_PREFLUSH, REQ_SYNC,
};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{bindings, error::from_err_ptr, page::Page, prelude::*, str::CStr};

/// `BLK_OPEN_READ | BLK_OPEN_WRITE`; the macros carry `__force` casts and are not generated.
const BLK_OPEN_READ_WRITE: bindings::blk_mode_t = (1 << 0) | (1 << 1);

/// The identity an array claims its members with.
///
/// The block layer lets the same holder claim a device twice, so an array also compares
/// [`MemberDev::devt`]s to refuse a member given twice.
pub struct Holder(KBox<u8>);

impl Holder {
    /// A new, unique holder.
    pub fn new() -> Result<Self> {
        Ok(Self(KBox::new(0, GFP_KERNEL)?))
    }

    fn as_ptr(&self) -> *mut core::ffi::c_void {
        (&*self.0 as *const u8).cast_mut().cast()
    }
}

/// Maximum length of a member's kernel name, e.g. `vdb` or `nvme0n1p2`.
const NAME_LEN: usize = 32;

/// A member block device, open and exclusively claimed.
///
/// # Invariants
///
/// `file` is a block-device file from `bdev_file_open_by_path`, owned by this value and closed
/// in `drop`; `bdev` is its block device.
pub struct MemberDev {
    file: NonNull<bindings::file>,
    bdev: NonNull<bindings::block_device>,
    name: [u8; NAME_LEN],
    name_len: usize,
    /// md's `FailFast` flag of the device (its rdev's): its bios may carry `REQ_FAILFAST`.
    failfast: AtomicBool,
}

// SAFETY: An open block device may be used and closed from any thread.
unsafe impl Send for MemberDev {}
// SAFETY: `&MemberDev` only reads immutable fields of the device.
unsafe impl Sync for MemberDev {}

impl MemberDev {
    /// Opens `path` read-write, claimed by `holder`.
    ///
    /// The caller must keep `holder` alive for as long as the member is open.
    pub fn open(path: &CStr, holder: &Holder) -> Result<Self> {
        // SAFETY: `path` is NUL-terminated; a non-null holder asks for an exclusive claim, and the
        // holder pointer is only compared, never dereferenced, by the block layer.
        let file = from_err_ptr(unsafe {
            bindings::bdev_file_open_by_path(
                path.as_char_ptr(),
                BLK_OPEN_READ_WRITE,
                holder.as_ptr(),
                core::ptr::null(),
            )
        })?;
        Self::from_file(file)
    }

    /// Opens device `major:minor` read-write, claimed by `holder`, as [`MemberDev::open`].
    pub fn open_devt(major: u32, minor: u32, holder: &Holder) -> Result<Self> {
        if major >= 1 << 12 || minor >= 1 << 20 {
            return Err(EINVAL);
        }
        // SAFETY: As in `open`; the device number is checked to fit `MKDEV`.
        let file = from_err_ptr(unsafe {
            bindings::bdev_file_open_by_dev(
                (major << 20) | minor,
                BLK_OPEN_READ_WRITE,
                holder.as_ptr(),
                core::ptr::null(),
            )
        })?;
        Self::from_file(file)
    }

    /// Takes ownership of an open block-device file.
    fn from_file(file: *mut bindings::file) -> Result<Self> {
        // SAFETY: `from_err_ptr` returned a valid, non-error pointer.
        let file = unsafe { NonNull::new_unchecked(file) };
        // SAFETY: `file` is an open block-device file.
        let bdev = unsafe { bindings::file_bdev(file.as_ptr()) };
        let Some(bdev) = NonNull::new(bdev) else {
            // SAFETY: We own the file and close it once.
            unsafe { bindings::bdev_fput(file.as_ptr()) };
            return Err(ENODEV);
        };
        // INVARIANT: the file is owned by the new value.
        let mut dev = Self {
            file,
            bdev,
            name: [0; NAME_LEN],
            name_len: 0,
            failfast: AtomicBool::new(false),
        };
        dev.set_name();
        Ok(dev)
    }

    /// Records `disk_name` plus the partition number, as `bdevname()` does.
    fn set_name(&mut self) {
        let b = self.bdev.as_ptr();
        // SAFETY: An open block device's `bd_disk` is valid and its name NUL-terminated and
        // fixed.
        let disk = unsafe { CStr::from_char_ptr((*(*b).bd_disk).disk_name.as_ptr()) };
        // SAFETY: `__bd_flags` is an `atomic_t`; a racy read of the constant partno bits is fine.
        let partno = unsafe { core::ptr::read_volatile(&raw const (*b).__bd_flags.counter) } as u32
            & bindings::BD_PARTNO;
        let mut w = NameWriter {
            buf: &mut self.name,
            len: 0,
        };
        let disk = disk.to_str().unwrap_or("?");
        let _ = if partno == 0 {
            core::fmt::write(&mut w, format_args!("{disk}"))
        } else if disk.ends_with(|c: char| c.is_ascii_digit()) {
            core::fmt::write(&mut w, format_args!("{disk}p{partno}"))
        } else {
            core::fmt::write(&mut w, format_args!("{disk}{partno}"))
        };
        self.name_len = w.len;
    }

    /// The device's request queue.
    fn queue(&self) -> *mut bindings::request_queue {
        // SAFETY: By the type invariant the device is open, so it and its disk are valid; the
        // disk's queue is fixed for the disk's life.
        unsafe { (*(*self.bdev.as_ptr()).bd_disk).queue }
    }

    /// A field of the device's queue limits, read once: the block layer updates the limits
    /// under its own lock (a resize, a sysfs write), so rraid never holds a reference to them.
    fn limit<R: Copy>(&self, f: impl FnOnce(*const bindings::queue_limits) -> *const R) -> R {
        // SAFETY: The queue of an open device is valid; `f` only projects to a field.
        unsafe { core::ptr::read_volatile(f(&raw const (*self.queue()).limits)) }
    }

    pub(crate) fn bdev(&self) -> *mut bindings::block_device {
        self.bdev.as_ptr()
    }

    /// The kernel's name of the device, e.g. `vdb`.
    pub fn name(&self) -> &str {
        core::str::from_utf8(&self.name[..self.name_len]).unwrap_or("?")
    }

    /// Whether the device is marked failfast (`dev-X/state`, the superblock's `devflags`).
    pub fn failfast(&self) -> bool {
        self.failfast.load(Ordering::Relaxed)
    }

    /// Marks the device failfast, or not.
    pub fn set_failfast(&self, on: bool) {
        self.failfast.store(on, Ordering::Relaxed);
    }

    /// The device number.
    pub fn devt(&self) -> u32 {
        // SAFETY: The device is open (type invariant); its number never changes.
        unsafe { (*self.bdev.as_ptr()).bd_dev }
    }

    /// The physical unit the device lies on: its gendisk's address, shared by a disk's
    /// partitions (md's `match_mddev_units` compares the same). Only ever compared.
    pub fn unit(&self) -> usize {
        // SAFETY: The device is open (type invariant); `bd_disk` is set for its whole life.
        unsafe { (*self.bdev.as_ptr()).bd_disk as usize }
    }

    /// Size in 512-byte sectors.
    pub fn sectors(&self) -> u64 {
        // SAFETY: `bd_nr_sectors` may change on resize; a racy read gives one of the sizes.
        unsafe { core::ptr::read_volatile(&raw const (*self.bdev.as_ptr()).bd_nr_sectors) }
    }

    /// Logical block size in bytes.
    pub fn logical_block_size(&self) -> u32 {
        // SAFETY: (for the projection) a field of valid limits.
        self.limit(|l| unsafe { &raw const (*l).logical_block_size })
    }

    fn features(&self) -> u32 {
        // SAFETY: As above.
        self.limit(|l| unsafe { &raw const (*l).features })
    }

    /// Whether the device has a volatile write cache.
    pub fn write_cache(&self) -> bool {
        self.features() & BLK_FEAT_WRITE_CACHE != 0
    }

    /// Whether the device supports forced unit access.
    pub fn fua(&self) -> bool {
        self.features() & BLK_FEAT_FUA != 0
    }

    /// Whether the device answers `REQ_NOWAIT` bios with "would block" instead of waiting
    /// (every blk-mq device; stacked ones only if all below them do).
    pub fn nowait(&self) -> bool {
        self.features() & BLK_FEAT_NOWAIT != 0
    }

    /// Whether the device is zoned (rraid refuses zoned members).
    pub fn zoned(&self) -> bool {
        self.features() & BLK_FEAT_ZONED != 0
    }

    /// Whether the device accepts discards.
    pub fn discard(&self) -> bool {
        // SAFETY: As above.
        self.limit(|l| unsafe { &raw const (*l).max_discard_sectors }) != 0
    }

    /// Requests the device's queue holds at once (`queue/nr_requests`).
    pub fn nr_requests(&self) -> u32 {
        // SAFETY: The queue of an open device is valid; a racy read of a plain integer that a
        // sysfs write may change gives one of its values.
        let n = unsafe { core::ptr::read_volatile(&raw const (*self.queue()).nr_requests) };
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// Flushes the device's write cache and waits for it. Task context.
    pub fn flush(&self) -> Result {
        // SAFETY: The device is open (type invariant); the call sleeps, which the caller allows.
        kernel::error::to_result(unsafe { bindings::blkdev_issue_flush(self.bdev()) })
    }

    /// Reads or writes `len` bytes of `page` at `sector` and waits for it.
    ///
    /// For the slow paths (repairing a read error): the bio lives on this stack frame and needs
    /// no allocation. `len` is at most a page and a multiple of 512. Must be called in task
    /// context, where sleeping is allowed.
    pub fn sync_io(
        &self,
        sector: u64,
        page: &Page,
        len: usize,
        write: bool,
    ) -> Result<(), BlkStatus> {
        let op = if write {
            bindings::req_op_REQ_OP_WRITE | REQ_SYNC
        } else {
            bindings::req_op_REQ_OP_READ
        };
        self.page_io(sector, page.as_ptr(), len, op)
    }

    /// Reads `len` bytes at `sector` into `buf` and waits: metadata, read once at assembly.
    pub fn read_meta(&self, sector: u64, buf: &mut PageBuf, len: usize) -> Result<(), BlkStatus> {
        self.page_io(sector, buf.raw(), len, bindings::req_op_REQ_OP_READ)
    }

    /// Writes `len` bytes of `buf` at `sector` as md writes superblocks (`md_super_write`):
    /// the device's cache flushed first and the write itself durable (`REQ_PREFLUSH |
    /// REQ_FUA`), and waits for it.
    /// With `failfast`, the member's drivers do not retry it (md's `MD_FAILFAST`).
    pub fn write_meta(
        &self,
        sector: u64,
        buf: &PageBuf,
        len: usize,
        failfast: bool,
    ) -> Result<(), BlkStatus> {
        let ff = if failfast { REQ_FAILFAST } else { 0 };
        let op = bindings::req_op_REQ_OP_WRITE | REQ_SYNC | REQ_META | REQ_PREFLUSH | REQ_FUA | ff;
        self.page_io(sector, buf.raw(), len, op)
    }

    /// Writes `len` bytes of `buf` at `sector` as md writes its bitmap: durable before it
    /// completes (`REQ_FUA`), after the device's cache is flushed too with `preflush` (a bit
    /// is cleared only once the writes it covered are durable), and waits for it.
    pub fn write_intent(
        &self,
        sector: u64,
        buf: &PageBuf,
        len: usize,
        preflush: bool,
        failfast: bool,
    ) -> Result<(), BlkStatus> {
        let flush = if preflush { REQ_PREFLUSH } else { 0 };
        let ff = if failfast { REQ_FAILFAST } else { 0 };
        let op = bindings::req_op_REQ_OP_WRITE | REQ_SYNC | REQ_META | REQ_FUA | flush | ff;
        self.page_io(sector, buf.raw(), len, op)
    }

    /// One page bio of `op` on this frame, waited for.
    fn page_io(
        &self,
        sector: u64,
        page: *mut bindings::page,
        len: usize,
        op: u32,
    ) -> Result<(), BlkStatus> {
        if len == 0 || len > kernel::page::PAGE_SIZE || len % 512 != 0 {
            return Err(BlkStatus::IOERR);
        }
        let mut bio = core::mem::MaybeUninit::<bindings::bio>::uninit();
        let mut vec = core::mem::MaybeUninit::<bindings::bio_vec>::uninit();
        let b = bio.as_mut_ptr();
        // SAFETY: `bio_init` initialises the on-stack bio with room for one vec; the member is
        // open; `page` is a page the caller borrows across this call, so it outlives the wait
        // below. The bio is uninitialised
        // with `bio_uninit` before the frame goes away.
        let status = unsafe {
            bindings::bio_init(b, self.bdev(), vec.as_mut_ptr(), 1, op);
            (*b).bi_iter.bi_sector = sector;
            if bindings::bio_add_page(b, page, len as u32, 0) != len as i32 {
                bindings::bio_uninit(b);
                return Err(BlkStatus::IOERR);
            }
            bindings::submit_bio_wait(b);
            let status = BlkStatus::from_raw((*b).bi_status);
            bindings::bio_uninit(b);
            status
        };
        if status.is_ok() {
            Ok(())
        } else {
            Err(status)
        }
    }
}

impl Drop for MemberDev {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own the file; this releases the claim too.
        unsafe { bindings::bdev_fput(self.file.as_ptr()) };
    }
}

/// Formats into a fixed buffer, cutting what does not fit.
struct NameWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl core::fmt::Write for NameWriter<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for &b in s.as_bytes() {
            if self.len < self.buf.len() {
                self.buf[self.len] = b;
                self.len += 1;
            }
        }
        Ok(())
    }
}
