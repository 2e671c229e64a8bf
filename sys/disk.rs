//! A blk-mq disk whose queue data is an `Arc<T>`, with stacked limits, open/release and workers.
//!
//! The 6.12 `kernel::block::mq` types have no queue data, no limits beyond block sizes, no
//! open/release, a NULL fops owner and a `queue_rq` that must do all its work in place; this is
//! the variant a stacking driver needs.
//!
//! Its request path (`queue_rq`, the hardware queues' workers, deferred member bios and the
//! [`DiskOps`] they call) is in [`super::hwqueue`].
//!
//! Lifetime: the fops are static per `T`. What the block layer may still use after
//! `del_gendisk` (the queue data, the tag set, the lock class key) is owned by the gendisk and
//! freed by `free_disk`, at its final put.

use super::hwqueue::{self, exit_hctx_trampoline, queue_rq_trampoline};
pub use super::hwqueue::{defer, DeferredBio, DiskOps};
use super::member::MemberDev;
use super::request::RqPdu;
use super::sysfs::Parent;
use super::workqueue::QueueRef;
use super::{
    BLK_FEAT_FUA, BLK_FEAT_POLL, BLK_FEAT_RAID_PARTIAL_STRIPES_EXPENSIVE, BLK_FEAT_WRITE_CACHE,
};
use core::marker::PhantomData;
use core::ptr::NonNull;
use kernel::{
    bindings,
    error::{from_err_ptr, to_result},
    new_mutex,
    prelude::*,
    str::CStr,
    sync::{Arc, ArcBorrow, Mutex},
    types::{ForeignOwnable, Opaque, ScopeGuard},
};

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

    /// Tells the page cache and file systems that writes of less than a stripe cost extra
    /// reads (md's RAID 4/5/6 flag).
    pub fn set_partial_stripes_expensive(&mut self) {
        self.0.features |= BLK_FEAT_RAID_PARTIAL_STRIPES_EXPENSIVE;
    }

    /// Switches discard off (stacking offers it when any member has it).
    pub fn disable_discard(&mut self) {
        self.0.max_hw_discard_sectors = 0;
        self.0.max_discard_sectors = 0;
    }

    /// Drops what stacking inherits but rraid does not implement: secure erase (which would
    /// need every member to erase) and polled I/O (rraid has no poll queues).
    pub fn drop_unimplemented(&mut self) {
        self.0.max_secure_erase_sectors = 0;
        self.0.features &= !BLK_FEAT_POLL;
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

/// What the gendisk owns for `T`, freed by `free_disk` at its final put.
///
/// # Invariants
///
/// `key` is registered with lockdep while this value lives. `tag_set` was allocated by
/// `blk_mq_alloc_tag_set` unless `tags` is null, and is freed in `drop`. `data` came from
/// `Arc<T>::into_foreign` and is owned by this value.
#[pin_data(PinnedDrop)]
struct DiskState<T: DiskOps> {
    #[pin]
    key: Opaque<bindings::lock_class_key>,
    #[pin]
    tag_set: Opaque<bindings::blk_mq_tag_set>,
    wq: QueueRef,
    data: *const core::ffi::c_void,
    _p: PhantomData<Arc<T>>,
}

// SAFETY: Once `free_disk` hands it over, the state is owned by its box alone: the block
// layer no longer uses the tag set or the key, and `data` is an `Arc<T>` of a `Send + Sync` `T`,
// so the final drop may run on any thread.
unsafe impl<T: DiskOps> Send for DiskState<T> {}

impl<T: DiskOps> DiskState<T> {
    fn new(data: Arc<T>, queue_depth: u32, wq: QueueRef) -> impl PinInit<Self, Error> {
        let data = data.into_foreign();
        // SAFETY: `blk_mq_tag_set` is integers and pointers, all of which may be 0.
        let mut set: bindings::blk_mq_tag_set = unsafe { core::mem::zeroed() };
        set.ops = Vtable::<T>::ops();
        set.nr_hw_queues = super::nr_cpus() as u32;
        set.queue_depth = queue_depth.max(1);
        set.numa_node = bindings::NUMA_NO_NODE;
        set.cmd_size = core::mem::size_of::<RqPdu>() as u32;
        // One tag space shared by all hardware queues, no deeper than the members. Blocking
        // (SRCU), as `submit_bio_noacct` may sleep by its contract, though `queue_rq` itself
        // never does: it parks requests or maps them with nowait member bios. No scheduler by
        // default: md, bio-based, has none either.
        set.flags = bindings::BLK_MQ_F_BLOCKING
            | bindings::BLK_MQ_F_SHOULD_MERGE
            | bindings::BLK_MQ_F_TAG_HCTX_SHARED
            | bindings::BLK_MQ_F_STACKING
            | bindings::BLK_MQ_F_NO_SCHED_BY_DEFAULT;
        set.nr_maps = 1;
        // INVARIANT: the key is registered, the set allocated (or `tags` null) and `data` owned
        // once the chain below has run.
        try_pin_init!(Self {
            // SAFETY: `slot` is valid for writes; a zeroed key is what lockdep registers.
            key <- Opaque::ffi_init(|slot: *mut bindings::lock_class_key| unsafe {
                core::ptr::write_bytes(slot, 0, 1);
                #[cfg(CONFIG_LOCKDEP)]
                bindings::lockdep_register_key(slot);
            }),
            tag_set <- Opaque::ffi_init(move |slot: *mut bindings::blk_mq_tag_set| {
                // SAFETY: `slot` is valid for writes.
                unsafe { slot.write(set) };
            }),
            wq,
            data,
            _p: PhantomData,
        })
        .pin_chain(move |this| {
            // `init_hctx` finds the state (its work queue and key) through the set.
            let me: *const Self = &*this;
            // SAFETY: The set is initialised and pinned, in the same allocation as `me`.
            unsafe { (*this.tag_set.get()).driver_data = me.cast_mut().cast() };
            // SAFETY: As above.
            let ret = to_result(unsafe { bindings::blk_mq_alloc_tag_set(this.tag_set.get()) });
            if ret.is_err() {
                // A failed allocation leaves nothing to free; mark it so `drop` skips it.
                // SAFETY: The set is ours and not registered anywhere.
                unsafe { (*this.tag_set.get()).tags = core::ptr::null_mut() };
            }
            ret
        })
    }

    fn key(&self) -> *mut bindings::lock_class_key {
        self.key.get()
    }
}

#[pinned_drop]
impl<T: DiskOps> PinnedDrop for DiskState<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: By the type invariant the set was allocated unless `tags` is null; the queue
        // that used it has been released (this runs from `free_disk` or after `put_disk` of a
        // disk never added).
        unsafe {
            if !(*self.tag_set.get()).tags.is_null() {
                bindings::blk_mq_free_tag_set(self.tag_set.get());
            }
        }
        // SAFETY: `data` came from `into_foreign` and is dropped once, here.
        drop(unsafe { <Arc<T> as ForeignOwnable>::from_foreign(self.data) });
        // SAFETY: Registered in `new`; nothing that uses the class is left.
        #[cfg(CONFIG_LOCKDEP)]
        unsafe {
            bindings::lockdep_unregister_key(self.key.get())
        };
    }
}

