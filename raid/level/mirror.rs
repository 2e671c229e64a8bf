//! Sync windows of mirrors, shared by RAID 1 (every member a copy) and RAID 10 (the copies of
//! one chunk): a resync copies the first in-sync copy that reads over the others, a recovery
//! onto the devices being built, and check and repair read every copy and compare them in
//! md's 64 KiB blocks. A copy that fails a read is rewritten from one that did not (md's
//! `fix_sync_read_error`). Reads pick a copy the same way on both ([`Array::choose_copy`]).

use crate::plan::bits;
use crate::raid::sync::{Action, Window, BLOCK_SECTORS, MAX_BLOCKS, MAX_COPIES, WINDOW_BYTES};
use crate::raid::Array;
use crate::sys::pagebuf::PAGE_BYTES;
use crate::sys::pageio::PageIo;
use core::num::NonZeroU64;
use core::sync::atomic::Ordering;
use kernel::prelude::*;

/// The buffers of a mirror sync job over `copies` copies of chunks of `chunk` sectors
/// (`u64::MAX` on RAID 1), and the sectors it syncs at once.
pub(super) fn buffers(action: Action, copies: usize, chunk: u64) -> Result<(Window, u64)> {
    let rows = match action {
        Action::Resync | Action::Recover => 1,
        _ => copies,
    };
    // md's compare unit; windows never cross a RAID 10 chunk, whose copies each lie in one
    // piece on their members.
    let block = BLOCK_SECTORS.min(chunk);
    let block_pages = (block as usize * 512).div_ceil(PAGE_BYTES).max(1);
    let max_pages = (chunk.min(MAX_BLOCKS as u64 * block) as usize * 512)
        .div_ceil(PAGE_BYTES)
        .max(1);
    // 1 MiB over all rows, whole blocks, and a power of two: a RAID 10 window maps only its
    // first sector, so it must divide the chunk (3 or 5 rows would give 80 or 48 pages, and
    // the next window would run past its chunk's end).
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
                let (Some(dev), Some(slice)) = (
                    self.members.get(m).and_then(|x| x.replacement.get()),
                    win.rows.first().and_then(|r| r.get(..pages)),
                ) else {
                    continue;
                };
                let mut refs = KVec::new();
                let ok = slice
                    .iter()
                    .try_for_each(|p| refs.push(p, GFP_KERNEL))
                    .is_ok()
                    && io
                        .submit_replacement(&win.set, dev, m, sector, false, &refs)
                        .is_ok();
                if !ok {
                    self.sync().drop_replacing(m);
                }
            }
            io.wait();
            io.failed_replacements()
        });
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
        let mut lost = 0u64;
        let failed = PageIo::batch(|io| {
            for (i, &(m, sector)) in copies.iter().enumerate() {
                let (Some(dev), Some(r)) = (self.dev(m), win.rows.get(row(i))) else {
                    lost |= 1 << m;
                    continue;
                };
                let Some(slice) = r.get(first..first + pages) else {
                    lost |= 1 << m;
                    continue;
                };
                let mut refs = KVec::new();
                if slice
                    .iter()
                    .try_for_each(|p| refs.push(p, GFP_KERNEL))
                    .is_err()
                    || io
                        .submit(&win.set, dev, m, sector, write, false, &refs)
                        .is_err()
                {
                    lost |= 1 << m;
                }
            }
            io.wait()
        });
        failed | lost
    }
}

/// The copies in `copies` whose member is in `set`, in order.
fn copies_of(copies: &[(usize, u64)], set: u64) -> Copies {
    let mut v = Copies {
        at: [(0, 0); MAX_COPIES],
        len: 0,
    };
    for &c in copies.iter().filter(|c| set & (1 << c.0) != 0) {
        v.push(c);
    }
    v
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
