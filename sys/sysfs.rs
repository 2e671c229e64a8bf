//! sysfs directories of attribute files backed by a Rust value.
//!
//! Each directory is a dynamic kobject with one `kobj_attribute` per file. The attributes live
//! in the directory's own allocation; a file's callback finds its directory's value from the
//! attribute pointer it is given. Files are removed, which waits for running callbacks, before
//! the value is freed.

use super::LockKey;
use core::fmt;
use core::marker::PhantomData;
use core::ptr::NonNull;
use kernel::{bindings, prelude::*, str::CStr};

/// A kobject that new directories can be created under.
///
/// # Invariants
///
/// `kobj` is a live kobject for at least `'a`.
pub struct Parent<'a> {
    kobj: NonNull<bindings::kobject>,
    _p: PhantomData<&'a ()>,
}

impl<'a> Parent<'a> {
    /// # Safety
    ///
    /// `kobj` is a valid kobject for `'a`.
    pub(crate) unsafe fn from_raw(kobj: *mut bindings::kobject) -> Self {
        // INVARIANT: by the caller's contract.
        Self {
            // SAFETY: Valid, so non-null.
            kobj: unsafe { NonNull::new_unchecked(kobj) },
            _p: PhantomData,
        }
    }
}

impl Parent<'static> {
    /// `/sys/kernel`.
    pub fn kernel() -> Result<Self> {
        // SAFETY: `kernel_kobj` is set up at boot and never freed.
        let kobj = unsafe { bindings::kernel_kobj };
        // INVARIANT: `kernel_kobj` lives forever.
        Ok(Self {
            kobj: NonNull::new(kobj).ok_or(ENODEV)?,
            _p: PhantomData,
        })
    }
}

/// One attribute file.
pub struct Attr {
    /// File name.
    pub name: &'static CStr,
    /// Whether reading calls [`SysfsOps::show`].
    pub read: bool,
    /// Whether writing calls [`SysfsOps::store`] (root only).
    pub write: bool,
}

/// The value behind a sysfs directory.
pub trait SysfsOps: Send + Sync + Sized + 'static {
    /// The files, in the order `idx` counts them.
    const ATTRS: &'static [Attr];
    /// A lock class for this directory's files; each implementation returns its own static one
    /// (a `static LockKey`), so that lockdep keeps directories apart.
    fn lock_class() -> &'static LockKey;
    /// Writes the value of file `idx`.
    fn show(&self, idx: usize, out: &mut Buf<'_>) -> Result;
    /// Takes the bytes written to file `idx`.
    fn store(&self, idx: usize, input: &[u8]) -> Result;
}

/// The page a `show` writes into.
pub struct Buf<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl fmt::Write for Buf<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len.checked_add(s.len()).ok_or(fmt::Error)?;
        let dst = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// An attribute and the way back to its directory's value.
#[repr(C)]
struct Slot {
    kattr: bindings::kobj_attribute,
    data: *const core::ffi::c_void,
    idx: usize,
}

/// A sysfs directory whose files show and store through a `T`.
///
/// # Invariants
///
/// `kobj` is a dynamic kobject from `kobject_create_and_add`, owned by this value. The first
/// `created` slots are registered as files of it. Each slot's `data` points to `*data`. `slots`
/// is never reallocated.
pub struct SysfsDir<T: SysfsOps> {
    kobj: NonNull<bindings::kobject>,
    slots: KVec<Slot>,
    created: usize,
    data: Pin<KBox<T>>,
}

// SAFETY: The directory may be dropped from any thread; `T: Send + Sync`.
unsafe impl<T: SysfsOps> Send for SysfsDir<T> {}
// SAFETY: `&SysfsDir` only gives `&T`.
unsafe impl<T: SysfsOps> Sync for SysfsDir<T> {}

