//! The level contract: md's `struct md_personality` for rraid.
//!
//! [`Level`] is one enum whose `match`es all live in this file: everything outside it (the
//! request path in `io`, the sync thread in `sync`, control, `/proc/rraidstat`, the member code)
//! asks the level through the methods below and never matches on it. Each level implements its
//! part in its own file or folder, as `impl Array` methods taking its geometry:
//!
//! | asked | RAID 0 | RAID 1 | RAID 10 | RAID 4/5/6 |
//! |---|---|---|---|---|
//! | a request's bios | `raid0` | `raid1` | `raid10` | `raid5` (stripe cache) |
//! | discard, write-zeroes | `raid0` | `raid1` (write path) | not offered | not offered |
//! | a failed read, retried | fails | `raid1` | `raid10` | `raid5` |
//! | sync windows | none | `raid1` + `mirror` | `raid10` + `mirror` | `raid5::sync` |
//!
//! A new level is a variant here, a file beside this one, one in `layout/`, and tests. Static
//! dispatch: the big frames stay `#[inline(never)]` in their level (RAID 6 once overflowed the
//! 16 KiB kernel stack).

pub mod mirror;
pub mod raid0;
pub mod raid1;
pub mod raid10;
pub mod raid5;

use crate::layout::raid0::{Raid0, Raid0Layout};
use crate::layout::{raid1::Raid1, raid10::Raid10};
use crate::raid::io::{Kind, OnError, Piece, Tx};
use crate::raid::sync::{Action, Window};
use crate::raid::Array;
use crate::sys::disk::{DeferredBio, DiskOps, Limits};
use crate::sys::request::{InflightRequest, RequestChain, RqBio};
use crate::sys::{noio, BlkStatus, RangeOp};
use core::fmt::{self, Write};
use kernel::prelude::*;
use raid5::Stripes;

/// The RAID level and its geometry.
pub enum Level {
    /// Striping. md's zone table makes the geometry large, so it is boxed.
    Raid0(KBox<Raid0>),
    /// Mirroring.
    Raid1(Raid1),
    /// Striping with parity: RAID 4, 5 or 6, with its stripe cache, which holds the geometry.
    Raid5(Pin<KBox<Stripes>>),
    /// Striped mirrors: md's near, far and offset copies.
    Raid10(Raid10),
}

