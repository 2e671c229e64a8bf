//! A read-only file in `/proc` whose text a Rust value writes, as `/proc/mdstat` is written.

use core::ptr::NonNull;
use kernel::{bindings, ffi, prelude::*, str::CStr, sync::Arc};

/// The value behind a `/proc` file.
pub trait ProcShow: Send + Sync + 'static {
    /// Writes the whole file into `out`.
    fn show(&self, out: &mut KVec<u8>) -> Result;
}

// `include/linux/proc_fs.h` is not among the generated bindings; these are exported symbols.
extern "C" {
    fn proc_create_single_data(
        name: *const ffi::c_char,
        mode: bindings::umode_t,
        parent: *mut ffi::c_void,
        show: Option<unsafe extern "C" fn(*mut bindings::seq_file, *mut ffi::c_void) -> ffi::c_int>,
        data: *mut ffi::c_void,
    ) -> *mut ffi::c_void;
    fn proc_remove(de: *mut ffi::c_void);
}

/// `/proc/NAME`, shown by a `T`.
///
/// # Invariants
///
/// `entry` is the proc entry created with `data`'s pointer as its data; `data` is kept until
/// the entry is removed, which waits for readers.
pub struct ProcFile<T: ProcShow> {
    entry: NonNull<ffi::c_void>,
    data: Arc<T>,
}

// SAFETY: The entry may be removed from any task; `T: Send + Sync`.
unsafe impl<T: ProcShow> Send for ProcFile<T> {}
// SAFETY: `&ProcFile` gives nothing but `&T`.
unsafe impl<T: ProcShow> Sync for ProcFile<T> {}

/// The `show` of a [`ProcFile`].
///
/// # Safety
///
/// Called by the seq_file code for an entry made by [`ProcFile::new`] for `T`; `private` is
/// that entry's data.
unsafe extern "C" fn show_fn<T: ProcShow>(
    m: *mut bindings::seq_file,
    _v: *mut ffi::c_void,
) -> ffi::c_int {
    // SAFETY: `single_open` stored the entry's data, a `T` kept alive by the `ProcFile`, in
    // `private`.
    let data = unsafe { &*(*m).private.cast::<T>() };
    let mut out = KVec::new();
    if let Err(e) = data.show(&mut out) {
        return e.to_errno();
    }
    // SAFETY: `m` is the live seq_file of this call; `out` holds `len` initialised bytes. A
    // short buffer makes seq_file call us again with a bigger one.
    unsafe { bindings::seq_write(m, out.as_ptr().cast(), out.len()) };
    0
}

impl<T: ProcShow> ProcFile<T> {
    /// Creates `/proc/NAME`, readable by all.
    pub fn new(name: &CStr, data: Arc<T>) -> Result<Self> {
        let ptr = (&*data as *const T).cast_mut().cast::<ffi::c_void>();
        // SAFETY: `name` is NUL-terminated and copied; `show_fn::<T>` reads `ptr`, which `data`
        // keeps alive until `drop` removes the entry.
        let entry = unsafe {
            proc_create_single_data(
                name.as_char_ptr(),
                0o444,
                core::ptr::null_mut(),
                Some(show_fn::<T>),
                ptr,
            )
        };
        let entry = NonNull::new(entry).ok_or(ENOMEM)?;
        // INVARIANT: created above with `data`'s pointer.
        Ok(Self { entry, data })
    }

    /// The value behind the file.
    pub fn data(&self) -> &Arc<T> {
        &self.data
    }
}

impl<T: ProcShow> Drop for ProcFile<T> {
    fn drop(&mut self) {
        // SAFETY: The entry is ours; removal waits for readers in `show_fn`, after which
        // `data` may go.
        unsafe { proc_remove(self.entry.as_ptr()) };
    }
}
