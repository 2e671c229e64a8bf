//! The request path: requests become member bios, completions become request completions.
//!
//! `queue_rq` only parks a request (`sys::disk`); rraid's worker then hands it to the level
//! (the level contract's `handle_round`), which maps each bio of the request through its layout
//! and sends one clone per piece through [`Array::send_clone`] (no data is copied). Every member bio carries a [`Piece`] holding a
//! reference to the request, so the request completes when its last piece does. A member bio
//! that fails goes to [`Array::piece_failed`], and the level says what the failure means
//! ([`OnError`]); a failed read keeps its piece, and with it the request, until the worker has
//! repaired the member and read the data elsewhere ([`repair`]).

pub mod repair;
mod worker;

pub(super) use worker::SUBMITTER_TICKS;

use crate::plan::bits;
use crate::raid::sync::Entered;
use crate::raid::Array;
use crate::sys::bio::{Bio, BioCtx, BioStack};
use crate::sys::disk::{defer, DeferredBio, DiskOps};
use crate::sys::request::{InflightRequest, RequestChain, RqBio};
use crate::sys::slot::DevRef;
use crate::sys::{BlkStatus, RangeOp, ReqOp};
use core::sync::atomic::Ordering;
use kernel::{
    prelude::*,
    sync::{Arc, ArcBorrow},
};

/// Largest range bio: `bi_size` is a 32-bit byte count.
const MAX_RANGE_SECTORS: u64 = 1 << 22;

/// Largest request always mapped in `queue_rq` (32 KiB). Where the member copies data in its
/// submitter's context (brd, and any bio-based member that does the work in `submit_bio`), a
/// large request's copy runs on the worker's CPU beside the submitter, which goes on submitting;
/// small requests gain more from skipping the hand-off. Measured over 4 brd members (RAID 0,
/// rraid/md, TCG guest): 64K reads at QD 32 1.28-1.30 with this cut-off, 0.80-0.98 all inline;
/// 1M reads 1.07-1.15 against 1.02-1.16. A submitter with one request at a time has nothing to
/// overlap, so large requests are mapped inline too while none finds another in flight (see
/// [`Array::large_to_worker`]).
const INLINE_MAX_SECTORS: u64 = 64;

/// What a member bio is for; decides what its failure means.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A read of the request's data.
    Read,
    /// A write of the request's data to a member.
    Write,
    /// A write to a member's replacement being built: its failure gives up the replacement.
    Replace,
    /// An empty flush.
    Flush,
    /// A discard or write-zeroes range.
    Range,
}

/// What a failed member bio means, by level (the level contract's `on_error`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum OnError {
    /// Back to the worker, which reads the data elsewhere (another copy, or the rest of the
    /// stripe) after repairing the member.
    Retry,
    /// The member fails: the other copies have the write. The array breaks, and the write
    /// fails, where the member held the last copy of some data.
    FailMember,
    /// Only logged: the data is held elsewhere too.
    Log,
    /// The request fails: nothing else holds the data.
    FailRequest,
}

/// Where a piece came from.
pub(crate) enum Origin {
    /// A slice of one of the request's bios.
    Bio(RqBio<Array>),
    /// The request as a whole (flush, discard, write-zeroes).
    Request(InflightRequest<Array>),
}

/// Where the member bios of a mapping go.
pub enum Tx {
    /// Sent as they are made: a worker, which may sleep.
    Now,
    /// Gathered without sleeping, to be sent once the whole request has mapped (`queue_rq`,
    /// [`Array::map_inline`]); dropped unsent when any part cannot be had without waiting.
    Inline(BioStack<Piece>),
}

impl Tx {
    /// Whether the mapping must not sleep: a busy barrier, a pool or a member that would
    /// make it wait is `Err(BlkStatus::AGAIN)` instead, and the request goes to the worker.
    pub(crate) fn nowait(&self) -> bool {
        matches!(self, Self::Inline(_))
    }
}