/// A registered blk-mq disk serving `T`.
///
/// # Invariants
///
/// `disk` was added with `device_add_disk` and this value holds its allocation reference. Its
/// `private_data` is a `Pin<KBox<DiskState<T>>>` from `into_foreign`, owned by the gendisk and
/// freed by `free_disk`. `links` names this disk while it is added.
pub struct Disk<T: DiskOps> {
    disk: NonNull<bindings::gendisk>,
    links: Arc<Mutex<Links>>,
    _p: PhantomData<Arc<T>>,
}

/// The devices linked under a disk (`holders/` and `slaves/` in sysfs, as md links every
/// device of an array): shared by the [`Disk`] and its [`Freezer`]s, so that devices can be
/// linked and unlinked as they join and leave while the disk lives.
///
/// # Invariants
///
/// While `disk` is `Some` it is an added disk not yet deleted (or not yet added: nothing links
/// to it before [`Disk::add`] returns). Each of `bdevs` is linked to it
/// with `bd_link_disk_holder` and holds a reference to its `bd_device`, which keeps the block
/// device's memory valid for the unlink even if the device was closed meanwhile.
struct Links {
    disk: Option<NonNull<bindings::gendisk>>,
    /// Unlinked ones leave `None`.
    bdevs: KVec<Option<NonNull<bindings::block_device>>>,
}

