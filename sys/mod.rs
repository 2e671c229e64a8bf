//! Thin safe wrappers over `kernel::bindings`.
//!
//! Everything rraid needs from C that the 6.12 `kernel` crate does not offer lives here: a
//! blk-mq disk with queue data, limits and open/release ([`disk`]) and the workers of its
//! hardware queues that issue member I/O ([`hwqueue`]), started requests counted until their
//! member I/O completes and parked for the workers ([`request`], on a lock-free [`stack`]),
//! member block devices opened exclusively, with synchronous page I/O ([`member`]), cloned and
//! empty bios with a typed per-bio context ([`bio`]), sysfs directories ([`sysfs`]), the
//! workqueue ([`workqueue`]), FPU sections ([`fpu`]) and module references ([`module_ref`]).
//!
//! All of rraid's `unsafe` is in this folder; the RAID logic above it is safe Rust.

pub mod bio;
pub mod disk;
pub mod fpu;
pub mod hwqueue;
pub mod kthread;
pub mod member;
pub mod module_ref;
pub mod pagebuf;
pub mod pageio;
pub mod procfs;
pub mod reboot;
pub mod request;
pub mod slot;
pub mod stack;
pub mod sysfs;
pub mod workqueue;

use kernel::{bindings, types::Opaque};

/// A lockdep class key in static memory.
///
/// The 6.12 `LockClassKey` does not expose its pointer outside the `kernel` crate.
pub struct LockKey(Opaque<bindings::lock_class_key>);

// SAFETY: Lockdep only uses the key's address and synchronises its own use of the contents.
unsafe impl Sync for LockKey {}

impl LockKey {
    /// A key; only meaningful in a `static`.
    pub const fn new() -> Self {
        Self(Opaque::uninit())
    }

    pub(crate) fn as_ptr(&self) -> *mut bindings::lock_class_key {
        self.0.get()
    }
}

impl Default for LockKey {
    fn default() -> Self {
        Self::new()
    }
}

/// A block-layer completion status (`blk_status_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlkStatus(u8);

impl BlkStatus {
    /// Success.
    pub const OK: Self = Self(0);
    /// The operation is not supported (`BLK_STS_NOTSUPP`).
    pub const NOTSUPP: Self = Self(1);
    /// Generic I/O error (`BLK_STS_IOERR`).
    pub const IOERR: Self = Self(10);
    /// The operation would block (`BLK_STS_AGAIN`), the answer to a nowait bio.
    pub const AGAIN: Self = Self(12);

    /// Whether this is success.
    pub fn is_ok(self) -> bool {
        self.0 == 0
    }

    /// Whether this error says something about the member's media, as md counts errors: a
    /// "not supported" or "would block" answer does not.
    pub fn is_media_error(self) -> bool {
        !self.is_ok() && self != Self::NOTSUPP && self != Self::AGAIN
    }

    pub(crate) fn raw(self) -> bindings::blk_status_t {
        self.0
    }

    pub(crate) fn from_raw(raw: bindings::blk_status_t) -> Self {
        Self(raw)
    }
}

/// The operation of a request or bio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReqOp {
    /// Read data.
    Read,
    /// Write data.
    Write,
    /// Flush the volatile write cache.
    Flush,
    /// Discard a range.
    Discard,
    /// Zero a range without data pages.
    WriteZeroes,
    /// Anything else; rraid fails it with [`BlkStatus::NOTSUPP`].
    Other,
}

/// `REQ_OP_MASK`: the low bits of `blk_opf_t` hold the operation.
const REQ_OP_MASK: u32 = (1 << bindings::REQ_OP_BITS) - 1;
/// `REQ_FUA`.
pub(crate) const REQ_FUA: u32 = 1 << bindings::req_flag_bits___REQ_FUA;
/// `REQ_PREFLUSH`.
pub(crate) const REQ_PREFLUSH: u32 = 1 << bindings::req_flag_bits___REQ_PREFLUSH;
/// `REQ_META`.
pub(crate) const REQ_META: u32 = 1 << bindings::req_flag_bits___REQ_META;
/// `REQ_NOUNMAP`.
pub(crate) const REQ_NOUNMAP: u32 = 1 << bindings::req_flag_bits___REQ_NOUNMAP;
/// `REQ_SYNC`.
pub(crate) const REQ_SYNC: u32 = 1 << bindings::req_flag_bits___REQ_SYNC;
/// `REQ_NOWAIT`.
pub(crate) const REQ_NOWAIT: u32 = 1 << bindings::req_flag_bits___REQ_NOWAIT;
/// md's `MD_FAILFAST`: `REQ_FAILFAST_DEV | REQ_FAILFAST_TRANSPORT`, no retries below.
pub(crate) const REQ_FAILFAST: u32 = (1 << bindings::req_flag_bits___REQ_FAILFAST_DEV)
    | (1 << bindings::req_flag_bits___REQ_FAILFAST_TRANSPORT);

impl ReqOp {
    pub(crate) fn from_opf(opf: u32) -> Self {
        match opf & REQ_OP_MASK {
            bindings::req_op_REQ_OP_READ => Self::Read,
            bindings::req_op_REQ_OP_WRITE => Self::Write,
            bindings::req_op_REQ_OP_FLUSH => Self::Flush,
            bindings::req_op_REQ_OP_DISCARD => Self::Discard,
            bindings::req_op_REQ_OP_WRITE_ZEROES => Self::WriteZeroes,
            _ => Self::Other,
        }
    }
}

