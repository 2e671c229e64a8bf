//! The request path of a disk's hardware queues: `queue_rq` maps inline or parks, a worker
//! hands over.
//!
//! Execution model: `queue_rq` never sleeps. Called inside `submit_bio` (`in_submit_bio`) it
//! may map the request at once ([`DiskOps::inline`]): the member bios it submits wait on
//! `current->bio_list` until `queue_rq` has returned, and are issued in the submitter's context,
//! as md's are. Otherwise it starts the request, parks it on its hardware queue's
//! [`RequestList`] and queues that hardware queue's work item on rraid's workqueue
//! (`WQ_MEM_RECLAIM`). The work item runs in task context under a plug of its own and
//! hands each request to [`DiskOps::handle`], which may sleep for member bios and member tags.
//! So the submitter's plug never holds member requests that a sleeping `queue_rq` waits for,
//! and a request can wait (for a retry, later for a stripe) without holding `queue_rq`.
//! Member bios that need process context after completing ([`defer`]) go back to the same
//! worker.
//!
//! The disk itself (gendisk, tag set, limits, open/release) is in `disk.rs`, which installs
//! these trampolines.

use super::bio::{Bio, BioCtx, BioStack};
use super::request::{InflightRequest, RequestChain, RequestList};
use super::workqueue::QueueRef;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use kernel::{
    bindings,
    prelude::*,
    str::CStr,
    sync::ArcBorrow,
    types::{ForeignOwnable, Opaque},
};

/// Lockdep name of the hardware queues' work items.
const WORK_NAME: &CStr = kernel::c_str!("rraid::hw_work");

/// What a disk's owner does for it.
pub trait DiskOps: Send + Sync + Sized + 'static {
    /// Context of the member bios that completions hand back to the worker with [`defer`].
    type Deferred: BioCtx + DeferredBio<Self>;
    /// Handles a started request, on a worker: task context, may sleep, under the worker's
    /// plug. The request completes when its last reference is dropped, which may be long
    /// after this returns.
    fn handle(rq: InflightRequest<Self>);
    /// Handles the requests one worker round took, in arrival order; `more` takes what was
    /// parked since (empty when nothing was). A level that gathers requests (the stripe cache)
    /// sees a round whole; the default hands each request to [`DiskOps::handle`].
    fn handle_round(rqs: RequestChain<Self>, more: &mut dyn FnMut() -> RequestChain<Self>) {
        let _ = more;
        for rq in rqs {
            Self::handle(rq);
        }
    }
    /// Handles a started request at once in `queue_rq`, inside `submit_bio` (bios it submits
    /// are queued on `current->bio_list`, to be issued after `queue_rq` returns), or returns
    /// `false`, having done nothing, to leave it to the worker. Must not sleep. `worker_busy`
    /// tells whether this hardware queue's worker has work queued or running (a hint: it may
    /// just have finished). The default leaves every request to the worker.
    fn inline(rq: &InflightRequest<Self>, worker_busy: bool) -> bool {
        let _ = (rq, worker_busy);
        false
    }
    /// A request was just started, in `queue_rq`: must not sleep. The default does nothing.
    fn queued(rq: &InflightRequest<Self>) {
        let _ = rq;
    }
    /// Handles a member bio passed to [`defer`], on the worker of its request.
    fn handle_deferred(bio: Bio<Self::Deferred>);
    /// Someone opens the disk.
    fn open(this: ArcBorrow<'_, Self>) -> Result;
    /// An opener closes the disk.
    fn release(this: ArcBorrow<'_, Self>);
}

/// A bio context that belongs to a request of a disk serving `T`.
pub trait DeferredBio<T: 'static> {
    /// The request whose reference the context holds.
    fn request(&self) -> &InflightRequest<T>;
}

/// Hands `bio` to the worker of its request's hardware queue, which passes it to
/// [`DiskOps::handle_deferred`]. Callable from any context, completions included.
pub fn defer<T: DiskOps>(bio: Bio<T::Deferred>) {
    // Held across the push and the kick: once pushed, the worker may consume the bio and end
    // its request at once, and nothing else would keep the queue alive for the kick.
    let rq = bio.ctx().request().clone();
    let hq = rq.hctx_data().cast::<HwQueue<T>>();
    // SAFETY: The hardware queue's `driver_data` is its `HwQueue<T>` (`init_hctx`),
    // which lives until `exit_hctx`, after the queue is drained of requests; `rq` is not ended
    // before it is dropped below, so the queue is not drained while `hq` is used.
    let hq = unsafe { &*hq };
    if hq.bios.push(bio) {
        hq.kick();
    }
    drop(rq);
}

