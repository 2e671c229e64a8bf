//! A member slot whose device can change while I/O runs: md's `rdev` pointers with their
//! `nr_pending` counts, without RCU (the 6.12 kernel crate has no RCU read side).
//!
//! I/O takes a [`DevRef`] from the slot for each member bio, or for each batch it waits for,
//! and drops it when the I/O is over, in any context. [`DevSlot::replace`] puts another device
//! (or none) in the slot and hands the old one back only once no [`DevRef`] to it is left.

use super::member::MemberDev;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use kernel::prelude::*;

/// A device in a slot, with the references to it.
struct Held {
    dev: MemberDev,
    /// Live [`DevRef`]s.
    pending: AtomicU32,
}

/// A slot holding a member device, or none.
///
/// # Invariants
///
/// `ptr` is null or comes from `KBox::into_raw` of a `Held`. A `Held` is freed only after it
/// was taken out of `ptr`, `users` was then seen at zero, and then its `pending` at zero.
pub struct DevSlot {
    ptr: AtomicPtr<Held>,
    /// Readers between loading `ptr` and counting themselves in the device's `pending`.
    users: AtomicU32,
}

// SAFETY: The slot hands out devices, which are `Send + Sync`, through atomics.
unsafe impl Send for DevSlot {}
// SAFETY: As above.
unsafe impl Sync for DevSlot {}

/// A counted reference to the device that was in a slot: the device stays open and is not
/// handed back by [`DevSlot::replace`] while any exists.
///
/// # Invariants
///
/// `held` is a live `Held` whose `pending` counts this reference.
pub struct DevRef {
    held: NonNull<Held>,
}

// SAFETY: The count is atomic and the device `Send + Sync`: a reference may be dropped in any
// context, e.g. a bio's completion.
unsafe impl Send for DevRef {}
// SAFETY: `&DevRef` only gives `&MemberDev`.
unsafe impl Sync for DevRef {}

impl core::ops::Deref for DevRef {
    type Target = MemberDev;

    fn deref(&self) -> &MemberDev {
        // SAFETY: By the type invariant `held` is live while this reference exists.
        unsafe { &self.held.as_ref().dev }
    }
}

impl Clone for DevRef {
    fn clone(&self) -> Self {
        // SAFETY: `held` is live (type invariant); the new count keeps it so.
        unsafe { self.held.as_ref().pending.fetch_add(1, Ordering::AcqRel) };
        // INVARIANT: counted above.
        Self { held: self.held }
    }
}

impl Drop for DevRef {
    fn drop(&mut self) {
        // SAFETY: `held` is live until this count is gone; nothing is read after it.
        unsafe { self.held.as_ref().pending.fetch_sub(1, Ordering::Release) };
    }
}

/// `dev` boxed for a slot, or null.
fn held(dev: Option<MemberDev>) -> Result<*mut Held> {
    Ok(match dev {
        Some(dev) => KBox::into_raw(KBox::new(
            Held {
                dev,
                pending: AtomicU32::new(0),
            },
            GFP_KERNEL,
        )?),
        None => ptr::null_mut(),
    })
}

impl DevSlot {
    /// A slot holding `dev`.
    pub fn new(dev: Option<MemberDev>) -> Result<Self> {
        let ptr = held(dev)?;
        // INVARIANT: null or from `KBox::into_raw`.
        Ok(Self {
            ptr: AtomicPtr::new(ptr),
            users: AtomicU32::new(0),
        })
    }

    /// The device in the slot, counted; `None` when the slot is empty. Any context.
    pub fn get(&self) -> Option<DevRef> {
        self.users.fetch_add(1, Ordering::SeqCst);
        let p = NonNull::new(self.ptr.load(Ordering::SeqCst));
        if let Some(p) = p {
            // SAFETY: `replace` takes a pointer out of `ptr` and then waits for `users` to be
            // zero before it looks at `pending`; we counted ourselves in `users` before loading
            // `p`, so `p` is not freed before our count below is seen.
            unsafe { p.as_ref().pending.fetch_add(1, Ordering::SeqCst) };
        }
        self.users.fetch_sub(1, Ordering::SeqCst);
        // INVARIANT: counted above.
        p.map(|held| DevRef { held })
    }

    /// I/O in flight to the device in the slot, for read balancing; 0 when empty. A hint: the
    /// device may change at once.
    pub fn load(&self) -> u32 {
        self.get().map_or(0, |r| {
            // SAFETY: `r` keeps `held` live; minus our own count.
            unsafe { r.held.as_ref().pending.load(Ordering::Relaxed) }.saturating_sub(1)
        })
    }

    /// Whether the slot holds a device.
    pub fn is_some(&self) -> bool {
        !self.ptr.load(Ordering::Acquire).is_null()
    }

    /// Puts `dev` (or nothing) in the slot and returns the device that was there once no
    /// [`DevRef`] to it is left. Sleeps; task context.
    pub fn replace(&self, dev: Option<MemberDev>) -> Result<Option<MemberDev>> {
        // INVARIANT: null or from `KBox::into_raw`.
        let new = held(dev)?;
        let old = self.ptr.swap(new, Ordering::SeqCst);
        Ok(self.drain(old).map(|b| KBox::into_inner(b).dev))
    }

    /// Waits until no reader can reach `old`, just taken out of the slot, and no reference to
    /// it is left; then it is ours.
    fn drain(&self, old: *mut Held) -> Option<KBox<Held>> {
        let old = NonNull::new(old)?;
        // Readers that loaded `old` counted themselves in `users` first; once that is seen at
        // zero, each of them has counted itself in `old`'s `pending`. Readers stay in `users`
        // for a few instructions, so this wait is short.
        while self.users.load(Ordering::SeqCst) != 0 {
            core::hint::spin_loop();
        }
        // SAFETY: `old` is live: only this function frees it, after the waits here.
        while unsafe { old.as_ref().pending.load(Ordering::SeqCst) } != 0 {
            super::kthread::sleep_ms(1);
        }
        // SAFETY: `old` came from `KBox::into_raw` and nothing can reach it any more.
        Some(unsafe { KBox::from_raw(old.as_ptr()) })
    }
}

impl Drop for DevSlot {
    fn drop(&mut self) {
        let old = self.ptr.swap(ptr::null_mut(), Ordering::SeqCst);
        drop(self.drain(old));
    }
}