// SAFETY: The pointers are used only under the mutex that holds this value, from any task.
unsafe impl Send for Links {}

impl Links {
    fn new(disk: NonNull<bindings::gendisk>) -> Result<Arc<Mutex<Self>>> {
        Arc::pin_init(
            new_mutex!(
                Links {
                    disk: Some(disk),
                    bdevs: KVec::new(),
                },
                "rraid::links"
            ),
            GFP_KERNEL,
        )
    }

    /// Links `member` under the disk, unless the disk is going away.
    fn link(&mut self, member: &MemberDev) -> Result {
        let disk = self.disk.ok_or(ENODEV)?;
        let hole = match self.bdevs.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                self.bdevs.push(None, GFP_KERNEL)?;
                self.bdevs.len() - 1
            }
        };
        let bdev = member.bdev();
        // SAFETY: The disk is added and not deleted (type invariant); the member is open.
        to_result(unsafe { bindings::bd_link_disk_holder(bdev, disk.as_ptr()) })?;
        // SAFETY: The open member's device is valid; the reference is put after the unlink.
        unsafe { bindings::get_device(&raw mut (*bdev).bd_device) };
        if let Some(e) = self.bdevs.get_mut(hole) {
            // INVARIANT: linked, its device referenced.
            *e = NonNull::new(bdev);
        }
        Ok(())
    }

    /// Removes the link in `e`, if any.
    fn unlink_entry(
        disk: Option<NonNull<bindings::gendisk>>,
        e: &mut Option<NonNull<bindings::block_device>>,
    ) {
        let Some(bdev) = e.take() else { return };
        if let Some(disk) = disk {
            // SAFETY: `bdev` was linked to the live disk (type invariant).
            unsafe { bindings::bd_unlink_disk_holder(bdev.as_ptr(), disk.as_ptr()) };
        }
        // SAFETY: The reference taken by `link` (type invariant).
        unsafe { bindings::put_device(&raw mut (*bdev.as_ptr()).bd_device) };
    }

    /// Unlinks `member` if it is linked.
    fn unlink(&mut self, member: &MemberDev) {
        let disk = self.disk;
        if let Some(e) = self
            .bdevs
            .iter_mut()
            .find(|b| b.is_some_and(|b| b.as_ptr() == member.bdev()))
        {
            Self::unlink_entry(disk, e);
        }
    }

    /// Unlinks every device: the disk is about to be deleted.
    fn unlink_all(&mut self) {
        let disk = self.disk;
        for e in self.bdevs.iter_mut() {
            Self::unlink_entry(disk, e);
        }
        // INVARIANT: nothing links to the disk from now on.
        self.disk = None;
    }
}

// SAFETY: The disk may be torn down from any thread.
unsafe impl<T: DiskOps> Send for Disk<T> {}
// SAFETY: `&Disk` gives access only to immutable disk fields.
unsafe impl<T: DiskOps> Sync for Disk<T> {}

