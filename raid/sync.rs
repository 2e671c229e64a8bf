//! The sync thread: md's `md_do_sync` for rraid. One kernel thread per array (`rraidN_sync`),
//! started when there is work and gone when there is none, runs one job at a time:
//!
//! - `resync`: make an array created without `assume-clean` consistent, from the resync
//!   point to the end. Reads at or beyond the point go to the first in-sync member
//!   ([`SyncState::clean_below`]), so a reader never sees two answers.
//! - `check`: read every copy and count mismatches (md's `mismatch_cnt`), writing nothing.
//! - `repair`: as check, and rewrite what differs from the first in-sync copy.
//!
//! The thread walks the members in windows. Each window lies inside one barrier bucket (md's
//! 64 MiB barrier unit): the thread raises the bucket's barrier, waits until no write in it is
//! in flight, syncs the window and lowers the barrier. Writes to a raised bucket wait in
//! [`Barrier::enter`]; writes elsewhere go on. The level decides how a window is read,
//! compared and written ([`Array::sync_window`]).
//!
//! Arrays whose members share a physical unit (partitions of one disk) sync one at a time, as
//! md's: a job waits, `delayed`, while another array's job holds one of its units ([`Units`]).

use super::io::bits;
use super::{Array, ArrayName, Level};
use crate::sys::bio::BioSet;
use crate::sys::kthread::{self, Thread};
use crate::sys::pagebuf::{PageBuf, PAGE_BYTES};
use crate::sys::pageio::{PageCtx, PageIo};
use crate::sys::workqueue::{spawn, Job};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use kernel::{
    c_str, fmt, new_condvar, new_mutex,
    prelude::*,
    str::CString,
    sync::{Arc, CondVar, Mutex},
};

/// A sync job, by md's names.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Action {
    /// Make the copies agree, from the resync point on.
    Resync,
    /// Rebuild the members that spares took over, from the recovery point on.
    Recover,
    /// Compare and count.
    Check,
    /// Compare, count and rewrite.
    Repair,
}

impl Action {
    /// md's name, as `sync_action` shows it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Resync => "resync",
            Self::Recover => "recover",
            Self::Check => "check",
            Self::Repair => "repair",
        }
    }

    /// The word md logs for the job.
    fn desc(self) -> &'static str {
        match self {
            Self::Resync => "resync",
            Self::Recover => "recovery",
            Self::Check => "data-check",
            Self::Repair => "requested-resync",
        }
    }

    fn code(self) -> u8 {
        match self {
            Self::Resync => 1,
            Self::Check => 2,
            Self::Repair => 3,
            Self::Recover => 4,
        }
    }

    fn from_code(c: u8) -> Option<Self> {
        match c {
            1 => Some(Self::Resync),
            2 => Some(Self::Check),
            3 => Some(Self::Repair),
            4 => Some(Self::Recover),
            _ => None,
        }
    }
}

/// md's barrier unit: 64 MiB of member space.
const BUCKET_SHIFT: u32 = 17;
/// Barrier buckets per array; member space is hashed onto them, as md does.
const BUCKETS: usize = 1024;
/// md's RAID 1 compare unit, and its `mismatch_cnt` step: 64 KiB.
pub(super) const BLOCK_SECTORS: u64 = 128;
/// Most compare blocks in a window (1 MiB per member).
const MAX_BLOCKS: usize = 16;
/// Most copies of a block a window reads (RAID 1 members are limited to this for check).
const MAX_COPIES: usize = crate::layout::MAX_MEMBERS;
/// Memory the thread reads at once, over all members: 1 MiB.
const WINDOW_BYTES: usize = 1 << 20;
/// The system limits (md's `dev.raid.speed_limit_min` and `_max`, KiB/s), which arrays follow
/// unless given their own: `/sys/kernel/rraid/speed_limit_min` and `_max`. md's defaults.
pub static SPEED_MIN_SYSTEM: AtomicU32 = AtomicU32::new(1000);
/// See [`SPEED_MIN_SYSTEM`].
pub static SPEED_MAX_SYSTEM: AtomicU32 = AtomicU32::new(200_000);
/// Speed marks: the speed is measured over the last `MARKS` marks, one a second.
const MARKS: usize = 10;
const MARK_NS: u64 = 1_000_000_000;

/// The bucket of member sector `sector`.
fn bucket(sector: u64) -> usize {
    ((sector >> BUCKET_SHIFT) % BUCKETS as u64) as usize
}

/// The first member sector of the bucket after the one `sector` is in.
fn bucket_end(sector: u64) -> u64 {
    ((sector >> BUCKET_SHIFT) + 1) << BUCKET_SHIFT
}

/// The first and last bucket numbers (before hashing) of the range `[start, start + len)`.
fn bucket_range(start: u64, len: u64) -> (u64, u64) {
    (
        start >> BUCKET_SHIFT,
        start.saturating_add(len.saturating_sub(1)) >> BUCKET_SHIFT,
    )
}

/// Writes against the sync thread: md's `wait_barrier`/`raise_barrier`, per bucket.
#[pin_data]
pub struct Barrier {
    /// Writes in flight per bucket.
    pending: [AtomicU32; BUCKETS],
    /// Whether the sync thread holds the bucket.
    raised: [AtomicU32; BUCKETS],
    /// Writes waiting for the bucket to be lowered (md's `nr_waiting`): the thread lets them in
    /// before it raises the bucket again, so a writer never waits through a whole bucket.
    waiting: [AtomicU32; BUCKETS],
    #[pin]
    lock: Mutex<()>,
    #[pin]
    lowered: CondVar,
}