// Geometry and names (md's `level`, `chunk_size`, `layout`, `component_size`, `size`).
impl Level {
    /// md's name of the level.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Raid0(_) => "raid0",
            Self::Raid1(_) => "raid1",
            Self::Raid5(st) => match st.geo().level() {
                4 => "raid4",
                5 => "raid5",
                _ => "raid6",
            },
            Self::Raid10(_) => "raid10",
        }
    }

    /// Array size in sectors.
    pub fn array_sectors(&self) -> u64 {
        match self {
            Self::Raid0(g) => g.array_sectors(),
            Self::Raid1(g) => g.array_sectors(),
            Self::Raid5(st) => st.geo().array_sectors(),
            Self::Raid10(g) => g.array_sectors(),
        }
    }

    /// Sectors of each member in use; on RAID 0 over unequal members, those every member
    /// holds (the smallest member's, zone 0's share), as md's `component_size`.
    pub fn member_sectors(&self) -> u64 {
        match self {
            Self::Raid0(g) => g.member_sectors(),
            Self::Raid1(g) => g.member_sectors(),
            Self::Raid5(st) => st.geo().member_sectors(),
            Self::Raid10(g) => g.member_sectors(),
        }
    }

    /// First member sector of data.
    pub fn data_offset(&self) -> u64 {
        match self {
            Self::Raid5(st) => st.geo().data_offset(),
            Self::Raid1(g) => g.map(0),
            Self::Raid0(g) => g.data_offset(),
            Self::Raid10(g) => g.data_offset(),
        }
    }

    /// Chunk size in sectors; 0 for RAID1, as md reports.
    pub fn chunk_sectors(&self) -> u64 {
        match self {
            Self::Raid0(g) => g.chunk_sectors(),
            Self::Raid1(_) => 0,
            Self::Raid5(st) => st.geo().chunk_sectors(),
            Self::Raid10(g) => g.chunk_sectors(),
        }
    }

    /// md's layout number (`layout`); 0 where md has none. RAID 4 shows 0 as md does for the
    /// RAID 4 arrays mdadm makes: md's RAID 4 keeps parity on the last member whatever the
    /// number says. RAID 0 shows its layout when it has several zones, and -1 as md with one.
    pub fn layout(&self) -> i32 {
        match self {
            Self::Raid0(g) => g.md_layout(),
            Self::Raid5(st) if st.geo().level() != 4 => st.geo().algorithm().number() as i32,
            Self::Raid10(g) => g.layout().number() as i32,
            _ => 0,
        }
    }

    /// md's level number, as the superblock records it.
    pub fn number(&self) -> i32 {
        match self {
            Self::Raid0(_) => 0,
            Self::Raid1(_) => 1,
            Self::Raid5(st) => i32::from(st.geo().level()),
            Self::Raid10(_) => 10,
        }
    }

    /// RAID 0 over members of unequal size: its zones and their layout.
    pub fn zones(&self) -> Option<(usize, Raid0Layout)> {
        match self {
            Self::Raid0(g) if g.zones() > 1 => Some((g.zones(), g.layout())),
            _ => None,
        }
    }

    /// The geometry words of the level's `/proc/mdstat` line after the size (md's
    /// `status`); returns whether the `[n/m] [UU_]` slot words follow, as on levels with
    /// copies.
    pub fn status(&self, w: &mut impl Write) -> Result<bool, fmt::Error> {
        match self {
            Self::Raid0(g) => {
                write!(w, " {}k chunks", g.chunk_sectors() / 2)?;
                Ok(false)
            }
            Self::Raid5(st) => {
                let g = st.geo();
                write!(
                    w,
                    " level {}, {}k chunk, algorithm {}",
                    g.level(),
                    g.chunk_sectors() / 2,
                    self.layout()
                )?;
                Ok(true)
            }
            Self::Raid1(_) => Ok(true),
            Self::Raid10(g) => {
                let l = g.layout();
                write!(w, " {}K chunks", g.chunk_sectors() / 2)?;
                if l.near() > 1 {
                    write!(w, " {} near-copies", l.near())?;
                }
                if l.far() > 1 {
                    let kind = if l.offset() { "offset" } else { "far" };
                    write!(w, " {} {}-copies", l.far(), kind)?;
                }
                Ok(true)
            }
        }
    }

    /// md's `stripe_cache_size`; 0 on levels without a stripe cache.
    pub fn stripe_cache_size(&self) -> u32 {
        self.stripe_cache().map_or(0, |st| st.cache_size())
    }

    /// A write of `v` to `stripe_cache_size` of the array `name`: RAID 4/5/6's file (md's
    /// raid5 personality owns it); refused elsewhere.
    pub fn store_stripe_cache_size(&self, name: &str, v: &str) -> Result {
        match self {
            Self::Raid5(st) => st.store_cache_size(name, v),
            _ => {
                pr_err!(
                    "{}: stripe_cache_size: only RAID 4/5/6 have a stripe cache\n",
                    name
                );
                Err(EINVAL)
            }
        }
    }

    /// The stripe cache, for the RAID 4/5/6 code's own jobs.
    fn stripe_cache(&self) -> Option<&Stripes> {
        match self {
            Self::Raid5(st) => Some(st),
            _ => None,
        }
    }
}

