//! The stripe cache of RAID 4/5/6: carries out what `plan/` decides.
//!
//! A stripe's chunk row is cut into *windows* of up to [`MAX_COLS`] columns of 4 KiB (md's
//! stripe heads), 64 KiB per member. Each worker round gathers the pieces of all its requests
//! by window ([`Batch`]), so adjacent writes that together cover a stripe become one
//! full-stripe write. Each window's operation then takes a [`Slot`] of the cache, which also
//! keeps any other operation off that window until it is done, and runs as a job of its own on
//! the module's workqueue: it reads what the plan needs from the members, computes, writes and
//! waits, in straight-line code. Different windows run in parallel on every CPU; there is no
//! per-array thread.
//!
//! Reads from members in sync do not come here: they go straight to the member
//! (`raid/raid5.rs`). Only reads of failed members' blocks, which are rebuilt, are ordered with
//! the writes of their window here.

use super::io::bits;
use super::sync::Action;
use super::Array;
use crate::layout::raid5::Raid5;
use crate::plan::{self, Column, Set};
use crate::sys::bio::BioSet;
use crate::sys::fpu::KernelFpu;
use crate::sys::pagebuf::{PageBuf, PAGE_BYTES};
use crate::sys::pageio::{PageCtx, PageIo};
use crate::sys::request::RqBio;
use crate::sys::workqueue::{spawn, Job, QueueRef};
use crate::sys::{backoff, noio, BlkStatus};
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{
    alloc::flags::GFP_NOWAIT,
    new_condvar, new_mutex,
    prelude::*,
    sync::{Arc, CondVar, Mutex},
};

/// Columns per window at most: 64 KiB per member.
pub const MAX_COLS: usize = 16;
/// Sectors per column (md's `STRIPE_SECTORS`).
const COL_SECTORS: u64 = (PAGE_BYTES >> 9) as u64;
/// `stripe_cache_size`: md's default and limits, in stripe heads (one page per member).
pub const CACHE_DEFAULT: u32 = 256;
/// The smallest `stripe_cache_size`.
pub const CACHE_MIN: u32 = 17;
/// The largest `stripe_cache_size`.
pub const CACHE_MAX: u32 = 32768;
/// Reserved page bios per array: one window's reads and writes on every member.
const BIOSET_POOL: u32 = 128;
/// Times an operation re-plans after member reads failed.
const MAX_REPLANS: usize = 3;

/// A stripe head, md's unit of the cache: one page on every member.
struct Head {
    pages: KVec<PageBuf>,
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
pub struct Slot {
    heads: [Option<Head>; MAX_COLS],
}

impl Slot {
    /// Column `c` of member `m`.
    fn page(&self, m: usize, c: usize) -> Option<&PageBuf> {
        self.heads.get(c)?.as_ref()?.pages.get(m)
    }

    fn page_mut(&mut self, m: usize, c: usize) -> Option<&mut PageBuf> {
        self.heads.get_mut(c)?.as_mut()?.pages.get_mut(m)
    }

