//! A blk-mq disk whose queue data is an `Arc<T>`, with stacked limits and open/release.
//!
//! The 6.12 `kernel::block::mq` types have no queue data, no limits beyond block sizes, no
//! open/release and a NULL fops owner; this is the variant a stacking driver needs.

use super::member::{MemberDev, BLK_FEAT_FUA, BLK_FEAT_WRITE_CACHE};
use super::request::{InflightRequest, RqPdu};
use super::sysfs::Parent;
use core::marker::PhantomData;
use core::ptr::NonNull;
use kernel::{
    bindings,
    error::{from_err_ptr, to_result},
    prelude::*,
    str::CStr,
    sync::{Arc, ArcBorrow},
    types::{ForeignOwnable, Opaque, ScopeGuard},
};

/// Lock class of rraid queues' internal locks.
static DISK_KEY: super::LockKey = super::LockKey::new();
/// Lock class of rraid's flush queues: a member's flush completion ends an rraid flush inside
/// the member's flush lock, which lockdep would otherwise take for recursion (as nvme-loop).
static FQ_KEY: super::LockKey = super::LockKey::new();

/// What a disk's owner does for it.
pub trait DiskOps: Send + Sync + Sized + 'static {
    /// Handles a started request. The request completes when its last reference is dropped,
    /// which may be long after this returns. May sleep (`BLK_MQ_F_BLOCKING`).
    fn queue_rq(rq: InflightRequest<Self>);
    /// Someone opens the disk.
    fn open(this: ArcBorrow<'_, Self>) -> Result;
    /// An opener closes the disk.
    fn release(this: ArcBorrow<'_, Self>);
}

/// Queue limits under construction.
pub struct Limits(bindings::queue_limits);

impl Limits {
    /// Limits that permit anything, to be narrowed by [`Limits::stack`].
    pub fn stacking() -> Self {
        // SAFETY: `queue_limits` is plain data; `blk_set_stacking_limits` fills all of it.
        let mut lim: bindings::queue_limits = unsafe { core::mem::zeroed() };
        // SAFETY: `lim` is valid for writes.
        unsafe { bindings::blk_set_stacking_limits(&mut lim) };
        Self(lim)
    }

    /// Narrows the limits to what `member` accepts, data starting at `offset` sectors. Block
    /// sizes become the largest of the members', transfer sizes the smallest, and the write
    /// cache and FUA features are inherited as md inherits them. `name` prefixes the block
    /// layer's warning about a misaligned member.
    pub fn stack(&mut self, member: &MemberDev, offset: u64, name: &CStr) {
        // SAFETY: `self.0` is valid, `member` is open and `name` is NUL-terminated.
        unsafe {
            bindings::queue_limits_stack_bdev(
                &mut self.0,
                member.bdev(),
                offset,
                name.as_char_ptr(),
            )
        };
    }

    /// Minimum efficient I/O size, in bytes.
    pub fn set_io_min(&mut self, bytes: u32) {
        self.0.io_min = bytes;
    }

    /// Optimal I/O size, in bytes (0: none).
    pub fn set_io_opt(&mut self, bytes: u32) {
        self.0.io_opt = bytes;
    }

    /// Logical block size in bytes.
    pub fn logical_block_size(&self) -> u32 {
        self.0.logical_block_size
    }

    /// Switches write-zeroes off.
    pub fn disable_write_zeroes(&mut self) {
        self.0.max_write_zeroes_sectors = 0;
    }

    /// Whether the stacked queue reports a volatile write cache.
    pub fn write_cache(&self) -> bool {
        self.0.features & BLK_FEAT_WRITE_CACHE != 0
    }

    /// Whether the stacked queue reports FUA.
    pub fn fua(&self) -> bool {
        self.0.features & BLK_FEAT_FUA != 0
    }
}

/// The tag set and fops of a disk, pinned because the C side points into them.
///
/// # Invariants
///
/// `tag_set` was set up by `blk_mq_alloc_tag_set` and is freed in `drop`.
#[pin_data(PinnedDrop)]
struct DiskInner {
    #[pin]
    tag_set: Opaque<bindings::blk_mq_tag_set>,
    fops: bindings::block_device_operations,
}

impl DiskInner {
    fn new<T: DiskOps>(module: &'static ThisModule, queue_depth: u32) -> impl PinInit<Self, Error> {
        // SAFETY: `blk_mq_tag_set` is integers and pointers, all of which may be 0.
        let mut set: bindings::blk_mq_tag_set = unsafe { core::mem::zeroed() };
        set.ops = Vtable::<T>::ops();
        // SAFETY: `nr_cpu_ids` is set at boot and never changes afterwards.
        set.nr_hw_queues = unsafe { bindings::nr_cpu_ids };
        set.queue_depth = queue_depth;
        set.numa_node = bindings::NUMA_NO_NODE;
        set.cmd_size = core::mem::size_of::<RqPdu>() as u32;
        // Blocking: `queue_rq` allocates member bios with GFP_NOIO from a mempool, which may
        // sleep but cannot fail. No scheduler by default: md, bio-based, has none either.
        set.flags = bindings::BLK_MQ_F_SHOULD_MERGE
            | bindings::BLK_MQ_F_BLOCKING
            | bindings::BLK_MQ_F_STACKING
            | bindings::BLK_MQ_F_NO_SCHED_BY_DEFAULT;
        set.nr_maps = 1;
        // SAFETY: The fops table is plain data; every field may be zero/None.
        let mut fops: bindings::block_device_operations = unsafe { core::mem::zeroed() };
        fops.owner = module.as_ptr();
        fops.open = Some(open_trampoline::<T>);
        fops.release = Some(release_trampoline::<T>);
        try_pin_init!(Self {
            tag_set <- Opaque::ffi_init(move |slot: *mut bindings::blk_mq_tag_set| {
                // SAFETY: `slot` is valid for writes.
                unsafe { slot.write(set) };
            }),
            fops,
        })
        .pin_chain(|this| {
            // SAFETY: The tag set is initialised above and pinned.
            let ret = to_result(unsafe { bindings::blk_mq_alloc_tag_set(this.tag_set.get()) });
            if ret.is_err() {
                // A failed allocation leaves nothing to free; mark it so `drop` skips it.
                // SAFETY: The set is ours and not registered anywhere.
                unsafe { (*this.tag_set.get()).tags = core::ptr::null_mut() };
            }
            ret
        })
    }
}

#[pinned_drop]
impl PinnedDrop for DiskInner {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: By the type invariant the set was allocated, unless `tags` was cleared after a
        // failure; no disk uses it any more, since `Disk` puts its disk first.
        unsafe {
            if !(*self.tag_set.get()).tags.is_null() {
                bindings::blk_mq_free_tag_set(self.tag_set.get());
            }
        }
    }
}