impl<T: SysfsOps> SysfsDir<T> {
    /// Creates directory `name` under `parent` with `T::ATTRS` as files.
    pub fn new(parent: &Parent<'_>, name: &CStr, data: Pin<KBox<T>>) -> Result<Self> {
        let mut slots = KVec::with_capacity(T::ATTRS.len(), GFP_KERNEL)?;
        let data_ptr = (&*data as *const T).cast::<core::ffi::c_void>();
        for (idx, a) in T::ATTRS.iter().enumerate() {
            // SAFETY: `kobj_attribute` is plain data; all-zero is a valid empty value.
            let mut kattr: bindings::kobj_attribute = unsafe { core::mem::zeroed() };
            kattr.attr.name = a.name.as_char_ptr();
            kattr.attr.mode = if a.read { 0o444 } else { 0 } | if a.write { 0o200 } else { 0 };
            // The field exists with lockdep only (C's `sysfs_attr_init`).
            #[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
            {
                kattr.attr.key = T::lock_class().as_ptr();
            }
            kattr.show = if a.read {
                Some(show_trampoline::<T>)
            } else {
                None
            };
            kattr.store = if a.write {
                Some(store_trampoline::<T>)
            } else {
                None
            };
            slots.push(
                Slot {
                    kattr,
                    data: data_ptr,
                    idx,
                },
                GFP_KERNEL,
            )?;
        }
        // SAFETY: `name` is NUL-terminated and copied; `parent` is live by its invariant.
        let kobj =
            unsafe { bindings::kobject_create_and_add(name.as_char_ptr(), parent.kobj.as_ptr()) };
        let kobj = NonNull::new(kobj).ok_or(ENOMEM)?;
        // INVARIANT: no files yet; `slots` is at its final size and never pushed to again.
        let mut dir = Self {
            kobj,
            slots,
            created: 0,
            data,
        };
        while dir.created < dir.slots.len() {
            // SAFETY: The kobject is live; the attribute lives in `slots` until the file is
            // removed in `drop`. On error `dir` is dropped and removes what was created.
            kernel::error::to_result(unsafe {
                bindings::sysfs_create_file_ns(
                    dir.kobj.as_ptr(),
                    &dir.slots[dir.created].kattr.attr,
                    core::ptr::null(),
                )
            })?;
            dir.created += 1;
        }
        Ok(dir)
    }

    /// The directory, as a parent for subdirectories.
    pub fn as_parent(&self) -> Parent<'_> {
        // SAFETY: The kobject lives as long as `self`.
        unsafe { Parent::from_raw(self.kobj.as_ptr()) }
    }

    /// The value behind the directory.
    pub fn data(&self) -> &T {
        &self.data
    }
}

impl<T: SysfsOps> Drop for SysfsDir<T> {
    fn drop(&mut self) {
        for slot in &self.slots[..self.created] {
            // SAFETY: The file was created by `new`. Removal waits for running callbacks, so
            // none can reach `data` or the slot after this.
            unsafe {
                bindings::sysfs_remove_file_ns(
                    self.kobj.as_ptr(),
                    &slot.kattr.attr,
                    core::ptr::null(),
                )
            };
        }
        // SAFETY: We own the kobject's reference; a dynamic kobject frees itself.
        unsafe {
            bindings::kobject_del(self.kobj.as_ptr());
            bindings::kobject_put(self.kobj.as_ptr());
        }
    }
}

/// # Safety
///
/// `attr` is the `kattr` of a `Slot` registered by a live `SysfsDir<T>`.
unsafe fn slot_data<'a, T: SysfsOps>(attr: *mut bindings::kobj_attribute) -> (&'a T, usize) {
    // SAFETY: `kattr` is the first field of the `repr(C)` `Slot`.
    let slot = unsafe { &*attr.cast::<Slot>() };
    // SAFETY: `data` points to the directory's `T`, which outlives its files.
    (unsafe { &*slot.data.cast::<T>() }, slot.idx)
}

