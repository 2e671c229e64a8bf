//! Sync windows of mirrors, shared by RAID 1 (every member a copy) and RAID 10 (the copies of
//! one chunk): a resync copies the first in-sync copy that reads over the others, a recovery
//! onto the devices being built, and check and repair read every copy and compare them in
//! md's 64 KiB blocks. A copy that fails a read is rewritten from one that did not (md's
//! `fix_sync_read_error`). Reads pick a copy the same way on both ([`Array::choose_copy`]).

use crate::plan::bits;
use crate::raid::sync::{Action, Window, BLOCK_SECTORS, MAX_BLOCKS, MAX_COPIES, WINDOW_BYTES};
use crate::raid::Array;
use crate::sys::noio;
use crate::sys::pagebuf::PAGE_BYTES;
use crate::sys::pageio::PageIo;
use crate::sys::workqueue::join;
use core::num::NonZeroU64;
use core::ops::Range;
use core::sync::atomic::Ordering;
use kernel::prelude::*;

/// The buffers of a mirror sync job over `copies` copies of chunks of `chunk` sectors
/// (`u64::MAX` on RAID 1), and the sectors it syncs at once. A `wide` job (a recovery not
/// guided by the bitmap) may sync more than its buffers hold at once.
pub(super) fn buffers(
    action: Action,
    copies: usize,
    chunk: u64,
    wide: bool,
) -> Result<(Window, u64)> {
    let copy = matches!(action, Action::Resync | Action::Recover);
    let chunk_pages = (chunk.min(WINDOW_BYTES as u64 / 512) as usize * 512)
        .div_ceil(PAGE_BYTES)
        .max(1);
    if copy && chunk_pages < WINDOW_BYTES / PAGE_BYTES {
        // RAID 10 chunks under 1 MiB: a resync or recovery reads and writes 1 MiB of them at
        // once, each chunk in a row of its own ([`Array::copy_units`]), as md keeps many
        // `r10bio`s in flight; one chunk at a time left the members idle between its read
        // and its write. Both are powers of two.
        // A recovery builds only the chunks with a copy on the devices being built (half of
        // them on a 4-member n2 array): it takes [`RECOVER_ROWS`] times the rows, given only
        // to those chunks ([`Array::copy_units`]), and windows of [`RECOVER_SPAN`] times
        // 1 MiB, so that a pass over the rows builds 2 MiB and the barrier is raised once per
        // 4 MiB. (With 1 MiB windows, it built 512 KiB per window at the same cost.)
        let (scale, span) = match (action, wide) {
            (Action::Recover, true) => (RECOVER_ROWS, RECOVER_SPAN),
            _ => (1, 1),
        };
        let rows = (WINDOW_BYTES / PAGE_BYTES / chunk_pages).max(1);
        return Ok((
            Window::new(rows * scale, chunk_pages, BLOCK_SECTORS.min(chunk))?,
            rows as u64 * chunk_pages as u64 * PAGE_SECTORS * span,
        ));
    }
    let rows = if copy { 1 } else { copies };
    // md's compare unit; a check's windows never cross a RAID 10 chunk, whose copies each lie
    // in one piece on their members.
    let block = BLOCK_SECTORS.min(chunk);
    let block_pages = (block as usize * 512).div_ceil(PAGE_BYTES).max(1);
    let max_pages = (chunk.min(MAX_BLOCKS as u64 * block) as usize * 512)
        .div_ceil(PAGE_BYTES)
        .max(1);
    // 1 MiB over all rows, whole blocks, and a power of two: it must divide a RAID 10 chunk
    // (3 or 5 rows would give 80 or 48 pages, and the next window would start inside one).
    let pages = (WINDOW_BYTES / PAGE_BYTES / rows.max(1)).clamp(block_pages, max_pages);
    let pages = 1usize << pages.ilog2();
    Ok((
        Window::new(rows, pages, block)?,
        (pages * PAGE_BYTES / 512) as u64,
    ))
}