/// A registered blk-mq disk serving `T`.
///
/// # Invariants
///
/// `disk` was added with `device_add_disk`, its `queuedata` and `private_data` are `data`, which
/// came from `Arc<T>::into_foreign`; `holders` are linked to it with `bd_link_disk_holder`.
pub struct Disk<T: DiskOps> {
    disk: NonNull<bindings::gendisk>,
    holders: KVec<NonNull<bindings::block_device>>,
    data: *const core::ffi::c_void,
    // Dropped after the disk is put.
    _inner: Pin<KBox<DiskInner>>,
    _p: PhantomData<Arc<T>>,
}

// SAFETY: The disk may be torn down from any thread.
unsafe impl<T: DiskOps> Send for Disk<T> {}
// SAFETY: `&Disk` gives access only to immutable disk fields.
unsafe impl<T: DiskOps> Sync for Disk<T> {}

impl<T: DiskOps> Disk<T> {
    /// Allocates, names and adds a disk of `sectors` sectors that serves `data`.
    ///
    /// `data` must be fully able to serve I/O: adding the disk reads its partition table.
    pub fn add(
        name: &str,
        module: &'static ThisModule,
        mut lim: Limits,
        sectors: u64,
        data: Arc<T>,
        queue_depth: u32,
    ) -> Result<Self> {
        let inner = KBox::pin_init(DiskInner::new::<T>(module, queue_depth), GFP_KERNEL)?;
        let data = data.into_foreign();
        let data_guard = ScopeGuard::new(|| {
            // SAFETY: `data` came from `into_foreign` above and was not handed to a disk.
            drop(unsafe { <Arc<T> as ForeignOwnable>::from_foreign(data) });
        });
        // SAFETY: The tag set is allocated; the lock class key is static.
        let disk = from_err_ptr(unsafe {
            bindings::__blk_mq_alloc_disk(
                inner.tag_set.get(),
                &mut lim.0,
                data.cast_mut(),
                DISK_KEY.as_ptr(),
            )
        })?;
        let put_guard = ScopeGuard::new_with_data(disk, |disk| {
            // SAFETY: The disk was allocated and not added.
            unsafe { bindings::put_disk(disk) };
        });
        let disk = *put_guard;
        let bytes = name.as_bytes();
        // SAFETY: `disk` is a valid, not yet added gendisk that we alone use.
        let d = unsafe { &mut *disk };
        if bytes.len() >= d.disk_name.len() {
            return Err(EINVAL);
        }
        for (dst, &src) in d.disk_name.iter_mut().zip(bytes) {
            *dst = src as _;
        }
        d.disk_name[bytes.len()] = 0;
        d.fops = &inner.fops;
        d.private_data = data.cast_mut();
        // SAFETY: `disk` is valid.
        unsafe { bindings::set_capacity(disk, sectors) };
        // SAFETY: `disk` is fully set up; on failure it is still ours to put.
        to_result(unsafe {
            bindings::device_add_disk(core::ptr::null_mut(), disk, core::ptr::null_mut())
        })?;
        put_guard.dismiss();
        data_guard.dismiss();
        // INVARIANT: added, with `data` as queue and private data; no holders yet.
        Ok(Self {
            // SAFETY: `from_err_ptr` returned a valid pointer.
            disk: unsafe { NonNull::new_unchecked(disk) },
            holders: KVec::new(),
            data,
            _inner: inner,
            _p: PhantomData,
        })
    }