/// The context of one member bio.
pub struct Piece {
    pub(crate) origin: Origin,
    pub(crate) kind: Kind,
    pub(crate) member: usize,
    /// Where on the member (or replacement) it goes.
    pub(crate) sector: u64,
    /// Offset of the piece in its source bio, and its length, in sectors.
    pub(crate) offset: u64,
    pub(crate) len: u64,
    /// Members this read has been sent to.
    pub(crate) tried: u64,
    /// The member's answer, kept when the bio goes back to the worker.
    pub(crate) status: BlkStatus,
    /// Keeps the member's device in its slot until the bio is done (a failed write parked for
    /// the worker gives it up at once: see [`Array::piece_failed`]).
    pub(crate) dev: Option<DevRef>,
    /// The barrier buckets this write counts in ([`super::sync::Barrier::hold`]).
    pub(crate) hold: Option<(u64, u64)>,
    /// The buckets it was sent under, kept when it gives up `hold` to be sent again.
    pub(crate) buckets: Option<(u64, u64)>,
    /// Sent with `REQ_NOWAIT` from `queue_rq`: a member's "would block" sends it again from
    /// the worker, where it may wait.
    pub(crate) nowait: bool,
    /// Sent with `REQ_FAILFAST` (md's `MD_FAILFAST`): its error fails the member at once.
    pub(crate) failfast: bool,
}

impl Drop for Piece {
    fn drop(&mut self) {
        if let Some((first, last)) = self.hold {
            self.request().data().sync().barrier().release(first, last);
        }
    }
}

impl DeferredBio<Array> for Piece {
    fn request(&self) -> &InflightRequest<Array> {
        match &self.origin {
            Origin::Bio(b) => b.request(),
            Origin::Request(r) => r,
        }
    }
}

impl BioCtx for Piece {
    fn end_io(mut bio: Bio<Self>) {
        let status = bio.status();
        {
            let p = bio.ctx();
            let array = p.request().data();
            if p.kind != Kind::Read {
                array.writes.fetch_sub(1, Ordering::Release);
            }
        }
        if status.is_ok() {
            // Dropping the bio puts it, then drops its request reference.
            return;
        }
        bio.ctx_mut().status = status;
        Array::piece_failed(bio);
    }
}

impl Array {
    /// Sends `bio` to its member, counting it.
    fn send(&self, bio: Bio<Piece>) {
        let p = bio.ctx();
        if p.kind != Kind::Read {
            self.writes.fetch_add(1, Ordering::Acquire);
        }
        bio.submit();
    }

    /// Clones `[offset, offset + len)` of `src` to `member` at `sector` and sends it.
    #[expect(clippy::too_many_arguments)]
    pub(crate) fn send_clone(
        &self,
        src: &RqBio<Array>,
        kind: Kind,
        member: usize,
        sector: u64,
        offset: u64,
        len: u64,
        tried: u64,
    ) -> Result<(), BlkStatus> {
        self.send_piece(
            src,
            kind,
            member,
            sector,
            offset,
            len,
            tried,
            None,
            &mut Tx::Now,
        )
    }

    /// As [`Array::send_clone`], for a write counted in the barrier range of `held`, through
    /// `tx`.
    #[expect(clippy::too_many_arguments)]
    pub(crate) fn send_piece(
        &self,
        src: &RqBio<Array>,
        kind: Kind,
        member: usize,
        sector: u64,
        offset: u64,
        len: u64,
        tried: u64,
        held: Option<&Entered<'_>>,
        tx: &mut Tx,
    ) -> Result<(), BlkStatus> {
        let Some(dev) = self.target_dev(kind, member)? else {
            return Ok(());
        };
        let nowait = tx.nowait();
        if nowait && !dev.nowait() {
            return Err(BlkStatus::AGAIN);
        }
        let hold = held.map(|e| self.sync.barrier().hold(e));
        // md's failfast: only where another copy can serve if this one fails fast.
        let failfast = dev.failfast()
            && self
                .level
                .other_copy(self, kind, member, src.sector() + offset, len);
        let piece = Piece {
            origin: Origin::Bio(src.clone_ref()),
            kind,
            member,
            sector,
            offset,
            len,
            tried,
            status: BlkStatus::OK,
            hold,
            buckets: hold,
            nowait,
            // Set once the bio is made: no second count of the device to make it with.
            dev: None,
            failfast,
        };
        let mut bio = self
            .bioset
            .clone_range(src, offset, len, &dev, sector, nowait, piece)
            .map_err(|_| {
                if nowait {
                    BlkStatus::AGAIN
                } else {
                    BlkStatus::IOERR
                }
            })?;
        bio.ctx_mut().dev = Some(dev);
        if failfast {
            bio.set_failfast();
        }
        match tx {
            Tx::Now => self.send(bio),
            Tx::Inline(bios) => {
                bios.push(bio);
            }
        }
        Ok(())
    }

