//! Started blk-mq requests, counted until all of their member I/O has completed.
//!
//! A request stays with the driver from `queue_rq` until its last [`InflightRequest`] is
//! dropped. Each piece of member I/O holds one, so the request completes exactly when the
//! last piece does, with the first error any piece recorded. Work that must wait (a retry, or a
//! later stripe read-compute-write) keeps a reference and completes the request later; a
//! [`RequestList`] parks accepted requests for a worker.
//!
//! The block layer changes some fields of a request and its bios concurrently (flags, reference
//! counts), so this file never forms a Rust reference to a `struct request` or `struct bio`: it
//! reads the fields it needs through raw pointers.

use super::stack::{Chain, Linked, Stack};
use super::{BlkStatus, ReqOp, REQ_FUA};
use core::marker::PhantomData;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicU8, Ordering};
use kernel::page::PAGE_SIZE;
use kernel::{bindings, sync::Arc, sync::ArcBorrow, types::ForeignOwnable};

// `bv_page + n` names the n-th page of a multi-page bvec only with a virtually contiguous
// memmap.
#[cfg(not(CONFIG_SPARSEMEM_VMEMMAP))]
compile_error!("rraid needs CONFIG_SPARSEMEM_VMEMMAP");

/// Driver state kept in each request's PDU (`blk_mq_rq_to_pdu`).
#[repr(C)]
pub(crate) struct RqPdu {
    /// Live [`InflightRequest`] references.
    pending: AtomicU32,
    /// First error recorded, or 0.
    status: AtomicU8,
    /// The next request while this one is parked on a [`RequestList`].
    next: AtomicPtr<bindings::request>,
    /// Counters in the queue data that count this request until it ends
    /// ([`InflightRequest::count_in`]), or null.
    counters: [AtomicPtr<AtomicU32>; 2],
    /// An [`EndHook`] of the queue data's type, run as the request ends
    /// ([`InflightRequest::on_end`]), or null.
    on_end: AtomicPtr<()>,
}

/// What runs when a request ends: its queue data, first sector, length in sectors, and whether
/// it succeeded.
pub type EndHook<T> = fn(&T, u64, u64, bool);

/// A counted reference to a started request whose queue data is an `Arc<T>`.
///
/// # Invariants
///
/// `rq` points to a request that was started with `blk_mq_start_request`, whose PDU is an
/// initialised [`RqPdu`], and whose queue's `queuedata` came from `Arc<T>::into_foreign`.
/// `pending` in the PDU counts the live `InflightRequest`s of this request, so it is at least 1
/// while this one exists, and the request is not ended before that count reaches zero.
pub struct InflightRequest<T: 'static> {
    rq: NonNull<bindings::request>,
    _p: PhantomData<Arc<T>>,
}

// SAFETY: The request may be completed from any context; all shared state is atomic.
unsafe impl<T: Send + Sync> Send for InflightRequest<T> {}
// SAFETY: As above; `&InflightRequest` only reads immutable request fields and atomics.
unsafe impl<T: Send + Sync> Sync for InflightRequest<T> {}