impl Array {
    /// Picks the copy a read of `len` sectors at array sector `sector` goes to, among the `n`
    /// copies `copies()` yields in md's order, each as (member, sector of its sequential
    /// stream).
    ///
    /// A read that reaches the part not yet resynced goes to the first in-sync copy, as md's
    /// (so a reader never gets two answers). Otherwise a read that continues a member's
    /// sequential stream stays there, and any other goes to the copy whose member has the
    /// fewest bios in flight. Ties are broken by the read's 1 MiB region, so that even a
    /// queue-depth-1 random reader spreads over all copies while each region keeps to one
    /// member's cache.
    pub(super) fn choose_copy<I: Iterator<Item = (usize, u64)>>(
        &self,
        copies: impl Fn() -> I,
        n: usize,
        sector: u64,
        len: u64,
    ) -> Option<(usize, u64)> {
        let sync = self.in_sync();
        let in_sync = |c: &(usize, u64)| sync & (1 << c.0) != 0;
        let first = copies().find(in_sync)?;
        if !self.sync().clean_below(sector + len) {
            return Some(first);
        }
        let start =
            ((sector >> 11) % NonZeroU64::new(n as u64).unwrap_or(NonZeroU64::MIN)) as usize;
        let mut best = first;
        let mut best_load = u32::MAX;
        for c in Iterator::chain(copies().skip(start), copies().take(start)).filter(in_sync) {
            let member = self.members.get(c.0)?;
            if member.next_seq.load(Ordering::Relaxed) == c.1 {
                best = c;
                break;
            }
            let load = member.dev.load();
            if load < best_load {
                best = c;
                best_load = load;
            }
        }
        self.members
            .get(best.0)?
            .next_seq
            .store(best.1 + len, Ordering::Relaxed);
        Some(best)
    }

    /// Mirrors (RAID 1 members, RAID 10 copies of a chunk), `copies` being each copy's member
    /// and member sector: a resync reads the first in-sync copy and writes the others, a
    /// recovery writes it to the copies being rebuilt; check and repair read every in-sync
    /// copy and compare each block with the first.
    ///
    /// A copy that fails a read is rewritten from one that did not (md's
    /// `fix_sync_read_error`), and fails only when that write fails. When no copy can be read,
    /// the window is not done: `Err`, and the job stops before it.
    pub(super) fn copies_window(
        &self,
        action: Action,
        copies: &[(usize, u64)],
        n: u64,
        win: &mut Window,
    ) -> Result<(), ()> {
        let pages = (n as usize * 512).div_ceil(PAGE_BYTES);
        let copy = matches!(action, Action::Resync | Action::Recover);
        let mut rounds = 0;
        loop {
            let live = copies_of(copies, self.in_sync());
            let live = live.as_slice();
            if copy {
                return self.copy_copies(action, copies, live, pages, win);
            }
            // Check and repair: every copy into its own row.
            let unread = self.sync_io(win, live, 0, pages, false, |i| i);
            if unread != 0 {
                let good = live
                    .iter()
                    .position(|c| unread & (1 << c.0) == 0)
                    .ok_or(())?;
                let bad = copies_of(live, unread);
                self.rewrite_unread(win, bad.as_slice(), pages, good)?;
                // Read them all again, rewritten.
                rounds += 1;
                if rounds > 2 {
                    return Err(());
                }
                continue;
            }
            let failed = match action {
                Action::Repair if self.compare_blocks(live, n, win) != 0 => {
                    self.repair_blocks(live, n, win)
                }
                _ => {
                    self.compare_blocks(live, n, win);
                    0
                }
            };
            return self.fail_written(failed);
        }
    }

