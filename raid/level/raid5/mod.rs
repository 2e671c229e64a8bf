//! RAID 4/5/6: striping with one or two parity blocks per stripe, through a stripe cache that
//! carries out what `plan/` decides.
//!
//! Reads of blocks on members in sync go straight to the member, as md's aligned reads do: a
//! clone of the request's bio, no copy. Writes, and reads of a failed member's blocks, go
//! through the stripe cache ([`cache`]). Each worker round gathers the pieces of all its
//! requests by window ([`batch::Batch`]), so adjacent writes that together cover a stripe
//! become one full-stripe write. Each window's operation ([`op`]) then takes a slot of the
//! cache and runs as a job on the stripe queue: it reads what the plan needs from the members,
//! computes, writes and waits, in straight-line code. Different windows run in parallel on
//! every CPU; there is no per-array thread. A read that fails on its member comes back through
//! the worker and is rebuilt from the rest of the stripe there, and the member is repaired.
//! The sync thread's windows also go through the heads ([`sync`]).

mod batch;
mod cache;
mod io;
mod op;
mod sync;

use crate::raid::io::{Kind, Origin, Piece, Tx};
use crate::raid::Array;
use crate::sys::disk::DeferredBio;
use crate::sys::request::{InflightRequest, RequestChain, RqBio};
use crate::sys::{BlkStatus, ReqOp};
use batch::Batch;
pub use batch::Tail;
pub use cache::Stripes;
pub(crate) use sync::SYNC_STREAM;

/// Extra looks at the request list for requests that complete a partly written stripe.
const GATHER_LOOKS: usize = 3;
/// Times an operation re-plans after member reads failed.
const MAX_REPLANS: usize = 3;

impl Array {
    /// One worker round on a RAID 4/5/6 array: `first`, then `rest`, then whatever `more`
    /// brings while some write would still need reads, all gathered by window. Never inlined:
    /// the batch's frame must be gone before the caller runs the returned last group.
    #[inline(never)]
    pub(super) fn handle_round5(
        &self,
        st: &Stripes,
        first: &InflightRequest<Array>,
        rest: RequestChain<Array>,
        more: &mut dyn FnMut() -> RequestChain<Array>,
    ) -> Option<Tail> {
        let mut batch = Batch::new();
        self.map5_or_fail(st, first, &mut batch);
        for rq in rest {
            self.map5_or_fail(st, &rq, &mut batch);
        }
        for _ in 0..GATHER_LOOKS {
            if !batch.has_partial_writes(st) {
                break;
            }
            let later = more();
            if later.is_empty() {
                break;
            }
            for rq in later {
                self.map5_or_fail(st, &rq, &mut batch);
            }
        }
        batch.dispatch_keep_last(st)
    }

    fn map5_or_fail(&self, st: &Stripes, rq: &InflightRequest<Array>, batch: &mut Batch) {
        if let Err(status) = self.map5(st, rq, batch) {
            rq.set_error(status);
        }
    }

    fn map5(
        &self,
        st: &Stripes,
        rq: &InflightRequest<Array>,
        batch: &mut Batch,
    ) -> Result<(), BlkStatus> {
        match rq.op() {
            ReqOp::Read | ReqOp::Write => {
                let write = rq.op() == ReqOp::Write;
                // As md's `MD_BROKEN`: only writes are refused. A read is served from the
                // member that holds its block, or rebuilt; the stripe cache fails it only
                // where too many of its stripe's members are lost (md's `handle_failed_stripe`).
                if write && self.is_broken() {
                    return Err(BlkStatus::IOERR);
                }
                if write {
                    self.start_intent(rq);
                }
                for src in rq.bios() {
                    self.map_bio5(st, &src, write, batch)?;
                }
                Ok(())
            }
            ReqOp::Flush => self.map_request(rq),
            // Discard and write-zeroes are not offered (see the contract's `limits`).
            _ => Err(BlkStatus::NOTSUPP),
        }
    }

