//! The stripe cache of RAID 4/5/6: md's stripe heads, a page per member each, and the windows
//! they are taken for.
//!
//! A stripe's chunk row is cut into *windows* of up to [`MAX_COLS`] columns of 4 KiB (md's
//! stripe heads), 64 KiB per member. An operation takes a [`Slot`] of heads for one window,
//! which also keeps any other operation off that window until it is done.

use crate::layout::raid5::Raid5;
use crate::plan::Set;
use crate::sys::bio::BioSet;
use crate::sys::pagebuf::{PageBuf, PAGE_BYTES};
use crate::sys::pageio::PageCtx;
use crate::sys::workqueue::QueueRef;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{
    alloc::flags::GFP_NOWAIT,
    new_condvar, new_mutex,
    prelude::*,
    sync::{CondVar, Mutex},
};

/// Columns per window at most: 64 KiB per member.
pub(super) const MAX_COLS: usize = 16;
/// Sectors per column (md's `STRIPE_SECTORS`).
pub(super) const COL_SECTORS: u64 = (PAGE_BYTES >> 9) as u64;
/// `stripe_cache_size`: md's default and limits, in stripe heads (one page per member).
pub(super) const CACHE_DEFAULT: u32 = 256;
/// The smallest `stripe_cache_size`.
const CACHE_MIN: u32 = 17;
/// The largest `stripe_cache_size`.
const CACHE_MAX: u32 = 32768;
/// Reserved page bios per array: one window's reads and writes on every member.
const BIOSET_POOL: u32 = 128;

/// A stripe head, md's unit of the cache: one page on every member.
pub(super) struct Head {
    pub(super) pages: KVec<PageBuf>,
}

impl Head {
    fn new(members: usize) -> Result<Self> {
        let mut pages = KVec::with_capacity(members, GFP_KERNEL)?;
        for _ in 0..members {
            pages.push(PageBuf::new(false)?, GFP_KERNEL)?;
        }
        Ok(Self { pages })
    }
}

/// The heads an operation holds: one per column it touches.
pub(super) struct Slot {
    pub(super) heads: [Option<Head>; MAX_COLS],
}

impl Slot {
    /// Column `c` of member `m`.
    pub(super) fn page(&self, m: usize, c: usize) -> Option<&PageBuf> {
        self.heads.get(c)?.as_ref()?.pages.get(m)
    }

    pub(super) fn page_mut(&mut self, m: usize, c: usize) -> Option<&mut PageBuf> {
        self.heads.get_mut(c)?.as_mut()?.pages.get_mut(m)
    }

    /// Column `c` as one byte slice per member.
    pub(super) fn column<'a>(
        &'a mut self,
        c: usize,
        out: &mut [&'a mut [u8]; crate::layout::MAX_MEMBERS],
    ) {
        if let Some(Some(h)) = self.heads.get_mut(c) {
            for (slot, p) in out.iter_mut().zip(h.pages.iter_mut()) {
                *slot = p.bytes_mut();
            }
        }
    }
}

/// The cache: free heads and the windows being worked on.
///
/// `free[..nfree]` are the free heads, a stack; `busy[i]` is a window in use or `IDLE`. Both
/// vectors only grow, to the most heads there ever were, so nothing allocates under the lock.
struct Pool {
    free: KVec<Option<Head>>,
    nfree: usize,
    busy: KVec<u64>,
    /// Heads in existence, held or free.
    total: usize,
    /// Heads wanted (`stripe_cache_size`): held heads beyond it are freed as they come back.
    target: usize,
}

const IDLE: u64 = u64::MAX;

/// The windows of a [`Stripes::sync_range`] call still to be taken.
pub(super) struct Stream {
    /// Member sector of window 0.
    pub(super) at: u64,
    /// Windows in the call.
    pub(super) count: usize,
    /// The next window to take.
    pub(super) next: usize,
}

impl Stream {
    pub(super) fn new() -> Self {
        Self {
            at: 0,
            count: 0,
            next: 0,
        }
    }
}