    /// Resync and recovery of one window of mirrors: row 0 takes the first in-sync copy that
    /// can be read; the copies that could not are rewritten with the others.
    fn copy_copies(
        &self,
        action: Action,
        copies: &[(usize, u64)],
        live: &[(usize, u64)],
        pages: usize,
        win: &mut Window,
    ) -> Result<(), ()> {
        let mut unread = 0u64;
        let mut src = None;
        for c in live {
            if self.sync_io(win, core::slice::from_ref(c), 0, pages, false, |_| 0) == 0 {
                src = Some(c.0);
                break;
            }
            unread |= 1 << c.0;
        }
        let src = src.ok_or(())?;
        let failed = match action {
            Action::Resync => {
                // A chunk's copies lie on distinct members.
                let others = copies_of(live, !(1u64 << src));
                self.sync_io(win, others.as_slice(), 0, pages, true, |_| 0)
            }
            _ => {
                let sync = self.in_sync();
                let rec = self.sync().recovering() & !sync;
                let rep = self.sync().replacing() & sync;
                let targets = copies_of(copies, rec | unread);
                self.replace_io(win, copies_of(copies, rep).as_slice(), pages);
                self.sync_io(win, targets.as_slice(), 0, pages, true, |_| 0)
            }
        };
        self.note_corrected(live, unread & !failed, pages);
        self.fail_written(failed)
    }

    /// Rewrites the copies in `bad`, which could not be read, from row `good`; logs those
    /// corrected and fails those whose write failed.
    fn rewrite_unread(
        &self,
        win: &Window,
        bad: &[(usize, u64)],
        pages: usize,
        good: usize,
    ) -> Result<(), ()> {
        let failed = self.sync_io(win, bad, 0, pages, true, |_| good);
        let ok = bad.iter().fold(0u64, |a, c| a | 1 << c.0) & !failed;
        self.note_corrected(bad, ok, pages);
        self.fail_written(failed)
    }

    /// Counts and logs the read errors of `members` (a set over `copies`) corrected by a
    /// rewrite (md's "read error corrected").
    fn note_corrected(&self, copies: &[(usize, u64)], members: u64, pages: usize) {
        for &(m, sector) in copies.iter().filter(|c| members & (1 << c.0) != 0) {
            self.count_error(m, None);
            self.with_name(m, |name| {
                pr_info!(
                    "{}: read error corrected ({} sectors at {} on {})\n",
                    self.name(),
                    pages * PAGE_BYTES / 512,
                    sector,
                    name
                )
            });
        }
    }

    /// Members whose sync write failed: each fails (a spare being rebuilt leaves the
    /// recovery). `Err` when one holds the last copy of some data: the job stops.
    fn fail_written(&self, failed: u64) -> Result<(), ()> {
        let mut res = Ok(());
        for m in bits(failed) {
            self.count_error(m, None);
            if self.fail_member_in_sync(m).is_err() {
                res = Err(());
            }
        }
        res
    }

    /// Compares each block of the rows of `live` (row `i` holds copy `i`) with row 0, counts
    /// the mismatching blocks' sectors (md's `mismatch_cnt`) and records per block the members
    /// that differ in `win.bad`. Returns the members that differ anywhere.
    fn compare_blocks(&self, live: &[(usize, u64)], n: u64, win: &mut Window) -> u64 {
        let block = win.block;
        let block_pages = (block as usize * 512).div_ceil(PAGE_BYTES);
        win.bad = [0; MAX_BLOCKS];
        let mut all = 0u64;
        let mut off = 0u64;
        let mut i = 0;
        while off < n {
            let len = block.min(n - off);
            let first = off as usize * 512 / PAGE_BYTES;
            let pages = first..first + (len as usize * 512).div_ceil(PAGE_BYTES);
            let Some(base) = win.rows.first().and_then(|r| r.get(pages.clone())) else {
                break;
            };
            let mut bad = 0u64;
            for (row, &(m, _)) in live.iter().enumerate().skip(1) {
                let Some(other) = win.rows.get(row).and_then(|r| r.get(pages.clone())) else {
                    continue;
                };
                if base.iter().zip(other).any(|(a, b)| a.bytes() != b.bytes()) {
                    bad |= 1 << m;
                }
            }
            // md counts each copy that differs.
            self.sync()
                .count_mismatch(len * u64::from(bad.count_ones()));
            all |= bad;
            if let Some(b) = win.bad.get_mut(i) {
                *b = bad;
            }
            i += 1;
            off += (block_pages * PAGE_BYTES / 512) as u64;
        }
        all
    }