// Queue limits.
impl Level {
    /// What the level sets on limits stacked from the members, at create and when a device
    /// joins (stacking turns on again what any member has): discard only with `discard`,
    /// nothing rraid does not implement, and each level's own choices.
    pub fn limits(&self, lim: &mut Limits, discard: bool) {
        if !discard {
            lim.disable_discard();
        }
        lim.drop_unimplemented();
        // io_min and io_opt as md's: a chunk, and the chunks of one row of data.
        let striped = match self {
            Self::Raid0(g) => Some((g.chunk_sectors(), g.members())),
            Self::Raid1(_) => None,
            Self::Raid5(st) => Some((st.geo().chunk_sectors(), st.geo().data())),
            Self::Raid10(g) => Some((g.chunk_sectors(), g.stripe_members())),
        };
        match striped {
            Some((chunk, across)) => {
                let chunk = (chunk << 9) as u32;
                lim.set_io_min(chunk);
                lim.set_io_opt(chunk.saturating_mul(across as u32));
            }
            None => {
                lim.set_io_min(lim.logical_block_size());
                lim.set_io_opt(0);
            }
        }
        match self {
            Self::Raid0(_) => {}
            // As md's: a member that fails or ignores a write-zeroes would differ from its
            // mirror. BLKZEROOUT then writes zero pages, which take the write path.
            Self::Raid1(_) => lim.disable_write_zeroes(),
            // RAID 4/5/6 as md's: no discard (md offers it only when told members read back
            // zeroes), no write-zeroes, and partial stripes flagged as costly.
            Self::Raid5(_) => {
                lim.disable_discard();
                lim.disable_write_zeroes();
                lim.set_partial_stripes_expensive();
            }
            // A range would go out per chunk and copy (see `raid10`).
            Self::Raid10(_) => {
                lim.disable_discard();
                lim.disable_write_zeroes();
            }
        }
    }
}

// Failures (md's `error_handler` and `enough()`).
impl Level {
    /// Members that may fail before data is lost (RAID 10: in the worst case).
    pub fn redundancy(&self, members: usize) -> usize {
        match self {
            Self::Raid0(_) => 0,
            Self::Raid1(_) => members - 1,
            Self::Raid5(st) => st.geo().parity(),
            Self::Raid10(g) => g.copies() - 1,
        }
    }

    /// Whether the array still holds all its data with only the members in `in_sync` (md's
    /// `enough()`): on RAID 10 that depends on which members are left, elsewhere on how many.
    pub fn survives(&self, in_sync: u64, members: usize) -> bool {
        match self {
            Self::Raid10(g) => g.survives(in_sync),
            _ => members.saturating_sub(in_sync.count_ones() as usize) <= self.redundancy(members),
        }
    }

    /// Whether failing a member by hand (`faulty`) that the array cannot spare still fails it
    /// and breaks the array, as md 6.12 does on RAID 4/5/6; elsewhere md refuses.
    pub fn fails_past_tolerance(&self) -> bool {
        matches!(self, Self::Raid5(_))
    }

    /// Whether the level uses md's failfast flag (RAID 1 and 10; md ignores it on the others).
    pub fn takes_failfast(&self) -> bool {
        matches!(self, Self::Raid1(_) | Self::Raid10(_))
    }

    /// What a failed member bio of `kind` means (`media`: a media error, not a refusal). Reads
    /// are retried elsewhere on levels with copies or parity; a write error fails a mirror's
    /// member (RAID 4/5/6 writes go through the stripe cache, which handles its own); a flush
    /// error fails the flush only on RAID 0, which has no other copy.
    pub fn on_error(&self, kind: Kind, media: bool) -> OnError {
        let mirror = matches!(self, Self::Raid1(_) | Self::Raid10(_));
        match kind {
            Kind::Read if !matches!(self, Self::Raid0(_)) => OnError::Retry,
            Kind::Write if mirror && media => OnError::FailMember,
            Kind::Flush if !matches!(self, Self::Raid0(_)) => OnError::Log,
            _ => OnError::FailRequest,
        }
    }
}