/// The windows of a [`Stripes::sync_range`] call that are done.
pub(super) struct Retire {
    /// Member sector of window 0.
    pub(super) at: u64,
    /// Windows below are done, the recovery point covers them and their heads are back.
    pub(super) front: usize,
    /// A window done ahead of `front`, its heads held: `(window, unit, heads)`.
    pub(super) parked: Option<(usize, u64, Slot)>,
    /// The first window that failed, and the members whose I/O failed there. No window is
    /// taken after it is set.
    pub(super) err: Option<(usize, Set)>,
}

impl Retire {
    pub(super) fn new() -> Self {
        Self {
            at: 0,
            front: 0,
            parked: None,
            err: None,
        }
    }
}

/// The stripe engine of one array.
#[pin_data]
pub struct Stripes {
    pub(super) geo: Raid5,
    pub(super) cols: usize,
    pub(super) wq: QueueRef,
    /// md's `stripe_cache_size`.
    cache_size: AtomicU32,
    #[pin]
    pool: Mutex<Pool>,
    #[pin]
    freed: CondVar,
    /// Serialises resizes, which allocate outside the pool lock.
    #[pin]
    resize: Mutex<()>,
    #[pin]
    pub(super) bioset: BioSet<PageCtx>,
    /// The sync thread's windows still to be taken (see [`Stripes::sync_range`]).
    #[pin]
    pub(super) stream: Mutex<Stream>,
    /// The sync thread's windows done.
    #[pin]
    pub(super) retire: Mutex<Retire>,
    /// Signalled when a sync window is retired.
    #[pin]
    pub(super) retired: CondVar,
}

impl Stripes {
    /// A stripe engine for `geo`, with md's default cache size.
    pub fn new(geo: Raid5, wq: QueueRef) -> Result<Pin<KBox<Self>>> {
        let cols = ((geo.chunk_sectors() / COL_SECTORS) as usize).clamp(1, MAX_COLS);
        let this = KBox::pin_init(
            try_pin_init!(Self {
                geo,
                cols,
                wq,
                cache_size: AtomicU32::new(0),
                pool <- new_mutex!(
                    Pool {
                        free: KVec::new(),
                        nfree: 0,
                        busy: KVec::new(),
                        total: 0,
                        target: 0,
                    },
                    "rraid::stripe_pool"
                ),
                freed <- new_condvar!("rraid::stripe_freed"),
                resize <- new_mutex!((), "rraid::stripe_resize"),
                bioset <- BioSet::new(BIOSET_POOL, true),
                stream <- new_mutex!(Stream::new(), "rraid::sync_stream"),
                retire <- new_mutex!(Retire::new(), "rraid::sync_retire"),
                retired <- new_condvar!("rraid::sync_retired"),
            }),
            GFP_KERNEL,
        )?;
        this.set_cache_size(CACHE_DEFAULT)?;
        Ok(this)
    }

    /// The geometry.
    pub fn geo(&self) -> &Raid5 {
        &self.geo
    }

    /// md's `stripe_cache_size`.
    pub fn cache_size(&self) -> u32 {
        self.cache_size.load(Ordering::Relaxed)
    }

    /// Sets `stripe_cache_size`: `size` stripe heads of a page per member. At least
    /// `CACHE_MIN` > `MAX_COLS`, so the largest operation always fits.
    pub fn set_cache_size(&self, size: u32) -> Result {
        if !(CACHE_MIN..=CACHE_MAX).contains(&size) {
            return Err(EINVAL);
        }
        let want = size as usize;
        let _serial = self.resize.lock();
        let have = self.pool.lock().total;
        if want > have {
            let mut fresh = KVec::with_capacity(want - have, GFP_KERNEL)?;
            for _ in have..want {
                fresh.push(Head::new(self.geo.members())?, GFP_KERNEL)?;
            }
            let mut pool = self.pool.lock();
            let grow = (pool.total + fresh.len()).saturating_sub(pool.free.len());
            pool.free.reserve(grow, GFP_KERNEL)?;
            pool.busy.reserve(grow, GFP_KERNEL)?;
            for _ in 0..grow {
                pool.free.push(None, GFP_KERNEL)?;
                pool.busy.push(IDLE, GFP_KERNEL)?;
            }
            pool.total += fresh.len();
            for h in fresh {
                let at = pool.nfree;
                if let Some(slot) = pool.free.get_mut(at) {
                    *slot = Some(h);
                    pool.nfree += 1;
                }
            }
            pool.target = want;
        } else {
            let mut pool = self.pool.lock();
            pool.target = want;
            while pool.total > want && pool.nfree > 0 {
                pool.nfree -= 1;
                let at = pool.nfree;
                drop(pool.free.get_mut(at).and_then(Option::take));
                pool.total -= 1;
            }
        }
        self.cache_size.store(size, Ordering::Relaxed);
        self.freed.notify_all();
        Ok(())
    }

