//! The sync thread's windows on RAID 4/5/6, through the stripe heads: a sync and a write never
//! compute parity from different data.

use super::cache::{Slot, Stripes, COL_SECTORS, MAX_COLS};
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

/// Windows the sync thread takes at once ([`Stripes::sync_range`]): the eight of one call.
const SYNC_GROUP: usize = 8;

impl Stripes {
    /// The sync thread's work on member sectors `[pos, pos + n)` past the data offset, whole
    /// windows: each window's heads are taken as a write's are, so a resync and a write never
    /// compute parity from different data. Resync writes parity computed from the data; check
    /// counts the columns whose parity differs (md's 8 sectors each); repair rewrites those.
    /// `scratch` holds two rows of two pages, for the parity reads.
    ///
    /// Up to [`SYNC_GROUP`] windows are taken at once, and a worker does the second half of
    /// them while this thread does the first: on members that copy in the submitter's context
    /// (brd) two CPUs share the work, and on others twice the I/O is in flight. One hand-off per
    /// group, not per window: waking a worker for every window cost more than it gained.
    ///
    /// Never inlined, and the heads of a group on the heap: `Level::sync_window` is the
    /// frame under every level's sync, and a group's slots on it overflowed the RAID 1
    /// thread's stack.
    #[inline(never)]
    pub(crate) fn sync_range(
        &self,
        array: &Array,
        action: Action,
        pos: u64,
        n: u64,
        scratch: &mut [KVec<PageBuf>],
    ) -> Result<(), ()> {
        let ws = self.window_sectors();
        let [mine, theirs, ..] = scratch else {
            return Err(());
        };
        // Without memory for a group, one window at a time.
        let mut one = [None];
        let mut group = KVec::new();
        let slots: &mut [Option<Slot>] = if group.reserve(SYNC_GROUP, GFP_KERNEL).is_ok() {
            for _ in 0..SYNC_GROUP {
                // Cannot fail: room is reserved.
                let _ = group.push(None, GFP_KERNEL);
            }
            &mut group
        } else {
            &mut one
        };
        let mut units = [0u64; SYNC_GROUP];
        let mut at = pos;
        let mut retries = 0;
        while at < pos + n {
            let want = (pos + n - at).div_ceil(ws).min(slots.len() as u64) as usize;
            let got = self.acquire_group(at, want, slots, &mut units);
            let (lo, hi) = slots.split_at_mut(got.div_ceil(2));
            let hi = hi.get_mut(..got - lo.len()).unwrap_or(&mut []);
            let from = at + lo.len() as u64 * ws;
            let ((done, err), theirs_done) = if hi.is_empty() {
                (self.sync_run(array, action, at, lo, mine), None)
            } else {
                let (h, l) = join(
                    &self.wq,
                    || noio(|| self.sync_run(array, action, from, hi, theirs)),
                    || self.sync_run(array, action, at, lo, mine),
                );
                (l, h)
            };
            // Windows done from `at` on, without a gap: the second half's count only if the
            // first half is all done.
            let (done, err) = match theirs_done {
                Some((d, e)) if done == lo.len() && err.is_none() => (done + d, e),
                _ => (done, err),
            };
            let end = at + done as u64 * ws;
            if done > 0 {
                if action == Action::Recover {
                    // Before the heads go: a write planned after the copy must see it done.
                    array.sync().built_to(end);
                }
                retries = 0;
            }
            for (slot, &unit) in slots.iter_mut().zip(units.iter()) {
                if let Some(slot) = slot.take() {
                    self.release(unit, slot);
                }
            }
            at = end;
            if let Some(bad) = err {
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
        }
        Ok(())
    }

    /// Takes the heads of up to `want` windows from member sector `at` into `slots` (window
    /// `k`'s unit in `units[k]`), and returns how many. It waits only for the first: one who
    /// waits while holding heads could wait for itself.
    fn acquire_group(
        &self,
        at: u64,
        want: usize,
        slots: &mut [Option<Slot>],
        units: &mut [u64; SYNC_GROUP],
    ) -> usize {
        let ws = self.window_sectors();
        let chunk = self.geo.chunk_sectors();
        let all_cols = ((1u64 << self.cols) - 1) as u32;
        let mut got = 0;
        for (k, (slot, u)) in slots
            .iter_mut()
            .zip(units.iter_mut())
            .take(want)
            .enumerate()
        {
            let a = at + k as u64 * ws;
            let (unit, _, _) = self.window(a / chunk, a % chunk);
            let s = if k == 0 {
                self.acquire(unit, all_cols)
            } else {
                match self.try_acquire(unit, all_cols) {
                    Some(s) => s,
                    None => break,
                }
            };
            *slot = Some(s);
            *u = unit;
            got += 1;
        }
        got
    }

    /// Syncs the windows of `slots` in turn, the first at member sector `at`. Returns how many
    /// are done, and the members whose I/O failed in the window after them.
    fn sync_run(
        &self,
        array: &Array,
        action: Action,
        at: u64,
        slots: &mut [Option<Slot>],
        scratch: &mut [PageBuf],
    ) -> (usize, Option<Set>) {
        let ws = self.window_sectors();
        let chunk = self.geo.chunk_sectors();
        for (k, slot) in slots.iter_mut().enumerate() {
            let Some(slot) = slot else {
                return (k, None);
            };
            let a = at + k as u64 * ws;
            // Clean in the write-intent bitmap: read with the heads held, so no write is
            // planned against the old recovery point meanwhile.
            if array.bitmap_skips(action, a, ws) {
                continue;
            }
            let stripe = a / chunk;
            let (_, win, _) = self.window(stripe, a % chunk);
            let base = self.geo.stripe_start(stripe) + win as u64 * ws;
            if let Err(bad) = self.sync_window(array, action, stripe, base, slot, scratch) {
                return (k, Some(bad));
            }
        }
        (slots.len(), None)
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