    /// Enters the write barrier over array (RAID 10) or member range `[start, start + len)`:
    /// waiting for the sync thread, or, through a [`Tx::Inline`], `Err(AGAIN)` where it would.
    pub(crate) fn enter_barrier(
        &self,
        start: u64,
        len: u64,
        tx: &Tx,
    ) -> Result<Entered<'_>, BlkStatus> {
        match tx {
            Tx::Now => Ok(self.sync.barrier().enter(start, len)),
            Tx::Inline(_) => self
                .sync
                .barrier()
                .try_enter(start, len)
                .ok_or(BlkStatus::AGAIN),
        }
    }

    /// The device a member bio of `kind` goes to: the slot's device, or for
    /// [`Kind::Replace`] its replacement; `None` when the replacement was given up meanwhile
    /// (the member has the write).
    fn target_dev(&self, kind: Kind, member: usize) -> Result<Option<DevRef>, BlkStatus> {
        match kind {
            Kind::Replace => Ok(self.members.get(member).and_then(|m| m.replacement.get())),
            _ => self.dev(member).ok_or(BlkStatus::IOERR).map(Some),
        }
    }

    /// Sends a data-less `op` over `[sector, sector + len)` of `member` (its replacement when
    /// `kind` is [`Kind::Replace`]), in bios of at most `MAX_RANGE_SECTORS`, each counted in
    /// the barrier range of `held`.
    #[expect(clippy::too_many_arguments)]
    pub(crate) fn send_range(
        &self,
        rq: &InflightRequest<Array>,
        op: RangeOp,
        kind: Kind,
        member: usize,
        mut sector: u64,
        mut len: u64,
        held: Option<&Entered<'_>>,
    ) -> Result<(), BlkStatus> {
        let Some(dev) = self.target_dev(kind, member)? else {
            return Ok(());
        };
        loop {
            let n = len.min(MAX_RANGE_SECTORS);
            let piece = Piece {
                origin: Origin::Request(rq.clone()),
                kind,
                member,
                sector,
                offset: 0,
                len: n,
                tried: 0,
                status: BlkStatus::OK,
                hold: held.map(|e| self.sync.barrier().hold(e)),
                buckets: None,
                nowait: false,
                dev: Some(dev.clone()),
                failfast: false,
            };
            let bio = self
                .bioset
                .range(op, &dev, sector, n, piece)
                .map_err(|_| BlkStatus::IOERR)?;
            self.send(bio);
            sector += n;
            len -= n;
            if len == 0 {
                return Ok(());
            }
        }
    }

    /// Maps one request onto the members.
    pub(crate) fn map_request(&self, rq: &InflightRequest<Array>) -> Result<(), BlkStatus> {
        match rq.op() {
            ReqOp::Read | ReqOp::Write => {
                let write = rq.op() == ReqOp::Write;
                if write {
                    self.start_intent(rq);
                }
                for src in rq.bios() {
                    self.level.map_bio(self, &src, write, &mut Tx::Now)?;
                }
                Ok(())
            }
            ReqOp::Flush => {
                for m in bits(self.in_sync() | self.sync.recovering()) {
                    self.send_range(rq, RangeOp::Flush, Kind::Flush, m, 0, 0, None)?;
                }
                Ok(())
            }
            ReqOp::Discard => {
                self.start_intent(rq);
                self.map_ranges(rq, RangeOp::Discard)
            }
            ReqOp::WriteZeroes => {
                self.start_intent(rq);
                self.map_ranges(
                    rq,
                    RangeOp::WriteZeroes {
                        no_unmap: rq.no_unmap(),
                    },
                )
            }
            ReqOp::Other => Err(BlkStatus::NOTSUPP),
        }
    }

    /// Discard and write-zeroes. A discard request may hold bios of ranges that are not
    /// adjacent (blk-mq merges discards up to `max_discard_segments`), so each run of adjacent
    /// bios is mapped on its own, as at most one range per member, as md does.
    fn map_ranges(&self, rq: &InflightRequest<Array>, op: RangeOp) -> Result<(), BlkStatus> {
        let mut run: Option<(u64, u64)> = None;
        for bio in rq.bios() {
            let (start, len) = (bio.sector(), bio.sectors());
            run = match run {
                Some((s, n)) if s + n == start => Some((s, n + len)),
                Some((s, n)) => {
                    self.level.map_range(self, rq, op, s, n)?;
                    Some((start, len))
                }
                None => Some((start, len)),
            };
        }
        match run {
            Some((s, n)) => self.level.map_range(self, rq, op, s, n),
            None => Ok(()),
        }
    }

    /// Handles a member bio that completed with an error; any context.
    ///
    /// Media errors are counted on the member (md's `errors`); "not supported" and "would
    /// block" answers are not media errors and never fail a member. A failed write to a
    /// replacement gives up the replacement only. Otherwise the level says what the error
    /// means ([`OnError`]); a flush error is logged in any case (md logs flush errors and goes
    /// on where another copy has the data).
    fn piece_failed(mut bio: Bio<Piece>) {
        let p = bio.ctx_mut();
        if p.nowait && matches!(p.status, BlkStatus::AGAIN | BlkStatus::NOTSUPP) {
            // The member would have made `queue_rq` wait: the worker sends the piece again,
            // and may wait there. Until then it holds no barrier count, as a parked failed
            // write (below), and keeps its device: the member has not failed.
            if let Some((first, last)) = p.hold.take() {
                p.request().data().sync().barrier().release(first, last);
            }
            defer::<Array>(bio);
            return;
        }
        let to_worker = {
            let p = bio.ctx();
            let rq = p.request();
            let array = rq.data();
            let status = p.status;
            if p.kind == Kind::Replace {
                // The member has the data; only the replacement is given up.
                if array.sync.drop_replacing(p.member) {
                    pr_warn!(
                        "{}: write error on the replacement of slot {}: replacement given up\n",
                        array.name(),
                        p.member
                    );
                }
                return;
            }
            if status.is_media_error() {
                array.count_error(p.member, Some(status));
            }
            if p.kind == Kind::Flush {
                array.with_name(p.member, |name| {
                    pr_err!(
                        "{}: flush error on member {} (status {:?})\n",
                        array.name(),
                        name,
                        status
                    )
                });
            }
            match array.level.on_error(p.kind, status.is_media_error()) {
                // md's failfast read: the member fails at once (another copy serves), unless
                // it has become the last; then the read is repaired and retried as any.
                OnError::Retry if p.failfast && status.is_media_error() => {
                    if let Ok(true) = array.fail_member_in_sync(p.member) {
                        array.with_name(p.member, |name| {
                            pr_warn!(
                                "{}: failfast read error on {}: member failed\n",
                                array.name(),
                                name
                            )
                        });
                    }
                    true
                }
                OnError::Retry => true,
                OnError::FailMember => {
                    // The write stands if another in-sync member has it: fail this member,
                    // and let the worker see whether a spare can take its place.
                    if array.fail_member(p.member).is_err() {
                        array.set_broken();
                        rq.set_error(status);
                    }
                    true
                }
                OnError::Log => false,
                OnError::FailRequest => {
                    rq.set_error(status);
                    false
                }
            }
        };
        if to_worker {
            let p = bio.ctx_mut();
            if p.kind == Kind::Write {
                // Parked only to start a recovery: it must hold neither a barrier count (the
                // sync thread would wait for it while the worker, next in line to handle it,
                // waits for the barrier; md counts such I/O in `nr_queued`) nor the device (a
                // recovery swapping it out would wait for it).
                if let Some((first, last)) = p.hold.take() {
                    p.request().data().sync().barrier().release(first, last);
                }
                p.dev = None;
            }
            defer::<Array>(bio);
        }
    }
}