impl<T: DiskOps> Disk<T> {
    /// Allocates, names and adds a disk of `sectors` sectors that serves `data`, with a tag
    /// space of `queue_depth` requests and workers on `wq`.
    ///
    /// `data` must be fully able to serve I/O: adding the disk reads its partition table. It is
    /// dropped at the disk's final put, which may come after this `Disk` is dropped.
    pub fn add(
        name: &str,
        mut lim: Limits,
        sectors: u64,
        data: Arc<T>,
        queue_depth: u32,
        wq: QueueRef,
    ) -> Result<Self> {
        let state = KBox::pin_init(DiskState::<T>::new(data, queue_depth, wq), GFP_KERNEL)?;
        // SAFETY: The tag set is allocated; the key is registered and lives as long as the
        // disk, since the disk owns `state` once added.
        let disk = from_err_ptr(unsafe {
            bindings::__blk_mq_alloc_disk(
                state.tag_set.get(),
                &mut lim.0,
                state.data.cast_mut(),
                state.key(),
            )
        })?;
        // Until the disk is added, `state` is ours to free, after the disk is put.
        let put_guard = ScopeGuard::new_with_data(disk, |disk| {
            // SAFETY: The disk was allocated and not added.
            unsafe { bindings::put_disk(disk) };
        });
        let disk = *put_guard;
        // SAFETY: `from_err_ptr` returned a valid pointer.
        let links = Links::new(unsafe { NonNull::new_unchecked(disk) })?;
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
        d.fops = Vtable::<T>::fops();
        let state_ptr = <Pin<KBox<DiskState<T>>> as ForeignOwnable>::into_foreign(state);
        d.private_data = state_ptr.cast_mut();
        let state_guard = ScopeGuard::new(|| {
            // SAFETY: `state_ptr` came from `into_foreign` above and the disk was not added, so
            // `free_disk` will not run for it.
            drop(unsafe { <Pin<KBox<DiskState<T>>> as ForeignOwnable>::from_foreign(state_ptr) });
        });
        // SAFETY: `disk` is valid.
        unsafe { bindings::set_capacity(disk, sectors) };
        // SAFETY: `disk` is fully set up; on failure it is still ours to put.
        let added = to_result(unsafe {
            bindings::device_add_disk(core::ptr::null_mut(), disk, core::ptr::null_mut())
        });
        if let Err(e) = added {
            // Put the disk (which uses the tag set) before freeing the state.
            drop(put_guard);
            drop(state_guard);
            return Err(e);
        }
        put_guard.dismiss();
        state_guard.dismiss();
        // INVARIANT: added; `state` now belongs to the gendisk; no holders yet.
        Ok(Self {
            // SAFETY: `from_err_ptr` returned a valid pointer.
            disk: unsafe { NonNull::new_unchecked(disk) },
            links,
            _p: PhantomData,
        })
    }

    /// Links `member` under the disk (`holders/` and `slaves/` in sysfs).
    pub fn link_holder(&self, member: &MemberDev) -> Result {
        self.links.lock().link(member)
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
            core::ptr::read_volatile(&raw const (*(*self.disk.as_ptr()).part0).bd_openers.counter)
                as u32
        }
    }
}

impl<T: DiskOps> Drop for Disk<T> {
    fn drop(&mut self) {
        // Before the disk is deleted, which removes the directory the links are in.
        self.links.lock().unlink_all();
        // SAFETY: The disk was added; `del_gendisk` drains its queue, so no request and no
        // `queue_rq` remain afterwards, and exits the hardware queues.
        unsafe { bindings::del_gendisk(self.disk.as_ptr()) };
        // SAFETY: We hold the allocation reference; `free_disk` runs at the last put, which
        // may be this one or a later one of an opener that raced with the removal.
        unsafe { bindings::put_disk(self.disk.as_ptr()) };
    }
}

/// The blk-mq operations and block device operations for `T`.
struct Vtable<T>(PhantomData<T>);

/// `block_device_operations` is `Sync` in practice: it is only read.
#[repr(transparent)]
struct Fops(bindings::block_device_operations);

// SAFETY: The table is immutable; the module pointer in it is only used by the block layer.
unsafe impl Sync for Fops {}

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
        init_hctx: Some(init_hctx_trampoline::<T>),
        exit_hctx: Some(exit_hctx_trampoline::<T>),
        init_request: None,
        exit_request: None,
        cleanup_rq: None,
        busy: None,
        map_queues: None,
        show_rq: None,
    };

    /// Static: the block layer reads `owner` after the last release and calls `free_disk` at
    /// the final put, both possibly after the array is removed.
    const FOPS: Fops = Fops(bindings::block_device_operations {
        open: Some(open_trampoline::<T>),
        release: Some(release_trampoline::<T>),
        free_disk: Some(free_disk_trampoline::<T>),
        owner: &raw const bindings::__this_module as *mut bindings::module,
        // SAFETY: The remaining fields are optional callbacks and plain data; all-zero is
        // "not provided".
        ..unsafe { core::mem::zeroed() }
    });

    fn ops() -> &'static bindings::blk_mq_ops {
        &Self::OPS
    }

    fn fops() -> &'static bindings::block_device_operations {
        &Self::FOPS.0
    }
}