    /// Column `c` as one byte slice per member.
    fn column<'a>(&'a mut self, c: usize, out: &mut [&'a mut [u8]; crate::layout::MAX_MEMBERS]) {
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

/// The stripe engine of one array.
#[pin_data]
pub struct Stripes {
    geo: Raid5,
    cols: usize,
    wq: QueueRef,
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
    bioset: BioSet<PageCtx>,
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

    /// Takes a head for each column in `cols` (a bit mask) for window `unit`, waiting while
    /// the window is in use or too few heads are free. All at once, so holders never wait.
    fn acquire(&self, unit: u64, cols: u32) -> Slot {
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
    fn try_acquire(&self, unit: u64, cols: u32) -> Option<Slot> {
        let mut pool = self.pool.lock();
        Self::take(&mut pool, unit, cols)
    }

    /// Gives back the heads of window `unit`.
    fn release(&self, unit: u64, slot: Slot) {
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
    fn window(&self, stripe: u64, chunk_off: u64) -> (u64, usize, u64) {
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

    /// The sync thread's work on member sectors `[pos, pos + n)` past the data offset, whole
    /// windows: each window's heads are taken as a write's are, so a resync and a write never
    /// compute parity from different data. Resync writes parity computed from the data; check
    /// counts the columns whose parity differs (md's 8 sectors each); repair rewrites those.
    /// `scratch` holds two pages, for the parity read.
    pub(super) fn sync_range(
        &self,
        array: &Array,
        action: Action,
        pos: u64,
        n: u64,
        scratch: &mut [PageBuf],
    ) -> Result<(), ()> {
        let ws = self.window_sectors();
        let chunk = self.geo.chunk_sectors();
        let all_cols = ((1u64 << self.cols) - 1) as u32;
        let mut at = pos;
        let mut retries = 0;
        while at < pos + n {
            let stripe = at / chunk;
            let (unit, win, _) = self.window(stripe, at % chunk);
            let base = self.geo.stripe_start(stripe) + win as u64 * ws;
            let mut slot = self.acquire(unit, all_cols);
            let res = self.sync_window(array, action, stripe, base, &mut slot, scratch);
            if action == Action::Recover && res.is_ok() {
                // Before the heads go: a write planned after the copy must see it done.
                array.sync().built_to(at + ws);
            }
            self.release(unit, slot);
            if let Err(bad) = res {
                // The members that failed leave (never past the array's tolerance: then the
                // job stops), and the same window is done again without them. Skipping it
                // would let the points pass blocks never written.
                for m in bits(bad) {
                    array.count_error(m, None);
                    if array.fail_member_in_sync(m).is_err() {
                        return Err(());
                    }
                }
                retries += 1;
                if retries > MAX_REPLANS || array.cannot_sync(action).is_some() {
                    return Err(());
                }
                continue;
            }
            retries = 0;
            at += ws;
        }
        Ok(())
    }

    /// Recovery of one window: every member in sync is read, the blocks of the members being
    /// rebuilt are recomputed (data from the others, parity from the data) and written to them.
    /// A member that fails its read is rebuilt from the rest of the stripe too and rewritten
    /// (md's read-error repair), while the stripe still tolerates it; else `Err` names it.
    #[inline(never)]
    fn recover_window(
        &self,
        array: &Array,
        stripe: u64,
        base: u64,
        slot: &mut Slot,
    ) -> Result<(), Set> {
        let n = array.members().len();
        let cols = self.cols.min(MAX_COLS);
        let col = Column::new(&self.geo, stripe, array.failed_set());
        let targets = array.sync().recovering() & col.failed();
        let alive = col.all() & !col.failed();
        // Replacements are copied raw from the members they replace.
        let reps = array.sync().replacing() & alive;
        if targets | reps == 0 {
            return Ok(());
        }
        let bad = window_io(
            self,
            array,
            slot,
            base,
            &[alive; MAX_COLS][..cols],
            false,
            false,
        )
        .map_err(|_| alive)?;
        let col = if bad != 0 {
            let with_bad = Column::new(&self.geo, stripe, col.failed() | bad);
            if with_bad.failed().count_ones() as usize > with_bad.tolerance() {
                return Err(bad);
            }
            with_bad
        } else {
            col
        };
        let eng = super::engines::stripe_engines();
        let fpu = KernelFpu;
        for c in 0..cols {
            on_column(slot, c, n, |bufs| {
                plan::recover(&eng, &fpu, &col, bufs)?;
                if col.failed() & col.parity() != 0 {
                    plan::gen_parity(&eng, &fpu, &col, bufs)?;
                }
                Ok(())
            })
            .map_err(|_| 0 as Set)?;
        }
        array.writes.fetch_add(1, Ordering::Acquire);
        let res = if targets | bad != 0 {
            window_io(
                self,
                array,
                slot,
                base,
                &[targets | bad; MAX_COLS][..cols],
                true,
                false,
            )
        } else {
            Ok(0)
        };
        if let Ok(wbad) = res {
            note_corrected(array, self, base, bad & !wbad);
        }
        if reps != 0 {
            // Failures drop the replacement, never the member.
            let _ = window_io_to(
                self,
                array,
                slot,
                base,
                &[reps; MAX_COLS][..cols],
                true,
                false,
                Target::Replacements,
            );
        }
        array.writes.fetch_sub(1, Ordering::Release);
        match res {
            Ok(0) => Ok(()),
            Ok(bad) => Err(bad),
            Err(_) => Err(targets | bad),
        }
    }

    /// One window of [`Stripes::sync_range`]; `Err` holds the members whose I/O failed.
    #[inline(never)]
    fn sync_window(
        &self,
        array: &Array,
        action: Action,
        stripe: u64,
        base: u64,
        slot: &mut Slot,
        scratch: &mut [PageBuf],
    ) -> Result<(), Set> {
        if action == Action::Recover {
            return self.recover_window(array, stripe, base, slot);
        }
        let n = array.members().len();
        let cols = self.cols.min(MAX_COLS);
        let col = Column::new(&self.geo, stripe, array.failed_set());
        if col.failed() != 0 {
            // Nothing to compare against on a degraded array.
            return Ok(());
        }
        let bad = window_io(
            self,
            array,
            slot,
            base,
            &[col.all(); MAX_COLS][..cols],
            false,
            false,
        )
        .map_err(|_| col.all())?;
        let eng = super::engines::stripe_engines();
        let fpu = KernelFpu;
        // Blocks that could not be read are rebuilt from the rest of the stripe and rewritten
        // (md's repair of a sync read error), where the stripe tolerates it; a resync trusts
        // the old parity for it, as md's does.
        if bad != 0 {
            let lost = Column::new(&self.geo, stripe, bad);
            if lost.failed().count_ones() as usize > lost.tolerance() {
                return Err(bad);
            }
            for c in 0..cols {
                on_column(slot, c, n, |bufs| {
                    plan::recover(&eng, &fpu, &lost, bufs)?;
                    if bad & col.parity() != 0 {
                        plan::gen_parity(&eng, &fpu, &lost, bufs)?;
                    }
                    Ok(())
                })
                .map_err(|_| 0 as Set)?;
            }
        }
        let parity = [Some(col.pd()), col.qd()];
        let mut write = [0 as Set; MAX_COLS];
        for (c, w) in write.iter_mut().enumerate().take(cols) {
            for (p, keep) in parity.iter().zip(scratch.iter_mut()) {
                if let Some(src) = p.and_then(|m| slot.page(m, c)) {
                    keep.bytes_mut().copy_from_slice(src.bytes());
                }
            }
            on_column(slot, c, n, |bufs| plan::gen_parity(&eng, &fpu, &col, bufs))
                .map_err(|_| 0 as Set)?;
            let differs = parity.iter().zip(scratch.iter()).any(|(p, keep)| {
                p.and_then(|m| slot.page(m, c))
                    .is_some_and(|now| now.bytes() != keep.bytes())
            });
            if differs && action != Action::Resync {
                array.sync().count_mismatch(COL_SECTORS);
            }
            if action == Action::Resync || (action == Action::Repair && differs) {
                *w = col.parity();
            }
            *w |= bad;
        }
        if write.iter().any(|&w| w != 0) {
            array.writes.fetch_add(1, Ordering::Acquire);
            let res = window_io(self, array, slot, base, &write[..cols], true, false);
            array.writes.fetch_sub(1, Ordering::Release);
            let wbad = res.map_err(|_| col.parity() | bad)?;
            note_corrected(array, self, base, bad & !wbad);
            if wbad != 0 {
                return Err(wbad);
            }
        }
        Ok(())
    }
}

/// A slice of a request's bio that lives in one window of one member.
pub struct Piece {
    src: RqBio<Array>,
    /// Sectors into the bio.
    skip: u64,
    member: usize,
    /// Sectors into the window.
    off: u64,
    len: u64,
}

impl Piece {
    /// Bytes of column `c` this piece covers: `(page offset, bio offset, length)`.
    fn in_column(&self, c: usize) -> Option<(usize, usize, usize)> {
        let cs = c as u64 * COL_SECTORS;
        let a = self.off.max(cs);
        let b = (self.off + self.len).min(cs + COL_SECTORS);
        (a < b).then(|| {
            (
                ((a - cs) << 9) as usize,
                ((self.skip + a - self.off) << 9) as usize,
                ((b - a) << 9) as usize,
            )
        })
    }

    /// The sectors of the window this piece covers, as a bit mask.
    fn mask(&self) -> u128 {
        let n = self.len.min(128) as u32;
        let m = if n >= 128 {
            u128::MAX
        } else {
            (1u128 << n) - 1
        };
        m.checked_shl(self.off as u32).unwrap_or(0)
    }
}

/// One window's operation.
pub struct StripeOp {
    unit: u64,
    stripe: u64,
    win: usize,
    read: bool,
    fua: bool,
    /// Members whose blocks are to be rebuilt and rewritten after a read error there.
    bad: Set,
    pieces: KVec<Piece>,
    slot: Option<Slot>,
}

/// A write operation's plan for each column of its window.
struct WriteState {
    col: Column,
    plans: [Option<plan::WritePlan>; MAX_COLS],
    written: [Set; MAX_COLS],
    full: [Set; MAX_COLS],
    /// Members counted failed because their reads failed, to be rewritten.
    rewrite: Set,
}

impl WriteState {
    fn reads(&self) -> [Set; MAX_COLS] {
        core::array::from_fn(|c| self.plans[c].map_or(0, |p| p.read))
    }

    fn writes(&self) -> [Set; MAX_COLS] {
        core::array::from_fn(|c| self.plans[c].map_or(0, |p| p.write))
    }

    /// Every member this operation writes.
    fn written_members(&self) -> Set {
        self.writes().iter().fold(0, |a, &w| a | w)
    }
}

/// Operations run by one job, at most this many: their reads go out together, then their
/// writes, so a job waits twice however many windows it carries.
const GROUP_MAX: usize = 16;

/// Operations that hold their heads, run together by one job.
struct Group {
    ops: KVec<StripeOp>,
}

/// Makes room for one more element, waiting out allocation failures: a request on the I/O
/// path has no way back, and memory returns as member I/O completes.
fn room<T>(v: &mut KVec<T>) {
    while v.reserve(1, GFP_KERNEL).is_err() {
        backoff();
    }
}

/// The operations of one worker round.
pub struct Batch {
    ops: KVec<StripeOp>,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Self {
        Self { ops: KVec::new() }
    }

    /// Adds `len` sectors of `src` from sector `skip` on, which land at `chunk_off` in the
    /// chunk of `member` in `stripe`, split by window.
    #[expect(clippy::too_many_arguments)]
    pub fn add(
        &mut self,
        st: &Stripes,
        src: &RqBio<Array>,
        read: bool,
        bad: Set,
        stripe: u64,
        member: usize,
        mut chunk_off: u64,
        mut skip: u64,
        mut len: u64,
    ) -> Result {
        let fua = !read && src.request().fua();
        while len > 0 {
            let (unit, win, off) = st.window(stripe, chunk_off);
            let n = len.min(st.window_sectors() - off);
            let piece = Piece {
                src: src.clone_ref(),
                skip,
                member,
                off,
                len: n,
            };
            let found = self
                .ops
                .iter_mut()
                .rev()
                .take(64)
                .find(|o| o.unit == unit && o.read == read && o.bad == bad);
            match found {
                Some(op) => {
                    op.fua |= fua;
                    room(&mut op.pieces);
                    op.pieces.push(piece, GFP_KERNEL)?;
                }
                None => {
                    let mut pieces = KVec::new();
                    room(&mut pieces);
                    pieces.push(piece, GFP_KERNEL)?;
                    room(&mut self.ops);
                    self.ops.push(
                        StripeOp {
                            unit,
                            stripe,
                            win,
                            read,
                            fua,
                            bad,
                            pieces,
                            slot: None,
                        },
                        GFP_KERNEL,
                    )?;
                }
            }
            chunk_off += n;
            skip += n;
            len -= n;
        }
        Ok(())
    }

    /// Whether some write in the batch would have to read before writing, so that waiting
    /// for more requests might save the reads.
    pub fn has_partial_writes(&self, st: &Stripes) -> bool {
        let data = st.geo.data();
        self.ops.iter().any(|op| {
            if op.read {
                return false;
            }
            let masks = op.masks();
            // A touched column is partial unless every data member overwrites it whole.
            (0..st.cols).any(|c| {
                let col = |m: &u128| (m >> (c * 8)) as u8;
                let touched = masks.iter().any(|m| col(m) != 0);
                let full = masks.iter().filter(|m| col(m) == 0xff).count();
                touched && full < data
            })
        })
    }

    /// Starts every operation: each takes its slot (waiting for one if needed) and runs as a
    /// job on the stripe queue, apart from the request workers that wait for heads here.
    ///
    /// Operations are grouped, up to `GROUP_MAX` to a job. Heads are taken without waiting
    /// while the group fills; when they cannot be (the window is busy, maybe with an earlier
    /// operation of this very group, or the cache is short), the group is started first, so
    /// that nothing waits on heads held by a group that was never started.
    pub fn dispatch(self, st: &Stripes) {
        let mut group = Group { ops: KVec::new() };
        for mut op in self.ops {
            let cols = op.columns(st);
            let slot = match st.try_acquire(op.unit, cols) {
                Some(slot) => slot,
                None => {
                    group.start(st);
                    st.acquire(op.unit, cols)
                }
            };
            op.slot = Some(slot);
            room(&mut group.ops);
            // Room was made above: this push does not allocate, so cannot fail.
            let _ = group.ops.push(op, GFP_KERNEL);
            if group.ops.len() >= GROUP_MAX {
                group.start(st);
            }
        }
        // Every group runs as a job, on a fresh stack: run on this worker, below `hw_work`
        // and the round's frames, a RAID 6 double-failure write overflowed the 16 KiB kernel
        // stack (it ran on the worker to save a wakeup per round).
        group.start(st);
    }
}

impl Default for Batch {
    fn default() -> Self {
        Self::new()
    }
}

/// Logs md's "read error corrected" for each member of `members`, rewritten over the window
/// at member sector `base`.
fn note_corrected(array: &Array, st: &Stripes, base: u64, members: Set) {
    for m in bits(members) {
        array.with_name(m, |name| {
            pr_info!(
                "{}: read error corrected ({} sectors at {} on {})\n",
                array.name(),
                st.window_sectors(),
                base,
                name
            )
        });
    }
}

impl Group {
    /// Hands the operations gathered so far to a job. Never run here: the request worker's
    /// stack holds the gathering already (the two overflowed 16 KiB together). Without memory
    /// for the work item, it tries again after a moment, as a mempool would wait.
    fn start(&mut self, st: &Stripes) {
        if self.ops.is_empty() {
            return;
        }
        let mut group = Group {
            ops: core::mem::take(&mut self.ops),
        };
        while let Err(g) = spawn(&st.wq, group) {
            group = g;
            crate::sys::kthread::sleep_ms(1);
        }
    }
}

impl Job for Group {
    fn run(mut self) {
        let Some(first) = self.ops.first().and_then(|op| op.pieces.first()) else {
            return;
        };
        // The pieces hold their requests, and the requests the array; this reference keeps
        // one request, and so the array, until the heads are back.
        let rq = first.src.request().clone();
        let array = rq.data();
        let Some(st) = array.stripes() else {
            for op in self.ops.iter() {
                op.fail(BlkStatus::IOERR);
            }
            return;
        };
        noio(|| run_group(&array, st, &mut self.ops));
        for op in self.ops.iter_mut() {
            if let Some(slot) = op.slot.take() {
                st.release(op.unit, slot);
            }
        }
        // A member failed here: a spare may take its place.
        if array.sync().kick_pending() {
            Arc::from(array).kick_later();
        }
        // Dropping the operations drops their pieces, which completes requests whose last
        // piece this was.
    }
}

/// Runs a group's operations: reads of failed members' blocks one by one; writes in three
/// phases, all reads, all computing, all writes. A write whose reads failed starts over on its
/// own, re-planned around the failing member.
fn run_group(array: &Array, st: &Stripes, ops: &mut [StripeOp]) {
    let n = array.members().len();
    let mut states: KVec<Option<WriteState>> = KVec::new();
    for op in ops.iter_mut() {
        room(&mut states);
        let state = if op.read {
            op.run_alone(array, st);
            None
        } else {
            match op.plan_write(array, st, 0) {
                Ok(w) => Some(w),
                Err(status) => {
                    op.fail(status);
                    None
                }
            }
        };
        let _ = states.push(state, GFP_KERNEL);
    }
    // Reads of every write, together.
    let bad = group_io(array, st, ops, &states, false);
    if bad != Ok(0) {
        // Rare: a member failed a read. Each write then runs alone, re-planned.
        if let Ok(bad) = bad {
            for m in bits(bad) {
                array.count_error(m, None);
            }
        }
        for (op, w) in ops.iter_mut().zip(states.iter()) {
            if w.is_some() {
                op.run_alone(array, st);
            }
        }
        return;
    }
    for (op, w) in ops.iter_mut().zip(states.iter_mut()) {
        // Only writes that planned: taking the slot of any other operation here would lose it.
        let Some(state) = w.as_ref() else { continue };
        let Some(mut slot) = op.slot.take() else {
            continue;
        };
        let res = op.compute(st, state, &mut slot, n);
        op.slot = Some(slot);
        if let Err(status) = res {
            op.fail(status);
            *w = None;
        }
    }
    array.writes.fetch_add(1, Ordering::Acquire);
    let bad = group_io(array, st, ops, &states, true);
    array.writes.fetch_sub(1, Ordering::Release);
    for (op, w) in ops.iter().zip(states.iter()) {
        let Some(w) = w else { continue };
        let res = match bad {
            Ok(bad) => op.after_writes(array, st, bad & w.written_members(), w.rewrite),
            Err(status) => Err(status),
        };
        if let Err(status) = res {
            op.fail(status);
        }
    }
}

/// Runs `f` on column `c` of `slot` as one byte slice per member. Out of line, so that the
/// 1 KiB slice table lives only while `f` runs and never in a caller's frame.
#[inline(never)]
fn on_column(
    slot: &mut Slot,
    c: usize,
    n: usize,
    f: impl FnOnce(&mut [&mut [u8]]) -> Result<(), plan::Error>,
) -> Result<(), BlkStatus> {
    let mut bufs: [&mut [u8]; crate::layout::MAX_MEMBERS] =
        core::array::from_fn(|_| <&mut [u8]>::default());
    slot.column(c, &mut bufs);
    f(bufs.get_mut(..n).unwrap_or(&mut [])).map_err(|_| BlkStatus::IOERR)
}

/// One phase of a group: the reads (or the writes) of every planned write, waited for together.
/// Returns the members whose I/O failed.
fn group_io(
    array: &Array,
    st: &Stripes,
    ops: &[StripeOp],
    states: &[Option<WriteState>],
    write: bool,
) -> Result<Set, BlkStatus> {
    let cols = st.cols.min(MAX_COLS);
    PageIo::batch(|io| {
        for (op, w) in ops.iter().zip(states.iter()) {
            let (Some(w), Some(slot)) = (w, op.slot.as_ref()) else {
                continue;
            };
            let sets = if write { w.writes() } else { w.reads() };
            op.submit(io, st, array, slot, &sets[..cols], write)?;
        }
        let bad = io.wait();
        drop_failed_replacements(array, io.failed_replacements());
        Ok(bad)
    })
}

/// Gives up the replacements whose writes failed (the members stay).
fn drop_failed_replacements(array: &Array, failed: Set) {
    for s in bits(failed) {
        if array.sync().drop_replacing(s) {
            pr_warn!(
                "{}: write error on the replacement of slot {}: replacement given up\n",
                array.name(),
                s
            );
        }
    }
}

/// Where a window's member I/O goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    /// The members' devices; writes also reach replacements being built behind their point.
    Members,
    /// Only the replacements being built (the sync thread's copy).
    Replacements,
}

/// Member I/O of a window, waited for: returns the members whose I/O failed.
fn window_io(
    st: &Stripes,
    array: &Array,
    slot: &Slot,
    base: u64,
    sets: &[Set],
    write: bool,
    fua: bool,
) -> Result<Set, BlkStatus> {
    window_io_to(st, array, slot, base, sets, write, fua, Target::Members)
}

/// As [`window_io`], to `target`.
#[expect(clippy::too_many_arguments)]
fn window_io_to(
    st: &Stripes,
    array: &Array,
    slot: &Slot,
    base: u64,
    sets: &[Set],
    write: bool,
    fua: bool,
    target: Target,
) -> Result<Set, BlkStatus> {
    PageIo::batch(|io| {
        submit_sets(io, st, array, slot, base, sets, write, fua, target)?;
        let bad = io.wait();
        drop_failed_replacements(array, io.failed_replacements());
        Ok(bad)
    })
}

/// Adds a window's member I/O to `io`: for each member, one bio per run of consecutive columns
/// whose sets (`sets[c]`) contain it.
#[expect(clippy::too_many_arguments)]
fn submit_sets<'a>(
    io: &mut PageIo<'_, 'a>,
    st: &Stripes,
    array: &Array,
    slot: &'a Slot,
    base: u64,
    sets: &[Set],
    write: bool,
    fua: bool,
    target: Target,
) -> Result<(), BlkStatus> {
    // Replacements take the writes of windows their build has passed.
    let end = base.saturating_sub(st.geo.data_offset()) + st.window_sectors();
    let repl = match target {
        Target::Members if write => array.sync().replaced_below(end),
        Target::Members => 0,
        Target::Replacements => !0,
    };
    let Some(first) = slot
        .heads
        .iter()
        .flatten()
        .next()
        .and_then(|h| h.pages.first())
    else {
        // No heads: nothing to do.
        return Ok(());
    };
    let mut pages: [&PageBuf; MAX_COLS] = [first; MAX_COLS];
    for m in 0..array.members().len() {
        if sets.iter().all(|&s| s & (1u64 << m) == 0) {
            continue;
        }
        // A slot emptied since the plan: its I/O fails, as a member's would.
        let dev = match target {
            Target::Members => array.dev(m),
            Target::Replacements => None,
        };
        // A read of a member that left the array since the plan (failed, and maybe a blank
        // spare put in its slot since) fails too: old data or parity must never come from a
        // device that does not hold them.
        if target == Target::Members
            && (dev.is_none() || (!write && array.in_sync() & (1 << m) == 0))
        {
            io.fail(m);
            continue;
        }
        let rdev = if repl & (1 << m) != 0 {
            array.members().get(m).and_then(|x| x.replacement.get())
        } else {
            None
        };
        let mut c = 0;
        while let Some(&set) = sets.get(c) {
            if set & (1u64 << m) == 0 {
                c += 1;
                continue;
            }
            let start = c;
            let mut n = 0;
            while sets.get(c).is_some_and(|&s| s & (1u64 << m) != 0) {
                if let (Some(dst), Some(p)) = (pages.get_mut(n), slot.page(m, c)) {
                    *dst = p;
                    n += 1;
                }
                c += 1;
            }
            let sector = base + start as u64 * COL_SECTORS;
            let run = pages.get(..n).unwrap_or(&[]);
            if let Some(d) = &dev {
                io.submit(&st.bioset, d.clone(), m, sector, write, fua, run)
                    .map_err(|_| BlkStatus::IOERR)?;
            }
            if let Some(r) = &rdev {
                io.submit_replacement(&st.bioset, r.clone(), m, sector, fua, run)
                    .map_err(|_| BlkStatus::IOERR)?;
            }
        }
    }
    Ok(())
}

impl StripeOp {
    /// Runs this operation by itself, failing its requests on error.
    fn run_alone(&mut self, array: &Array, st: &Stripes) {
        let Some(mut slot) = self.slot.take() else {
            self.fail(BlkStatus::IOERR);
            return;
        };
        let res = if self.read {
            self.run_read(array, st, &mut slot)
        } else {
            self.run_write(array, st, &mut slot)
        };
        self.slot = Some(slot);
        if let Err(status) = res {
            self.fail(status);
        }
    }

    /// Adds this window's member I/O for `sets` (one set of members per column) to `io`.
    fn submit<'a>(
        &self,
        io: &mut PageIo<'_, 'a>,
        st: &Stripes,
        array: &Array,
        slot: &'a Slot,
        sets: &[Set],
        write: bool,
    ) -> Result<(), BlkStatus> {
        submit_sets(
            io,
            st,
            array,
            slot,
            self.base(st),
            sets,
            write,
            write && self.fua,
            Target::Members,
        )
    }

    /// The columns the pieces touch, as a bit mask.
    fn columns(&self, st: &Stripes) -> u32 {
        let mut cols = 0u32;
        for p in self.pieces.iter() {
            for c in 0..st.cols {
                if p.in_column(c).is_some() {
                    cols |= 1 << c;
                }
            }
        }
        cols
    }

    fn fail(&self, status: BlkStatus) {
        for p in self.pieces.iter() {
            p.src.request().set_error(status);
        }
    }

    /// First member sector of the window.
    fn base(&self, st: &Stripes) -> u64 {
        st.geo.stripe_start(self.stripe) + self.win as u64 * st.window_sectors()
    }

    /// Written sectors per member, as window bit masks.
    // Kept out of line: the stripe path runs deep on a 16 KiB stack (see `dispatch`).
    #[inline(never)]
    fn masks(&self) -> [u128; crate::layout::MAX_MEMBERS] {
        let mut w = [0u128; crate::layout::MAX_MEMBERS];
        for p in self.pieces.iter() {
            if let Some(m) = w.get_mut(p.member) {
                *m |= p.mask();
            }
        }
        w
    }

    /// Plans every column of a write against the members failed now plus `rewrite`.
    // Kept out of line: the stripe path runs deep on a 16 KiB stack (see `dispatch`).
    #[inline(never)]
    fn plan_write(
        &self,
        array: &Array,
        st: &Stripes,
        rewrite: Set,
    ) -> Result<WriteState, BlkStatus> {
        let n = array.members().len();
        let masks = self.masks();
        // A member being recovered counts as in sync where its recovery has passed.
        let rel = self.base(st) - st.geo.data_offset();
        let end = rel + st.window_sectors();
        let failed = array.failed_set() & !array.sync().recovered_below(end);
        let mut col = Column::new(&st.geo, self.stripe, failed | rewrite);
        // Beyond the resync point parity is not trusted (md forces reconstruct-write there).
        if !array.sync().clean_below(end) {
            col = col.unsynced();
        }
        let mut w = WriteState {
            col,
            plans: [None; MAX_COLS],
            written: [0; MAX_COLS],
            full: [0; MAX_COLS],
            rewrite,
        };
        for (m, mask) in masks.iter().enumerate().take(n) {
            for c in 0..st.cols.min(MAX_COLS) {
                let col = (mask >> (c * 8)) as u8;
                if col != 0 {
                    w.written[c] |= 1 << m;
                }
                if col == 0xff {
                    w.full[c] |= 1 << m;
                }
            }
        }
        for c in 0..st.cols.min(MAX_COLS) {
            if w.written[c] != 0 {
                let p =
                    plan::plan_rewrite(&w.col, w.written[c], w.full[c], rewrite).map_err(|_| {
                        array.set_broken();
                        BlkStatus::IOERR
                    })?;
                w.plans[c] = Some(p);
            }
        }
        Ok(w)
    }

    /// Between the reads and the writes: folds old blocks out, copies the new data in, and
    /// computes parity.
    // Kept out of line: the stripe path runs deep on a 16 KiB stack (see `dispatch`).
    #[inline(never)]
    fn compute(
        &self,
        st: &Stripes,
        w: &WriteState,
        slot: &mut Slot,
        n: usize,
    ) -> Result<(), BlkStatus> {
        let eng = super::engines::stripe_engines();
        let fpu = KernelFpu;
        let cols = st.cols.min(MAX_COLS);
        for c in 0..cols {
            let Some(p) = w.plans[c] else { continue };
            on_column(slot, c, n, |bufs| {
                plan::pre_write(&eng, &fpu, &w.col, &p, w.written[c], bufs)
            })?;
        }
        for piece in self.pieces.iter() {
            for c in 0..cols {
                if let Some((at, skip, len)) = piece.in_column(c) {
                    if let Some(page) = slot.page_mut(piece.member, c) {
                        if let Some(dst) = page.bytes_mut().get_mut(at..at + len) {
                            piece.src.copy_out(skip, dst);
                        }
                    }
                }
            }
        }
        for c in 0..cols {
            let Some(p) = w.plans[c] else { continue };
            on_column(slot, c, n, |bufs| {
                plan::post_write(&eng, &fpu, &w.col, &p, w.written[c], bufs)
            })?;
        }
        Ok(())
    }

    /// A write on its own: reads (re-planned while members fail reads), computes, writes.
    // Kept out of line: the stripe path runs deep on a 16 KiB stack (see `dispatch`).
    #[inline(never)]
    fn run_write(&self, array: &Array, st: &Stripes, slot: &mut Slot) -> Result<(), BlkStatus> {
        let cols = st.cols.min(MAX_COLS);
        let base = self.base(st);
        let mut rewrite: Set = 0;
        let mut attempt = 0;
        let w = loop {
            let w = self.plan_write(array, st, rewrite)?;
            let bad = window_io(st, array, slot, base, &w.reads()[..cols], false, false)?;
            if bad == 0 {
                break w;
            }
            // A member failed a read: rebuild its blocks from the others and rewrite them.
            for m in bits(bad) {
                array.count_error(m, None);
            }
            rewrite |= bad;
            attempt += 1;
            if attempt > MAX_REPLANS {
                return Err(BlkStatus::IOERR);
            }
        };
        self.compute(st, &w, slot, array.members().len())?;
        array.writes.fetch_add(1, Ordering::Acquire);
        let res = window_io(st, array, slot, base, &w.writes()[..cols], true, self.fua);
        array.writes.fetch_sub(1, Ordering::Release);
        let bad = res?;
        self.after_writes(array, st, bad & w.written_members(), rewrite)
    }

    /// Fails members whose writes failed; reports repaired read errors.
    fn after_writes(
        &self,
        array: &Array,
        st: &Stripes,
        bad: Set,
        rewrite: Set,
    ) -> Result<(), BlkStatus> {
        let mut res = Ok(());
        for m in bits(bad) {
            array.count_error(m, None);
            if array.fail_member(m).is_err() {
                array.set_broken();
                res = Err(BlkStatus::IOERR);
            }
        }
        note_corrected(array, st, self.base(st), rewrite & !bad);
        res
    }

    // Kept out of line: the stripe path runs deep on a 16 KiB stack (see `dispatch`).
    #[inline(never)]
    fn run_read(&self, array: &Array, st: &Stripes, slot: &mut Slot) -> Result<(), BlkStatus> {
        let cols = st.cols;
        let n = array.members().len();
        let masks = self.masks();
        let eng = super::engines::stripe_engines();
        let base = self.base(st);
        let mut want = [0 as Set; MAX_COLS];
        for (m, mask) in masks.iter().enumerate().take(n) {
            for (c, w) in want.iter_mut().enumerate().take(cols) {
                if (mask >> (c * 8)) as u8 != 0 {
                    *w |= 1 << m;
                }
            }
        }
        let mut bad = self.bad;
        let mut attempt = 0;
        let mut col;
        let mut plans = [plan::ReadPlan {
            read: 0,
            recover: 0,
        }; MAX_COLS];
        loop {
            col = Column::new(&st.geo, self.stripe, array.failed_set() | bad);
            let alive = col.all() & !col.failed();
            for c in 0..cols {
                plans[c] = if want[c] == 0 {
                    plan::ReadPlan {
                        read: 0,
                        recover: 0,
                    }
                } else {
                    let mut p = plan::plan_read(&col, want[c]).map_err(|_| BlkStatus::IOERR)?;
                    // Wanted blocks on good members are read as they are.
                    p.read |= want[c] & alive;
                    p
                };
            }
            let reads: [Set; MAX_COLS] = core::array::from_fn(|c| plans[c].read);
            let failed = window_io(st, array, slot, base, &reads[..cols], false, false)?;
            if failed == 0 {
                break;
            }
            for m in bits(failed) {
                array.count_error(m, None);
            }
            bad |= failed;
            attempt += 1;
            if attempt > MAX_REPLANS {
                return Err(BlkStatus::IOERR);
            }
        }
        let fpu = KernelFpu;
        for (c, p) in plans.iter().enumerate().take(cols) {
            if p.recover == 0 {
                continue;
            }
            on_column(slot, c, n, |bufs| plan::recover(&eng, &fpu, &col, bufs))?;
        }
        for piece in self.pieces.iter() {
            for c in 0..cols {
                if let Some((at, skip, len)) = piece.in_column(c) {
                    if let Some(src) = slot
                        .page(piece.member, c)
                        .and_then(|p| p.bytes().get(at..at + len))
                    {
                        piece.src.copy_in(skip, src);
                    }
                }
            }
        }
        // md's read-error repair: the rebuilt data blocks of members that failed a read but
        // are still in sync are written back.
        let repair = bad & !array.failed_set() & col.data();
        if repair == 0 {
            return Ok(());
        }
        let writes: [Set; MAX_COLS] =
            core::array::from_fn(|c| if plans[c].recover != 0 { repair } else { 0 });
        let wbad = window_io(st, array, slot, base, &writes[..cols], true, false)?;
        for m in bits(repair) {
            if wbad & (1 << m) != 0 {
                array.with_name(m, |name| {
                    pr_err!(
                        "{}: unrecoverable read error at sector {} on {}: rewrite failed\n",
                        array.name(),
                        base,
                        name
                    )
                });
                let _ = array.fail_member(m);
            }
        }
        note_corrected(array, st, base, repair & !wbad);
        Ok(())
    }
}