impl DiskOps for Array {
    type Deferred = Piece;

    fn handle(rq: InflightRequest<Self>) {
        if let Err(status) = rq.data().map_request(&rq) {
            rq.set_error(status);
        }
    }

    fn handle_round(mut rqs: RequestChain<Self>, more: &mut dyn FnMut() -> RequestChain<Self>) {
        let Some(first) = rqs.next() else {
            return;
        };
        let array = first.data();
        // md's `md_write_start`: writes of this round (and of those it takes later) were
        // counted in `queued`, so the superblocks say active before any is mapped.
        array.write_start();
        let mut more = || {
            let rqs = more();
            array.write_start();
            rqs
        };
        let tail = array
            .level
            .handle_round(&array, first.clone(), rqs, &mut more);
        // Here, with the round's frames gone: the stripe path runs deep (see `Tail`).
        if let Some(tail) = tail {
            tail.run();
        }
        if array.sync().kick_pending() {
            Arc::from(array).kick_later();
        }
    }

    fn inline(rq: &InflightRequest<Self>, worker_busy: bool) -> bool {
        rq.data().map_inline(rq, worker_busy)
    }

    fn queued(rq: &InflightRequest<Self>) {
        rq.data().started.fetch_add(1, Ordering::Relaxed);
        if matches!(rq.op(), ReqOp::Read | ReqOp::Write) {
            rq.count_in(|a| &a.rw_reqs);
            rq.data().note_submitter(rq.hw_queue());
        }
        if matches!(rq.op(), ReqOp::Write | ReqOp::Discard | ReqOp::WriteZeroes) {
            if let Some(m) = rq.data().meta() {
                m.write_queued();
                rq.count_in(|a| &a.write_reqs);
            }
        }
    }

