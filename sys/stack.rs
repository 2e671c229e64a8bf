//! A lock-free intrusive stack: owned values parked through a link inside the object they own,
//! so parking allocates nothing. Push from any context (interrupts included), take everything at
//! once from a worker.
//!
//! Parked requests (`RequestList`, linked through their PDUs) and deferred member bios
//! (`BioStack`, linked through `bi_next`) are both this stack.

use core::marker::PhantomData;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, Ordering};

/// An owning handle whose object has a link field the handle's owner may use to chain objects.
///
/// # Safety
///
/// Between [`Linked::into_raw`] and the matching [`Linked::from_raw`], nothing but the holder of
/// the raw pointer reads or writes the node's link (through [`Linked::next`] and
/// [`Linked::set_next`]), and the node stays valid.
pub unsafe trait Linked: Sized {
    /// The object the handle owns.
    type Node;

    /// Gives up the handle, keeping what it owns alive; [`Linked::from_raw`] takes it back.
    fn into_raw(self) -> NonNull<Self::Node>;

    /// Takes back a handle given up by [`Linked::into_raw`].
    ///
    /// # Safety
    ///
    /// `node` came from [`Linked::into_raw`] of a `Self`, and is taken back once.
    unsafe fn from_raw(node: NonNull<Self::Node>) -> Self;

    /// The node's link.
    ///
    /// # Safety
    ///
    /// `node` came from [`Linked::into_raw`] and has not been taken back.
    unsafe fn next(node: NonNull<Self::Node>) -> *mut Self::Node;

    /// Sets the node's link.
    ///
    /// # Safety
    ///
    /// As for [`Linked::next`].
    unsafe fn set_next(node: NonNull<Self::Node>, next: *mut Self::Node);
}

/// A lock-free stack of `L`s, linked through their nodes.
///
/// # Invariants
///
/// `head` is null or the most recently pushed of a chain of nodes linked through
/// [`Linked::next`], each of which came from [`Linked::into_raw`] and is owned by the stack.
pub struct Stack<L: Linked> {
    head: AtomicPtr<L::Node>,
    _p: PhantomData<L>,
}

// SAFETY: The chain is only reached through atomics, and the values it owns are `Send`.
unsafe impl<L: Linked + Send> Send for Stack<L> {}
// SAFETY: `push` is a CAS loop and the takes are one swap, all safe to race; a value pushed on
// one thread may be taken on another, which `L: Send` allows.
unsafe impl<L: Linked + Send> Sync for Stack<L> {}

impl<L: Linked> Stack<L> {
    /// An empty stack.
    pub const fn new() -> Self {
        Self {
            head: AtomicPtr::new(ptr::null_mut()),
            _p: PhantomData,
        }
    }

    /// Pushes `value`; safe in any context. Returns whether the stack was empty before.
    pub fn push(&self, value: L) -> bool {
        let node = value.into_raw();
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            // SAFETY: `node` came from `into_raw` just above, and we own it until the CAS
            // publishes it.
            unsafe { L::set_next(node, head) };
            match self.head.compare_exchange_weak(
                head,
                node.as_ptr(),
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                // INVARIANT: `node` heads the chain, linked to the previous head.
                Ok(_) => return head.is_null(),
                Err(h) => head = h,
            }
        }
    }

    /// Takes every value pushed so far, most recent first.
    pub fn take_all(&self) -> Chain<L> {
        // INVARIANT: the chain's values move from the stack to the returned value.
        Chain {
            next: self.head.swap(ptr::null_mut(), Ordering::Acquire),
            _p: PhantomData,
        }
    }

    /// Takes every value pushed so far, oldest first.
    pub fn take_all_fifo(&self) -> Chain<L> {
        let mut chain = self.head.swap(ptr::null_mut(), Ordering::Acquire);
        // Reverse the LIFO chain into arrival order.
        let mut fifo = ptr::null_mut();
        while let Some(node) = NonNull::new(chain) {
            // SAFETY: Every node of the chain came from `into_raw` and is owned by us since the
            // swap above.
            unsafe {
                chain = L::next(node);
                L::set_next(node, fifo);
            }
            fifo = node.as_ptr();
        }
        // INVARIANT: the chain's values move from the stack to the returned value.
        Chain {
            next: fifo,
            _p: PhantomData,
        }
    }
}

impl<L: Linked> Default for Stack<L> {
    fn default() -> Self {
        Self::new()
    }
}

impl<L: Linked> Drop for Stack<L> {
    fn drop(&mut self) {
        drop(self.take_all());
    }
}

/// Values taken from a [`Stack`]; those not consumed are dropped with it.
///
/// # Invariants
///
/// `next` is null or the first of a chain of nodes linked through [`Linked::next`], each of
/// which came from [`Linked::into_raw`] and is owned by this value.
pub struct Chain<L: Linked> {
    next: *mut L::Node,
    _p: PhantomData<L>,
}

impl<L: Linked> Chain<L> {
    /// Whether the chain holds no value.
    pub fn is_empty(&self) -> bool {
        self.next.is_null()
    }
}

impl<L: Linked> Iterator for Chain<L> {
    type Item = L;

    fn next(&mut self) -> Option<L> {
        let node = NonNull::new(self.next)?;
        // SAFETY: By the type invariant `node` came from `into_raw` and is owned by the chain;
        // it leaves the chain here, unlinked, and is taken back once.
        unsafe {
            self.next = L::next(node);
            L::set_next(node, ptr::null_mut());
            Some(L::from_raw(node))
        }
    }
}

impl<L: Linked> Drop for Chain<L> {
    fn drop(&mut self) {
        for value in self.by_ref() {
            drop(value);
        }
    }
}
