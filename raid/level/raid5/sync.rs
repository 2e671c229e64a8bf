//! The sync thread's windows on RAID 4/5/6, through the stripe heads: a sync and a write never
//! compute parity from different data.

use super::cache::{Slot, Stripes, COL_SECTORS, MAX_COLS};
use super::io::{note_corrected, on_column, window_io, window_io_to, Target};
use super::MAX_REPLANS;
use crate::plan::{self, bits, Column, Set};
use crate::raid::sync::Action;
use crate::raid::Array;
use crate::sys::fpu::KernelFpu;
use crate::sys::pagebuf::PageBuf;
use core::sync::atomic::Ordering;
use kernel::prelude::*;

impl Stripes {
    /// The sync thread's work on member sectors `[pos, pos + n)` past the data offset, whole
    /// windows: each window's heads are taken as a write's are, so a resync and a write never
    /// compute parity from different data. Resync writes parity computed from the data; check
    /// counts the columns whose parity differs (md's 8 sectors each); repair rewrites those.
    /// `scratch` holds two pages, for the parity read.
    pub(crate) fn sync_range(
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
            // Clean in the write-intent bitmap: read with the heads held, so no write is
            // planned against the old recovery point meanwhile.
            if array.bitmap_skips(action, at, ws) {
                if action == Action::Recover {
                    array.sync().built_to(at + ws);
                }
                self.release(unit, slot);
                at += ws;
                continue;
            }
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
