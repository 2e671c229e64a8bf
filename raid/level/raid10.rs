//! RAID 10 requests: md's striped mirrors.
//!
//! A request's bio is cut at chunk boundaries; within a chunk every copy is one contiguous
//! range on its member (`layout::raid10`), so each piece becomes one clone per copy for a
//! write and one clone for a read, and no data is copied. Writes go to every in-sync copy;
//! reads go to one in-sync copy, chosen as RAID 1 chooses a member (`mirror`).
//! A read that fails comes back through the worker ([`Array::retry_read10`]): on a media error
//! the member is repaired from another copy (`io::repair`), then the piece is read
//! from a copy it has not tried. A write error fails the member, or, when it holds the last
//! in-sync copy of some chunk, breaks the array (the contract's `on_error`); a broken array refuses
//! writes with `EIO`, as md refuses them once it is `MD_BROKEN`.
//!
//! Discard and write-zeroes are not offered: a range maps to one piece per chunk and copy,
//! not one range per member, and md splits them by stripe in a path of its own.

use crate::layout::raid10::{Raid10, Replica};
use crate::raid::io::{Kind, Origin, Piece, Tx};
use crate::raid::level::mirror::{Span, UnitSink, GROUPS, PAGE_SECTORS};
use crate::raid::sync::{Action, Window, MAX_COPIES};
use crate::raid::Array;
use crate::sys::disk::DeferredBio;
use crate::sys::request::RqBio;
use crate::sys::BlkStatus;
use kernel::prelude::*;

impl Array {
    /// Maps one bio of a read or write request onto the copies.
    pub(super) fn map_bio10(
        &self,
        g: &Raid10,
        src: &RqBio<Array>,
        write: bool,
        tx: &mut Tx,
    ) -> Result<(), BlkStatus> {
        if write && self.is_broken() {
            return Err(BlkStatus::IOERR);
        }
        let chunk = g.chunk_sectors();
        let end = src.sector() + src.sectors();
        let mut s = src.sector();
        let mut skip = 0;
        // Writes wait while the sync thread works on their part of the array (its windows are
        // in array sectors on RAID 10), and count until their copies are written.
        let entered = match write {
            true => Some(self.enter_barrier(src.sector(), src.sectors(), tx)?),
            false => None,
        };
        while s < end {
            let n = (end - s).min(chunk - (s & (chunk - 1)));
            if write {
                // Members being recovered take writes behind the recovery.
                let sync = self.in_sync() | self.sync().recovered_below(s + 1);
                let mut sent = false;
                let repl = self.sync().replaced_below(s + 1);
                for c in g.map(s).filter(|c| sync & (1 << c.member) != 0) {
                    self.send_piece(
                        src,
                        Kind::Write,
                        c.member,
                        c.sector,
                        skip,
                        n,
                        0,
                        entered.as_ref(),
                        tx,
                    )?;
                    if repl & (1 << c.member) != 0 {
                        self.send_piece(
                            src,
                            Kind::Replace,
                            c.member,
                            c.sector,
                            skip,
                            n,
                            0,
                            entered.as_ref(),
                            tx,
                        )?;
                    }
                    sent = true;
                }
                if !sent {
                    return Err(BlkStatus::IOERR);
                }
            } else {
                let c = self.choose_read10(g, s, n).ok_or(BlkStatus::IOERR)?;
                let tried = 1 << c.member;
                self.send_piece(
                    src,
                    Kind::Read,
                    c.member,
                    c.sector,
                    skip,
                    n,
                    tried,
                    None,
                    tx,
                )?;
            }
            s += n;
            skip += n;
        }
        Ok(())
    }

    /// Picks the copy a read of `[sector, sector + len)` (inside one chunk) goes to, as RAID 1
    /// picks a member ([`Array::choose_copy`]), among the chunk's copies in md's order.
    fn choose_read10(&self, g: &Raid10, sector: u64, len: u64) -> Option<Replica> {
        let copies = || g.map(sector).map(|c| (c.member, c.sector));
        let (member, sector) = self.choose_copy(copies, g.copies(), sector, len)?;
        Some(Replica { member, sector })
    }