/// Flags that a range operation (discard, write-zeroes, flush) sent to a member carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeOp {
    /// `REQ_OP_DISCARD`.
    Discard,
    /// `REQ_OP_WRITE_ZEROES`, with `REQ_NOUNMAP` when the caller asked for it.
    WriteZeroes {
        /// Keep the blocks allocated.
        no_unmap: bool,
    },
    /// An empty `REQ_OP_WRITE | REQ_PREFLUSH`.
    Flush,
}

impl RangeOp {
    pub(crate) fn opf(self) -> u32 {
        match self {
            Self::Discard => bindings::req_op_REQ_OP_DISCARD,
            Self::WriteZeroes { no_unmap } => {
                bindings::req_op_REQ_OP_WRITE_ZEROES | if no_unmap { REQ_NOUNMAP } else { 0 }
            }
            Self::Flush => bindings::req_op_REQ_OP_WRITE | REQ_PREFLUSH | REQ_SYNC,
        }
    }
}

// Queue feature bits (`blk_features_t`): cast macros that bindgen does not translate.
/// `BLK_FEAT_NOWAIT`.
pub(crate) const BLK_FEAT_NOWAIT: u32 = 1 << 7;
/// `BLK_FEAT_WRITE_CACHE`.
const BLK_FEAT_WRITE_CACHE: u32 = 1 << 0;
/// `BLK_FEAT_FUA`.
const BLK_FEAT_FUA: u32 = 1 << 1;
/// `BLK_FEAT_POLL`: rraid queues have no poll queues.
const BLK_FEAT_POLL: u32 = 1 << 9;
/// `BLK_FEAT_ZONED`.
const BLK_FEAT_ZONED: u32 = 1 << 10;
/// `BLK_FEAT_RAID_PARTIAL_STRIPES_EXPENSIVE`.
const BLK_FEAT_RAID_PARTIAL_STRIPES_EXPENSIVE: u32 = 1 << 15;

/// `GFP_NOIO`: may sleep and reclaim, but must not recurse into I/O.
pub(crate) const GFP_NOIO: bindings::gfp_t =
    (1 << bindings::___GFP_DIRECT_RECLAIM_BIT) | (1 << bindings::___GFP_KSWAPD_RECLAIM_BIT);

/// `GFP_NOWAIT`: never sleeps; wakes kswapd and fails quietly when memory is short.
pub(crate) const GFP_NOWAIT: bindings::gfp_t =
    (1 << bindings::___GFP_KSWAPD_RECLAIM_BIT) | (1 << bindings::___GFP_NOWARN_BIT);

/// Whether the running task is inside `submit_bio` (`current->bio_list` is set) with no bio
/// waiting there yet: bios it submits now are queued on that list and issued after the current
/// one is done, so nothing it submits recurses into a member queue before it returns, and they
/// are issued next. A bio already waiting (the rest of a bio blk-mq split to fit a request)
/// would be issued first, and may wait for one of this disk's tags, which only the completion
/// of the bios behind it would give back.
pub fn in_submit_bio() -> bool {
    // SAFETY: `get_current` is the running task; its `bio_list`, when set, points to the two
    // lists on the stack of its `submit_bio_noacct_nocheck`, written only by itself.
    unsafe {
        let list = (*bindings::get_current()).bio_list;
        !list.is_null() && (*list).head.is_null()
    }
}

/// Runs `f` with this task's allocations kept from starting I/O, as `memalloc_noio_save()`:
/// code on the I/O path may then allocate with `GFP_KERNEL`, which the `kernel` crate's
/// allocators take, without reclaim waiting on the very I/O being served.
pub fn noio<R>(f: impl FnOnce() -> R) -> R {
    let noio = bindings::PF_MEMALLOC_NOIO;
    // SAFETY: `get_current` is the running task; a task's `flags` are written only by itself
    // (as `memalloc_noio_save` does), and the previous bit is restored below.
    let old = unsafe {
        let cur = bindings::get_current();
        let old = (*cur).flags & noio;
        (*cur).flags |= noio;
        old
    };
    let r = f();
    // SAFETY: As above.
    unsafe {
        let cur = bindings::get_current();
        (*cur).flags = ((*cur).flags & !noio) | old;
    }
    r
}

/// Sleeps a millisecond: the back-off of I/O-path code that waits for memory to come back.
pub fn backoff() {
    // SAFETY: Called in task context, where sleeping is allowed.
    unsafe { bindings::msleep(1) };
}

/// The number of possible CPUs (`nr_cpu_ids`): how many ways the I/O path may split work.
pub fn nr_cpus() -> usize {
    // SAFETY: `nr_cpu_ids` is set at boot and never changes afterwards.
    unsafe { bindings::nr_cpu_ids as usize }
}

/// The tick count (`jiffies`): a cheap clock for hints that may be a tick or two stale.
pub fn jiffies() -> usize {
    // SAFETY: `jiffies` is a word the timer tick updates; a volatile read is C's
    // `READ_ONCE(jiffies)`, and a torn value cannot occur for an aligned word.
    unsafe { core::ptr::read_volatile(&raw const bindings::jiffies) as usize }
}

/// Fills `buf` with random bytes (UUIDs of arrays and devices).
pub fn random_bytes(buf: &mut [u8]) {
    // SAFETY: `buf` is valid for writes of its length; the call may be made from any context.
    unsafe { bindings::get_random_bytes(buf.as_mut_ptr().cast(), buf.len()) };
}

/// Wall-clock time in seconds since the epoch (md's `ctime` and `utime`).
pub fn real_seconds() -> u64 {
    // SAFETY: Reads the clock; any context.
    let t = unsafe { bindings::ktime_get_real_seconds() };
    u64::try_from(t).unwrap_or(0)
}
