//! Member bios: clones of request bios and data-less range bios, each with a typed context.
//!
//! A [`BioSet<C>`] reserves room for a `C` in front of every bio it allocates (the bioset's
//! `front_pad`, as dm's per-bio data). A [`Bio<C>`] owns one such bio and its context; when the
//! member completes it, [`BioCtx::end_io`] receives the same `Bio<C>` back.

use super::member::MemberDev;
use super::pagebuf::{PageBuf, PAGE_BYTES};
use super::request::RqBio;
use super::stack::{Linked, Stack};
use super::{BlkStatus, RangeOp, GFP_NOIO, GFP_NOWAIT, REQ_FAILFAST, REQ_NOWAIT, REQ_PREFLUSH};
use core::marker::PhantomData;
use core::mem::{align_of, size_of};
use core::ptr::{self, NonNull};
use kernel::{bindings, error::to_result, prelude::*, types::Opaque};

/// The context that travels with each member bio.
pub trait BioCtx: Sized + Send {
    /// Called when the member has completed `bio`, possibly in interrupt context.
    fn end_io(bio: Bio<Self>);
}

/// Bytes in front of each bio: the context, rounded up to keep the bio aligned.
const fn front_pad<C>() -> usize {
    (size_of::<C>() + 15) & !15
}

/// A bio pool whose bios carry a `C` in front.
///
/// # Invariants
///
/// `bs` is all-zero or was initialised by `bioset_init` with `front_pad::<C>()`; `bioset_exit`
/// in `drop` handles both.
#[pin_data(PinnedDrop)]
pub struct BioSet<C: BioCtx> {
    #[pin]
    bs: Opaque<bindings::bio_set>,
    _p: PhantomData<C>,
}

// SAFETY: A `bio_set` is a mempool with its own locking; allocation is allowed from any thread.
unsafe impl<C: BioCtx> Send for BioSet<C> {}
// SAFETY: As above.
unsafe impl<C: BioCtx> Sync for BioSet<C> {}

impl<C: BioCtx> BioSet<C> {
    /// Creates a bioset holding `pool_size` reserved bios.
    ///
    /// With the reserve, allocations with `GFP_NOIO` never fail: they wait for member bios in
    /// flight to come back. No rescuer: the allocations that wait are made on rraid's workers;
    /// those inside `submit_bio`, where earlier bios could wait on `current->bio_list`, are
    /// `GFP_NOWAIT` and fail instead.
    ///
    /// `vecs`: the bios carry pages of their own ([`BioSet::pages`]), so the set keeps a pool
    /// of vec tables too (`BIOSET_NEED_BVECS`).
    pub fn new(pool_size: u32, vecs: bool) -> impl PinInit<Self, Error> {
        // Contexts sit at a 16-aligned distance in front of slab-aligned bios.
        build_assert!(align_of::<C>() <= 16);
        try_pin_init!(Self {
            // SAFETY: `slot` is valid for writes; an all-zero `bio_set` is what `bioset_exit`
            // treats as empty, so the drop after a failed `bioset_init` is harmless.
            bs <- Opaque::ffi_init(|slot| unsafe { ptr::write_bytes(slot, 0, 1) }),
            _p: PhantomData,
        })
        .pin_chain(move |this| {
            // SAFETY: `this.bs` is pinned memory for a `bio_set`; `bioset_init` initialises it.
            to_result(unsafe {
                let flags = if vecs { bindings::BIOSET_NEED_BVECS } else { 0 };
                bindings::bioset_init(
                    this.bs.get(),
                    pool_size,
                    front_pad::<C>() as u32,
                    flags as i32,
                )
            })
        })
    }

    fn adopt(&self, bio: *mut bindings::bio, ctx: C) -> Result<Bio<C>> {
        let bio = NonNull::new(bio).ok_or(ENOMEM)?;
        // SAFETY: The bio came from this bioset, so `front_pad::<C>()` bytes in front of it are
        // ours and aligned for `C` (see `new`).
        unsafe { ctx_ptr::<C>(bio.as_ptr()).write(ctx) };
        // INVARIANT: the context is initialised and owned by the new `Bio`.
        Ok(Bio {
            bio,
            _p: PhantomData,
        })
    }