    /// Repair: rewrites each mismatching block of the window from row 0. Returns the members
    /// whose rewrite failed.
    fn repair_blocks(&self, live: &[(usize, u64)], n: u64, win: &Window) -> u64 {
        let block = win.block;
        let mut failed = 0;
        for (i, &bad) in win.bad.iter().enumerate() {
            let off = i as u64 * block;
            if bad == 0 || off >= n {
                continue;
            }
            let len = block.min(n - off);
            let first = off as usize * 512 / PAGE_BYTES;
            let pages = (len as usize * 512).div_ceil(PAGE_BYTES);
            let mut t = [(0usize, 0u64); MAX_COPIES];
            let mut j = 0;
            for &c in live.iter().filter(|c| bad & (1 << c.0) != 0) {
                if let Some(slot) = t.get_mut(j) {
                    *slot = (c.0, c.1 + off);
                    j += 1;
                }
            }
            let targets = t.get(..j).unwrap_or(&[]);
            failed |= self.sync_io(win, targets, first, pages, true, |_| 0);
        }
        failed
    }

    /// Writes the first `pages` pages of row 0 to the replacements of the members in `copies`
    /// (member, member sector); a failure gives up that replacement, never the member.
    fn replace_io(&self, win: &Window, copies: &[(usize, u64)], pages: usize) {
        if copies.is_empty() {
            return;
        }
        let failed = PageIo::batch(|io| {
            for &(m, sector) in copies {
                if self
                    .submit_row(io, win, (m, sector), (0, 0, pages), Dir::Replace)
                    .is_err()
                {
                    self.sync().drop_replacing(m);
                }
            }
            io.wait();
            io.failed_replacements()
        });
        self.replacements_failed(failed);
    }

    /// Gives up the replacements of `failed`, whose writes failed.
    fn replacements_failed(&self, failed: u64) {
        for m in bits(failed) {
            if self.sync().drop_replacing(m) {
                pr_warn!(
                    "{}: write error on the replacement of slot {}: replacement given up\n",
                    self.name(),
                    m
                );
            }
        }
    }

    /// Reads (or writes) pages `[first, first + pages)` of a window row to or from each copy
    /// in `copies` (member, member sector); `row(i)` is copy `i`'s row. Returns the members
    /// whose I/O failed.
    fn sync_io(
        &self,
        win: &Window,
        copies: &[(usize, u64)],
        first: usize,
        pages: usize,
        write: bool,
        row: impl Fn(usize) -> usize,
    ) -> u64 {
        let dir = if write { Dir::Write } else { Dir::Read };
        let mut lost = 0u64;
        let failed = PageIo::batch(|io| {
            for (i, &c) in copies.iter().enumerate() {
                if self
                    .submit_row(io, win, c, (row(i), first, pages), dir)
                    .is_err()
                {
                    lost |= 1 << c.0;
                }
            }
            io.wait()
        });
        failed | lost
    }