impl<T: 'static> InflightRequest<T> {
    /// Starts `rq` and returns its first reference.
    ///
    /// # Safety
    ///
    /// `rq` is a request passed to `queue_rq` of a queue whose `queuedata` came from
    /// `Arc<T>::into_foreign` and whose tag set's `cmd_size` is at least
    /// `size_of::<RqPdu>()`. It has not been started.
    pub(crate) unsafe fn start(rq: *mut bindings::request) -> Self {
        // SAFETY: By the caller's contract `rq` is valid and not yet started.
        unsafe { bindings::blk_mq_start_request(rq) };
        let pdu = pdu_ptr(rq);
        // SAFETY: The driver owns the PDU of a request it was handed; nothing else reads it.
        unsafe {
            pdu.write(RqPdu {
                pending: AtomicU32::new(1),
                status: AtomicU8::new(0),
                next: AtomicPtr::new(ptr::null_mut()),
                counters: [const { AtomicPtr::new(ptr::null_mut()) }; 2],
                on_end: AtomicPtr::new(ptr::null_mut()),
            })
        };
        // INVARIANT: started, PDU initialised with `pending == 1` for this reference.
        Self {
            // SAFETY: `rq` is non-null by the caller's contract.
            rq: unsafe { NonNull::new_unchecked(rq) },
            _p: PhantomData,
        }
    }

    fn pdu(&self) -> &RqPdu {
        pdu_of(self.rq.as_ptr())
    }

    /// The queue data of the request's disk.
    pub fn data(&self) -> ArcBorrow<'_, T> {
        // SAFETY: By the type invariant the request is valid, and its queue's `queuedata` came
        // from `Arc<T>::into_foreign`; the disk keeps that `Arc` until its final release, which
        // comes after its queue is drained of requests, so past `self`.
        unsafe { <Arc<T> as ForeignOwnable>::borrow((*(*self.rq.as_ptr()).q).queuedata) }
    }

    /// Counts the request in the counter `f` picks out of the queue data, until the request
    /// ends (the counter is decremented just before `blk_mq_end_request`). At most twice per
    /// request, from the context that started it; a third counter is not counted.
    pub fn count_in(&self, f: impl FnOnce(&T) -> &AtomicU32) {
        let data = self.data();
        let counter = f(&data);
        let Some(slot) = self
            .pdu()
            .counters
            .iter()
            .find(|c| c.load(Ordering::Relaxed).is_null())
        else {
            return;
        };
        // SeqCst: the count pairs with a reader that publishes a flag and then checks it.
        counter.fetch_add(1, Ordering::SeqCst);
        slot.store(ptr::from_ref(counter).cast_mut(), Ordering::Release);
    }

    /// Runs `f` when the request ends, before its [`InflightRequest::count_in`] counter drops
    /// and before blk-mq hears of it. Once per request; from any context, as `f` will be.
    pub fn on_end(&self, f: EndHook<T>) {
        self.pdu()
            .on_end
            .store(f as *const () as *mut (), Ordering::Release);
    }

    /// The `driver_data` of the hardware queue the request was issued on.
    pub(crate) fn hctx_data(&self) -> *mut core::ffi::c_void {
        // SAFETY: A started request's `mq_hctx` is valid until the request is freed.
        unsafe { (*(*self.rq.as_ptr()).mq_hctx).driver_data }
    }

    /// The index of the hardware queue the request was issued on (one per CPU, see `disk.rs`).
    pub fn hw_queue(&self) -> usize {
        // SAFETY: A started request's `mq_hctx` is valid until the request is freed.
        unsafe { (*(*self.rq.as_ptr()).mq_hctx).queue_num as usize }
    }

    /// First sector of the request.
    pub fn sector(&self) -> u64 {
        // SAFETY: Valid by the type invariant; the position is fixed while the driver owns it.
        unsafe { (*self.rq.as_ptr()).__sector }
    }

    /// Length of the request in sectors.
    pub fn sectors(&self) -> u64 {
        // SAFETY: As in `sector`.
        u64::from(unsafe { (*self.rq.as_ptr()).__data_len } >> 9)
    }

    fn cmd_flags(&self) -> u32 {
        // SAFETY: As in `sector`; the operation and flags are fixed once the request is started.
        unsafe { (*self.rq.as_ptr()).cmd_flags }
    }

    /// The request's operation.
    pub fn op(&self) -> ReqOp {
        ReqOp::from_opf(self.cmd_flags())
    }

    /// Whether the request asks for forced unit access.
    pub fn fua(&self) -> bool {
        self.cmd_flags() & REQ_FUA != 0
    }

    /// Whether a write-zeroes request asks to keep the blocks allocated.
    pub fn no_unmap(&self) -> bool {
        self.cmd_flags() & super::REQ_NOUNMAP != 0
    }

    /// Records `status` as the request's result unless an error is already recorded.
    pub fn set_error(&self, status: BlkStatus) {
        if !status.is_ok() {
            let _ = self.pdu().status.compare_exchange(
                0,
                status.raw(),
                Ordering::AcqRel,
                Ordering::Acquire,
            );
        }
    }

    /// The bios of the request, each with its own reference to the request.
    pub fn bios(&self) -> RqBios<'_, T> {
        RqBios {
            rq: self,
            // SAFETY: Valid by the type invariant; the bio list is fixed once started.
            next: unsafe { (*self.rq.as_ptr()).bio },
        }
    }
}

/// Where the PDU of `rq` lies: right after the request, as `blk_mq_rq_to_pdu` (`rq + 1`) puts
/// it, computed here rather than through that helper's out-of-line call on every access. The
/// tag set's `cmd_size` covers an `RqPdu` there, and blk-mq aligns it for one (the request's
/// own alignment, which is at least a pointer's).
fn pdu_ptr(rq: *mut bindings::request) -> *mut RqPdu {
    rq.wrapping_add(1).cast::<RqPdu>()
}

/// The PDU of a started request.
fn pdu_of<'a>(rq: *mut bindings::request) -> &'a RqPdu {
    // SAFETY: Callers pass a request held by an `InflightRequest` (or parked in a
    // `RequestList`): its PDU is an initialised `RqPdu` that lives as long as the request, and
    // it is only accessed through atomics.
    unsafe { &*pdu_ptr(rq) }
}