/// Writes in flight to the member range of a request: held while its member bios are sent;
/// each member bio holds the range too ([`Barrier::hold`]).
pub struct Entered<'a> {
    barrier: &'a Barrier,
    first: u64,
    last: u64,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        self.barrier.release(self.first, self.last);
    }
}

impl Barrier {
    fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            pending: [const { AtomicU32::new(0) }; BUCKETS],
            raised: [const { AtomicU32::new(0) }; BUCKETS],
            waiting: [const { AtomicU32::new(0) }; BUCKETS],
            lock <- new_mutex!((), "rraid::barrier"),
            lowered <- new_condvar!("rraid::barrier_lowered"),
        })
    }

    /// Waits until the sync thread is out of the member range `[start, start + len)`, then
    /// counts a write there. Task context.
    pub fn enter(&self, start: u64, len: u64) -> Entered<'_> {
        let (first, last) = bucket_range(start, len);
        for b in first..=last {
            let i = (b % BUCKETS as u64) as usize;
            let mut waited = false;
            loop {
                // Count first, then look: the sync thread raises first, then looks at the count
                // (both sequentially consistent), so one of the two always sees the other.
                self.pending[i].fetch_add(1, Ordering::SeqCst);
                if self.raised[i].load(Ordering::SeqCst) == 0 {
                    break;
                }
                self.pending[i].fetch_sub(1, Ordering::SeqCst);
                if !waited {
                    self.waiting[i].fetch_add(1, Ordering::SeqCst);
                    waited = true;
                }
                let mut g = self.lock.lock();
                while self.raised[i].load(Ordering::SeqCst) != 0 {
                    self.lowered.wait(&mut g);
                }
            }
            if waited {
                self.waiting[i].fetch_sub(1, Ordering::SeqCst);
            }
        }
        Entered {
            barrier: self,
            first,
            last,
        }
    }

    /// One more write in flight in the range of `e`, held until [`Barrier::release`].
    pub fn hold(&self, e: &Entered<'_>) -> (u64, u64) {
        for b in e.first..=e.last {
            self.pending[(b % BUCKETS as u64) as usize].fetch_add(1, Ordering::SeqCst);
        }
        (e.first, e.last)
    }

    /// Ends a write counted by [`Barrier::enter`] or [`Barrier::hold`]. Any context.
    pub fn release(&self, first: u64, last: u64) {
        for b in first..=last {
            self.pending[(b % BUCKETS as u64) as usize].fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Takes bucket `i` for the sync thread: new writes there wait, and this waits until the
    /// ones in flight are done.
    fn raise(&self, i: usize) {
        // Writers that waited for the last window go first (md's `nr_waiting`); they are
        // runnable, woken by `lower`.
        while self.waiting[i].load(Ordering::SeqCst) != 0 {
            kthread::sleep_ms(1);
        }
        self.raised[i].fetch_add(1, Ordering::SeqCst);
        while self.pending[i].load(Ordering::SeqCst) != 0 {
            kthread::sleep_ms(1);
        }
    }

    /// Runs `f` with writes held off the array range `[start, start + len)` and none in flight
    /// there, as md freezes the array around `fix_read_error`: a read repair must not write old
    /// data over a write that landed between its read of the good copy and its rewrite. Task
    /// context; the caller holds no barrier count itself (failed writes parked for the workers
    /// hold none either, see `io::piece_failed`).
    pub fn hold_writes<R>(&self, start: u64, len: u64, f: impl FnOnce() -> R) -> R {
        let (first, last) = bucket_range(start, len);
        for b in first..=last {
            self.raise((b % BUCKETS as u64) as usize);
        }
        let r = f();
        for b in first..=last {
            self.lower((b % BUCKETS as u64) as usize);
        }
        r
    }

    /// Gives bucket `i` back and wakes the writers waiting for it.
    fn lower(&self, i: usize) {
        self.raised[i].fetch_sub(1, Ordering::SeqCst);
        let _g = self.lock.lock();
        self.lowered.notify_all();
    }
}

/// What the control side asks of the thread; under [`SyncState::ctl`].
struct Ctl {
    thread: Option<Thread<Array>>,
    /// The thread is running, or about to.
    running: bool,
    /// A requested check or repair.
    requested: Option<Action>,
    /// `frozen`: nothing starts until `idle` is written.
    frozen: bool,
    /// The array is going away: nothing starts again.
    closing: bool,
}

/// Speed marks: sectors done at a time, one a second.
#[derive(Clone, Copy, Default)]
struct Mark {
    ns: u64,
    done: u64,
}

/// The counters and flags of [`SyncState`], all atomics.
struct Counters {
    /// The running job ([`Action::code`]), or 0.
    running: AtomicU8,
    /// The running job waits for another array's job on a shared unit ([`Units`]).
    delayed: AtomicBool,
    /// Asks the running job to stop at the next window (`idle`, `frozen`).
    interrupt: AtomicBool,
    /// Member sectors below this are in sync; `u64::MAX` when all are.
    resync_point: AtomicU64,
    /// Slots whose new device is being rebuilt (md's recovering spares), slots whose
    /// replacement is being built while they serve (md's `want_replacement`), and how far both
    /// are.
    recovering: AtomicU64,
    replacing: AtomicU64,
    recovery_point: AtomicU64,
    /// Slots asked to be replaced (md's `WantReplacement`), waiting for a spare or being
    /// replaced.
    want_replace: AtomicU64,
    /// A member failed or a spare came: see whether a recovery can start.
    kick_pending: AtomicBool,
    /// A [`Kick`] job is queued.
    kick_queued: AtomicBool,
    /// A job stopped on data it could not read from any copy: no resync or recovery starts
    /// by itself until something changes (md's `recovery_disabled`).
    auto_off: AtomicBool,
    /// Where the running job is, and where it ends, in member sectors.
    done: AtomicU64,
    total: AtomicU64,
    /// md's `mismatch_cnt`, in sectors.
    mismatches: AtomicU64,
    /// Local limits in KiB/s; 0 for the system value.
    speed_min: AtomicU32,
    speed_max: AtomicU32,
    /// The speed over the last marks, KiB/s, for `sync_speed`.
    speed: AtomicU64,
    /// Changes not yet told to poll() waiters and udev ([`Array::note`]).
    events: AtomicU32,
}

/// Events: array or member state (`array_state`, `degraded`, `dev-*/state`) changed.
pub const EV_STATE: u32 = 1;
/// Events: a sync job started or ended (`sync_action`, `sync_completed`).
pub const EV_SYNC: u32 = 2;
/// Events: worth a `change` uevent (a member failed, a sync started or ended, degraded).
pub const EV_UEVENT: u32 = 4;

/// The physical units (disks) that running jobs hold, so that arrays sharing a disk through
/// its partitions sync one at a time, as md's `md_do_sync` serialises them
/// (`match_mddev_units`): syncing two of them at once would only make the disk seek between
/// them. One for the module, shared by its arrays.
#[pin_data]
pub struct Units {
    /// Holes are jobs that ended.
    #[pin]
    claims: Mutex<KVec<Option<Claim>>>,
}

/// The units of one running job.
struct Claim {
    owner: usize,
    name: ArrayName,
    units: KVec<usize>,
}

impl Units {
    /// No job holds anything.
    pub fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                claims <- new_mutex!(KVec::new(), "rraid::sync_units"),
            }),
            GFP_KERNEL,
        )
    }

    /// Claims `units` for `owner`'s job, unless another array's job holds one of them: then
    /// returns that array's name.
    fn claim(
        &self,
        owner: usize,
        name: ArrayName,
        units: KVec<usize>,
    ) -> Result<Option<ArrayName>> {
        let mut claims = self.claims.lock();
        let held = claims
            .iter()
            .flatten()
            .find(|c| c.owner != owner && c.units.iter().any(|u| units.as_slice().contains(u)));
        if let Some(c) = held {
            return Ok(Some(c.name));
        }
        let claim = Claim { owner, name, units };
        match claims.iter_mut().find(|c| c.is_none()) {
            Some(hole) => *hole = Some(claim),
            None => claims.push(Some(claim), GFP_KERNEL)?,
        }
        Ok(None)
    }

    /// Gives back what `owner`'s job held.
    fn release(&self, owner: usize) {
        let gone = self
            .claims
            .lock()
            .iter_mut()
            .find(|c| c.as_ref().is_some_and(|c| c.owner == owner))
            .and_then(Option::take);
        drop(gone);
    }
}