/// # Safety
///
/// Called by sysfs for a file registered by [`SysfsDir::new`] for `T`.
unsafe extern "C" fn show_trampoline<T: SysfsOps>(
    _kobj: *mut bindings::kobject,
    attr: *mut bindings::kobj_attribute,
    buf: *mut kernel::ffi::c_char,
) -> isize {
    // SAFETY: sysfs calls us only for files that a live `SysfsDir<T>` registered.
    let (data, idx) = unsafe { slot_data::<T>(attr) };
    // SAFETY: sysfs hands `show` a zeroed page of `PAGE_SIZE` bytes.
    let page = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), bindings::PAGE_SIZE) };
    let mut out = Buf { buf: page, len: 0 };
    match T::show(data, idx, &mut out) {
        Ok(()) => out.len as isize,
        Err(e) => e.to_errno() as isize,
    }
}

/// # Safety
///
/// As for [`show_trampoline`].
unsafe extern "C" fn store_trampoline<T: SysfsOps>(
    _kobj: *mut bindings::kobject,
    attr: *mut bindings::kobj_attribute,
    buf: *const kernel::ffi::c_char,
    count: usize,
) -> isize {
    // SAFETY: As in `show_trampoline`.
    let (data, idx) = unsafe { slot_data::<T>(attr) };
    // SAFETY: sysfs passes `count` readable bytes.
    let input = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), count) };
    match T::store(data, idx, input) {
        Ok(()) => count as isize,
        Err(e) => e.to_errno() as isize,
    }
}

/// A counted reference to a directory's kobject, for creating subdirectories later, from a
/// value that does not own the directory.
///
/// # Invariants
///
/// `kobj` is a kobject this value holds a reference to.
pub struct KobjRef {
    kobj: NonNull<bindings::kobject>,
}

// SAFETY: A kobject reference may be held and dropped from any task.
unsafe impl Send for KobjRef {}
// SAFETY: `&KobjRef` only creates children, which the kobject core serialises.
unsafe impl Sync for KobjRef {}

impl<T: SysfsOps> SysfsDir<T> {
    /// A reference to the directory's kobject.
    pub fn kobj_ref(&self) -> KobjRef {
        // SAFETY: The kobject is live while `self` is; the new reference keeps the structure.
        unsafe { bindings::kobject_get(self.kobj.as_ptr()) };
        // INVARIANT: counted above.
        KobjRef { kobj: self.kobj }
    }
}

impl KobjRef {
    /// The directory as a parent. Creating a child fails once the directory has been removed.
    pub fn as_parent(&self) -> Parent<'_> {
        // SAFETY: We hold a reference, so the kobject is valid for the borrow.
        unsafe { Parent::from_raw(self.kobj.as_ptr()) }
    }

    /// Wakes poll() and select() waiters on file `attr` of the directory. Task context.
    pub fn notify(&self, attr: &CStr) {
        notify(self.kobj, attr);
    }

    /// Sends a `change` uevent for the directory's parent (the array's disk). Task context.
    pub fn parent_change_event(&self) {
        // SAFETY: We hold a reference; a kobject's parent is held by it and fixed while it is
        // registered, and `kobject_uevent` does nothing for one that is gone.
        unsafe {
            let parent = (*self.kobj.as_ptr()).parent;
            if !parent.is_null() {
                bindings::kobject_uevent(parent, bindings::kobject_action_KOBJ_CHANGE);
            }
        }
    }
}

impl<T: SysfsOps> SysfsDir<T> {
    /// Wakes poll() and select() waiters on file `attr`. Task context.
    pub fn notify(&self, attr: &CStr) {
        notify(self.kobj, attr);
    }
}

fn notify(kobj: NonNull<bindings::kobject>, attr: &CStr) {
    // SAFETY: The caller holds the kobject; a missing file is ignored by `sysfs_notify`.
    unsafe { bindings::sysfs_notify(kobj.as_ptr(), core::ptr::null(), attr.as_char_ptr()) };
}

impl Drop for KobjRef {
    fn drop(&mut self) {
        // SAFETY: We own one reference (type invariant).
        unsafe { bindings::kobject_put(self.kobj.as_ptr()) };
    }
}