    fn handle_deferred(bio: Bio<Piece>) {
        // Put the bio first; the piece keeps the request, and so the array, alive.
        let piece = bio.into_ctx();
        let array = piece.request().data();
        if piece.nowait && matches!(piece.status, BlkStatus::AGAIN | BlkStatus::NOTSUPP) {
            array.resend(&piece);
            return;
        }
        // A member that failed a write is recorded in the superblocks before the write
        // completes (md holds such bios until `md_update_sb`): the piece still holds it.
        if let Some(m) = array.meta() {
            m.flush(&array);
        }
        // A failed mirror write is sent here only to start a recovery (below).
        if piece.kind != Kind::Write {
            array.level.retry_read(&array, &piece);
        }
        if array.sync().kick_pending() {
            Arc::from(array).kick_later();
        }
    }

    fn open(this: ArcBorrow<'_, Self>) -> Result {
        let mut st = this.open.lock();
        if st.closing {
            return Err(ENODEV);
        }
        st.openers += 1;
        Ok(())
    }

    fn release(this: ArcBorrow<'_, Self>) {
        let mut st = this.open.lock();
        st.openers = st.openers.saturating_sub(1);
    }
}

impl Array {
    /// md's `md_bitmap_startwrite` for a write request about to be mapped: its chunks' bits
    /// are on the members before any of its member writes is sent, and it is counted out
    /// when it ends ([`intent_done`]). Worker context.
    pub(crate) fn start_intent(&self, rq: &InflightRequest<Array>) {
        let Some(b) = self.bitmap() else {
            return;
        };
        let Some((start, len)) = self.level.intent_range(rq.sector(), rq.sectors()) else {
            return;
        };
        b.start_write(self, start, len);
        rq.on_end(intent_done);
    }

    /// [`Array::start_intent`] without sleeping: `false`, with nothing counted, when a bit
    /// must be set first. Any context.
    fn try_start_intent(&self, rq: &InflightRequest<Array>) -> bool {
        let Some(b) = self.bitmap() else {
            return true;
        };
        let Some((start, len)) = self.level.intent_range(rq.sector(), rq.sectors()) else {
            return true;
        };
        if !b.try_start_write(start, len) {
            return false;
        }
        rq.on_end(intent_done);
        true
    }

