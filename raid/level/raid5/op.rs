//! One window's operation: a write planned, read, computed and written, or a read of a failed
//! member's blocks rebuilt, in straight-line code on a stripe job.

use super::cache::{Slot, Stripes, COL_SECTORS, MAX_COLS};
use super::io::{note_corrected, on_column, submit_sets, window_io, Target};
use super::MAX_REPLANS;
use crate::plan::{self, bits, Column, Set};
use crate::raid::Array;
use crate::sys::fpu::KernelFpu;
use crate::sys::pageio::PageIo;
use crate::sys::request::RqBio;
use crate::sys::BlkStatus;
use core::sync::atomic::Ordering;
use kernel::prelude::*;

/// A slice of a request's bio that lives in one window of one member.
pub(super) struct Piece {
    pub(super) src: RqBio<Array>,
    /// Sectors into the bio.
    pub(super) skip: u64,
    pub(super) member: usize,
    /// Sectors into the window.
    pub(super) off: u64,
    pub(super) len: u64,
}

impl Piece {
    /// Bytes of column `c` this piece covers: `(page offset, bio offset, length)`.
    pub(super) fn in_column(&self, c: usize) -> Option<(usize, usize, usize)> {
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
    pub(super) fn mask(&self) -> u128 {
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
pub(super) struct StripeOp {
    pub(super) unit: u64,
    pub(super) stripe: u64,
    pub(super) win: usize,
    pub(super) read: bool,
    pub(super) fua: bool,
    /// Members whose blocks are to be rebuilt and rewritten after a read error there.
    pub(super) bad: Set,
    pub(super) pieces: KVec<Piece>,
    pub(super) slot: Option<Slot>,
}

/// A write operation's plan for each column of its window.
pub(super) struct WriteState {
    pub(super) col: Column,
    pub(super) plans: [Option<plan::WritePlan>; MAX_COLS],
    pub(super) written: [Set; MAX_COLS],
    pub(super) full: [Set; MAX_COLS],
    /// Members counted failed because their reads failed, to be rewritten.
    pub(super) rewrite: Set,
}

impl WriteState {
    pub(super) fn reads(&self) -> [Set; MAX_COLS] {
        core::array::from_fn(|c| self.plans[c].map_or(0, |p| p.read))
    }

    pub(super) fn writes(&self) -> [Set; MAX_COLS] {
        core::array::from_fn(|c| self.plans[c].map_or(0, |p| p.write))
    }

    /// Every member this operation writes.
    pub(super) fn written_members(&self) -> Set {
        self.writes().iter().fold(0, |a, &w| a | w)
    }
}

impl StripeOp {
    /// Runs this operation by itself, failing its requests on error.
    pub(super) fn run_alone(&mut self, array: &Array, st: &Stripes) {
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
    pub(super) fn submit<'a>(
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
    pub(super) fn columns(&self, st: &Stripes) -> u32 {
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

    pub(super) fn fail(&self, status: BlkStatus) {
        for p in self.pieces.iter() {
            p.src.request().set_error(status);
        }
    }

    /// First member sector of the window.
    pub(super) fn base(&self, st: &Stripes) -> u64 {
        st.geo.stripe_start(self.stripe) + self.win as u64 * st.window_sectors()
    }

    /// Written sectors per member, as window bit masks.
    // Kept out of line: the stripe path runs deep on a 16 KiB stack (see `dispatch`).
    #[inline(never)]
    pub(super) fn masks(&self) -> [u128; crate::layout::MAX_MEMBERS] {
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
    pub(super) fn plan_write(
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
    pub(super) fn compute(
        &self,
        st: &Stripes,
        w: &WriteState,
        slot: &mut Slot,
        n: usize,
    ) -> Result<(), BlkStatus> {
        let eng = crate::raid::engines::stripe_engines();
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
    pub(super) fn run_write(
        &self,
        array: &Array,
        st: &Stripes,
        slot: &mut Slot,
    ) -> Result<(), BlkStatus> {
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
    pub(super) fn after_writes(
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
        // The failed members are recorded before the writes complete, as md's.
        if bad != 0 {
            if let Some(m) = array.meta() {
                m.flush(array);
            }
        }
        res
    }

    // Kept out of line: the stripe path runs deep on a 16 KiB stack (see `dispatch`).
    #[inline(never)]
    pub(super) fn run_read(
        &self,
        array: &Array,
        st: &Stripes,
        slot: &mut Slot,
    ) -> Result<(), BlkStatus> {
        let cols = st.cols;
        let n = array.members().len();
        let masks = self.masks();
        let eng = crate::raid::engines::stripe_engines();
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