/// Requests accepted by `queue_rq` and parked for a worker: push from any context, take all in
/// arrival order ([`Stack::take_all_fifo`]). Linked through their PDUs, so parking allocates
/// nothing; each parked request holds one [`InflightRequest<T>`] reference owned by the list.
pub type RequestList<T> = Stack<InflightRequest<T>>;

/// Requests taken from a [`RequestList`]; those not consumed are dropped (completed) with it.
pub type RequestChain<T> = Chain<InflightRequest<T>>;

// SAFETY: `RqPdu::next` is the driver's, used only to park a request on a `RequestList`, and a
// request given up by `into_raw` keeps its reference, so the request and its PDU stay valid.
unsafe impl<T: 'static> Linked for InflightRequest<T> {
    type Node = bindings::request;

    /// Gives up this reference without dropping it; [`Linked::from_raw`] takes it back.
    fn into_raw(self) -> NonNull<bindings::request> {
        let rq = self.rq;
        core::mem::forget(self);
        rq
    }

    unsafe fn from_raw(rq: NonNull<bindings::request>) -> Self {
        // INVARIANT: the reference given up by `into_raw` is taken back.
        Self {
            rq,
            _p: PhantomData,
        }
    }

    // A request given up by `into_raw` still holds its reference, as `pdu_of` needs.
    unsafe fn next(rq: NonNull<bindings::request>) -> *mut bindings::request {
        pdu_of(rq.as_ptr()).next.load(Ordering::Relaxed)
    }

    unsafe fn set_next(rq: NonNull<bindings::request>, next: *mut bindings::request) {
        pdu_of(rq.as_ptr()).next.store(next, Ordering::Relaxed)
    }
}

impl<T: 'static> Clone for InflightRequest<T> {
    fn clone(&self) -> Self {
        // Relaxed is enough: the caller already holds a reference, so the count cannot reach
        // zero concurrently (as for `Arc::clone`).
        self.pdu().pending.fetch_add(1, Ordering::Relaxed);
        // INVARIANT: the count now includes the new reference.
        Self {
            rq: self.rq,
            _p: PhantomData,
        }
    }
}

impl<T: 'static> Drop for InflightRequest<T> {
    fn drop(&mut self) {
        let pdu = self.pdu();
        if pdu.pending.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        let status = pdu.status.load(Ordering::Acquire);
        let hook = pdu.on_end.load(Ordering::Acquire);
        if !hook.is_null() {
            // SAFETY: Only `on_end` stores here, and it stores an `EndHook<T>` of this request's
            // own `T`; a function pointer survives the round trip through a data pointer.
            let f = unsafe { core::mem::transmute::<*mut (), EndHook<T>>(hook) };
            f(&self.data(), self.sector(), self.sectors(), status == 0);
        }
        for c in &pdu.counters {
            let counter = c.load(Ordering::Acquire);
            if !counter.is_null() {
                // SAFETY: `count_in` took the counter from the queue data, which outlives every
                // request of the queue (see `data`).
                unsafe { (*counter).fetch_sub(1, Ordering::SeqCst) };
            }
        }
        // SAFETY: This was the last reference, so all member I/O of the request is done and
        // nothing else will touch it; ending it hands it back to blk-mq exactly once.
        unsafe { bindings::blk_mq_end_request(self.rq.as_ptr(), status) };
    }
}

/// Iterator over a request's bios; see [`InflightRequest::bios`].
pub struct RqBios<'a, T: 'static> {
    rq: &'a InflightRequest<T>,
    next: *mut bindings::bio,
}

impl<T: 'static> Iterator for RqBios<'_, T> {
    type Item = RqBio<T>;

    fn next(&mut self) -> Option<RqBio<T>> {
        let bio = NonNull::new(self.next)?;
        // SAFETY: The bios of a request in flight stay linked and valid until it is ended,
        // which cannot happen while `self.rq` is alive.
        self.next = unsafe { (*bio.as_ptr()).bi_next };
        // INVARIANT: `bio` belongs to the request referenced by the clone.
        Some(RqBio {
            rq: self.rq.clone(),
            bio,
        })
    }
}

/// One bio of a request, holding the request (and so the bio) alive.
///
/// # Invariants
///
/// `bio` is one of `rq`'s bios; it stays valid while `rq` is held.
pub struct RqBio<T: 'static> {
    rq: InflightRequest<T>,
    bio: NonNull<bindings::bio>,
}

