//! Arrays: members, level, state.
//!
//! An [`Array`] owns its open members and its [`level::Level`] (the geometry from `layout/`,
//! and on RAID 4/5/6 the stripe cache). Array and member state lives in atomics, so the I/O
//! path takes no lock. The rooms:
//!
//! - [`level`]: the level contract (md's `md_personality`) and one file or folder per level;
//! - [`io`]: the request path's member bios, their completion, and read-error repair;
//! - [`sync`]: the sync thread, the write barrier, shared-disk units, throttle, windows;
//! - [`control`]: create and remove, sysfs attributes, members and spares, `/proc/rraidstat`;
//! - [`engines`]: the parity engines chosen at load.
//!
//! Calls go one way: `control` → `level` → `io`, `sync` → this file. `io` and `sync` reach a
//! level only through the contract's methods on `Array::level()`, as md's core calls through
//! `mddev->pers`.

// Safe code only: `unsafe` lives in `sys/` (and `parity/`'s SIMD).
#![deny(unsafe_code)]

pub mod control;
pub mod engines;
pub mod io;
pub mod level;
pub mod meta;
pub mod slots;
pub mod sync;

use crate::sys::bio::BioSet;
use crate::sys::member::Holder;
use crate::sys::module_ref::ModuleRef;
use crate::sys::pageio::PageCtx;
use crate::sys::slot::{DevRef, DevSlot};
use crate::sys::workqueue::QueueRef;
use crate::sys::BlkStatus;
use control::attrs::Dirs;
use control::members::Spare;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use io::Piece;
use kernel::{
    c_str, new_mutex,
    page::Page,
    prelude::*,
    sync::{Arc, Mutex},
};
use level::Level;
use slots::Slots;

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

    /// `rraidN`, for `n` below 1000.
    pub fn numbered(n: u32) -> Option<Self> {
        if n >= 1000 {
            return None;
        }
        let mut buf = *b"rraid\0\0\0";
        let digits = if n >= 100 {
            3
        } else if n >= 10 {
            2
        } else {
            1
        };
        let mut v = n;
        for k in (5..5 + digits).rev() {
            *buf.get_mut(k)? = b'0' + (v % 10) as u8;
            v /= 10;
        }
        Self::parse(buf.get(..5 + digits)?)
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("rraid?")
    }
}

/// Events: array or member state (`array_state`, `degraded`, `dev-*/state`) changed.
pub const EV_STATE: u32 = 1;
/// Events: a sync job started or ended (`sync_action`, `sync_completed`).
pub const EV_SYNC: u32 = 2;
/// Events: worth a `change` uevent (a member failed, a sync started or ended, degraded).
pub const EV_UEVENT: u32 = 4;

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

/// What a device is to its array.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// In slot `0`: in sync, being recovered, or faulty.
    Slot(usize),
    /// Being built as slot `0`'s replacement (md's replacement rdev).
    Replacement(usize),
    /// A spare, or a faulty device out of its slot.
    Spare {
        /// See [`control::members::Spare::faulty`].
        faulty: bool,
    },
}

