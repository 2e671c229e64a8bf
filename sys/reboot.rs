//! The reboot notifier: md's `md_notify_reboot`, so that a clean reboot or power-off leaves
//! every array marked clean on its members.
//!
//! `register_reboot_notifier` is exported but not in the generated bindings (6.12's
//! `bindings_helper.h` does not include `linux/reboot.h`), so it is declared here.

use kernel::{bindings, prelude::*, sync::Arc, types::Opaque};

extern "C" {
    fn register_reboot_notifier(nb: *mut bindings::notifier_block) -> core::ffi::c_int;
    fn unregister_reboot_notifier(nb: *mut bindings::notifier_block) -> core::ffi::c_int;
}

/// What runs at reboot, halt and power-off, in task context, before devices shut down.
pub trait RebootOps: Send + Sync + 'static {
    /// The system is going down.
    fn reboot(&self);
}

/// A registered reboot notifier calling [`RebootOps::reboot`] on its data.
///
/// # Invariants
///
/// `nb` is registered with `register_reboot_notifier` from construction until drop, and its
/// `notifier_call` is [`notify::<T>`].
#[repr(C)]
#[pin_data(PinnedDrop)]
pub struct RebootNotifier<T: RebootOps> {
    // First, so that the notifier block's address is the notifier's.
    #[pin]
    nb: Opaque<bindings::notifier_block>,
    data: Arc<T>,
}

// SAFETY: The notifier block is only touched by the notifier chain under its own lock.
unsafe impl<T: RebootOps> Send for RebootNotifier<T> {}
// SAFETY: As above; `data` is `Sync`.
unsafe impl<T: RebootOps> Sync for RebootNotifier<T> {}

/// # Safety
///
/// Called by the reboot notifier chain with the block of a live [`RebootNotifier<T>`].
unsafe extern "C" fn notify<T: RebootOps>(
    nb: *mut bindings::notifier_block,
    _action: usize,
    _data: *mut core::ffi::c_void,
) -> core::ffi::c_int {
    // SAFETY: `nb` is the first field of a `#[repr(C)]` `RebootNotifier<T>`, registered (so
    // alive) until its drop unregisters it, which waits for running callbacks.
    let this = unsafe { &*nb.cast::<RebootNotifier<T>>() };
    this.data.reboot();
    bindings::NOTIFY_DONE as core::ffi::c_int
}

impl<T: RebootOps> RebootNotifier<T> {
    /// Registers a notifier that calls `data.reboot()`.
    pub fn new(data: Arc<T>) -> Result<Pin<KBox<Self>>> {
        let this = KBox::pin_init(
            pin_init!(Self {
                // SAFETY: `slot` is valid for writes; the block is set up before it is
                // registered below.
                nb <- Opaque::ffi_init(|slot: *mut bindings::notifier_block| unsafe {
                    slot.write(bindings::notifier_block {
                        notifier_call: Some(notify::<T>),
                        next: core::ptr::null_mut(),
                        priority: 0,
                    })
                }),
                data,
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: The block is pinned inside the box, which outlives the registration (drop
        // unregisters it first).
        kernel::error::to_result(unsafe { register_reboot_notifier(this.nb.get()) })?;
        // INVARIANT: registered above with `notify::<T>`.
        Ok(this)
    }
}

#[pinned_drop]
impl<T: RebootOps> PinnedDrop for RebootNotifier<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Registered since construction (type invariant); unregistering waits for a
        // callback in progress (the chain's rwsem).
        unsafe { unregister_reboot_notifier(self.nb.get()) };
    }
}
