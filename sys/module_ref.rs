//! References on this module, so that it cannot be unloaded while an array exists.

use kernel::{bindings, prelude::*};

/// One reference on a module, dropped with the value.
///
/// # Invariants
///
/// `module` points to a live module on which this value holds one reference.
pub struct ModuleRef {
    module: *mut bindings::module,
}

// SAFETY: Module references may be dropped from any thread.
unsafe impl Send for ModuleRef {}
// SAFETY: `&ModuleRef` gives no access to anything.
unsafe impl Sync for ModuleRef {}

impl ModuleRef {
    /// Takes a reference, or fails with `ENODEV` when the module is being unloaded.
    pub fn get(module: &'static ThisModule) -> Result<Self> {
        // SAFETY: `ThisModule` holds this module's valid `THIS_MODULE` pointer.
        if unsafe { bindings::try_module_get(module.as_ptr()) } {
            // INVARIANT: the reference was taken.
            Ok(Self {
                module: module.as_ptr(),
            })
        } else {
            Err(ENODEV)
        }
    }
}

impl Drop for ModuleRef {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we hold one reference.
        unsafe { bindings::module_put(self.module) };
    }
}
