//! Member block devices, opened read-write and claimed exclusively for one array.

use core::ptr::NonNull;
use kernel::{bindings, error::from_err_ptr, prelude::*, str::CStr};

/// `BLK_OPEN_READ | BLK_OPEN_WRITE`; the macros carry `__force` casts and are not generated.
const BLK_OPEN_READ_WRITE: bindings::blk_mode_t = (1 << 0) | (1 << 1);
/// `BLK_FEAT_WRITE_CACHE`.
pub(crate) const BLK_FEAT_WRITE_CACHE: u32 = 1 << 0;
/// `BLK_FEAT_FUA`.
pub(crate) const BLK_FEAT_FUA: u32 = 1 << 1;

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
        };
        dev.set_name();
        Ok(dev)
    }

    /// Records `disk_name` plus the partition number, as `bdevname()` does.
    fn set_name(&mut self) {
        let b = self.raw();
        // SAFETY: An open block device's `bd_disk` is valid and its name NUL-terminated.
        let disk = unsafe { CStr::from_char_ptr((*b.bd_disk).disk_name.as_ptr()) };
        // SAFETY: `__bd_flags` is an `atomic_t`; a racy read of the constant partno bits is fine.
        let partno =
            unsafe { core::ptr::read_volatile(&b.__bd_flags.counter) } as u32 & bindings::BD_PARTNO;
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

    fn raw(&self) -> &bindings::block_device {
        // SAFETY: By the type invariant the device is open, so `bdev` is valid.
        unsafe { self.bdev.as_ref() }
    }

    fn queue_limits(&self) -> &bindings::queue_limits {
        // SAFETY: An open device's disk and queue are valid.
        unsafe { &(*(*self.raw().bd_disk).queue).limits }
    }

    pub(crate) fn bdev(&self) -> *mut bindings::block_device {
        self.bdev.as_ptr()
    }

    /// The kernel's name of the device, e.g. `vdb`.
    pub fn name(&self) -> &str {
        core::str::from_utf8(&self.name[..self.name_len]).unwrap_or("?")
    }

    /// The device number.
    pub fn devt(&self) -> u32 {
        self.raw().bd_dev
    }

    /// Size in 512-byte sectors.
    pub fn sectors(&self) -> u64 {
        // SAFETY: `bd_nr_sectors` may change on resize; a racy read gives one of the sizes.
        unsafe { core::ptr::read_volatile(&self.raw().bd_nr_sectors) }
    }

    /// Logical block size in bytes.
    pub fn logical_block_size(&self) -> u32 {
        self.queue_limits().logical_block_size
    }

    /// Whether the device has a volatile write cache.
    pub fn write_cache(&self) -> bool {
        self.queue_limits().features & BLK_FEAT_WRITE_CACHE != 0
    }

    /// Whether the device supports forced unit access.
    pub fn fua(&self) -> bool {
        self.queue_limits().features & BLK_FEAT_FUA != 0
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