/// # Safety
///
/// Called by blk-mq for each hardware context of a queue set up by [`Disk::add`] for `T`, with
/// the tag set's `driver_data` as `data`.
unsafe extern "C" fn init_hctx_trampoline<T: DiskOps>(
    hctx: *mut bindings::blk_mq_hw_ctx,
    data: *mut core::ffi::c_void,
    _idx: core::ffi::c_uint,
) -> core::ffi::c_int {
    // SAFETY: The set's `driver_data` is its `DiskState<T>` (`DiskState::new`), which owns the
    // set and so outlives its hardware contexts.
    let state = unsafe { &*data.cast::<DiskState<T>>() };
    // SAFETY: blk-mq is initialising `hctx` for a queue of `Vtable::<T>::OPS`; the state's
    // workqueue outlives the disk's hardware contexts, as it outlives the state.
    if let Err(e) = unsafe { hwqueue::init_hctx::<T>(hctx, state.wq) } {
        return e.to_errno();
    }
    // SAFETY: `hctx` is being initialised and has its flush queue; the key outlives it. One
    // class per disk: a member's flush completing inside the flush lock of a member that is
    // itself an rraid disk is then no recursion for lockdep.
    unsafe { bindings::blk_mq_hctx_set_fq_lock_class(hctx, state.key()) };
    0
}

/// The queue data of a disk added by [`Disk::add`].
///
/// # Safety
///
/// `disk` is such a disk, before its `free_disk`.
unsafe fn disk_data<'a, T: DiskOps>(disk: *mut bindings::gendisk) -> ArcBorrow<'a, T> {
    // SAFETY: `private_data` is the disk's `DiskState<T>`, whose `data` is an `Arc<T>` from
    // `into_foreign`, alive until `free_disk`.
    unsafe {
        let state = &*(*disk).private_data.cast::<DiskState<T>>();
        <Arc<T> as ForeignOwnable>::borrow(state.data)
    }
}