    /// Links `member` under the disk (`holders/` and `slaves/` in sysfs).
    pub fn link_holder(&mut self, member: &MemberDev) -> Result {
        self.holders.reserve(1, GFP_KERNEL)?;
        // SAFETY: The disk is added and the member open; the member outlives the link, since
        // the array that owns it outlives this disk.
        to_result(unsafe { bindings::bd_link_disk_holder(member.bdev(), self.disk.as_ptr()) })?;
        // SAFETY: `bdev()` is non-null for an open member.
        let bdev = unsafe { NonNull::new_unchecked(member.bdev()) };
        // Cannot fail: room was reserved above.
        let _ = self.holders.push(bdev, GFP_KERNEL);
        Ok(())
    }

    /// The disk's device directory, parent of rraid's own sysfs directory.
    pub fn kobj(&self) -> Parent<'_> {
        // SAFETY: An added disk has a valid `part0` whose device kobject lives as long as it.
        unsafe { Parent::from_raw(&raw mut (*(*self.disk.as_ptr()).part0).bd_device.kobj) }
    }

    /// The number of current openers.
    pub fn openers(&self) -> u32 {
        // SAFETY: `part0` of an added disk is valid; `bd_openers` is an atomic read racily.
        unsafe {
            core::ptr::read_volatile(&(*(*self.disk.as_ptr()).part0).bd_openers.counter) as u32
        }
    }
}

