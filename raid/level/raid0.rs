//! RAID 0: striping over md's zones, no redundancy.
//!
//! A bio is cut at chunk boundaries (`layout::raid0`), each piece a clone sent to its member;
//! a discard or write-zeroes becomes at most one range per member. Any member error fails the
//! request: nothing else holds the data.

use crate::layout::raid0::Raid0;
use crate::raid::io::{Kind, Tx};
use crate::raid::Array;
use crate::sys::request::{InflightRequest, RqBio};
use crate::sys::{BlkStatus, RangeOp};

impl Array {
    /// Maps one bio of a read or write request.
    pub(super) fn map_bio0(
        &self,
        g: &Raid0,
        src: &RqBio<Array>,
        write: bool,
        tx: &mut Tx,
    ) -> Result<(), BlkStatus> {
        let kind = if write { Kind::Write } else { Kind::Read };
        for e in g.extents(src.sector(), src.sectors()) {
            self.send_piece(src, kind, e.member, e.sector, e.offset, e.len, 0, None, tx)?;
        }
        Ok(())
    }

    /// One range of a discard or write-zeroes: one member range per member it touches.
    pub(super) fn map_range0(
        &self,
        g: &Raid0,
        rq: &InflightRequest<Array>,
        op: RangeOp,
        start: u64,
        len: u64,
    ) -> Result<(), BlkStatus> {
        for m in 0..self.members().len() {
            if let Some((a, b)) = g.member_range(start, start + len, m) {
                self.send_range(rq, op, Kind::Range, m, a, b - a, None)?;
            }
        }
        Ok(())
    }
}