// The request path (md's `make_request`).
impl Level {
    /// One worker round of requests: RAID 4/5/6 gather them by stripe window, and hand back
    /// the round's last group of stripe operations for the worker to run from its top frame;
    /// the others map each request on its own.
    pub fn handle_round(
        &self,
        array: &Array,
        first: InflightRequest<Array>,
        rest: RequestChain<Array>,
        more: &mut dyn FnMut() -> RequestChain<Array>,
    ) -> Option<raid5::Tail> {
        match self {
            // The stripe cache allocates as it gathers: never with I/O of its own.
            Self::Raid5(st) => noio(|| array.handle_round5(st, &first, rest, more)),
            _ => {
                for rq in Iterator::chain(core::iter::once(first), rest) {
                    Array::handle(rq);
                }
                None
            }
        }
    }

    /// Whether a read (a write when `write`) may be mapped in `queue_rq`
    /// ([`Array::map_inline`]): both on RAID 0, 1 and 10; on RAID 4/5/6 only reads, which go
    /// straight to members in sync (md's aligned reads), as writes gather in the stripe cache
    /// on the worker.
    pub fn maps_inline(&self, write: bool) -> bool {
        !(write && matches!(self, Self::Raid5(_)))
    }

    /// Maps one bio of a read or write request onto the members, its member bios going
    /// through `tx`.
    pub fn map_bio(
        &self,
        array: &Array,
        src: &RqBio<Array>,
        write: bool,
        tx: &mut Tx,
    ) -> Result<(), BlkStatus> {
        match self {
            Self::Raid0(g) => array.map_bio0(g, src, write, tx),
            Self::Raid1(g) => array.map_bio1(g, src, write, tx),
            Self::Raid10(g) => array.map_bio10(g, src, write, tx),
            // Only inline reads come here ([`Level::maps_inline`]); the worker maps through
            // `handle_round`, by the stripe cache.
            Self::Raid5(st) if !write && tx.nowait() => array.map_read5(st, src, tx),
            Self::Raid5(_) => Err(BlkStatus::IOERR),
        }
    }

    /// One range of a discard or write-zeroes: at most one member bio per member.
    pub fn map_range(
        &self,
        array: &Array,
        rq: &InflightRequest<Array>,
        op: RangeOp,
        start: u64,
        len: u64,
    ) -> Result<(), BlkStatus> {
        match self {
            Self::Raid0(g) => array.map_range0(g, rq, op, start, len),
            Self::Raid1(g) => array.map_range1(g, rq, op, start, len),
            // Not offered (see `limits`).
            Self::Raid5(_) | Self::Raid10(_) => Err(BlkStatus::NOTSUPP),
        }
    }

    /// A read piece that failed ([`OnError::Retry`]): repair the member and read the data
    /// elsewhere. Worker context.
    pub fn retry_read(&self, array: &Array, p: &Piece) {
        match self {
            Self::Raid1(g) => array.retry_read1(g, p),
            Self::Raid10(g) => array.retry_read10(g, p),
            Self::Raid5(st) => noio(|| array.retry_read5(st, p)),
            Self::Raid0(_) => p.request().set_error(BlkStatus::IOERR),
        }
    }
}

// The sync thread (md's `sync_request`).
impl Level {
    /// The space the sync thread walks: member sectors, but array sectors on RAID 10, whose
    /// windows go chunk by chunk through the forward map (md walks member space there when it
    /// recovers; the data written is the same).
    pub fn sync_sectors(&self) -> u64 {
        match self {
            Self::Raid10(g) => g.array_sectors(),
            l => l.member_sectors(),
        }
    }

    /// Whether sync windows keep writes out with stripe heads rather than the barrier
    /// (RAID 4/5/6): the write-intent bitmap is then read per stripe window, under the heads.
    pub fn syncs_in_stripes(&self) -> bool {
        matches!(self, Self::Raid5(_))
    }