    /// Submits pages `[first, first + pages)` of window row `row` (`at` = (row, first, pages))
    /// to or from `copy` (member, member sector) in `io`. `Err` when the member (or its
    /// replacement) has left its slot, or the pages are not in the window.
    fn submit_row<'a>(
        &self,
        io: &mut PageIo<'_, 'a>,
        win: &'a Window,
        (m, sector): (usize, u64),
        (row, first, pages): (usize, usize, usize),
        dir: Dir,
    ) -> Result {
        let dev = match dir {
            Dir::Replace => self.members.get(m).and_then(|x| x.replacement.get()),
            _ => self.dev(m),
        };
        let dev = dev.ok_or(ENODEV)?;
        let slice = win
            .rows
            .get(row)
            .and_then(|r| r.get(first..first + pages))
            .ok_or(EINVAL)?;
        let mut refs = KVec::with_capacity(slice.len(), GFP_KERNEL)?;
        for p in slice {
            refs.push(p, GFP_KERNEL)?;
        }
        match dir {
            Dir::Replace => io.submit_replacement(&self.sync_bioset, dev, m, sector, false, &refs),
            _ => io.submit(
                &self.sync_bioset,
                dev,
                m,
                sector,
                dir == Dir::Write,
                false,
                &refs,
            ),
        }
    }

    /// Syncs a window of mirrors cut into `units` units (RAID 10: its chunks; RAID 1: equal
    /// parts), `unit(i, f)` calling `f(copies, span)` for unit `i`: its copies (member, member
    /// sector of the unit's start) in md's order and where it lies in its row. A resync or
    /// recovery goes through [`Array::copy_units`], a pass at a time; whatever that leaves, and
    /// check and repair, go unit by unit through [`Array::copies_window`].
    pub(super) fn mirror_window(
        &self,
        action: Action,
        win: &mut Window,
        units: usize,
        unit: &UnitFn<'_>,
    ) -> Result<(), ()> {
        // Only where every unit has its own pages in its row (a window that starts inside
        // a chunk, where a job resumes, may not).
        let row_pages = win.rows.first().map_or(0, |r| r.len());
        let mut fits = true;
        for i in 0..units {
            unit(i, &mut |_, span| {
                let (_, first, pages) = span.at(0);
                fits &= first + pages <= row_pages;
            });
        }
        let mut done = 0;
        if matches!(action, Action::Resync | Action::Recover) && units > 1 && fits {
            while done < units {
                let (to, whole) = self.copy_units(action, win, done, units, unit)?;
                done = to;
                if !whole {
                    break;
                }
            }
        }
        let mut res = Ok(());
        for i in done..units {
            unit(i, &mut |copies, span| {
                if res.is_ok() {
                    res = self.copies_window(action, copies, span.sectors, win);
                }
            });
        }
        res
    }

    /// Resync or recovery of the units of a window from unit `from` on (see
    /// [`Array::mirror_window`]), in two halves: a worker syncs the second while this thread
    /// syncs the first ([`Array::copy_side`]), each in groups whose writes are in flight while
    /// its next group is read, as md's resync thread reads while raid1d and raid10d write. On
    /// members that copy in the submitter's context (brd) the two CPUs then share the copying
    /// with one hand-off per pass; handing each group's writes to a worker instead woke it
    /// for every group.
    /// A unit with nothing to write (no copy of it on a device being built) is not read, as
    /// md's recovery reads only the chunks of the devices it builds. Where the window has a
    /// row per chunk (RAID 10 chunks under 1 MiB), the rows go in turn to the units with
    /// something to write, and the pass ends where they run out; otherwise it takes them all.
    ///
    /// Returns where the pass ended and whether it got there: on a read error, or a unit no
    /// copy of which can be read, the units from that group on are left to the caller, which
    /// syncs them one by one ([`Array::copies_window`]: the copies are read in turn and those
    /// that failed are rewritten). `Err` when a member whose write failed held the last copy
    /// of some data.
    fn copy_units(
        &self,
        action: Action,
        win: &Window,
        from: usize,
        units: usize,
        unit: &UnitFn<'_>,
    ) -> Result<(usize, bool), ()> {
        let sync = self.in_sync();
        let (rec, rep) = match action {
            Action::Recover => (
                self.sync().recovering() & !sync,
                self.sync().replacing() & sync,
            ),
            _ => (0, 0),
        };
        let own_rows = win.rows.len() > 1;
        let mut pass = Pass {
            action,
            sync,
            rec,
            rep,
            own_rows,
            per: 1,
        };
        // Where the pass ends, and where the second half starts, in units and in rows.
        let (mut end, mut mid, mut mid_row) = (units, from + (units - from) / 2, 0);
        if own_rows {
            let busy = |i: usize| {
                let mut b = false;
                unit(i, &mut |copies, _| b = !pass.idle(copies));
                b
            };
            let rows = win.rows.len();
            let mut taken = 0;
            for i in from..units {
                if busy(i) {
                    if taken == rows {
                        end = i;
                        break;
                    }
                    taken += 1;
                }
            }
            // Halves of the busy units.
            let mut seen = 0;
            mid = end;
            for i in from..end {
                if seen == taken / 2 {
                    mid = i;
                    break;
                }
                seen += usize::from(busy(i));
            }
            mid_row = seen;
        }
        pass.per = (end - from).div_ceil(GROUPS).max(1);
        let (theirs, mine) = match !win.solo && mid > from && mid < end {
            true => join(
                &self.wq,
                || noio(|| self.copy_side(win, unit, pass, mid..end, mid_row)),
                || self.copy_side(win, unit, pass, from..mid, 0),
            ),
            false => (None, self.copy_side(win, unit, pass, from..end, 0)),
        };
        let mut failed = mine.failed;
        let mut repl = mine.repl;
        // Done without a gap: the second half only if the first got to its end.
        let mut stopped = mine.stopped;
        if let Some(t) = theirs {
            failed |= t.failed;
            repl |= t.repl;
            stopped = stopped.or(t.stopped);
        }
        self.replacements_failed(repl);
        self.fail_written(failed)?;
        Ok(match stopped {
            Some(at) => (at, false),
            None => (end, true),
        })
    }

    /// One half of a pass of [`Array::copy_units`]: units `range`, the first busy one in row
    /// `row` (or all in row 0), in groups of `pass.per` units, each group's writes submitted
    /// (and in flight) while the next is read.
    fn copy_side(
        &self,
        win: &Window,
        unit: &UnitFn<'_>,
        pass: Pass,
        range: Range<usize>,
        row: usize,
    ) -> Side {
        let (mut rrow, mut wrow) = (row, row);
        let mut lost = 0u64;
        let mut stopped = None;
        let (wfailed, repl) = PageIo::batch(|w| {
            let mut next = range.start;
            while next < range.end {
                let group = next..(next + pass.per).min(range.end);
                next = group.end;
                let mut unreadable = false;
                let rfailed = PageIo::batch(|r| {
                    for i in group.clone() {
                        unit(i, &mut |copies, span| {
                            if pass.idle(copies) {
                                return;
                            }
                            let at = span.at(rrow);
                            rrow += usize::from(pass.own_rows);
                            let read = pass
                                .plan(copies)
                                .0
                                .is_some_and(|c| self.submit_row(r, win, c, at, Dir::Read).is_ok());
                            unreadable |= !read;
                        });
                    }
                    r.wait()
                });
                if unreadable || rfailed != 0 {
                    stopped = Some(group.start);
                    break;
                }
                // Members that left since are not written (md's `abort_sync_write`).
                let now = self.in_sync() | self.sync().recovering();
                for i in group {
                    unit(i, &mut |copies, span| {
                        if pass.idle(copies) {
                            return;
                        }
                        let at = span.at(wrow);
                        wrow += usize::from(pass.own_rows);
                        let (src, targets) = pass.plan(copies);
                        if src.is_none() {
                            return;
                        }
                        for c in copies_in(copies, targets & now) {
                            if self.submit_row(w, win, c, at, Dir::Write).is_err() {
                                lost |= 1 << c.0;
                            }
                        }
                        for c in copies_in(copies, pass.rep) {
                            if self.submit_row(w, win, c, at, Dir::Replace).is_err() {
                                self.sync().drop_replacing(c.0);
                            }
                        }
                    });
                }
            }
            let wfailed = w.wait();
            (wfailed, w.failed_replacements())
        });
        Side {
            stopped,
            failed: wfailed | lost,
            repl,
        }
    }
}

