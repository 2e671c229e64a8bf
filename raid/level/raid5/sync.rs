//! The sync thread's windows on RAID 4/5/6, through the stripe heads: a sync and a write never
//! compute parity from different data.

use super::cache::{Retire, Slot, Stream, Stripes, COL_SECTORS, MAX_COLS};
use super::io::{note_corrected, on_column, window_io, window_io_to, Target};
use super::MAX_REPLANS;
use crate::plan::{self, bits, Column, Set};
use crate::raid::sync::Action;
use crate::raid::Array;
use crate::sys::fpu::KernelFpu;
use crate::sys::noio;
use crate::sys::pagebuf::PageBuf;
use crate::sys::workqueue::join;
use core::sync::atomic::Ordering;
use kernel::prelude::*;

/// Windows one call of [`Stripes::sync_range`] streams through: 2 MiB per member at 64 KiB
/// windows, so the worker's start and the two sides' uneven ends are paid once per 32 windows.
pub(crate) const SYNC_STREAM: u64 = 32;

impl Stripes {
    /// The sync thread's work on member sectors `[pos, pos + n)` past the data offset, whole
    /// windows: each window's heads are taken as a write's are, so a resync and a write never
    /// compute parity from different data. Resync writes parity computed from the data; check
    /// counts the columns whose parity differs (md's 8 sectors each); repair rewrites those.
    /// `scratch` holds two rows of two pages, for the parity reads.
    ///
    /// This thread and a worker take the windows in turn, each the next one free, so on
    /// members that copy in the submitter's context (brd) two CPUs share the work, and on
    /// others twice the I/O is in flight. Windows are taken in order and given back in order
    /// (a recovery's point must never pass a window not yet built, or a write planned against
    /// it would skip the member being built); a side that finishes ahead of the other parks
    /// one window, and waits only if it finishes a second before the other is done. A join per
    /// group of eight windows made the thread wait at each for a worker that starts about
    /// 0.3 ms late under TCG, and held 128 heads at once.
    ///
    /// Never inlined: `Level::sync_window` is the frame under every level's sync.
    #[inline(never)]
    pub(crate) fn sync_range(
        &self,
        array: &Array,
        action: Action,
        pos: u64,
        n: u64,
        solo: bool,
        scratch: &mut [KVec<PageBuf>],
    ) -> Result<(), ()> {
        let ws = self.window_sectors();
        let [mine, theirs, ..] = scratch else {
            return Err(());
        };
        let mut at = pos;
        let mut retries = 0;
        while at < pos + n {
            let count = (pos + n - at).div_ceil(ws) as usize;
            *self.stream.lock() = Stream { at, count, next: 0 };
            *self.retire.lock() = Retire {
                at,
                ..Retire::new()
            };
            if solo {
                self.sync_side(array, action, mine);
            } else {
                join(
                    &self.wq,
                    || noio(|| self.sync_side(array, action, theirs)),
                    || self.sync_side(array, action, mine),
                );
            }
            let (front, err) = self.end_stream();
            at += front as u64 * ws;
            if front > 0 {
                retries = 0;
            }
            let Some(bad) = err else {
                if front < count {
                    // Every window is retired unless one failed.
                    return Err(());
                }
                continue;
            };
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
        }
        Ok(())
    }

    /// One side of a [`Stripes::sync_range`] call: takes windows until none are left (or one
    /// failed), syncs each and hands it to [`Stripes::finish_window`].
    fn sync_side(&self, array: &Array, action: Action, scratch: &mut [PageBuf]) {
        let ws = self.window_sectors();
        let chunk = self.geo.chunk_sectors();
        while let Some((k, a, unit, mut slot)) = self.take_window() {
            // Clean in the write-intent bitmap: read with the heads held, so no write is
            // planned against the old recovery point meanwhile.
            let res = if array.bitmap_skips(action, a, ws) {
                Ok(())
            } else {
                let stripe = a / chunk;
                let (_, win, _) = self.window(stripe, a % chunk);
                let base = self.geo.stripe_start(stripe) + win as u64 * ws;
                self.sync_window(array, action, stripe, base, &mut slot, scratch)
            };
            self.finish_window(action, array, k, unit, slot, res.err());
        }
    }

    /// The next window of the call with its heads: `(window, member sector, unit, heads)`.
    /// Windows are taken in order, and the heads waited for with the stream locked: every
    /// earlier window is then held by a side that finishes it without taking more heads and
    /// gives them back, so the wait ends.
    #[inline(never)]
    fn take_window(&self) -> Option<(usize, u64, u64, Slot)> {
        let mut s = self.stream.lock();
        if s.next >= s.count || self.retire.lock().err.is_some() {
            return None;
        }
        let k = s.next;
        let a = s.at + k as u64 * self.window_sectors();
        let chunk = self.geo.chunk_sectors();
        let (unit, _, _) = self.window(a / chunk, a % chunk);
        let slot = self.acquire(unit, ((1u64 << self.cols) - 1) as u32);
        s.next += 1;
        Some((k, a, unit, slot))
    }

    /// Window `k` is done (`err`: the members whose I/O failed in it). In order, it is retired:
    /// the recovery point moves past it and its heads go back, and a window parked behind it
    /// with it. Ahead of the other side it is parked, or, when a window is parked already,
    /// waits for that one to be retired. After a failure nothing more is retired past it.
    #[inline(never)]
    fn finish_window(
        &self,
        action: Action,
        array: &Array,
        k: usize,
        unit: u64,
        slot: Slot,
        err: Option<Set>,
    ) {
        let ws = self.window_sectors();
        let mut r = self.retire.lock();
        if let Some(bad) = err {
            if r.err.map_or(true, |(w, _)| k < w) {
                r.err = Some((k, bad));
            }
            drop(r);
            self.release(unit, slot);
        } else {
            while k != r.front && r.parked.is_some() && r.err.is_none() {
                self.retired.wait(&mut r);
            }
            if k == r.front {
                r.front += 1;
                let behind = r.parked.as_ref().is_some_and(|p| p.0 == r.front);
                if behind {
                    r.front += 1;
                }
                if action == Action::Recover {
                    // Before the heads go: a write planned after the copy must see it.
                    array.sync().built_to(r.at + r.front as u64 * ws);
                }
                let parked = if behind { r.parked.take() } else { None };
                drop(r);
                self.release(unit, slot);
                if let Some((_, unit, slot)) = parked {
                    self.release(unit, slot);
                }
            } else if r.parked.is_none() {
                r.parked = Some((k, unit, slot));
            } else {
                // Past a failure: never retired, the window is done again after it.
                drop(r);
                self.release(unit, slot);
            }
        }
        self.retired.notify_all();
    }

    /// After both sides are done: gives back a window parked past a failure, and returns how
    /// many windows were retired and the first failure.
    #[inline(never)]
    fn end_stream(&self) -> (usize, Option<Set>) {
        let mut r = self.retire.lock();
        let parked = r.parked.take();
        let out = (r.front, r.err.map(|(_, bad)| bad));
        drop(r);
        if let Some((_, unit, slot)) = parked {
            self.release(unit, slot);
        }
        out
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
        let eng = crate::raid::engines::stripe_engines();
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
        let eng = crate::raid::engines::stripe_engines();
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
