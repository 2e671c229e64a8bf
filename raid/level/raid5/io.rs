//! Member I/O of a window's heads, and the column view the parity code works on.

use super::cache::{Slot, Stripes, COL_SECTORS, MAX_COLS};
use crate::plan::{self, bits, Set};
use crate::raid::Array;
use crate::sys::pagebuf::PageBuf;
use crate::sys::pageio::PageIo;
use crate::sys::BlkStatus;
use kernel::prelude::*;

/// Logs md's "read error corrected" for each member of `members`, rewritten over the window
/// at member sector `base`.
pub(super) fn note_corrected(array: &Array, st: &Stripes, base: u64, members: Set) {
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

/// Runs `f` on column `c` of `slot` as one byte slice per member. Out of line, so that the
/// 1 KiB slice table lives only while `f` runs and never in a caller's frame.
#[inline(never)]
pub(super) fn on_column(
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

/// Gives up the replacements whose writes failed (the members stay).
pub(super) fn drop_failed_replacements(array: &Array, failed: Set) {
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
pub(super) enum Target {
    /// The members' devices; writes also reach replacements being built behind their point.
    Members,
    /// Only the replacements being built (the sync thread's copy).
    Replacements,
}

/// Member I/O of a window, waited for: returns the members whose I/O failed.
pub(super) fn window_io(
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
pub(super) fn window_io_to(
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
pub(super) fn submit_sets<'a>(
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
