//! Page buffers for the stripe cache: a page the CPU reads and writes as a byte slice and
//! member bios carry.

use super::GFP_NOIO;
use core::ptr::NonNull;
use kernel::{bindings, prelude::*};

// Every page has a permanent kernel address only without highmem; the stripe cache keeps its
// pages mapped for their whole life.
#[cfg(CONFIG_HIGHMEM)]
compile_error!("rraid's stripe cache needs a kernel without CONFIG_HIGHMEM");

/// Bytes in a page buffer.
pub const PAGE_BYTES: usize = kernel::page::PAGE_SIZE;

/// One page, owned, with its kernel address.
///
/// # Invariants
///
/// `page` came from `alloc_pages(.., 0)` and is freed in `drop`; `addr` is its address in the
/// kernel's direct map (no highmem), valid for `PAGE_BYTES` bytes while `self` lives.
pub struct PageBuf {
    page: NonNull<bindings::page>,
    addr: NonNull<u8>,
}

// SAFETY: A page is plain memory with no thread affinity.
unsafe impl Send for PageBuf {}
// SAFETY: Shared access only reads through `&[u8]`.
unsafe impl Sync for PageBuf {}

impl PageBuf {
    /// Allocates a page; `GFP_KERNEL` at setup, `GFP_NOIO` on the I/O path.
    pub fn new(io_path: bool) -> Result<Self> {
        let gfp = if io_path {
            GFP_NOIO
        } else {
            bindings::GFP_KERNEL
        };
        // SAFETY: Order 0 allocation with valid flags.
        let page = NonNull::new(unsafe { bindings::alloc_pages(gfp, 0) }).ok_or(ENOMEM)?;
        // SAFETY: Without highmem `kmap_local_page` is `page_address`: it maps nothing, keeps
        // no per-task state, and the address stays valid until the page is freed.
        let addr = unsafe { bindings::kmap_local_page(page.as_ptr()) };
        let Some(addr) = NonNull::new(addr.cast::<u8>()) else {
            // SAFETY: Allocated above, not used.
            unsafe { bindings::__free_pages(page.as_ptr(), 0) };
            return Err(ENOMEM);
        };
        // INVARIANT: allocated and addressed above.
        Ok(Self { page, addr })
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: By the type invariant `addr` is valid for a page; `&self` excludes writers.
        unsafe { core::slice::from_raw_parts(self.addr.as_ptr(), PAGE_BYTES) }
    }

    /// The bytes, to write.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: As in `bytes`, and `&mut self` makes the access exclusive.
        unsafe { core::slice::from_raw_parts_mut(self.addr.as_ptr(), PAGE_BYTES) }
    }

    pub(crate) fn raw(&self) -> *mut bindings::page {
        self.page.as_ptr()
    }
}

impl Drop for PageBuf {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own the page; no bio holds it, since page bios are
        // waited for before their buffers can be dropped (`sys::pageio`).
        unsafe { bindings::__free_pages(self.page.as_ptr(), 0) };
    }
}