    /// A write of `v` to `stripe_cache_size` of the array `name`: a number of heads from
    /// `CACHE_MIN` to `CACHE_MAX`.
    pub fn store_cache_size(&self, name: &str, v: &str) -> Result {
        let size = v
            .parse::<u32>()
            .ok()
            .filter(|n| (CACHE_MIN..=CACHE_MAX).contains(n));
        let Some(size) = size else {
            pr_err!(
                "{}: stripe_cache_size must be a number from {} to {}\n",
                name,
                CACHE_MIN,
                CACHE_MAX
            );
            return Err(EINVAL);
        };
        self.set_cache_size(size).inspect_err(|e| {
            pr_err!("{}: stripe_cache_size {}: failed ({:?})\n", name, size, e);
        })
    }

    /// Takes a head for each column in `cols` (a bit mask) for window `unit`, waiting while
    /// the window is in use or too few heads are free. All at once, so holders never wait.
    pub(super) fn acquire(&self, unit: u64, cols: u32) -> Slot {
        let mut pool = self.pool.lock();
        loop {
            if let Some(slot) = Self::take(&mut pool, unit, cols) {
                return slot;
            }
            self.freed.wait(&mut pool);
        }
    }

    /// Takes the heads if the window is free and enough heads are.
    fn take(pool: &mut Pool, unit: u64, cols: u32) -> Option<Slot> {
        let k = cols.count_ones() as usize;
        if pool.nfree < k || pool.busy.contains(&unit) {
            return None;
        }
        let b = pool.busy.iter_mut().find(|u| **u == IDLE)?;
        *b = unit;
        let mut slot = Slot {
            heads: [const { None }; MAX_COLS],
        };
        for (c, head) in slot.heads.iter_mut().enumerate() {
            if cols & (1 << c) != 0 && pool.nfree > 0 {
                pool.nfree -= 1;
                let at = pool.nfree;
                *head = pool.free.get_mut(at).and_then(Option::take);
            }
        }
        Some(slot)
    }

    /// As [`Stripes::acquire`], but `None` instead of waiting.
    pub(super) fn try_acquire(&self, unit: u64, cols: u32) -> Option<Slot> {
        let mut pool = self.pool.lock();
        Self::take(&mut pool, unit, cols)
    }

    /// Gives back the heads of window `unit`.
    pub(super) fn release(&self, unit: u64, slot: Slot) {
        let mut pool = self.pool.lock();
        if let Some(b) = pool.busy.iter_mut().find(|u| **u == unit) {
            *b = IDLE;
        }
        let mut gone = KVec::new();
        for h in slot.heads.into_iter().flatten() {
            if pool.total > pool.target {
                pool.total -= 1;
                // Freed after the lock is dropped; should `gone` find no room, `push` drops
                // the head here instead.
                let _ = gone.push(h, GFP_NOWAIT);
                continue;
            }
            let at = pool.nfree;
            if let Some(s) = pool.free.get_mut(at) {
                *s = Some(h);
                pool.nfree += 1;
            }
        }
        drop(pool);
        drop(gone);
        self.freed.notify_all();
    }

    /// The window a member sector range belongs to: `(unit, window, offset in window)`.
    pub(super) fn window(&self, stripe: u64, chunk_off: u64) -> (u64, usize, u64) {
        let win_sectors = self.cols as u64 * COL_SECTORS;
        let per_chunk = (self.geo.chunk_sectors() / win_sectors).max(1);
        let win = chunk_off / win_sectors;
        (
            stripe * per_chunk + win,
            win as usize,
            chunk_off % win_sectors,
        )
    }

    /// Window size in sectors.
    pub fn window_sectors(&self) -> u64 {
        self.cols as u64 * COL_SECTORS
    }
}