/// # Safety
///
/// Called by the block layer for a disk added by [`Disk::add`] for `T`.
unsafe extern "C" fn open_trampoline<T: DiskOps>(
    disk: *mut bindings::gendisk,
    _mode: bindings::blk_mode_t,
) -> core::ffi::c_int {
    // SAFETY: An open comes before the final put.
    match T::open(unsafe { disk_data::<T>(disk) }) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// # Safety
///
/// As for [`open_trampoline`].
unsafe extern "C" fn release_trampoline<T: DiskOps>(disk: *mut bindings::gendisk) {
    // SAFETY: A release comes before the final put.
    T::release(unsafe { disk_data::<T>(disk) });
}

/// # Safety
///
/// Called once, at the final put of a disk added by [`Disk::add`] for `T`, in process context.
unsafe extern "C" fn free_disk_trampoline<T: DiskOps>(disk: *mut bindings::gendisk) {
    // SAFETY: `private_data` came from `into_foreign` in `Disk::add`; this is its last use.
    let state = unsafe {
        let state = core::mem::take(&mut (*disk).private_data);
        <Pin<KBox<DiskState<T>>> as ForeignOwnable>::from_foreign(state)
    };
    // The state's drop may put the module's last reference (the array's) and then go on in
    // module code that sleeps (`lockdep_unregister_key`), while `rmmod` frees that code: an
    // opener that lost the race with `remove` makes this last put. Module exit drains the
    // module's queue, so the drop runs there (`remove` flushes the queue, so the reference is
    // gone when it returns). Without memory for the job it runs here, as before.
    let wq = state.wq;
    if let Err(FreeState(state)) = super::workqueue::spawn(&wq, FreeState(state)) {
        drop(state);
    }
}

/// The final drop of a disk's state, as a job (see `free_disk_trampoline`).
struct FreeState<T: DiskOps>(Pin<KBox<DiskState<T>>>);

impl<T: DiskOps> super::workqueue::Job for FreeState<T> {
    fn run(self) {
        drop(self.0);
    }
}

/// A counted reference to an array disk's request queue, for the array's own use: to hold its
/// I/O off for a moment (a member device swapped under writes), to read and update its limits,
/// and to link devices under the disk as they join and leave.
///
/// # Invariants
///
/// `q` is a request queue this value holds a reference to (`blk_get_queue`).
pub struct Freezer {
    q: NonNull<bindings::request_queue>,
    links: Arc<Mutex<Links>>,
}

// SAFETY: A queue reference may be used and dropped from any task.
unsafe impl Send for Freezer {}
// SAFETY: Freezing is serialised by the block layer.
unsafe impl Sync for Freezer {}

impl<T: DiskOps> Disk<T> {
    /// A reference to the disk's queue, for [`Freezer::frozen`].
    pub fn freezer(&self) -> Result<Freezer> {
        // SAFETY: The disk is live (type invariant) and its queue fixed for its life; the
        // reference taken keeps the queue after the disk goes.
        let q = unsafe { (*self.disk.as_ptr()).queue };
        let q = NonNull::new(q).ok_or(ENODEV)?;
        // SAFETY: `q` is the live queue of a live disk.
        if !unsafe { bindings::blk_get_queue(q.as_ptr()) } {
            return Err(ENODEV);
        }
        // INVARIANT: reference taken above.
        Ok(Freezer {
            q,
            links: self.links.clone(),
        })
    }
}

impl Freezer {
    /// Runs `f` with no request of the queue in flight and none starting: every request has
    /// completed, and new ones wait until `f` returns. Task context; the caller must hold no
    /// request of this queue, nor anything its requests wait for.
    pub fn frozen<R>(&self, f: impl FnOnce() -> R) -> R {
        // SAFETY: We hold a reference to the queue (type invariant).
        unsafe { bindings::blk_mq_freeze_queue(self.q.as_ptr()) };
        let r = f();
        // SAFETY: As above; frozen just above by this task.
        unsafe { bindings::blk_mq_unfreeze_queue(self.q.as_ptr()) };
        r
    }
}

impl Freezer {
    /// Links `member` under the disk (`holders/` and `slaves/`), unless the disk is going
    /// away.
    pub fn link(&self, member: &MemberDev) -> Result {
        self.links.lock().link(member)
    }

    /// Unlinks `member`, which is leaving the array (and may be closed after this).
    pub fn unlink(&self, member: &MemberDev) {
        self.links.lock().unlink(member)
    }

    /// Changes the queue's limits, as md's `mddev_stack_new_rdev`: `f` gets the current ones
    /// (with the update lock held, so updates never interleave) and changes them or refuses;
    /// what it changed is committed with the queue frozen, so no request in flight was split
    /// by the old limits and runs under the new. The outer error is the block layer's refusal
    /// to commit, the inner one `f`'s. Task context.
    pub fn update_limits<E>(
        &self,
        f: impl FnOnce(&mut Limits) -> Result<(), E>,
    ) -> Result<Result<(), E>> {
        let q = self.q.as_ptr();
        // SAFETY: We hold a reference to the queue (type invariant). This is
        // `queue_limits_start_update`: the lock keeps other updates out while the copy is
        // changed.
        let lim = unsafe {
            bindings::mutex_lock(&raw mut (*q).limits_lock);
            core::ptr::read(&raw const (*q).limits)
        };
        let mut lim = Limits(lim);
        if let Err(e) = f(&mut lim) {
            // SAFETY: Locked above by this task (`queue_limits_cancel_update`).
            unsafe { bindings::mutex_unlock(&raw mut (*q).limits_lock) };
            return Ok(Err(e));
        }
        // SAFETY: The update was started above; the commit unlocks whatever it returns.
        to_result(unsafe { bindings::queue_limits_commit_update_frozen(q, &mut lim.0) })?;
        Ok(Ok(()))
    }

    /// Whether the queue offers discard.
    pub fn discard(&self) -> bool {
        // SAFETY: We hold a reference to the queue (type invariant); a racy read of a plain
        // integer that a limits update may change gives one of its values.
        unsafe {
            core::ptr::read_volatile(&raw const (*self.q.as_ptr()).limits.max_discard_sectors) != 0
        }
    }
}

impl Drop for Freezer {
    fn drop(&mut self) {
        // SAFETY: We own one reference (type invariant).
        unsafe { bindings::blk_put_queue(self.q.as_ptr()) };
    }
}
