//! RAID 1: every member a full copy.
//!
//! A write goes to every member in sync (and to those being rebuilt, behind their point) under
//! the barrier; a read goes to one member, chosen for its sequential stream or its load
//! ([`Array::choose_read`]). A read that fails is repaired and read elsewhere by the worker
//! ([`Array::retry_read1`]). Discard goes down the write path, as md's; write-zeroes is not
//! offered (see `limits` in the contract). Sync windows are mirror windows (`mirror`) over
//! all members at one sector.

use crate::layout::raid1::Raid1;
use crate::plan::bits;
use crate::raid::io::{Kind, Origin, Piece, Tx};
use crate::raid::level::mirror::{Span, UnitSink, GROUPS, PAGE_SECTORS};
use crate::raid::sync::{Action, Window, MAX_COPIES};
use crate::raid::Array;
use crate::sys::disk::DeferredBio;
use crate::sys::pagebuf::PAGE_BYTES;
use crate::sys::request::{InflightRequest, RqBio};
use crate::sys::{BlkStatus, RangeOp};
use kernel::prelude::*;

impl Array {
    /// Maps one bio of a read or write request.
    pub(super) fn map_bio1(
        &self,
        g: &Raid1,
        src: &RqBio<Array>,
        write: bool,
        tx: &mut Tx,
    ) -> Result<(), BlkStatus> {
        let sector = g.map(src.sector());
        let len = src.sectors();
        if write {
            // Not while the sync thread works on this part (md's `wait_barrier`); every member
            // bio counts until it is done.
            let entered = self.enter_barrier(src.sector(), len, tx)?;
            self.each_write_target1(src.sector(), |kind, m| {
                self.send_piece(src, kind, m, sector, 0, len, 0, Some(&entered), tx)
            })
        } else {
            let m = self
                .choose_read(src.sector(), len)
                .ok_or(BlkStatus::IOERR)?;
            self.send_piece(src, Kind::Read, m, sector, 0, len, 1 << m, None, tx)
        }
    }

    /// A discard: it changes data as a write does (md sends discards down its write path):
    /// under the barrier, so a sync window never copies over it, and to the devices being
    /// built behind their point, so none keeps what its mirror lost.
    pub(super) fn map_range1(
        &self,
        g: &Raid1,
        rq: &InflightRequest<Array>,
        op: RangeOp,
        start: u64,
        len: u64,
    ) -> Result<(), BlkStatus> {
        let entered = self.sync().barrier().enter(start, len);
        self.each_write_target1(start, |kind, m| {
            let kind = if kind == Kind::Write {
                Kind::Range
            } else {
                kind
            };
            self.send_range(rq, op, kind, m, g.map(start), len, Some(&entered))
        })
    }

    /// Calls `send(kind, member)` for every device a RAID 1 write at array sector `sector`
    /// goes to: [`Kind::Write`] for the members in sync and those being recovered whose
    /// recovery has passed it, [`Kind::Replace`] for the replacements being built past it.
    /// The caller holds the barrier there, so the build point cannot pass it meanwhile.
    fn each_write_target1(
        &self,
        sector: u64,
        mut send: impl FnMut(Kind, usize) -> Result<(), BlkStatus>,
    ) -> Result<(), BlkStatus> {
        let targets = self.in_sync() | self.sync.recovered_below(sector + 1);
        if targets == 0 {
            return Err(BlkStatus::IOERR);
        }
        let repl = self.sync.replaced_below(sector + 1);
        for m in bits(targets) {
            send(Kind::Write, m)?;
            if repl & (1 << m) != 0 {
                send(Kind::Replace, m)?;
            }
        }
        Ok(())
    }

    /// Picks the member for a RAID1 read: every member is a copy, at the same sector
    /// ([`Array::choose_copy`]).
    fn choose_read(&self, sector: u64, len: u64) -> Option<usize> {
        let n = self.members.len();
        self.choose_copy(|| (0..n).map(|m| (m, sector)), n, sector, len)
            .map(|(m, _)| m)
    }

    /// A RAID1 read piece that failed: repair the member on a media error, then send the piece
    /// to an in-sync member it has not tried. Fails the request when none is left.
    pub(super) fn retry_read1(&self, g: &Raid1, p: &Piece) {
        let (Origin::Bio(src), Kind::Read) = (&p.origin, p.kind) else {
            p.request().set_error(BlkStatus::IOERR);
            return;
        };
        let sector = g.map(src.sector() + p.offset);
        // A failfast read failed the member instead (md's `handle_read_error`).
        if p.status.is_media_error() && !p.failfast {
            let others = self.in_sync() & !(1 << p.member);
            let barrier = self.sync().barrier();
            barrier.hold_writes(src.sector() + p.offset, p.len, || {
                self.fix_read_error(p.member, sector, p.len, |page, s, bytes| {
                    bits(others)
                        .filter_map(|m| self.dev(m))
                        .any(|d| d.sync_io(s, page, bytes, false).is_ok())
                })
            });
        }
        let untried = self.in_sync() & !p.tried;
        let Some(m) = bits(untried).next() else {
            pr_err!(
                "{}: read error at sector {} unrecoverable: no other in-sync member\n",
                self.name(),
                src.sector() + p.offset
            );
            p.request().set_error(p.status);
            return;
        };
        if let Err(e) = self.send_clone(
            src,
            Kind::Read,
            m,
            sector,
            p.offset,
            p.len,
            p.tried | 1 << m,
        ) {
            p.request().set_error(e);
        }
    }

    /// One sync window: the copies are every member, at the same sector.
    pub(super) fn sync_window1(
        &self,
        g: &Raid1,
        action: Action,
        pos: u64,
        n: u64,
        win: &mut Window,
    ) -> Result<(), ()> {
        let at = g.map(pos);
        let k = self.members().len().min(MAX_COPIES);
        // A resync or recovery goes in parts (see `Array::copy_units`), whole pages each.
        let pages = (n as usize * 512).div_ceil(PAGE_BYTES);
        let parts = match action {
            Action::Resync | Action::Recover => GROUPS,
            _ => 1,
        };
        let per_pages = pages.div_ceil(parts).max(1);
        let units = pages.div_ceil(per_pages);
        let per = per_pages as u64 * PAGE_SECTORS;
        let unit = |i: usize, f: &mut UnitSink<'_>| {
            let off = i as u64 * per;
            let mut copies = [(0usize, 0u64); MAX_COPIES];
            for (m, c) in copies.iter_mut().enumerate().take(k) {
                *c = (m, at + off);
            }
            let span = Span {
                first: (off / PAGE_SECTORS) as usize,
                sectors: per.min(n.saturating_sub(off)),
            };
            f(copies.get(..k).unwrap_or(&[]), span);
        };
        self.mirror_window(action, win, units, &unit)
    }
}