    /// A RAID 10 read piece that failed: on a media error the member's blocks are rewritten
    /// from another in-sync copy and read back, then the piece goes to an in-sync copy it has
    /// not tried. Fails the request when none is left.
    pub(super) fn retry_read10(&self, g: &Raid10, p: &Piece) {
        let (Origin::Bio(src), Kind::Read) = (&p.origin, p.kind) else {
            p.request().set_error(BlkStatus::IOERR);
            return;
        };
        let start = src.sector() + p.offset;
        let bad = g.map(start).find(|c| c.member == p.member);
        // A failfast read failed the member instead (md's `handle_read_error`).
        if let (true, Some(bad)) = (p.status.is_media_error() && !p.failfast, bad) {
            let others = self.in_sync() & !(1 << p.member);
            // Writes held off the range, as on RAID 1 (`Barrier::hold_writes`).
            self.sync().barrier().hold_writes(start, p.len, || {
                self.fix_read_error(p.member, bad.sector, p.len, |page, s, bytes| {
                    // The same offset into the piece, on another copy.
                    let delta = s.saturating_sub(bad.sector);
                    g.map(start)
                        .filter(|c| others & (1 << c.member) != 0)
                        .filter_map(|c| Some((self.dev(c.member)?, c.sector + delta)))
                        .any(|(d, cs)| d.sync_io(cs, page, bytes, false).is_ok())
                })
            });
        }
        let untried = self.in_sync() & !p.tried;
        let Some(c) = g.map(start).find(|c| untried & (1 << c.member) != 0) else {
            pr_err!(
                "{}: read error at sector {} unrecoverable: no other in-sync copy\n",
                self.name(),
                start
            );
            p.request().set_error(p.status);
            return;
        };
        if let Err(e) = self.send_clone(
            src,
            Kind::Read,
            c.member,
            c.sector,
            p.offset,
            p.len,
            p.tried | 1 << c.member,
        ) {
            p.request().set_error(e);
        }
    }

    /// One sync window, a unit per chunk it covers, each synced over its chunk's copies
    /// ([`Array::mirror_window`]); a resync or recovery window inside one chunk (of 1 MiB or
    /// more) is cut in [`GROUPS`] parts. A recovery window of smaller chunks may hold more
    /// chunks than the window has rows (`mirror::buffers`). Check and repair windows lie
    /// inside one chunk.
    pub(super) fn sync_window10(
        &self,
        g: &Raid10,
        action: Action,
        pos: u64,
        n: u64,
        win: &mut Window,
    ) -> Result<(), ()> {
        let chunk = g.chunk_sectors();
        let copy = matches!(action, Action::Resync | Action::Recover);
        let rows = win.rows.len();
        let row_sectors = win.rows.first().map_or(0, |r| r.len() as u64) * PAGE_SECTORS;
        // Powers of two, all of them.
        let u = match copy && rows == 1 {
            true => (row_sectors / GROUPS as u64).max(PAGE_SECTORS).min(chunk),
            false => chunk,
        };
        let end = pos + n;
        let base = pos & !(u - 1);
        let units = (end - base).div_ceil(u) as usize;
        let unit = |i: usize, f: &mut UnitSink<'_>| {
            let s = (base + i as u64 * u).max(pos);
            let e = (base + (i as u64 + 1) * u).min(end);
            let mut copies = [(0usize, 0u64); MAX_COPIES];
            let mut k = 0;
            for (slot, r) in copies.iter_mut().zip(g.map(s)) {
                *slot = (r.member, r.sector);
                k += 1;
            }
            // Several rows: a chunk each, from page 0. One row: the window's parts in turn.
            let first = match rows > 1 {
                true => 0,
                false => ((s - base) / PAGE_SECTORS) as usize,
            };
            let span = Span {
                first,
                sectors: e - s,
            };
            f(copies.get(..k).unwrap_or(&[]), span);
        };
        self.mirror_window(action, win, units, &unit)
    }
}