/// The sync state of an array.
#[pin_data]
pub struct SyncState {
    #[pin]
    ctl: Mutex<Ctl>,
    c: Counters,
    #[pin]
    barrier: Barrier,
}

impl SyncState {
    /// The state of a new array; `clean`: its members are known to agree.
    pub fn new(clean: bool) -> impl PinInit<Self> {
        pin_init!(Self {
            ctl <- new_mutex!(
                Ctl {
                    thread: None,
                    running: false,
                    requested: None,
                    frozen: false,
                    closing: false,
                },
                "rraid::sync_ctl"
            ),
            c: Counters {
                running: AtomicU8::new(0),
                delayed: AtomicBool::new(false),
                interrupt: AtomicBool::new(false),
                resync_point: AtomicU64::new(if clean { u64::MAX } else { 0 }),
                recovering: AtomicU64::new(0),
                replacing: AtomicU64::new(0),
                want_replace: AtomicU64::new(0),
                recovery_point: AtomicU64::new(0),
                kick_pending: AtomicBool::new(false),
                kick_queued: AtomicBool::new(false),
                auto_off: AtomicBool::new(false),
                done: AtomicU64::new(0),
                total: AtomicU64::new(0),
                mismatches: AtomicU64::new(0),
                speed_min: AtomicU32::new(0),
                speed_max: AtomicU32::new(0),
                speed: AtomicU64::new(0),
                events: AtomicU32::new(0),
            },
            barrier <- Barrier::new(),
        })
    }

    /// The write barrier.
    pub fn barrier(&self) -> &Barrier {
        &self.barrier
    }

    /// Whether member sectors below `end` are in sync.
    pub fn clean_below(&self, end: u64) -> bool {
        end <= self.c.resync_point.load(Ordering::Acquire)
    }

    /// The slots being recovered whose recovery has passed member sector `end`: they hold
    /// current data below it and take writes there.
    pub fn recovered_below(&self, end: u64) -> u64 {
        let rec = self.c.recovering.load(Ordering::Acquire);
        if rec != 0 && end <= self.c.recovery_point.load(Ordering::Acquire) {
            rec
        } else {
            0
        }
    }

    /// The devices being built (spares in their slots, replacements) hold current data below
    /// member sector `end`, so writes there must reach them from now on. RAID 4/5/6 have no
    /// barrier: they call this for each window while its stripe heads still keep writes out,
    /// since a write planned after the copy with the old point would skip the new device.
    pub(super) fn built_to(&self, end: u64) {
        self.c.recovery_point.fetch_max(end, Ordering::AcqRel);
    }

