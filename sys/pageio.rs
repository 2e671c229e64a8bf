//! Synchronous page I/O for the stripe cache: member bios over [`PageBuf`]s, submitted
//! together and waited for together.
//!
//! A stripe operation reads the blocks it needs from several members at once, waits, computes,
//! then writes at once and waits. [`PageIo`] counts its bios and wakes the waiter when the last
//! one completes, recording which members failed.

use super::bio::{Bio, BioCtx, BioSet};
use super::pagebuf::PageBuf;
use super::slot::DevRef;
use super::{REQ_FUA, REQ_SYNC};
use core::marker::{PhantomData, PhantomPinned};
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kernel::{bindings, prelude::*, types::Opaque};

/// The context of a page bio: its batch and the member it went to.
pub struct PageCtx {
    io: *const Inner,
    member: usize,
    /// The bio went to the member's replacement.
    repl: bool,
    /// Keeps the member's device in its slot until the bio is done.
    _dev: DevRef,
}

// SAFETY: `io` points at a batch that outlives the bio (`PageIo` waits for every bio before
// it goes away), and the batch is only touched through atomics and the completion.
unsafe impl Send for PageCtx {}

impl BioCtx for PageCtx {
    fn end_io(bio: Bio<Self>) {
        let status = bio.status();
        let (io, member, repl) = (bio.ctx().io, bio.ctx().member, bio.ctx().repl);
        // Put the bio (and the device reference) before the waiter may return.
        drop(bio);
        // SAFETY: The batch lives until its count reaches zero and the waiter is woken; this
        // bio holds one count.
        let io = unsafe { &*io };
        if !status.is_ok() {
            let mask = if repl { &io.failed_repl } else { &io.failed };
            mask.fetch_or(1u64 << (member & 63), Ordering::AcqRel);
        }
        io.put();
    }
}

/// The shared part of a batch, pinned on the waiter's stack.
///
/// # Invariants
///
/// `done` is an initialised completion; `pending` counts the bios in flight plus one for the
/// waiter, and `done` is completed when it reaches zero.
#[pin_data]
struct Inner {
    pending: AtomicU32,
    failed: AtomicU64,
    /// Members whose replacement's bio failed ([`PageIo::submit_replacement`]).
    failed_repl: AtomicU64,
    #[pin]
    done: Opaque<bindings::completion>,
    #[pin]
    _pin: PhantomPinned,
}

static DONE_KEY: super::LockKey = super::LockKey::new();

impl Inner {
    fn put(&self) {
        if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            // SAFETY: By the type invariant the completion is initialised.
            unsafe { bindings::complete(self.done.get()) };
        }
    }
}

/// A batch of page bios.
///
/// It lives inside [`PageIo::batch`], which waits for every bio it submitted before it
/// returns, so the pages they carry (borrowed for `'a`) are never freed or reused under I/O.
pub struct PageIo<'io, 'a> {
    inner: Pin<&'io Inner>,
    waited: bool,
    _pages: PhantomData<&'a PageBuf>,
}

impl<'a> PageIo<'_, 'a> {
    /// Runs `f` with an empty batch on this stack (no allocation), then waits for whatever it
    /// submitted: pages borrowed for `'a` outlive every bio.
    pub fn batch<R>(f: impl for<'io> FnOnce(&mut PageIo<'io, 'a>) -> R) -> R {
        kernel::stack_pin_init!(let inner = pin_init!(Inner {
            pending: AtomicU32::new(1),
            failed: AtomicU64::new(0),
            failed_repl: AtomicU64::new(0),
            // SAFETY: `slot` is pinned memory for a completion: `done = 0` and an initialised
            // wait queue are what `init_completion` does.
            done <- Opaque::ffi_init(|slot: *mut bindings::completion| unsafe {
                (*slot).done = 0;
                bindings::__init_swait_queue_head(
                    &raw mut (*slot).wait,
                    kernel::c_str!("rraid::pageio").as_char_ptr(),
                    DONE_KEY.as_ptr(),
                );
            }),
            _pin: PhantomPinned,
        }));
        let mut io = PageIo {
            inner: inner.as_ref(),
            waited: false,
            _pages: PhantomData,
        };
        let r = f(&mut io);
        io.wait_all();
        r
    }
}

impl<'a> PageIo<'_, 'a> {
    /// Reads (or writes) `pages` at `sector` of `dev`, member `member` of the array; `fua`
    /// makes a write durable before it completes.
    #[expect(clippy::too_many_arguments)]
    pub fn submit(
        &mut self,
        set: &BioSet<PageCtx>,
        dev: DevRef,
        member: usize,
        sector: u64,
        write: bool,
        fua: bool,
        pages: &[&'a PageBuf],
    ) -> Result {
        self.submit_to(set, dev, member, sector, write, fua, pages, false)
    }

    /// Writes `pages` at `sector` of the replacement `dev` of member `member`; its failure is
    /// told apart ([`PageIo::failed_replacements`]), never as the member's.
    pub fn submit_replacement(
        &mut self,
        set: &BioSet<PageCtx>,
        dev: DevRef,
        member: usize,
        sector: u64,
        fua: bool,
        pages: &[&'a PageBuf],
    ) -> Result {
        self.submit_to(set, dev, member, sector, true, fua, pages, true)
    }

    /// The members whose replacement's bios failed; after [`PageIo::wait`].
    pub fn failed_replacements(&self) -> u64 {
        self.inner.failed_repl.load(Ordering::Acquire)
    }

    #[expect(clippy::too_many_arguments)]
    fn submit_to(
        &mut self,
        set: &BioSet<PageCtx>,
        dev: DevRef,
        member: usize,
        sector: u64,
        write: bool,
        fua: bool,
        pages: &[&'a PageBuf],
        repl: bool,
    ) -> Result {
        if self.waited {
            return Err(EINVAL);
        }
        let op = if write {
            bindings::req_op_REQ_OP_WRITE | REQ_SYNC | if fua { REQ_FUA } else { 0 }
        } else {
            bindings::req_op_REQ_OP_READ
        };
        let bdev = dev.clone();
        let ctx = PageCtx {
            io: &*self.inner,
            member,
            repl,
            _dev: dev,
        };
        let bio = set.pages(&bdev, sector, op, pages, ctx)?;
        self.inner.pending.fetch_add(1, Ordering::AcqRel);
        bio.submit();
        Ok(())
    }

    /// Records that member `member`'s I/O failed without a bio (its slot is empty).
    pub fn fail(&mut self, member: usize) {
        self.inner
            .failed
            .fetch_or(1u64 << (member & 63), Ordering::AcqRel);
    }

    /// Waits for every bio; returns the set of members whose bios failed. Nothing more can be
    /// submitted afterwards.
    pub fn wait(&mut self) -> u64 {
        self.wait_all();
        self.inner.failed.load(Ordering::Acquire)
    }

    fn wait_all(&mut self) {
        if self.waited {
            return;
        }
        self.waited = true;
        if self.inner.pending.fetch_sub(1, Ordering::AcqRel) != 1 {
            // SAFETY: The completion is initialised; the last bio completes it.
            unsafe { bindings::wait_for_completion_io(self.inner.done.get()) };
        }
    }
}

impl Drop for PageIo<'_, '_> {
    fn drop(&mut self) {
        self.wait_all();
    }
}