impl Array {
    /// What the device with number `devt` is to this array, if it belongs to it.
    pub fn role_of(&self, devt: u32) -> Option<Role> {
        for (slot, m) in self.members.iter().enumerate() {
            if m.dev.get().is_some_and(|d| d.devt() == devt) {
                return Some(Role::Slot(slot));
            }
            if m.replacement.get().is_some_and(|d| d.devt() == devt) {
                return Some(Role::Replacement(slot));
            }
        }
        self.spares
            .lock()
            .iter()
            .find(|s| s.dev.devt() == devt)
            .map(|s| Role::Spare { faulty: s.faulty })
    }
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
    /// Write requests (writes, discards, write-zeroes) from `queue_rq` to their end: the
    /// safe-mode count of `meta`.
    write_reqs: AtomicU32,
    /// Read and write requests from `queue_rq` to their end: whether a large request has
    /// others to overlap with on the worker (see `io`).
    rw_reqs: AtomicU32,
    /// Requests ever started: the sync throttle's sign of other I/O (md's `is_mddev_idle`).
    pub(crate) started: AtomicU64,
    /// Large requests that found no other in flight since the last one that did (see `io`).
    lone_large: AtomicU32,
    /// Small requests since the queue was last deep: 0 while it is, up to `DEEP_EXIT` while
    /// leaving it, and set back by a probe (see `io`).
    lone_small: AtomicU32,
    /// The tick of the last small request sent to the worker to probe its submitter's depth.
    small_probe: AtomicUsize,
    /// Per hardware queue (one per CPU), the tick of its last read or write request: whether
    /// some CPU has no submitter of its own to keep busy (see `io`).
    submit_tick: KVec<AtomicUsize>,
    #[pin]
    bioset: BioSet<Piece>,
    /// Bios of the sync thread's mirror windows. Kept for the array's life: a set per job
    /// created and destroyed its bio slab each time, and `kmem_cache_destroy` waits for RCU
    /// (`kvfree_rcu_barrier`): about 30 ms of a 128 MiB rebuild's 700 under TCG.
    #[pin]
    sync_bioset: BioSet<PageCtx>,
    /// The buffer of read-error repair, as md's `tmppage`: one repair at a time per array, and
    /// no allocation on that path.
    #[pin]
    repair_page: Mutex<Page>,
    #[pin]
    open: Mutex<OpenState>,
    /// Resync, check and repair, and the write barrier against them.
    #[pin]
    sync: sync::SyncState,
    /// Spares and faulty devices out of their slot (`control::members`).
    #[pin]
    spares: Mutex<Slots<Spare>>,
    /// The member directories.
    #[pin]
    dirs: Mutex<Dirs>,
    /// Changes not yet told to poll() waiters and udev ([`Array::note`]).
    events: AtomicU32,
    /// Membership changes (a device put into or taken out of a slot) one at a time, as md's
    /// `reconfig_mutex`: a `remove` must not take out the spare a recovery just put in.
    /// Taken after the sync thread's control lock, never before it.
    #[pin]
    reconfig: Mutex<()>,
    /// The module's workqueue.
    wq: QueueRef,
    /// The physical units that running sync jobs of all arrays hold.
    units: Arc<sync::Units>,
    /// md's v1.x metadata; `None` for `metadata=none`.
    meta: Option<Pin<KBox<meta::Meta>>>,
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

/// Bios kept for the sync thread's windows, which wait for their bios before making more.
const SYNC_BIOSET_POOL: u32 = 4;

impl Array {
    #[expect(clippy::too_many_arguments)]
    fn new(
        name: ArrayName,
        level: Level,
        members: KVec<Member>,
        in_sync: u64,
        resync_point: u64,
        meta: Option<Pin<KBox<meta::Meta>>>,
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
        let cpus = crate::sys::nr_cpus();
        let mut submit_tick = KVec::with_capacity(cpus, GFP_KERNEL)?;
        let long_ago = crate::sys::jiffies().wrapping_sub(io::SUBMITTER_TICKS + 1);
        for _ in 0..cpus {
            submit_tick.push(AtomicUsize::new(long_ago), GFP_KERNEL)?;
        }
        Arc::pin_init(
            try_pin_init!(Self {
                name,
                level,
                members,
                in_sync: AtomicU64::new(all & in_sync),
                broken: AtomicBool::new(false),
                writes: AtomicU32::new(0),
                write_reqs: AtomicU32::new(0),
                rw_reqs: AtomicU32::new(0),
                started: AtomicU64::new(0),
                lone_large: AtomicU32::new(0),
                lone_small: AtomicU32::new(0),
                small_probe: AtomicUsize::new(0),
                submit_tick,
                bioset <- BioSet::new(BIOSET_POOL, false),
                sync_bioset <- BioSet::new(SYNC_BIOSET_POOL, true),
                repair_page <- new_mutex!(page, "rraid::repair_page"),
                open <- new_mutex!(OpenState { openers: 0, closing: false }, "rraid::open"),
                // Members agree where nothing is copied.
                sync <- sync::SyncState::new(if level.redundancy(2) == 0 {
                    u64::MAX
                } else {
                    resync_point
                }),
                spares <- new_mutex!(Slots::new(), "rraid::spares"),
                dirs <- new_mutex!(
                    Dirs {
                        parent: None,
                        members: Slots::new(),
                    },
                    "rraid::dirs"
                ),
                events: AtomicU32::new(0),
                reconfig <- new_mutex!((), "rraid::reconfig"),
                wq,
                units,
                meta,
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

    /// The array's metadata, unless it has none.
    pub fn meta(&self) -> Option<&meta::Meta> {
        self.meta.as_deref()
    }

    /// The write-intent bitmap, if the array has one.
    pub fn bitmap(&self) -> Option<&meta::bitmap::Bitmap> {
        self.meta().and_then(|m| m.bitmap())
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
    pub(crate) fn count_error(&self, slot: usize, status: Option<BlkStatus>) {
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
        } else if let Some(m) = self.meta() {
            // md's: clean once the superblocks say so (safe mode), active until then.
            if m.is_active() {
                "active"
            } else {
                "clean"
            }
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
        self.fail_member_as(slot, self.level.fails_past_tolerance())
    }

    /// [`Array::fail_member`] for the sync thread, whose read errors never break an array:
    /// where failing the member would lose data on any level, it stays and the job stops
    /// instead (`EBUSY`), as md aborts a sync it cannot finish.
    pub(crate) fn fail_member_in_sync(&self, slot: usize) -> Result<bool> {
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
            self.note(EV_STATE | EV_UEVENT);
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
        self.note(EV_STATE | EV_UEVENT);
        if past {
            self.set_broken();
            return Err(EBUSY);
        }
        Ok(true)
    }

    /// Marks the array broken: it lost more than it tolerates, or a write reached no member.
    pub(crate) fn set_broken(&self) {
        if !self.broken.swap(true, Ordering::AcqRel) {
            pr_err!(
                "{}: array broken: more members lost than it tolerates\n",
                self.name()
            );
        }
    }

    /// Records a change to tell poll() waiters and udev about; any context. The next
    /// [`Array::flush_events`] tells them.
    pub fn note(&self, events: u32) {
        if events & EV_STATE != 0 {
            if let Some(m) = self.meta() {
                m.note_change();
            }
        }
        self.events.fetch_or(events, Ordering::AcqRel);
        self.sync.want_kick();
    }

    /// Wakes the poll() waiters of the files that changed and sends the uevent. Task context.
    pub fn flush_events(&self) {
        if let Some(m) = self.meta() {
            m.flush(self);
        }
        let ev = self.events.swap(0, Ordering::AcqRel);
        if ev == 0 {
            return;
        }
        let d = self.dirs.lock();
        let Some(parent) = d.parent.as_ref() else {
            return;
        };
        if ev & EV_SYNC != 0 {
            parent.notify(c_str!("sync_action"));
            parent.notify(c_str!("sync_completed"));
        }
        if ev & EV_STATE != 0 {
            parent.notify(c_str!("array_state"));
            parent.notify(c_str!("degraded"));
            for (_, dir) in d.members.iter() {
                dir.notify(c_str!("state"));
            }
        }
        if ev & EV_UEVENT != 0 {
            parent.parent_change_event();
        }
    }
}
