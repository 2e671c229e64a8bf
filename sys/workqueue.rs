//! rraid's own workqueue, where member I/O is issued (see `sys::disk`).
//!
//! The system workqueue has no rescuer, so I/O that waits on it can deadlock under memory
//! pressure; this one is `WQ_MEM_RECLAIM`. It is unbound, as loop's workers are: a request is
//! mapped on whichever CPU of the submitter's cache domain is free, so the submitter goes on
//! submitting while a worker maps (a per-CPU worker had to share the submitter's CPU), and
//! high-priority, so mapping is not queued behind other work. Destroying it at module exit also
//! waits for any work still returning into module text.

use core::ptr::NonNull;
use kernel::{bindings, c_str, prelude::*};

/// The module's workqueue.
///
/// # Invariants
///
/// `wq` came from `alloc_workqueue` and is destroyed in `drop`. The module drops it only in its
/// exit path, after every array (each of which holds a module reference) is gone, so
/// [`QueueRef`]s held by arrays never outlive it.
pub struct ModuleQueue {
    wq: NonNull<bindings::workqueue_struct>,
}

// SAFETY: Workqueues may be used and destroyed from any thread.
unsafe impl Send for ModuleQueue {}
// SAFETY: As above.
unsafe impl Sync for ModuleQueue {}

impl ModuleQueue {
    /// Allocates the queue.
    pub fn new() -> Result<Self> {
        // SAFETY: The format is a NUL-terminated string with no conversions.
        let wq = unsafe {
            bindings::alloc_workqueue(
                c_str!("rraid").as_char_ptr(),
                bindings::wq_flags_WQ_MEM_RECLAIM
                    | bindings::wq_flags_WQ_HIGHPRI
                    | bindings::wq_flags_WQ_UNBOUND,
                0,
            )
        };
        // INVARIANT: allocated above.
        Ok(Self {
            wq: NonNull::new(wq).ok_or(ENOMEM)?,
        })
    }

    /// A handle for arrays.
    pub fn handle(&self) -> QueueRef {
        QueueRef { wq: self.wq }
    }
}

impl Drop for ModuleQueue {
    fn drop(&mut self) {
        // SAFETY: By the type invariant; this drains pending work first.
        unsafe { bindings::destroy_workqueue(self.wq.as_ptr()) };
    }
}

/// A handle to the module's workqueue, valid while the module is loaded.
///
/// # Invariants
///
/// See [`ModuleQueue`]: the queue outlives every holder.
#[derive(Clone, Copy)]
pub struct QueueRef {
    wq: NonNull<bindings::workqueue_struct>,
}

// SAFETY: As for `ModuleQueue`.
unsafe impl Send for QueueRef {}
// SAFETY: As for `ModuleQueue`.
unsafe impl Sync for QueueRef {}

impl QueueRef {
    pub(crate) fn raw(&self) -> *mut bindings::workqueue_struct {
        self.wq.as_ptr()
    }
}

impl QueueRef {
    /// The queue, for `kernel::workqueue` work items.
    pub fn queue(&self) -> &kernel::workqueue::Queue {
        // SAFETY: By the type invariant the queue outlives every `QueueRef`, so it outlives
        // this borrow.
        unsafe { kernel::workqueue::Queue::from_raw(self.wq.as_ptr()) }
    }
}