    /// Maps a read or write request in `queue_rq`, inside `submit_bio` (md's path: the caller's
    /// context, no hand-off to a worker), where that needs no sleep: requests of at most
    /// [`INLINE_MAX_SECTORS`], reads on every level,
    /// writes on RAID 0, 1 and 10 (the level contract's `maps_inline`), members that take
    /// `REQ_NOWAIT`, no sync job waiting to start, the barrier open, the superblocks
    /// already active and the bitmap's bits already set, bios to be had from the pools. The
    /// member bios are gathered first and sent only when all are: `false`, with nothing sent
    /// or counted, leaves the request to the worker. A member that would block later answers
    /// `BLK_STS_AGAIN`, and that piece alone is sent again from the worker.
    pub(crate) fn map_inline(&self, rq: &InflightRequest<Array>, worker_busy: bool) -> bool {
        let write = match rq.op() {
            ReqOp::Read => false,
            ReqOp::Write => true,
            _ => return false,
        };
        // Last: `large_to_worker` counts the request, which it should only for one that could
        // otherwise be mapped here (not a RAID 4/5/6 write).
        if !self.level.maps_inline(write)
            || self.sync.kick_pending()
            || if rq.sectors() > INLINE_MAX_SECTORS {
                self.large_to_worker(rq, worker_busy)
            } else {
                self.small_to_worker(rq)
            }
        {
            return false;
        }
        // `queued` counted the write before this looks: a clean-marking that saw no writes
        // has cleared `active` first (both sequentially consistent), so it is seen here.
        if write && self.meta().is_some_and(|m| !m.is_active()) {
            return false;
        }
        let mut tx = Tx::Inline(BioStack::new());
        for src in rq.bios() {
            if self.level.map_bio(self, &src, write, &mut tx).is_err() {
                // Dropping the gathered bios gives back their barrier counts.
                return false;
            }
        }
        if write && !self.try_start_intent(rq) {
            return false;
        }
        if let Tx::Inline(bios) = tx {
            for bio in bios.take_all_fifo() {
                self.send(bio);
            }
        }
        true
    }

    /// Sends a piece a member refused with "would block" again, from the worker and allowed
    /// to wait: a write under the barrier again. When its device has left the slot since, a
    /// read goes to another copy (the level's retry) and a write is dropped, as the failed
    /// member's writes are (the copies in sync have it).
    fn resend(&self, p: &Piece) {
        let Origin::Bio(src) = &p.origin else {
            p.request().set_error(BlkStatus::IOERR);
            return;
        };
        let entered = p
            .buckets
            .map(|(first, last)| self.sync.barrier().enter_buckets(first, last));
        let res = self.send_piece(
            src,
            p.kind,
            p.member,
            p.sector,
            p.offset,
            p.len,
            p.tried,
            entered.as_ref(),
            &mut Tx::Now,
        );
        if let Err(e) = res {
            match p.kind {
                Kind::Read => self.level.retry_read(self, p),
                Kind::Write if self.level.on_error(Kind::Write, true) == OnError::FailMember => {}
                _ => p.request().set_error(e),
            }
        }
    }

    /// Marks the superblocks active if a write request is in flight and they say clean.
    fn write_start(&self) {
        if self.write_reqs.load(Ordering::SeqCst) > 0 {
            if let Some(m) = self.meta() {
                m.write_start(self);
            }
        }
    }

    /// Marks the array as going away, unless someone has it open.
    pub fn start_closing(&self) -> Result {
        let mut st = self.open.lock();
        if st.openers > 0 {
            return Err(EBUSY);
        }
        st.closing = true;
        Ok(())
    }
}

/// A write request counted in the bitmap ended (md's `md_bitmap_endwrite`); any context.
fn intent_done(array: &Array, sector: u64, sectors: u64, ok: bool) {
    let Some(m) = array.meta() else { return };
    let Some(b) = m.bitmap() else { return };
    if let Some((start, len)) = array.level.intent_range(sector, sectors) {
        b.end_write(start, len, ok, array.degraded() > 0, m.events());
    }
}
