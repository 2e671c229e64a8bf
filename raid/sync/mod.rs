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
//! compared and written (the level contract's `sync_window`).
//!
//! Arrays whose members share a physical unit (partitions of one disk) sync one at a time, as
//! md's: a job waits, `delayed`, while another array's job holds one of its units ([`Units`]).

mod barrier;
mod thread;
mod throttle;
mod units;
mod window;

pub use barrier::{Barrier, Entered};
pub use units::Units;
pub use window::Window;
pub(crate) use window::{BLOCK_SECTORS, MAX_BLOCKS, MAX_COPIES, WINDOW_BYTES};

use crate::raid::Array;
use crate::sys::kthread::Thread;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use kernel::{new_mutex, prelude::*, sync::Mutex};

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
    pub(crate) fn desc(self) -> &'static str {
        match self {
            Self::Resync => "resync",
            Self::Recover => "recovery",
            Self::Check => "data-check",
            Self::Repair => "requested-resync",
        }
    }

    pub(crate) fn code(self) -> u8 {
        match self {
            Self::Resync => 1,
            Self::Check => 2,
            Self::Repair => 3,
            Self::Recover => 4,
        }
    }

    pub(crate) fn from_code(c: u8) -> Option<Self> {
        match c {
            1 => Some(Self::Resync),
            2 => Some(Self::Check),
            3 => Some(Self::Repair),
            4 => Some(Self::Recover),
            _ => None,
        }
    }
}

/// The system limits (md's `dev.raid.speed_limit_min` and `_max`, KiB/s), which arrays follow
/// unless given their own: `/sys/kernel/rraid/speed_limit_min` and `_max`. md's defaults.
pub static SPEED_MIN_SYSTEM: AtomicU32 = AtomicU32::new(1000);
/// See [`SPEED_MIN_SYSTEM`].
pub static SPEED_MAX_SYSTEM: AtomicU32 = AtomicU32::new(200_000);

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
    /// The recovery copies only what the write-intent bitmap marks (every slot it rebuilds
    /// was re-added, md's `Bitmap_sync`, and no replacement is built).
    bitmap_rec: AtomicBool,
    /// Slots re-added (their device back in them) that the next recovery rebuilds from the
    /// bitmap.
    readd: AtomicU64,
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
    /// The state of a new array whose members agree below member sector `resync_point`
    /// (`u64::MAX`: everywhere).
    pub fn new(resync_point: u64) -> impl PinInit<Self> {
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
                resync_point: AtomicU64::new(resync_point),
                recovering: AtomicU64::new(0),
                replacing: AtomicU64::new(0),
                want_replace: AtomicU64::new(0),
                recovery_point: AtomicU64::new(0),
                bitmap_rec: AtomicBool::new(false),
                readd: AtomicU64::new(0),
                kick_pending: AtomicBool::new(false),
                kick_queued: AtomicBool::new(false),
                auto_off: AtomicBool::new(false),
                done: AtomicU64::new(0),
                total: AtomicU64::new(0),
                mismatches: AtomicU64::new(0),
                speed_min: AtomicU32::new(0),
                speed_max: AtomicU32::new(0),
                speed: AtomicU64::new(0),
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
    pub(crate) fn built_to(&self, end: u64) {
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
    pub(crate) fn set_want_replace(&self, slot: usize, want: bool) {
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

    /// Whether the running (or next) recovery copies only the chunks the bitmap marks.
    pub fn bitmap_recovery(&self) -> bool {
        self.c.bitmap_rec.load(Ordering::Acquire)
    }

    /// Slot `slot`'s device came back (md's re-add): the next recovery rebuilds it from the
    /// bitmap.
    pub(crate) fn mark_readd(&self, slot: usize) {
        self.c.readd.fetch_or(1 << slot, Ordering::AcqRel);
        self.want_kick();
    }

    /// The slots re-added since the last recovery began.
    pub(crate) fn take_readd(&self) -> u64 {
        self.c.readd.swap(0, Ordering::AcqRel)
    }

    /// The slots re-added and waiting for their recovery.
    pub(crate) fn readd_pending(&self) -> u64 {
        self.c.readd.load(Ordering::Acquire)
    }

    /// Starts the recovery of the slots `slots` and the replacements of `repl` from member
    /// sector 0; `bitmap`: only what the bitmap marks.
    pub(crate) fn begin_recovery(&self, slots: u64, repl: u64, bitmap: bool) {
        self.c.bitmap_rec.store(bitmap, Ordering::Release);
        self.c.recovery_point.store(0, Ordering::Release);
        self.c.recovering.store(slots, Ordering::Release);
        self.c.replacing.store(repl, Ordering::Release);
    }

    /// The recovery ran to its end: returns the slots it rebuilt and the slots whose
    /// replacement it built, which are no longer in progress.
    pub(crate) fn end_recovery(&self) -> (u64, u64) {
        self.c.recovery_point.store(u64::MAX, Ordering::Release);
        self.c.bitmap_rec.store(false, Ordering::Release);
        (
            self.c.recovering.swap(0, Ordering::AcqRel),
            self.c.replacing.swap(0, Ordering::AcqRel),
        )
    }

    /// Slot `slot` failed while it was being recovered: the recovery of it is over.
    pub(crate) fn drop_recovering(&self, slot: usize) -> bool {
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
    pub(crate) fn disable_auto(&self) {
        self.c.auto_off.store(true, Ordering::Release);
    }

    /// Something changed (a new device, a `sync_action` write): resync and recovery may start
    /// by themselves again.
    pub(crate) fn enable_auto(&self) {
        self.c.auto_off.store(false, Ordering::Release);
    }

    /// Whether [`SyncState::want_kick`] was asked.
    pub fn kick_pending(&self) -> bool {
        self.c.kick_pending.load(Ordering::Acquire)
    }

    /// md's `resync_offset` (`recovery_cp`): where the resync is, `u64::MAX` (md's
    /// `MaxSector`) once the members agree.
    pub fn resync_offset(&self) -> u64 {
        self.c.resync_point.load(Ordering::Acquire)
    }

    /// How far the devices being rebuilt (or built as replacements) hold current data: md's
    /// `recovery_offset` of each.
    pub fn rebuild_offset(&self) -> u64 {
        let p = self.c.recovery_point.load(Ordering::Acquire);
        if p == u64::MAX {
            0
        } else {
            p
        }
    }

    /// An interrupted rebuild found at assembly: slots `slots` and the replacements of `repl`
    /// hold current data below member sector `point`, and the recovery goes on from there.
    pub(crate) fn resume_recovery(&self, slots: u64, repl: u64, point: u64, bitmap: bool) {
        self.c
            .bitmap_rec
            .store(bitmap && repl == 0, Ordering::Release);
        self.c.recovery_point.store(point, Ordering::Release);
        self.c.recovering.store(slots, Ordering::Release);
        self.c.replacing.store(repl, Ordering::Release);
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
    pub(crate) fn count_mismatch(&self, sectors: u64) {
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

impl Array {
    /// The sync state.
    pub fn sync(&self) -> &SyncState {
        &self.sync
    }
}