    /// The slots whose replacement is being built and has passed member sector `end`: writes
    /// there go to the replacement too.
    pub fn replaced_below(&self, end: u64) -> u64 {
        let rep = self.c.replacing.load(Ordering::Acquire);
        if rep != 0 && end <= self.c.recovery_point.load(Ordering::Acquire) {
            rep
        } else {
            0
        }
    }

    /// The slots whose replacement is being built.
    pub fn replacing(&self) -> u64 {
        self.c.replacing.load(Ordering::Acquire)
    }

    /// The slots asked to be replaced.
    pub fn want_replace(&self) -> u64 {
        self.c.want_replace.load(Ordering::Acquire)
    }

    /// Asks for slot `slot` to be replaced (`want`), or no longer.
    pub(super) fn set_want_replace(&self, slot: usize, want: bool) {
        if want {
            self.c.want_replace.fetch_or(1 << slot, Ordering::AcqRel);
        } else {
            self.c
                .want_replace
                .fetch_and(!(1 << slot), Ordering::AcqRel);
        }
    }

    /// A write to slot `slot`'s replacement failed: the replacement is given up (the member
    /// stays; another spare may try again). Any context.
    pub fn drop_replacing(&self, slot: usize) -> bool {
        let had = self
            .c
            .replacing
            .fetch_and(!(1u64 << slot), Ordering::AcqRel)
            & (1 << slot);
        self.want_kick();
        had != 0
    }

    /// The slots being recovered.
    pub fn recovering(&self) -> u64 {
        self.c.recovering.load(Ordering::Acquire)
    }

    /// Starts the recovery of the slots `slots` and the replacements of `repl` from member
    /// sector 0.
    pub(super) fn begin_recovery(&self, slots: u64, repl: u64) {
        self.c.recovery_point.store(0, Ordering::Release);
        self.c.recovering.store(slots, Ordering::Release);
        self.c.replacing.store(repl, Ordering::Release);
    }

    /// The recovery ran to its end: returns the slots it rebuilt and the slots whose
    /// replacement it built, which are no longer in progress.
    pub(super) fn end_recovery(&self) -> (u64, u64) {
        self.c.recovery_point.store(u64::MAX, Ordering::Release);
        (
            self.c.recovering.swap(0, Ordering::AcqRel),
            self.c.replacing.swap(0, Ordering::AcqRel),
        )
    }

    /// Slot `slot` failed while it was being recovered: the recovery of it is over.
    pub(super) fn drop_recovering(&self, slot: usize) -> bool {
        self.c
            .recovering
            .fetch_and(!(1u64 << slot), Ordering::AcqRel)
            & (1u64 << slot)
            != 0
    }

    /// Asks for a look at whether a recovery can start, from any context; the next task
    /// context that has the array calls [`Array::kick_if_needed`].
    pub fn want_kick(&self) {
        self.c.kick_pending.store(true, Ordering::Release);
    }

    /// A job could not read some data from any copy: resync and recovery wait for a change.
    pub(super) fn disable_auto(&self) {
        self.c.auto_off.store(true, Ordering::Release);
    }

    /// Something changed (a new device, a `sync_action` write): resync and recovery may start
    /// by themselves again.
    pub(super) fn enable_auto(&self) {
        self.c.auto_off.store(false, Ordering::Release);
    }

    /// Whether [`SyncState::want_kick`] was asked.
    pub fn kick_pending(&self) -> bool {
        self.c.kick_pending.load(Ordering::Acquire)
    }

    /// Whether a resync is still owed.
    pub fn needs_resync(&self) -> bool {
        self.c.resync_point.load(Ordering::Acquire) != u64::MAX
    }

    /// The running job.
    pub fn running(&self) -> Option<Action> {
        Action::from_code(self.c.running.load(Ordering::Acquire))
    }

    /// md's `sync_action`.
    pub fn action_name(&self) -> &'static str {
        if let Some(a) = self.running() {
            return a.name();
        }
        let c = self.ctl.lock();
        if c.frozen {
            "frozen"
        } else if let Some(a) = c.requested {
            a.name()
        } else if c.running && self.recovering() | self.replacing() != 0 {
            "recover"
        } else if c.running && self.needs_resync() {
            "resync"
        } else {
            "idle"
        }
    }

    /// Whether the running job waits for another array's on a shared unit (md's `delayed`).
    pub fn delayed(&self) -> bool {
        self.c.delayed.load(Ordering::Acquire)
    }

    /// md's `sync_completed`: `done / total`, or `None` when no job runs.
    pub fn completed(&self) -> Option<(u64, u64)> {
        self.running()?;
        Some((
            self.c.done.load(Ordering::Acquire),
            self.c.total.load(Ordering::Acquire),
        ))
    }

    /// md's `sync_speed`, KiB/s, or `None` when no job runs.
    pub fn speed(&self) -> Option<u64> {
        self.running()?;
        if self.delayed() {
            return Some(0);
        }
        Some(self.c.speed.load(Ordering::Relaxed))
    }

    /// Adds to `mismatch_cnt`.
    pub(super) fn count_mismatch(&self, sectors: u64) {
        self.c.mismatches.fetch_add(sectors, Ordering::Relaxed);
    }

    /// md's `mismatch_cnt`.
    pub fn mismatches(&self) -> u64 {
        self.c.mismatches.load(Ordering::Relaxed)
    }

    /// `sync_speed_min` (`max`: `sync_speed_max`): the limit and whether it is local.
    pub fn speed_limit(&self, max: bool) -> (u32, bool) {
        let (v, sys) = if max {
            (self.c.speed_max.load(Ordering::Relaxed), &SPEED_MAX_SYSTEM)
        } else {
            (self.c.speed_min.load(Ordering::Relaxed), &SPEED_MIN_SYSTEM)
        };
        let sys = sys.load(Ordering::Relaxed);
        if v == 0 {
            (sys, false)
        } else {
            (v, true)
        }
    }

    /// Sets a local limit, or the system one with 0.
    pub fn set_speed_limit(&self, max: bool, v: u32) {
        let slot = if max {
            &self.c.speed_max
        } else {
            &self.c.speed_min
        };
        slot.store(v, Ordering::Relaxed);
    }
}