/// The per-hardware-queue state: parked requests, deferred bios and the work item that drains
/// them.
///
/// # Invariants
///
/// `work` was set up with [`hw_work::<T>`] as its function; `wq` outlives this value.
#[repr(C)]
#[pin_data(PinnedDrop)]
struct HwQueue<T: DiskOps> {
    // First, so that the work pointer is the `HwQueue` pointer.
    #[pin]
    work: Opaque<bindings::work_struct>,
    rqs: RequestList<T>,
    bios: BioStack<T::Deferred>,
    /// Set by a kick, cleared as a run returns: whether the work item is queued or running.
    busy: AtomicBool,
    /// The sector after the last request parked here because it could not be mapped in
    /// `queue_rq`, until a run has sent what it took (then `u64::MAX`): a hint, read without
    /// ordering.
    parked_end: AtomicU64,
    wq: QueueRef,
}

// SAFETY: The lists are lock-free and the work item is driven by the workqueue.
unsafe impl<T: DiskOps> Send for HwQueue<T> {}
// SAFETY: As above.
unsafe impl<T: DiskOps> Sync for HwQueue<T> {}

/// Lock class of the hardware queues' work items.
static WORK_KEY: super::LockKey = super::LockKey::new();

impl<T: DiskOps> HwQueue<T> {
    fn new(wq: QueueRef) -> impl PinInit<Self> {
        // INVARIANT: the work function is `hw_work::<T>`.
        pin_init!(Self {
            // SAFETY: `slot` is valid for writes and pinned; the name and key are static.
            work <- Opaque::ffi_init(|slot| unsafe {
                bindings::init_work_with_key(
                    slot,
                    Some(hw_work::<T>),
                    false,
                    WORK_NAME.as_char_ptr(),
                    WORK_KEY.as_ptr(),
                )
            }),
            rqs: RequestList::new(),
            bios: BioStack::new(),
            busy: AtomicBool::new(false),
            parked_end: AtomicU64::new(u64::MAX),
            wq,
        })
    }

    /// Makes sure the work item runs after what was just parked. Needed only by a push onto
    /// an empty list: a push onto a non-empty one follows an earlier push's kick, whose run
    /// has not taken the list yet and takes all of it.
    fn kick(&self) {
        self.busy.store(true, Ordering::Relaxed);
        // SAFETY: The work item is initialised and pinned, the queue valid (type invariant).
        // Queueing an already pending item does nothing, and that pending run takes what was
        // parked, since it takes the lists only after it starts.
        unsafe {
            bindings::queue_work_on(
                bindings::wq_misc_consts_WORK_CPU_UNBOUND as i32,
                self.wq.raw(),
                self.work.get(),
            )
        };
    }
}

#[pinned_drop]
impl<T: DiskOps> PinnedDrop for HwQueue<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: The work item is initialised; this waits for a run still returning.
        unsafe { bindings::cancel_work_sync(self.work.get()) };
    }
}

/// Rounds of taking both lists before a run yields to the workqueue.
const WORK_ROUNDS: usize = 8;

/// The work function of a hardware queue: hands parked bios and requests to the driver, each
/// round under a plug that batches the member bios it submits.
///
/// # Safety
///
/// Called by the workqueue for the `work` of a live `HwQueue<T>`.
unsafe extern "C" fn hw_work<T: DiskOps>(work: *mut bindings::work_struct) {
    // SAFETY: `work` is the first field of a `#[repr(C)]` `HwQueue<T>`, which lives until
    // `cancel_work_sync` in its drop has waited for this run.
    let hq = unsafe { &*work.cast::<HwQueue<T>>() };
    for _ in 0..WORK_ROUNDS {
        let end = hq.parked_end.load(Ordering::Relaxed);
        let bios = hq.bios.take_all();
        let rqs = hq.rqs.take_all_fifo();
        if bios.is_empty() && rqs.is_empty() {
            break;
        }
        let mut plug = core::mem::MaybeUninit::<bindings::blk_plug>::uninit();
        // SAFETY: A work item runs in task context on a kworker, which has no plug of its own;
        // the plug stays on this frame until `blk_finish_plug` below has flushed and removed it.
        unsafe { bindings::blk_start_plug(plug.as_mut_ptr()) };
        for bio in bios {
            T::handle_deferred(bio);
        }
        T::handle_round(rqs, &mut || hq.rqs.take_all_fifo());
        // SAFETY: Started above on this task.
        unsafe { bindings::blk_finish_plug(plug.as_mut_ptr()) };
        // What this round took has gone to the members, unless a request parked since.
        let _ = hq
            .parked_end
            .compare_exchange(end, u64::MAX, Ordering::Relaxed, Ordering::Relaxed);
    }
    // Anything parked after the last round found its list empty, so its push kicked the item,
    // whose pending bit is clear while this function runs: a new run follows. A kick racing
    // with this store leaves `busy` clear over a pending run; it is only a hint.
    hq.busy.store(false, Ordering::Relaxed);
}

