//! Arrays: members, level, state, and the request path.
//!
//! An [`Array`] owns its open members and the per-level geometry from `layout/`. Requests are
//! mapped to member bios in [`io`]; array and member state lives in atomics, so the I/O path
//! takes no lock. Member errors are handled in [`repair`].

// Safe code only: `unsafe` lives in `sys/` (and `parity/`'s SIMD).
#![deny(unsafe_code)]

pub mod attrs;
pub mod control;
pub mod engines;
pub mod io;
pub mod members;
pub mod parse;
pub mod raid10;
pub mod raid5;
pub mod repair;
pub mod stat;
pub mod stripe;
pub mod sync;

use crate::layout::{raid0::Raid0, raid1::Raid1, raid10::Raid10, raid5::Raid5};
use crate::sys::bio::BioSet;
use crate::sys::member::Holder;
use crate::sys::module_ref::ModuleRef;
use crate::sys::slot::{DevRef, DevSlot};
use crate::sys::workqueue::QueueRef;
use crate::sys::BlkStatus;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use io::Piece;
use kernel::{
    new_mutex,
    page::Page,
    prelude::*,
    sync::{Arc, Mutex},
};

/// An array name: `rraid` followed by 1 to 3 digits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ArrayName {
    buf: [u8; 8],
    len: usize,
}

impl ArrayName {
    /// Parses `s`, refusing anything but `rraid` and 1 to 3 digits.
    pub fn parse(s: &[u8]) -> Option<Self> {
        let digits = s.strip_prefix(b"rraid")?;
        if digits.is_empty() || digits.len() > 3 || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let mut buf = [0; 8];
        buf[..s.len()].copy_from_slice(s);
        Some(Self { buf, len: s.len() })
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("rraid?")
    }
}

/// The RAID level and its geometry.
pub enum Level {
    /// Striping. md's zone table makes the geometry large, so it is boxed.
    Raid0(KBox<Raid0>),
    /// Mirroring.
    Raid1(Raid1),
    /// Striping with parity: RAID 4, 5 or 6.
    Raid5(Raid5),
    /// Striped mirrors: md's near, far and offset copies.
    Raid10(Raid10),
}