/// Why a `sync_action` write was refused.
pub enum ActionError {
    /// A job runs, or a resync is owed first.
    Busy(&'static str),
    /// The level has no copies to compare.
    NoRedundancy,
    /// Not one of md's actions.
    Unknown,
}

/// Page buffers of one window: `members` rows of `pages` pages, and the bioset their bios
/// come from.
struct Window {
    rows: KVec<KVec<PageBuf>>,
    /// Sectors per compare block: md's `mismatch_cnt` unit (RAID 1: 64 KiB; RAID 10: the
    /// same, at most a chunk).
    block: u64,
    /// Per block of the last compare: the members that differ from row 0.
    bad: [u64; MAX_BLOCKS],
    set: Pin<KBox<BioSet<PageCtx>>>,
}

impl Window {
    /// `rows` rows of `pages` pages each, compared in blocks of `block` sectors.
    fn new(rows: usize, pages: usize, block: u64) -> Result<Self> {
        let mut v = KVec::with_capacity(rows, GFP_KERNEL)?;
        for _ in 0..rows {
            let mut row = KVec::with_capacity(pages, GFP_KERNEL)?;
            for _ in 0..pages {
                row.push(PageBuf::new(false)?, GFP_KERNEL)?;
            }
            v.push(row, GFP_KERNEL)?;
        }
        Ok(Self {
            rows: v,
            block,
            bad: [0; MAX_BLOCKS],
            set: KBox::pin_init(BioSet::new(4, true), GFP_KERNEL)?,
        })
    }
}

impl Array {
    /// The sync state.
    pub fn sync(&self) -> &SyncState {
        &self.sync
    }

    /// The space the sync thread walks: member sectors, but array sectors on RAID 10, whose
    /// windows go chunk by chunk through the forward map (md walks member space there when it
    /// recovers; the data written is the same).
    fn sync_sectors(&self) -> u64 {
        match &self.level {
            Level::Raid10(g) => g.array_sectors(),
            l => l.member_sectors(),
        }
    }

    /// Why `action` cannot run now, if so. Resync, check and repair compare or copy between
    /// members in sync: RAID 1 needs two, RAID 4/5/6 all (md skips a degraded one). Recovery
    /// needs a slot to rebuild and the data to rebuild it from.
    pub(super) fn cannot_sync(&self, action: Action) -> Option<&'static str> {
        let sync = self.in_sync().count_ones();
        match (action, &self.level) {
            (_, Level::Raid0(_)) => Some("no redundancy"),
            _ if self.is_broken() => Some("the array is broken"),
            (Action::Recover, _) if self.sync.recovering() | self.sync.replacing() == 0 => {
                Some("nothing to recover")
            }
            (Action::Recover, _) if sync == 0 => Some("no member in sync"),
            (Action::Recover, _) => None,
            (_, Level::Raid1(_)) if sync < 2 => Some("fewer than two members in sync"),
            (_, Level::Raid5(_) | Level::Raid10(_)) if self.degraded() > 0 => {
                Some("the array is degraded")
            }
            _ => None,
        }
    }

    /// The job to run next, if any, without starting it: a recovery (a slot out of sync and a
    /// spare to put there, or one interrupted), then an owed resync, then a requested check or
    /// repair. Called with `ctl` held.
    fn next_action(&self, c: &Ctl) -> Option<Action> {
        if c.frozen || c.closing {
            return None;
        }
        if self.sync.c.auto_off.load(Ordering::Acquire) {
            return c.requested;
        }
        if self.sync.recovering() | self.sync.replacing() != 0
            || self.spare_wanted()
            || self.replacement_wanted()
        {
            if self.level.redundancy(self.members.len()) > 0 && !self.is_broken() {
                return Some(Action::Recover);
            }
        }
        if self.sync.needs_resync() && self.cannot_sync(Action::Resync).is_none() {
            return Some(Action::Resync);
        }
        c.requested
    }

    /// Records a change to tell poll() waiters and udev about; any context. The next
    /// [`Array::flush_events`] tells them.
    pub fn note(&self, events: u32) {
        self.sync.c.events.fetch_or(events, Ordering::AcqRel);
        self.sync.want_kick();
    }