/// What a pass of [`Array::copy_units`] copies, from the member sets at its start. Sets, not
/// lists of copies: the sides' frames are on the stack under the member's submission (a list
/// is 1 KiB).
#[derive(Clone, Copy)]
struct Pass {
    action: Action,
    /// Members in sync, being recovered, and being replaced.
    sync: u64,
    rec: u64,
    rep: u64,
    /// A row per busy unit, in turn (else all in row 0).
    own_rows: bool,
    /// Units per group.
    per: usize,
}

impl Pass {
    /// A unit's source (its first in-sync copy), and the members of the copies it is written
    /// to.
    fn plan(&self, copies: &[(usize, u64)]) -> (Option<(usize, u64)>, u64) {
        let src = copies.iter().find(|c| self.sync & (1 << c.0) != 0).copied();
        let targets = match (self.action, src) {
            (Action::Resync, Some((m, _))) => self.sync & !(1u64 << m),
            _ => self.rec,
        };
        (src, targets)
    }

    /// Whether the unit has nothing to write.
    fn idle(&self, copies: &[(usize, u64)]) -> bool {
        copies_in(copies, self.plan(copies).1 | self.rep)
            .next()
            .is_none()
    }
}

/// What one side of a pass left: where it stopped (a group it could not read), the members
/// whose writes failed, and the replacements whose writes failed.
struct Side {
    stopped: Option<usize>,
    failed: u64,
    repl: u64,
}