impl<T: DiskOps> Drop for Disk<T> {
    fn drop(&mut self) {
        for bdev in self.holders.iter() {
            // SAFETY: Each was linked by `link_holder` and its member is still open.
            unsafe { bindings::bd_unlink_disk_holder(bdev.as_ptr(), self.disk.as_ptr()) };
        }
        // SAFETY: The disk was added; `del_gendisk` drains its queue, so no request and no
        // `queue_rq` remain afterwards.
        unsafe { bindings::del_gendisk(self.disk.as_ptr()) };
        // SAFETY: We hold the allocation reference.
        unsafe { bindings::put_disk(self.disk.as_ptr()) };
        // SAFETY: `data` came from `into_foreign`; the queue is drained so nothing borrows it.
        drop(unsafe { <Arc<T> as ForeignOwnable>::from_foreign(self.data) });
    }
}

/// The blk-mq operations table for `T`.
struct Vtable<T>(PhantomData<T>);

impl<T: DiskOps> Vtable<T> {
    const OPS: bindings::blk_mq_ops = bindings::blk_mq_ops {
        queue_rq: Some(queue_rq_trampoline::<T>),
        commit_rqs: None,
        queue_rqs: None,
        get_budget: None,
        put_budget: None,
        set_rq_budget_token: None,
        get_rq_budget_token: None,
        timeout: None,
        poll: None,
        complete: None,
        init_hctx: Some(init_hctx_trampoline),
        exit_hctx: None,
        init_request: None,
        exit_request: None,
        cleanup_rq: None,
        busy: None,
        map_queues: None,
        show_rq: None,
    };

    fn ops() -> &'static bindings::blk_mq_ops {
        &Self::OPS
    }
}

/// # Safety
///
/// Called by blk-mq on a queue set up by [`Disk::add`] for `T`.
unsafe extern "C" fn queue_rq_trampoline<T: DiskOps>(
    _hctx: *mut bindings::blk_mq_hw_ctx,
    bd: *const bindings::blk_mq_queue_data,
) -> bindings::blk_status_t {
    // SAFETY: `bd` and its request are valid; the queue's data is an `Arc<T>` and the tag set's
    // `cmd_size` covers `RqPdu` (see `DiskInner::new`).
    let rq = unsafe { InflightRequest::<T>::start((*bd).rq) };
    T::queue_rq(rq);
    bindings::BLK_STS_OK as bindings::blk_status_t
}

/// # Safety
///
/// Called by blk-mq for each hardware context of a queue set up by [`Disk::add`].
unsafe extern "C" fn init_hctx_trampoline(
    hctx: *mut bindings::blk_mq_hw_ctx,
    _data: *mut core::ffi::c_void,
    _idx: core::ffi::c_uint,
) -> core::ffi::c_int {
    // SAFETY: `hctx` is being initialised and has its flush queue; the key is static.
    unsafe { bindings::blk_mq_hctx_set_fq_lock_class(hctx, FQ_KEY.as_ptr()) };
    0
}

/// # Safety
///
/// Called by the block layer for a disk added by [`Disk::add`] for `T`.
unsafe extern "C" fn open_trampoline<T: DiskOps>(
    disk: *mut bindings::gendisk,
    _mode: bindings::blk_mode_t,
) -> core::ffi::c_int {
    // SAFETY: `private_data` is the disk's `Arc<T>`, alive while the disk is.
    let data = unsafe { <Arc<T> as ForeignOwnable>::borrow((*disk).private_data) };
    match T::open(data) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// # Safety
///
/// As for [`open_trampoline`].
unsafe extern "C" fn release_trampoline<T: DiskOps>(disk: *mut bindings::gendisk) {
    // SAFETY: As in `open_trampoline`.
    let data = unsafe { <Arc<T> as ForeignOwnable>::borrow((*disk).private_data) };
    T::release(data);
}