    /// Clones sectors `[offset, offset + len)` of `src` onto `member` at `sector`.
    ///
    /// The clone shares `src`'s pages: no data is copied. `REQ_PREFLUSH` is dropped, since
    /// flushes reach members as separate bios. `REQ_NOWAIT` is the caller's `nowait`, not the
    /// source's: a worker may wait for a member (md drops the flag too), while a clone made in
    /// `queue_rq` must not, so it is allocated without sleeping (failing when the pool is
    /// empty) and asks the member to answer "would block" rather than wait for a tag.
    #[expect(clippy::too_many_arguments)]
    pub fn clone_range<T>(
        &self,
        src: &RqBio<T>,
        offset: u64,
        len: u64,
        member: &MemberDev,
        sector: u64,
        nowait: bool,
        ctx: C,
    ) -> Result<Bio<C>> {
        if offset + len > src.sectors() || len == 0 {
            return Err(EINVAL);
        }
        let gfp = if nowait { GFP_NOWAIT } else { GFP_NOIO };
        // SAFETY: `src` is a live bio of a request in flight and `self.bs` is initialised; with
        // GFP_NOIO the mempool waits rather than fail, with GFP_NOWAIT it returns null.
        let raw =
            unsafe { bindings::bio_alloc_clone(member.bdev(), src.raw(), gfp, self.bs.get()) };
        let bio = self.adopt(raw, ctx)?;
        let b = bio.bio.as_ptr();
        // SAFETY: `b` is our fresh clone, not yet submitted; the range was checked above.
        unsafe {
            bindings::bio_trim(b, offset, len);
            (*b).bi_iter.bi_sector = sector;
            (*b).bi_opf &= !(REQ_PREFLUSH | REQ_NOWAIT);
            if nowait {
                (*b).bi_opf |= REQ_NOWAIT;
            }
        }
        Ok(bio)
    }

    /// A data-less bio for `op` over `[sector, sector + len)` of `member`.
    pub fn range(
        &self,
        op: RangeOp,
        member: &MemberDev,
        sector: u64,
        len: u64,
        ctx: C,
    ) -> Result<Bio<C>> {
        let bytes = u32::try_from(len << 9).map_err(|_| EINVAL)?;
        // SAFETY: `self.bs` is initialised; a bio with no vecs comes from the front-padded pool.
        let raw = unsafe {
            bindings::bio_alloc_bioset(member.bdev(), 0, op.opf(), GFP_NOIO, self.bs.get())
        };
        let bio = self.adopt(raw, ctx)?;
        let b = bio.bio.as_ptr();
        // SAFETY: `b` is our fresh bio, not yet submitted.
        unsafe {
            (*b).bi_iter.bi_sector = sector;
            (*b).bi_iter.bi_size = bytes;
        }
        Ok(bio)
    }
}

impl<C: BioCtx> BioSet<C> {
    /// A bio of `op` over `pages`, whole, at `sector` of `member`.
    pub fn pages(
        &self,
        member: &MemberDev,
        sector: u64,
        op: u32,
        pages: &[&PageBuf],
        ctx: C,
    ) -> Result<Bio<C>> {
        let nr = u16::try_from(pages.len()).map_err(|_| EINVAL)?;
        if nr == 0 || u32::from(nr) > bindings::BIO_MAX_VECS {
            return Err(EINVAL);
        }
        // SAFETY: `self.bs` is initialised; with GFP_NOIO the mempool waits rather than fail.
        let raw =
            unsafe { bindings::bio_alloc_bioset(member.bdev(), nr, op, GFP_NOIO, self.bs.get()) };
        let bio = self.adopt(raw, ctx)?;
        let b = bio.bio.as_ptr();
        // SAFETY: `b` is our fresh bio with room for `nr` vecs; each page is a live page the
        // caller keeps until the bio completes (`PageIo` waits for it).
        unsafe {
            (*b).bi_iter.bi_sector = sector;
            for p in pages {
                bindings::__bio_add_page(b, p.raw(), PAGE_BYTES as u32, 0);
            }
        }
        Ok(bio)
    }
}

#[pinned_drop]
impl<C: BioCtx> PinnedDrop for BioSet<C> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: By the type invariant `bs` is initialised; every `Bio<C>` from it has been put,
        // since each one keeps its request, and so the disk using this set, alive.
        unsafe { bindings::bioset_exit(self.bs.get()) };
    }
}

/// Where the context of `bio` lives.
///
/// # Safety
///
/// `bio` was allocated from a `BioSet<C>`.
unsafe fn ctx_ptr<C>(bio: *mut bindings::bio) -> *mut C {
    // SAFETY: The front pad of `front_pad::<C>()` bytes precedes the bio in one allocation.
    unsafe { bio.cast::<u8>().sub(front_pad::<C>()).cast::<C>() }
}

/// An owned member bio with its context.
///
/// # Invariants
///
/// `bio` came from a `BioSet<C>`, holds one reference owned by this value, and its front pad
/// holds an initialised `C` owned by this value.
pub struct Bio<C: BioCtx> {
    bio: NonNull<bindings::bio>,
    _p: PhantomData<C>,
}

// SAFETY: The bio and its context may move between threads; `C: Send`.
unsafe impl<C: BioCtx> Send for Bio<C> {}