    /// The range of the sync space ([`Level::sync_sectors`]) a write of `len` array sectors at
    /// `start` touches: what the write-intent bitmap marks. RAID 4/5/6 mark the whole rows,
    /// parity included; RAID 0 has no bitmap.
    pub fn intent_range(&self, start: u64, len: u64) -> Option<(u64, u64)> {
        if len == 0 {
            return None;
        }
        match self {
            Self::Raid0(_) => None,
            Self::Raid1(_) | Self::Raid10(_) => Some((start, len)),
            Self::Raid5(st) => {
                let g = st.geo();
                let chunk = g.chunk_sectors();
                let row = chunk.checked_mul(g.data() as u64)?;
                let (first, last) = (start / row, (start + len - 1) / row);
                Some((first * chunk, (last - first + 1) * chunk))
            }
        }
    }

    /// md's failfast rule: whether a member bio of `kind` to `member` for `len` array sectors
    /// at `sector` has another copy to fall back on, so that it may fail fast. RAID 1: a read
    /// with two readable mirrors, a write with another member in sync; RAID 10: the chunk has
    /// another copy in sync. RAID 0 and 4/5/6 never (md ignores failfast there).
    pub fn other_copy(
        &self,
        array: &Array,
        kind: Kind,
        member: usize,
        sector: u64,
        len: u64,
    ) -> bool {
        let others = array.in_sync() & !(1u64 << member);
        match (self, kind) {
            (Self::Raid1(_), Kind::Read) => {
                (others | array.sync().recovered_below(sector + len)) & !(1u64 << member) != 0
            }
            (Self::Raid1(_), Kind::Write) => others != 0,
            (Self::Raid10(g), Kind::Read | Kind::Write) => {
                g.map(sector).any(|c| others & (1u64 << c.member) != 0)
            }
            _ => false,
        }
    }

    /// Why members cannot be compared or copied now (resync, check, repair), given `in_sync`
    /// members in sync and `degraded` out: RAID 1 needs two, the others all (md skips a
    /// degraded one).
    pub fn cannot_compare(&self, in_sync: u32, degraded: usize) -> Option<&'static str> {
        match self {
            Self::Raid0(_) => Some("no redundancy"),
            Self::Raid1(_) if in_sync < 2 => Some("fewer than two members in sync"),
            Self::Raid1(_) => None,
            Self::Raid5(_) | Self::Raid10(_) if degraded > 0 => Some("the array is degraded"),
            Self::Raid5(_) | Self::Raid10(_) => None,
        }
    }

    /// The buffers of a sync job over `members` members, and the sectors of the sync space
    /// it syncs at once. A job guided by the bitmap keeps windows no wider than its buffers,
    /// so that it skips clean chunks as finely as before.
    pub fn sync_buffers(
        &self,
        action: Action,
        members: usize,
        guided: bool,
    ) -> Result<(Window, u64)> {
        match self {
            // Two scratch pages for the parity read of each side of a call (see
            // `Stripes::sync_range`); the stripe heads hold the data. `SYNC_STREAM` windows
            // at once, within one barrier bucket (both are powers of two).
            Self::Raid5(st) => Ok((
                Window::new(2, 2, 0)?,
                st.window_sectors() * raid5::SYNC_STREAM,
            )),
            Self::Raid10(g) => mirror::buffers(action, g.copies(), g.chunk_sectors(), !guided),
            Self::Raid1(_) | Self::Raid0(_) => mirror::buffers(action, members, u64::MAX, false),
        }
    }

    /// Syncs `[pos, pos + n)` of the sync space ([`Level::sync_sectors`]), inside one raised
    /// barrier bucket: how the window is read, compared and written for `action` is the
    /// level's. `Err` when the window could not be done (no copy of some of it could be read,
    /// or the array can no longer sync): the job stops there.
    pub fn sync_window(
        &self,
        array: &Array,
        action: Action,
        pos: u64,
        n: u64,
        win: &mut Window,
    ) -> Result<(), ()> {
        match self {
            Self::Raid1(g) => array.sync_window1(g, action, pos, n, win),
            Self::Raid10(g) => array.sync_window10(g, action, pos, n, win),
            Self::Raid5(st) => st.sync_range(array, action, pos, n, win.solo, &mut win.rows),
            Self::Raid0(_) => Err(()),
        }
    }
}