// SAFETY: As for `InflightRequest`: the bio is only read, and the request is `Send`.
unsafe impl<T: Send + Sync> Send for RqBio<T> {}
// SAFETY: As above.
unsafe impl<T: Send + Sync> Sync for RqBio<T> {}

impl<T: 'static> RqBio<T> {
    /// The request the bio belongs to.
    pub fn request(&self) -> &InflightRequest<T> {
        &self.rq
    }

    /// Another handle to the same bio.
    pub fn clone_ref(&self) -> Self {
        // INVARIANT: same bio, same request.
        Self {
            rq: self.rq.clone(),
            bio: self.bio,
        }
    }

    pub(crate) fn raw(&self) -> *mut bindings::bio {
        self.bio.as_ptr()
    }

    fn iter(&self) -> bindings::bvec_iter {
        // SAFETY: By the type invariant the bio is valid; its iterator is not advanced while
        // the request is with the driver (clones advance their own copies).
        unsafe { (*self.bio.as_ptr()).bi_iter }
    }

    /// First array sector of the bio.
    pub fn sector(&self) -> u64 {
        self.iter().bi_sector
    }

    /// Length of the bio in sectors.
    pub fn sectors(&self) -> u64 {
        u64::from(self.iter().bi_size >> 9)
    }

    /// Copies the bio's data from byte `skip` on into `buf` (as much as `buf` holds).
    pub fn copy_out(&self, skip: usize, buf: &mut [u8]) {
        self.for_each_segment(skip, buf.len(), |seg, n, at| {
            if let Some(dst) = buf.get_mut(at..at + n) {
                // SAFETY: `seg` is mapped for `n` bytes of the bio's page, valid for reads, and
                // does not overlap `buf`, a driver buffer.
                unsafe { core::ptr::copy_nonoverlapping(seg.as_ptr(), dst.as_mut_ptr(), n) };
            }
        });
    }

    /// Copies `buf` into the bio's data from byte `skip` on (a read's destination).
    pub fn copy_in(&self, skip: usize, buf: &[u8]) {
        self.for_each_segment(skip, buf.len(), |seg, n, at| {
            if let Some(src) = buf.get(at..at + n) {
                // SAFETY: `seg` is mapped for `n` bytes of the bio's page, valid for writes:
                // the bio is a read the driver is filling.
                unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), seg.as_ptr(), n) };
            }
        });
    }

    /// Calls `f(addr, n, at)` for each mapped piece of bytes `skip..skip + len` of the bio's
    /// data, `at` being the piece's offset from `skip`. Walks a copy of the bio's iterator, so
    /// the bio itself is not advanced.
    fn for_each_segment(
        &self,
        mut skip: usize,
        mut len: usize,
        mut f: impl FnMut(NonNull<u8>, usize, usize),
    ) {
        let bio = self.bio.as_ptr();
        let mut iter = self.iter();
        // SAFETY: The bio is valid (type invariant); its vec table is not changed while the
        // request is in flight.
        let vecs = unsafe { (*bio).bi_io_vec };
        let mut at = 0;
        while len > 0 && iter.bi_size > 0 {
            // SAFETY: `bi_idx` stays below the bio's vec count while `bi_size` is non-zero.
            let bv = unsafe { &*vecs.add(iter.bi_idx as usize) };
            let done = iter.bi_bvec_done as usize;
            let seg = (bv.bv_len as usize - done).min(iter.bi_size as usize);
            if skip < seg {
                let n = (seg - skip).min(len);
                let mut off = bv.bv_offset as usize + done + skip;
                let mut left = n;
                while left > 0 {
                    let po = off % PAGE_SIZE;
                    let c = (PAGE_SIZE - po).min(left);
                    // SAFETY: A multi-page bvec covers physically contiguous pages, whose
                    // `struct page`s are contiguous too (vmemmap); without highmem the
                    // mapping is the direct map and needs no unmapping order.
                    let addr = unsafe {
                        let page = bv.bv_page.add(off / PAGE_SIZE);
                        bindings::kmap_local_page(page).cast::<u8>().add(po)
                    };
                    if let Some(p) = NonNull::new(addr) {
                        f(p, c, at);
                    }
                    // SAFETY: Mapped just above.
                    unsafe { bindings::kunmap_local(addr.cast()) };
                    at += c;
                    off += c;
                    left -= c;
                }
                len -= n;
                skip = 0;
            } else {
                skip -= seg;
            }
            iter.bi_size -= seg as u32;
            iter.bi_bvec_done += seg as u32;
            if iter.bi_bvec_done >= bv.bv_len {
                iter.bi_idx += 1;
                iter.bi_bvec_done = 0;
            }
        }
    }
}