impl<C: BioCtx> Bio<C> {
    /// The context.
    pub fn ctx(&self) -> &C {
        // SAFETY: By the type invariant the context is initialised and owned by `self`.
        unsafe { &*ctx_ptr::<C>(self.bio.as_ptr()) }
    }

    /// The context, mutably.
    pub fn ctx_mut(&mut self) -> &mut C {
        // SAFETY: As in `ctx`, and `&mut self` makes the access exclusive.
        unsafe { &mut *ctx_ptr::<C>(self.bio.as_ptr()) }
    }

    /// The completion status the member reported.
    pub fn status(&self) -> BlkStatus {
        // SAFETY: The bio is valid by the type invariant; the member has completed it.
        BlkStatus::from_raw(unsafe { (*self.bio.as_ptr()).bi_status })
    }

    /// Asks the member's drivers not to retry this bio (md's `MD_FAILFAST`): an error comes
    /// back at once, for the caller to use another copy.
    pub fn set_failfast(&mut self) {
        // SAFETY: The bio is ours and not yet submitted (only `submit` gives it away).
        unsafe { (*self.bio.as_ptr()).bi_opf |= REQ_FAILFAST };
    }

    /// Puts the bio and hands back its context.
    pub fn into_ctx(self) -> C {
        let bio = self.bio.as_ptr();
        core::mem::forget(self);
        // SAFETY: The context is initialised and, `self` being forgotten, read exactly once.
        let ctx = unsafe { ctx_ptr::<C>(bio).read() };
        // SAFETY: We owned the bio's reference.
        unsafe { bindings::bio_put(bio) };
        ctx
    }

    /// Sends the bio to its member; [`BioCtx::end_io`] gets it back on completion.
    pub fn submit(self) {
        let bio = self.bio.as_ptr();
        core::mem::forget(self);
        // SAFETY: The bio is fully set up and owned by us; from here on the block layer owns it
        // until `end_io_trampoline` rebuilds the `Bio`.
        unsafe {
            (*bio).bi_end_io = Some(end_io_trampoline::<C>);
            (*bio).bi_private = ptr::null_mut();
            bindings::submit_bio_noacct(bio);
        }
    }
}

impl<C: BioCtx> Drop for Bio<C> {
    fn drop(&mut self) {
        // SAFETY: The context is initialised and owned by `self`; it is moved out once.
        let ctx = unsafe { ctx_ptr::<C>(self.bio.as_ptr()).read() };
        // The bio goes back to its bioset before the context is dropped: the context may hold
        // the last reference to a request, and once that ends, the array (and the bioset with
        // it) may be freed.
        // SAFETY: We own one reference to the bio.
        unsafe { bindings::bio_put(self.bio.as_ptr()) };
        drop(ctx);
    }
}

/// `bi_end_io` of every member bio.
///
/// # Safety
///
/// Called by the block layer once per submitted `Bio<C>`.
unsafe extern "C" fn end_io_trampoline<C: BioCtx>(bio: *mut bindings::bio) {
    // SAFETY: The block layer completes a non-null bio.
    let bio = unsafe { NonNull::new_unchecked(bio) };
    // INVARIANT: The bio was submitted by `Bio::<C>::submit`, which gave up its ownership of
    // the bio and its context; it returns to the new value.
    C::end_io(Bio {
        bio,
        _p: PhantomData,
    })
}

/// A lock-free stack of member bios, linked through `bi_next`; push from any context, take all
/// at once (most recent first, [`Stack::take_all`]) from a worker.
pub type BioStack<C> = Stack<Bio<C>>;

// SAFETY: A completed bio handed back to its owner (or one not yet submitted) is not on any
// list of the block layer, so its `bi_next` is the owner's; a bio given up by `into_raw` keeps
// its reference, so it stays valid.
unsafe impl<C: BioCtx> Linked for Bio<C> {
    type Node = bindings::bio;

    fn into_raw(self) -> NonNull<bindings::bio> {
        let bio = self.bio;
        core::mem::forget(self);
        bio
    }

    unsafe fn from_raw(bio: NonNull<bindings::bio>) -> Self {
        // INVARIANT: ownership of the bio and its context returns to the new value.
        Self {
            bio,
            _p: PhantomData,
        }
    }

    unsafe fn next(bio: NonNull<bindings::bio>) -> *mut bindings::bio {
        // SAFETY: By the caller's contract the bio is valid and its link ours.
        unsafe { (*bio.as_ptr()).bi_next }
    }

    unsafe fn set_next(bio: NonNull<bindings::bio>, next: *mut bindings::bio) {
        // SAFETY: As in `next`.
        unsafe { (*bio.as_ptr()).bi_next = next };
    }
}