impl Level {
    /// md's name of the level.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Raid0(_) => "raid0",
            Self::Raid1(_) => "raid1",
            Self::Raid5(g) => match g.level() {
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
            Self::Raid5(g) => g.array_sectors(),
            Self::Raid10(g) => g.array_sectors(),
        }
    }

    /// Sectors of each member in use; on RAID 0 over unequal members, those every member
    /// holds (the smallest member's, zone 0's share), as md's `component_size`.
    pub fn member_sectors(&self) -> u64 {
        match self {
            Self::Raid0(g) => g.member_sectors(),
            Self::Raid1(g) => g.member_sectors(),
            Self::Raid5(g) => g.member_sectors(),
            Self::Raid10(g) => g.member_sectors(),
        }
    }

    /// Chunk size in sectors; 0 for RAID1, as md reports.
    pub fn chunk_sectors(&self) -> u64 {
        match self {
            Self::Raid0(g) => g.chunk_sectors(),
            Self::Raid1(_) => 0,
            Self::Raid5(g) => g.chunk_sectors(),
            Self::Raid10(g) => g.chunk_sectors(),
        }
    }

    /// md's layout number (`layout`); 0 where md has none. RAID 4 shows 0 as md does for the
    /// RAID 4 arrays mdadm makes: md's RAID 4 keeps parity on the last member whatever the
    /// number says. RAID 0 shows its layout when it has several zones, and -1 as md with one.
    pub fn layout(&self) -> i32 {
        match self {
            Self::Raid0(g) => g.md_layout(),
            Self::Raid5(g) if g.level() != 4 => g.algorithm().number() as i32,
            Self::Raid10(g) => g.layout().number() as i32,
            _ => 0,
        }
    }

    /// Members that may fail before data is lost (RAID 10: in the worst case).
    pub fn redundancy(&self, members: usize) -> usize {
        match self {
            Self::Raid0(_) => 0,
            Self::Raid1(_) => members - 1,
            Self::Raid5(g) => g.parity(),
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
}

/// One member slot of an array (md's raid disk): its device, which a spare may take over.
pub struct Member {
    /// The open device, if any; its I/O in flight counts for read balancing.
    pub dev: DevSlot,
    /// A spare being built to replace `dev` while it serves (md's `want_replacement`).
    pub replacement: DevSlot,
    /// Where the last read sent here ended, to keep sequential reads on one member.
    pub next_seq: AtomicU64,
    /// I/O errors seen (md's `errors`).
    pub errors: AtomicU32,
}

/// Who has the array open, and whether it is going away.
struct OpenState {
    openers: u32,
    closing: bool,
}

/// A RAID array.
#[pin_data]
pub struct Array {
    name: ArrayName,
    level: Level,
    members: KVec<Member>,
    /// Bit `i` set: member `i` is in sync (neither faulty nor missing).
    in_sync: AtomicU64,
    /// The array lost more than it tolerates.
    broken: AtomicBool,
    /// Member writes in flight: `array_state` is `active` while there are any.
    writes: AtomicU32,
    #[pin]
    bioset: BioSet<Piece>,
    /// The buffer of read-error repair, as md's `tmppage`: one repair at a time per array, and
    /// no allocation on that path.
    #[pin]
    repair_page: Mutex<Page>,
    #[pin]
    open: Mutex<OpenState>,
    /// The stripe cache (RAID 4/5/6).
    stripes: Option<Pin<KBox<stripe::Stripes>>>,
    /// Resync, check and repair, and the write barrier against them.
    #[pin]
    sync: sync::SyncState,
    /// Spares and faulty devices out of their slot ([`members`]).
    #[pin]
    spares: Mutex<KVec<Option<members::Spare>>>,
    /// The member directories.
    #[pin]
    dirs: Mutex<members::Dirs>,
    /// Membership changes (a device put into or taken out of a slot) one at a time, as md's
    /// `reconfig_mutex`: a `remove` must not take out the spare a recovery just put in.
    /// Taken after the sync thread's control lock, never before it.
    #[pin]
    reconfig: Mutex<()>,
    /// The module's workqueue.
    wq: QueueRef,
    /// The physical units that running sync jobs of all arrays hold.
    units: Arc<sync::Units>,
    /// The array's own queue, held off while a replacement takes its slot; set once the disk
    /// exists, cleared before it goes.
    #[pin]
    freezer: Mutex<Option<crate::sys::disk::Freezer>>,
    // Dropped after `members` and `spares`, which it claims.
    holder: Holder,
    _module: ModuleRef,
}

/// Reserved member bios per array: enough for one request's worth of progress.
const BIOSET_POOL: u32 = 64;

impl Array {
    #[expect(clippy::too_many_arguments)]
    fn new(
        name: ArrayName,
        level: Level,
        members: KVec<Member>,
        assume_clean: bool,
        stripes: Option<Pin<KBox<stripe::Stripes>>>,
        holder: Holder,
        module: ModuleRef,
        wq: QueueRef,
        units: Arc<sync::Units>,
    ) -> Result<Arc<Self>> {
        let all = if members.len() == 64 {
            u64::MAX
        } else {
            (1u64 << members.len()) - 1
        };
        let page = Page::alloc_page(GFP_KERNEL)?;
        Arc::pin_init(
            try_pin_init!(Self {
                name,
                level,
                members,
                in_sync: AtomicU64::new(all),
                broken: AtomicBool::new(false),
                writes: AtomicU32::new(0),
                bioset <- BioSet::new(BIOSET_POOL, false),
                repair_page <- new_mutex!(page, "rraid::repair_page"),
                open <- new_mutex!(OpenState { openers: 0, closing: false }, "rraid::open"),
                stripes,
                // Members agree when declared so, and where nothing is copied.
                sync <- sync::SyncState::new(assume_clean || level.redundancy(2) == 0),
                spares <- new_mutex!(KVec::new(), "rraid::spares"),
                dirs <- new_mutex!(
                    members::Dirs {
                        parent: None,
                        members: KVec::new(),
                    },
                    "rraid::dirs"
                ),
                reconfig <- new_mutex!((), "rraid::reconfig"),
                wq,
                units,
                freezer <- new_mutex!(None, "rraid::freezer"),
                holder,
                _module: module,
            }),
            GFP_KERNEL,
        )
    }

    /// The array's name.
    pub fn name(&self) -> &str {
        self.name.as_str()
    }

    /// The level and geometry.
    pub fn level(&self) -> &Level {
        &self.level
    }

    /// The members, by slot.
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// Bitmap of in-sync members.
    pub fn in_sync(&self) -> u64 {
        self.in_sync.load(Ordering::Acquire)
    }

    /// The set of faulty or missing members.
    pub fn failed_set(&self) -> u64 {
        let all = if self.members.len() >= 64 {
            u64::MAX
        } else {
            (1u64 << self.members.len()) - 1
        };
        all & !self.in_sync()
    }

    /// The stripe cache, on RAID 4/5/6.
    pub fn stripes(&self) -> Option<&stripe::Stripes> {
        self.stripes.as_deref()
    }

    /// Whether the array lost more than it tolerates.
    pub fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Acquire)
    }

    /// The device in member slot `slot`, counted while the reference lives.
    pub fn dev(&self, slot: usize) -> Option<DevRef> {
        self.members.get(slot)?.dev.get()
    }

    /// Runs `f` with the kernel name of the device in slot `slot` (`-` when there is none).
    pub fn with_name<R>(&self, slot: usize, f: impl FnOnce(&str) -> R) -> R {
        match self.dev(slot) {
            Some(d) => f(d.name()),
            None => f("-"),
        }
    }

    /// Counts an I/O error on member `slot` (md's `errors`), logging the first, with the
    /// member's status where the caller has it.
    pub(super) fn count_error(&self, slot: usize, status: Option<BlkStatus>) {
        if let Some(m) = self.members.get(slot) {
            if m.errors.fetch_add(1, Ordering::Relaxed) == 0 {
                self.with_name(slot, |name| match status {
                    Some(st) => pr_err!(
                        "{}: I/O error on member {} (status {:?})\n",
                        self.name(),
                        name,
                        st
                    ),
                    None => pr_err!("{}: I/O error on member {}\n", self.name(), name),
                });
            }
        }
    }

    /// Count of faulty or missing members (md's `degraded`).
    pub fn degraded(&self) -> usize {
        self.members.len() - self.in_sync().count_ones() as usize
    }

    /// md's `array_state`.
    pub fn array_state(&self) -> &'static str {
        if self.broken.load(Ordering::Acquire)
            || !self.level.survives(self.in_sync(), self.members.len())
        {
            "broken"
        } else if self.writes.load(Ordering::Acquire) > 0 {
            "active"
        } else {
            "clean"
        }
    }

    /// Marks member `slot` faulty.
    ///
    /// Refused with `EBUSY` when the array would lose data: any RAID0 member, the last
    /// in-sync RAID1 member, or a RAID 10 member holding the last in-sync copy of some chunk,
    /// as md refuses. On RAID 4/5/6 the member is failed even then, as
    /// md 6.12 does, and the array is broken; the answer is still `EBUSY`. Returns whether the
    /// member was in sync before.
    pub fn fail_member(&self, slot: usize) -> Result<bool> {
        self.fail_member_as(slot, matches!(self.level, Level::Raid5(_)))
    }

    /// [`Array::fail_member`] for the sync thread, whose read errors never break an array:
    /// where failing the member would lose data on any level, it stays and the job stops
    /// instead (`EBUSY`), as md aborts a sync it cannot finish.
    pub(super) fn fail_member_in_sync(&self, slot: usize) -> Result<bool> {
        self.fail_member_as(slot, false)
    }

    fn fail_member_as(&self, slot: usize, may_break: bool) -> Result<bool> {
        let bit = 1u64 << slot;
        if self.sync.drop_recovering(slot) {
            self.with_name(slot, |name| {
                pr_warn!(
                    "{}: member {} marked faulty during its recovery\n",
                    self.name(),
                    name
                )
            });
            self.note(sync::EV_STATE | sync::EV_UEVENT);
            return Ok(false);
        }
        let mut cur = self.in_sync.load(Ordering::Acquire);
        let past = loop {
            if cur & bit == 0 {
                return Ok(false);
            }
            let left = cur & !bit;
            let past = !self.level.survives(left, self.members.len());
            if past && !may_break {
                return Err(EBUSY);
            }
            match self
                .in_sync
                .compare_exchange(cur, left, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break past,
                Err(now) => cur = now,
            }
        };
        // A replacement half built for a member that failed must never take its slot as if
        // complete: it is given up, and rebuilt as a spare from the start (md turns it into
        // the slot's recovery where it stands).
        self.sync.drop_replacing(slot);
        self.with_name(slot, |name| {
            pr_warn!(
                "{}: member {} marked faulty, {} of {} in sync\n",
                self.name(),
                name,
                self.members.len() - self.degraded(),
                self.members.len()
            )
        });
        // Also a spare may take its place (`note` asks the sync thread to look).
        self.note(sync::EV_STATE | sync::EV_UEVENT);
        if past {
            self.set_broken();
            return Err(EBUSY);
        }
        Ok(true)
    }

    /// Marks the array broken: it lost more than it tolerates, or a write reached no member.
    pub(super) fn set_broken(&self) {
        if !self.broken.swap(true, Ordering::AcqRel) {
            pr_err!(
                "{}: array broken: more members lost than it tolerates\n",
                self.name()
            );
        }
    }
}