    fn map_bio5(
        &self,
        st: &Stripes,
        src: &RqBio<Array>,
        write: bool,
        batch: &mut Batch,
    ) -> Result<(), BlkStatus> {
        for c in chunks(st, src) {
            if !write && self.failed_set() & (1 << c.member) == 0 {
                self.read_direct(src, &c, &mut Tx::Now)?;
            } else {
                batch
                    .add(st, src, !write, 0, c.stripe, c.member, c.off, c.skip, c.len)
                    .map_err(|_| BlkStatus::IOERR)?;
            }
        }
        Ok(())
    }

    /// Maps a read bio straight to its members through `tx` (md's aligned read, in
    /// `queue_rq`): `Err(AGAIN)` when some chunk of it lies on a member not in sync, whose data
    /// only the stripe cache can rebuild, on the worker. A member being recovered is read where
    /// its recovery has passed, as md reads below a device's `recovery_offset`: a window's
    /// blocks are written to it before the point passes them, and writes planned after that
    /// reach it too.
    pub(super) fn map_read5(
        &self,
        st: &Stripes,
        src: &RqBio<Array>,
        tx: &mut Tx,
    ) -> Result<(), BlkStatus> {
        let failed = self.failed_set();
        let offset = st.geo().data_offset();
        for c in chunks(st, src) {
            // The recovery point is only looked up for a member not in sync: a healthy array's
            // reads pay nothing for it.
            let bit = 1u64 << c.member;
            if failed & bit != 0 {
                let end = c.member_sector.saturating_sub(offset) + c.len;
                if self.sync().recovered_below(end) & bit == 0 {
                    return Err(BlkStatus::AGAIN);
                }
            }
            self.read_direct(src, &c, tx)?;
        }
        Ok(())
    }

    /// Sends chunk piece `c` of read `src` straight to its member, through `tx`: a clone of the
    /// request's bio, no copy (md's aligned read).
    fn read_direct(
        &self,
        src: &RqBio<Array>,
        c: &ChunkPiece,
        tx: &mut Tx,
    ) -> Result<(), BlkStatus> {
        let tried = 1 << c.member;
        self.send_piece(
            src,
            Kind::Read,
            c.member,
            c.member_sector,
            c.skip,
            c.len,
            tried,
            None,
            tx,
        )
    }

    /// A direct read that failed on its member: rebuilt through the stripe cache, which also
    /// repairs the member on a media error.
    pub(super) fn retry_read5(&self, st: &Stripes, p: &Piece) {
        let Origin::Bio(src) = &p.origin else {
            p.request().set_error(BlkStatus::IOERR);
            return;
        };
        if !p.status.is_media_error() && self.failed_set() & (1 << p.member) == 0 {
            p.request().set_error(p.status);
            return;
        }
        let geo = st.geo();
        let loc = geo.map(src.sector() + p.offset);
        let off = loc.member_sector - geo.stripe_start(loc.stripe);
        let mut batch = Batch::new();
        let bad = 1u64 << p.member;
        match batch.add(
            st, src, true, bad, loc.stripe, loc.member, off, p.offset, p.len,
        ) {
            Ok(()) => batch.dispatch(st),
            Err(_) => p.request().set_error(BlkStatus::IOERR),
        }
    }
}

/// One chunk's part of a bio: where it lies and which part of the bio it is.
struct ChunkPiece {
    stripe: u64,
    member: usize,
    member_sector: u64,
    /// Offset in its chunk.
    off: u64,
    /// Offset in the bio, and length, in sectors.
    skip: u64,
    len: u64,
}

/// The parts of `src` cut at chunk boundaries, each mapped.
fn chunks<'a>(st: &'a Stripes, src: &RqBio<Array>) -> impl Iterator<Item = ChunkPiece> + 'a {
    let geo = st.geo();
    let chunk = geo.chunk_sectors();
    let (start, end) = (src.sector(), src.sector() + src.sectors());
    let mut s = start;
    core::iter::from_fn(move || {
        if s >= end {
            return None;
        }
        let loc = geo.map(s);
        let off = s & (chunk - 1);
        let len = (end - s).min(chunk - off);
        let piece = ChunkPiece {
            stripe: loc.stripe,
            member: loc.member,
            member_sector: loc.member_sector,
            off,
            skip: s - start,
            len,
        };
        s += len;
        Some(piece)
    })
}