    /// Wakes the poll() waiters of the files that changed and sends the uevent. Task context.
    pub fn flush_events(&self) {
        let ev = self.sync.c.events.swap(0, Ordering::AcqRel);
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
            for (_, dir) in d.members.iter().flatten() {
                dir.notify(c_str!("state"));
            }
        }
        if ev & EV_UEVENT != 0 {
            parent.parent_change_event();
        }
    }

    /// [`Array::kick_if_needed`] for a request worker, as a job of its own if a kick was asked.
    /// A request worker never waits for `ctl`: the sync thread may hold it while it waits for
    /// I/O that this worker is next in line to handle (md never waits there for `nr_pending`).
    pub fn kick_later(self: Arc<Self>) {
        if !self.sync.kick_pending() || self.sync.c.kick_queued.swap(true, Ordering::AcqRel) {
            return;
        }
        let wq = self.wq;
        if let Err(Kick(a)) = spawn(&wq, Kick(self)) {
            // No memory: the next request's worker tries again.
            a.sync.c.kick_queued.store(false, Ordering::Release);
        }
    }

    /// Starts the thread if [`SyncState::want_kick`] was asked (a member failed, a spare came),
    /// and tells of changes noted since the last time.
    pub fn kick_if_needed(self: &Arc<Self>) {
        self.flush_events();
        if self.sync.c.kick_pending.swap(false, Ordering::AcqRel) {
            let mut c = self.sync.ctl.lock();
            if let Err(e) = self.kick(&mut c) {
                pr_err!("{}: sync thread not started ({:?})\n", self.name(), e);
            }
        }
    }

    /// The buffers of a job, and the member sectors it syncs at once.
    fn sync_buffers(&self, action: Action) -> Result<(Window, u64)> {
        match (&self.level, self.stripes()) {
            // Two scratch pages for the parity read; the stripe heads hold the data. Eight
            // windows at once, within one barrier bucket (both are powers of two).
            (Level::Raid5(_), Some(st)) => Ok((Window::new(1, 2, 0)?, st.window_sectors() * 8)),
            _ => {
                let (copies, chunk) = match &self.level {
                    Level::Raid10(g) => (g.copies(), g.chunk_sectors()),
                    _ => (self.members.len(), u64::MAX),
                };
                let rows = match action {
                    Action::Resync | Action::Recover => 1,
                    _ => copies,
                };
                // md's compare unit; windows never cross a RAID 10 chunk, whose copies each
                // lie in one piece on their members.
                let block = BLOCK_SECTORS.min(chunk);
                let block_pages = (block as usize * 512).div_ceil(PAGE_BYTES).max(1);
                let max_pages = (chunk.min(MAX_BLOCKS as u64 * block) as usize * 512)
                    .div_ceil(PAGE_BYTES)
                    .max(1);
                // 1 MiB over all rows, whole blocks, and a power of two: a RAID 10 window maps
                // only its first sector, so it must divide the chunk (3 or 5 rows would give
                // 80 or 48 pages, and the next window would run past its chunk's end).
                let pages = (WINDOW_BYTES / PAGE_BYTES / rows.max(1)).clamp(block_pages, max_pages);
                let pages = 1usize << pages.ilog2();
                Ok((
                    Window::new(rows, pages, block)?,
                    (pages * PAGE_BYTES / 512) as u64,
                ))
            }
        }
    }

    /// Starts the thread if there is work and none runs. Called with `ctl` held.
    fn kick(self: &Arc<Self>, c: &mut Ctl) -> Result {
        if c.running || self.next_action(c).is_none() {
            return Ok(());
        }
        // Reap the last thread, which has returned or is about to (it set `running` false).
        drop(c.thread.take());
        let name = CString::try_from_fmt(fmt!("{}_sync", self.name()))?;
        c.thread = Some(Thread::spawn(&name, self.clone(), Array::sync_thread)?);
        c.running = true;
        Ok(())
    }

    /// Starts the resync a new array owes, if any.
    pub fn start_sync(self: &Arc<Self>) -> Result {
        let mut c = self.sync.ctl.lock();
        self.kick(&mut c)
    }

    /// Stops the thread for good, waiting for it: the array is going away.
    pub fn stop_sync(&self) {
        let thread = {
            let mut c = self.sync.ctl.lock();
            c.closing = true;
            self.sync.c.interrupt.store(true, Ordering::Release);
            c.thread.take()
        };
        drop(thread);
    }

    /// A write to `sync_action`.
    pub fn sync_action(self: &Arc<Self>, cmd: &str) -> Result<(), ActionError> {
        let mut c = self.sync.ctl.lock();
        if cmd != "frozen" {
            self.sync.enable_auto();
        }
        match cmd {
            "idle" => {
                // Stops a check or repair; a resync owed starts again from its point, as md's.
                c.frozen = false;
                c.requested = None;
                if self.sync.running().is_some() {
                    self.sync.c.interrupt.store(true, Ordering::Release);
                }
            }
            "frozen" => {
                c.frozen = true;
                c.requested = None;
                self.sync.c.interrupt.store(true, Ordering::Release);
            }
            "check" | "repair" => {
                if matches!(self.level, Level::Raid0(_)) {
                    return Err(ActionError::NoRedundancy);
                }
                if let Some(why) = self.cannot_sync(Action::Check) {
                    return Err(ActionError::Busy(why));
                }
                if c.frozen {
                    return Err(ActionError::Busy("array is frozen"));
                }
                if c.running || c.requested.is_some() {
                    return Err(ActionError::Busy("a sync is running"));
                }
                if self.sync.needs_resync() {
                    return Err(ActionError::Busy("a resync is owed first"));
                }
                c.requested = Some(if cmd == "check" {
                    Action::Check
                } else {
                    Action::Repair
                });
            }
            // md takes these and starts what is needed; nothing else is.
            "resync" | "recover" => {}
            _ => return Err(ActionError::Unknown),
        }
        self.kick(&mut c)
            .map_err(|_| ActionError::Busy("cannot start the thread"))
    }

    /// The thread: runs jobs until none is left.
    fn sync_thread(&self) {
        loop {
            let action = {
                let mut c = self.sync.ctl.lock();
                let mut next = if kthread::should_stop() {
                    None
                } else {
                    self.next_action(&c)
                };
                if next == c.requested {
                    c.requested = None;
                }
                if next == Some(Action::Recover) && !self.start_recovery() {
                    next = None;
                }
                match next {
                    Some(a) => {
                        self.sync.c.interrupt.store(false, Ordering::Release);
                        // Not the last job's figures while this one waits to start.
                        self.sync.c.done.store(0, Ordering::Release);
                        self.sync
                            .c
                            .total
                            .store(self.sync_sectors(), Ordering::Release);
                        self.sync.c.running.store(a.code(), Ordering::Release);
                        a
                    }
                    None => {
                        c.running = false;
                        return;
                    }
                }
            };
            self.note(EV_SYNC | EV_UEVENT);
            self.flush_events();
            if self.wait_units(action) {
                self.run_job(action);
                self.units.release(self.owner_id());
            }
            self.sync.c.running.store(0, Ordering::Release);
            self.note(EV_SYNC | EV_STATE | EV_UEVENT);
            self.flush_events();
        }
    }

    /// This array as the owner of a [`Units`] claim.
    fn owner_id(&self) -> usize {
        self as *const Self as usize
    }

    /// The physical units of every device the array has in its slots now (members, spares
    /// taking a slot, replacements).
    fn units_now(&self) -> Result<KVec<usize>> {
        let mut units = KVec::with_capacity(self.members.len() * 2, GFP_KERNEL)?;
        for m in self.members.iter() {
            for d in [m.dev.get(), m.replacement.get()].into_iter().flatten() {
                units.push(d.unit(), GFP_KERNEL)?;
            }
        }
        Ok(units)
    }

    /// Waits until no other array's job holds a unit of this array's members (md's "delaying
    /// resync ... they share one or more physical units"), then claims them. Returns false when
    /// the job was interrupted meanwhile. Without memory to compare units, the job runs
    /// unclaimed rather than not at all.
    fn wait_units(&self, action: Action) -> bool {
        let mut told: Option<ArrayName> = None;
        let claimed = loop {
            if kthread::should_stop() || self.sync.c.interrupt.load(Ordering::Acquire) {
                break false;
            }
            let held = match self.units_now() {
                Ok(units) => self.units.claim(self.owner_id(), self.name, units),
                Err(e) => Err(e),
            };
            let other = match held {
                Ok(Some(other)) => other,
                Ok(None) | Err(_) => break true,
            };
            if told != Some(other) {
                pr_info!(
                    "{}: delaying {} until {} has finished (they share one or more physical units)\n",
                    self.name(),
                    action.desc(),
                    other.as_str()
                );
                told = Some(other);
            }
            if !self.sync.c.delayed.swap(true, Ordering::AcqRel) {
                self.note(EV_SYNC);
                self.flush_events();
            }
            kthread::sleep_ms(100);
        };
        if self.sync.c.delayed.swap(false, Ordering::AcqRel) {
            self.note(EV_SYNC);
            self.flush_events();
        }
        claimed
    }

    /// One job over the whole member space.
    fn run_job(&self, action: Action) {
        let total = self.sync_sectors();
        let start = match action {
            Action::Resync => self.sync.c.resync_point.load(Ordering::Acquire).min(total),
            Action::Recover => self
                .sync
                .c
                .recovery_point
                .load(Ordering::Acquire)
                .min(total),
            _ => 0,
        };
        self.sync.c.total.store(total, Ordering::Release);
        self.sync.c.done.store(start, Ordering::Release);
        self.sync.c.speed.store(0, Ordering::Relaxed);
        if matches!(action, Action::Check | Action::Repair) {
            self.sync.c.mismatches.store(0, Ordering::Relaxed);
        }
        pr_info!(
            "{}: {} of {} KiB per member started at {} KiB\n",
            self.name(),
            action.desc(),
            total / 2,
            start / 2
        );
        let (mut win, step) = match self.sync_buffers(action) {
            Ok(w) => w,
            Err(e) => {
                pr_err!(
                    "{}: {} not started: no memory for its buffers ({:?})\n",
                    self.name(),
                    action.desc(),
                    e
                );
                return;
            }
        };
        let mut marks = [Mark::default(); MARKS];
        let t0 = kthread::now_ns();
        marks.fill(Mark {
            ns: t0,
            done: start,
        });
        let mut next_mark = 0;
        let mut last_ns = 0;
        let mut pos = start;
        let mut ok = true;
        let mut aborted = false;
        while pos < total {
            if kthread::should_stop() || self.sync.c.interrupt.load(Ordering::Acquire) {
                ok = false;
                break;
            }
            if let Some(why) = self.cannot_sync(action) {
                pr_warn!("{}: {} stopped: {}\n", self.name(), action.desc(), why);
                ok = false;
                break;
            }
            self.throttle(&marks, pos, last_ns);
            let n = step.min(total - pos).min(bucket_end(pos) - pos);
            let b = bucket(pos);
            let t = kthread::now_ns();
            self.sync.barrier.raise(b);
            let done = self.sync_window(action, pos, n, &mut win);
            // The points only ever cover what was written.
            match (done, action) {
                (Err(()), _) => {}
                (Ok(()), Action::Resync) => {
                    self.sync.c.resync_point.store(pos + n, Ordering::Release)
                }
                (Ok(()), Action::Recover) => self.sync.built_to(pos + n),
                _ => {}
            }
            self.sync.barrier.lower(b);
            if done.is_err() {
                ok = false;
                aborted = true;
                break;
            }
            last_ns = kthread::now_ns().saturating_sub(t);
            pos += n;
            self.sync.c.done.store(pos, Ordering::Release);
            // Marks: one a second; the throttle measures from the oldest kept.
            let now = kthread::now_ns();
            if now.saturating_sub(marks[next_mark].ns) >= MARK_NS {
                next_mark = (next_mark + 1) % MARKS;
                marks[next_mark] = Mark { ns: now, done: pos };
            }
        }
        if ok && action == Action::Resync {
            self.sync.c.resync_point.store(u64::MAX, Ordering::Release);
        }
        if ok && action == Action::Recover {
            self.finish_recovery();
        }
        if aborted {
            // Where the job stopped: RAID 4/5/6 windows may have moved the point further.
            let at = match action {
                Action::Recover => self.sync.c.recovery_point.load(Ordering::Acquire),
                Action::Resync => self.sync.c.resync_point.load(Ordering::Acquire),
                _ => pos,
            };
            pr_err!(
                "{}: {} aborted at member sector {}: {}\n",
                self.name(),
                action.desc(),
                at.min(total),
                self.cannot_sync(action)
                    .unwrap_or("no copy of the data there could be read")
            );
            match action {
                Action::Recover => self.abort_recovery(at.min(total)),
                Action::Resync => self.sync.disable_auto(),
                _ => {}
            }
        }
        let secs = kthread::now_ns().saturating_sub(t0) / 1_000_000_000;
        if ok {
            pr_info!(
                "{}: {} done in {} s, {} mismatched sectors\n",
                self.name(),
                action.desc(),
                secs,
                self.sync.mismatches()
            );
        } else {
            pr_info!(
                "{}: {} interrupted at {} KiB per member\n",
                self.name(),
                action.desc(),
                pos / 2
            );
        }
    }

    /// The throttle: above `sync_speed_min`, the job sleeps while it runs faster than
    /// `sync_speed_max`; and while other I/O is in flight to the members it yields as long as
    /// its last window took (`last_ns`), so it works half the time. md instead falls to
    /// `sync_speed_min` under any load; this keeps a rebuild going at about half its idle speed
    /// while the foreground still gets the members half the time.
    fn throttle(&self, marks: &[Mark; MARKS], pos: u64, last_ns: u64) {
        let (min, _) = self.sync.speed_limit(false);
        let (max, _) = self.sync.speed_limit(true);
        let mut yielded = false;
        loop {
            if kthread::should_stop() || self.sync.c.interrupt.load(Ordering::Acquire) {
                return;
            }
            // The oldest mark is the smallest time: measure from it.
            let oldest = marks
                .iter()
                .min_by_key(|m| m.ns)
                .copied()
                .unwrap_or_default();
            let dt = kthread::now_ns().saturating_sub(oldest.ns).max(1);
            let speed = ((pos - oldest.done.min(pos)) / 2).saturating_mul(1_000_000_000) / dt;
            let busy = self.members.iter().any(|m| m.dev.load() > 0);
            if busy && !yielded && speed > u64::from(min) {
                kthread::sleep_us(last_ns / 1000);
                yielded = true;
                continue;
            }
            if speed <= u64::from(min) || speed <= u64::from(max) {
                // `sync_speed` is what the throttle let through.
                self.sync.c.speed.store(speed, Ordering::Relaxed);
                return;
            }
            kthread::sleep_ms(5);
        }
    }

    /// Syncs `[pos, pos + n)` of the sync space ([`Array::sync_sectors`]), inside one raised
    /// bucket.
    /// `Err` when the window could not be done (no copy of some of it could be read, or the
    /// array can no longer sync): the job stops there.
    fn sync_window(&self, action: Action, pos: u64, n: u64, win: &mut Window) -> Result<(), ()> {
        let mut copies = [(0usize, 0u64); MAX_COPIES];
        let k = match (&self.level, self.stripes()) {
            (Level::Raid1(g), _) => {
                let at = g.map(pos);
                for (m, c) in copies.iter_mut().enumerate().take(self.members.len()) {
                    *c = (m, at);
                }
                self.members.len().min(MAX_COPIES)
            }
            (Level::Raid10(g), _) => {
                let mut k = 0;
                for (slot, r) in copies.iter_mut().zip(g.map(pos)) {
                    *slot = (r.member, r.sector);
                    k += 1;
                }
                k
            }
            (Level::Raid5(_), Some(st)) => {
                let scratch = win.rows.first_mut().ok_or(())?;
                return st.sync_range(self, action, pos, n, scratch);
            }
            _ => return Err(()),
        };
        self.copies_window(action, copies.get(..k).unwrap_or(&[]), n, win)
    }

    /// Mirrors (RAID 1 members, RAID 10 copies of a chunk), `copies` being each copy's member
    /// and member sector: a resync reads the first in-sync copy and writes the others, a
    /// recovery writes it to the copies being rebuilt; check and repair read every in-sync
    /// copy and compare each block with the first.
    ///
    /// A copy that fails a read is rewritten from one that did not (md's
    /// `fix_sync_read_error`), and fails only when that write fails. When no copy can be read,
    /// the window is not done: `Err`, and the job stops before it.
    fn copies_window(
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
                let rec = self.sync.recovering() & !sync;
                let rep = self.sync.replacing() & sync;
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
            self.sync
                .c
                .mismatches
                .fetch_add(len * u64::from(bad.count_ones()), Ordering::Relaxed);
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
                    self.sync.drop_replacing(m);
                }
            }
            io.wait();
            io.failed_replacements()
        });
        for m in bits(failed) {
            if self.sync.drop_replacing(m) {
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

/// A queued [`Array::kick_if_needed`].
struct Kick(Arc<Array>);

impl Job for Kick {
    fn run(self) {
        self.0.sync.c.kick_queued.store(false, Ordering::Release);
        self.0.kick_if_needed();
    }
}