/// Gives `hctx` its [`HwQueue<T>`], whose work item runs on `wq`; [`exit_hctx_trampoline`]
/// takes it back.
///
/// # Safety
///
/// blk-mq is initialising `hctx` (`init_hctx`) for a queue whose `queue_rq` and `exit_hctx` are
/// [`queue_rq_trampoline::<T>`] and [`exit_hctx_trampoline::<T>`]; `wq` outlives the context.
pub(super) unsafe fn init_hctx<T: DiskOps>(
    hctx: *mut bindings::blk_mq_hw_ctx,
    wq: QueueRef,
) -> Result {
    let hq = KBox::pin_init(HwQueue::<T>::new(wq), GFP_KERNEL)?;
    // SAFETY: `driver_data` is the driver's; `exit_hctx_trampoline` takes it back.
    unsafe {
        (*hctx).driver_data =
            <Pin<KBox<HwQueue<T>>> as ForeignOwnable>::into_foreign(hq).cast_mut();
    }
    Ok(())
}

/// # Safety
///
/// Called by blk-mq on a queue set up by `Disk::add` for `T`.
pub(super) unsafe extern "C" fn queue_rq_trampoline<T: DiskOps>(
    hctx: *mut bindings::blk_mq_hw_ctx,
    bd: *const bindings::blk_mq_queue_data,
) -> bindings::blk_status_t {
    // SAFETY: `bd` and its request are valid; the queue's data is an `Arc<T>` and the tag set's
    // `cmd_size` covers `RqPdu` (see `DiskState::new`).
    let rq = unsafe { InflightRequest::<T>::start((*bd).rq) };
    T::queued(&rq);
    // SAFETY: `driver_data` of this queue's hardware contexts is their `HwQueue<T>`, live
    // while requests are issued on them.
    let hq = unsafe { &*(*hctx).driver_data.cast::<HwQueue<T>>() };
    // Outside `submit_bio` (a caller's plug flushed, kblockd) a member bio submitted here
    // would go down into the member's queue before this returns: only the worker submits.
    let in_bio = super::in_submit_bio();
    // A request that starts where the last one parked here for that reason ended follows it to
    // the worker until that has sent it: the last part of a bio blk-mq split, mapped here while
    // the parts before it waited on the worker, reached the members first, which md never does
    // (a member reading one chunk took its 4 KiB tail before its head). Requests `inline`
    // leaves to the worker by choice are not followed: a deep stream of large ones is shared
    // between the worker and the submitter on purpose.
    let follows = rq.sector() == hq.parked_end.load(Ordering::Relaxed);
    if in_bio && !follows && T::inline(&rq, hq.busy.load(Ordering::Relaxed)) {
        return bindings::BLK_STS_OK as bindings::blk_status_t;
    }
    if !in_bio || follows {
        hq.parked_end
            .store(rq.sector().wrapping_add(rq.sectors()), Ordering::Relaxed);
    }
    if hq.rqs.push(rq) {
        hq.kick();
    }
    bindings::BLK_STS_OK as bindings::blk_status_t
}

/// # Safety
///
/// Called by blk-mq when a hardware context set up by [`init_hctx`] goes away.
pub(super) unsafe extern "C" fn exit_hctx_trampoline<T: DiskOps>(
    hctx: *mut bindings::blk_mq_hw_ctx,
    _idx: core::ffi::c_uint,
) {
    // SAFETY: `driver_data` came from `into_foreign` in `init_hctx`; the queue is drained, so
    // nothing parks on it any more. Dropping it waits for a running work item.
    unsafe {
        let hq = core::mem::take(&mut (*hctx).driver_data);
        drop(<Pin<KBox<HwQueue<T>>> as ForeignOwnable>::from_foreign(hq));
    }
}