/// Sectors in a page.
pub(super) const PAGE_SECTORS: u64 = (PAGE_BYTES / 512) as u64;

/// Groups [`Array::copy_units`] reads and writes a window in.
pub(super) const GROUPS: usize = 8;

/// A RAID 10 recovery's rows, in MiB (see [`buffers`]).
const RECOVER_ROWS: usize = 2;
/// A RAID 10 recovery's windows, in MiB of the array.
const RECOVER_SPAN: u64 = 4;

/// Where a unit of a mirror window lies in its row: its first page there, its length in
/// sectors. Its row is [`Array::copy_units`]'s choice.
#[derive(Clone, Copy)]
pub(super) struct Span {
    pub(super) first: usize,
    pub(super) sectors: u64,
}

impl Span {
    /// (row, first page, pages) in row `row`, as [`Array::submit_row`] takes it.
    fn at(self, row: usize) -> (usize, usize, usize) {
        (
            row,
            self.first,
            (self.sectors as usize * 512).div_ceil(PAGE_BYTES),
        )
    }
}

/// What [`UnitFn`] calls with a unit: its copies (member, member sector) and its span.
pub(super) type UnitSink<'f> = dyn FnMut(&[(usize, u64)], Span) + 'f;

/// `unit(i, f)`: calls `f(copies, span)` for unit `i` of a mirror window.
pub(super) type UnitFn<'f> = dyn Fn(usize, &mut UnitSink<'_>) + Sync + 'f;

/// Which way a window row goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    Read,
    Write,
    /// A write to the member's replacement.
    Replace,
}

/// The copies in `copies` whose member is in `set`, in order.
fn copies_of(copies: &[(usize, u64)], set: u64) -> Copies {
    let mut v = Copies {
        at: [(0, 0); MAX_COPIES],
        len: 0,
    };
    for c in copies_in(copies, set) {
        v.push(c);
    }
    v
}

/// The copies in `copies` whose member is in `set`, in order, without a list.
fn copies_in(copies: &[(usize, u64)], set: u64) -> impl Iterator<Item = (usize, u64)> + '_ {
    copies
        .iter()
        .copied()
        .filter(move |c| set & (1 << c.0) != 0)
}

/// A few copies of a block: (member, member sector).
struct Copies {
    at: [(usize, u64); MAX_COPIES],
    len: usize,
}

impl Copies {
    fn push(&mut self, c: (usize, u64)) {
        if let Some(slot) = self.at.get_mut(self.len) {
            *slot = c;
            self.len += 1;
        }
    }

    fn as_slice(&self) -> &[(usize, u64)] {
        self.at.get(..self.len).unwrap_or(&[])
    }
}
