//! The sync thread's throttle: `sync_speed_min` and `_max` (md's), and its share of the
//! members under other I/O.

use crate::raid::Array;
use crate::sys::kthread;
use core::sync::atomic::Ordering;

/// Speed marks: sectors done at a time, one a second.
#[derive(Clone, Copy, Default)]
pub(super) struct Mark {
    pub(super) ns: u64,
    pub(super) done: u64,
}
/// Speed marks kept: the speed is measured over the last `MARKS`, one a second.
pub(super) const MARKS: usize = 10;
/// One mark a second.
pub(super) const MARK_NS: u64 = 1_000_000_000;

/// How the next window shares the machine with other I/O, as the throttle decides.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Share {
    /// No other I/O: the window may take every CPU the level can use.
    Alone,
    /// Other I/O in flight and the job above `sync_speed_min`: one CPU, at nice 19.
    Beside,
    /// Other I/O in flight and the job at or below `sync_speed_min`: one CPU, at nice 0, so
    /// that the minimum holds however busy the CPUs are.
    Min,
}

impl Array {
    /// The throttle: above `sync_speed_min`, the job sleeps while it runs faster than
    /// `sync_speed_max`. While other I/O is in flight to the members, it runs each window on
    /// the sync thread alone and at nice 19 ([`Share::Beside`]), so that the I/O keeps a CPU to
    /// itself and the job takes what CPU time the I/O leaves. md instead falls to
    /// `sync_speed_min` under any load. Yielding half the time (as long as the last window
    /// took) with both CPUs in each window kept a rebuild at 0.36-0.49 of its idle speed, and
    /// the load's p99 at 4-8× its healthy one, in `make bench-rebuild`.
    ///
    /// `seen` is the count of requests started when the last window began (or the throttle last
    /// slept): any started since, or any member I/O in flight, is other I/O. (Member I/O in
    /// flight alone missed most of a load that completes in the submitter's context, brd's:
    /// half the windows took both CPUs.)
    pub(super) fn throttle(&self, marks: &[Mark; MARKS], pos: u64, seen: &mut u64) -> Share {
        loop {
            // Read afresh each time: a limit written meanwhile counts at once.
            let (min, _) = self.sync.speed_limit(false);
            let (max, _) = self.sync.speed_limit(true);
            // The oldest mark is the smallest time: measure from it.
            let oldest = marks
                .iter()
                .min_by_key(|m| m.ns)
                .copied()
                .unwrap_or_default();
            let dt = kthread::now_ns().saturating_sub(oldest.ns).max(1);
            let speed = ((pos - oldest.done.min(pos)) / 2).saturating_mul(1_000_000_000) / dt;
            let started = self.started.load(Ordering::Relaxed);
            let busy = started != *seen || self.members.iter().any(|m| m.dev.load() > 0);
            let stop = kthread::should_stop() || self.sync.c.interrupt.load(Ordering::Acquire);
            if stop || speed <= u64::from(min) || speed <= u64::from(max) {
                // `sync_speed` is what the throttle let through.
                self.sync.c.speed.store(speed, Ordering::Relaxed);
                *seen = started;
                return match (busy, speed <= u64::from(min)) {
                    (false, _) => Share::Alone,
                    (true, false) => Share::Beside,
                    (true, true) => Share::Min,
                };
            }
            // Measured afresh over each sleep: at a low `sync_speed_max` a window and its
            // sleeps last seconds, and a load that ended in them would hold the next window
            // back from the other CPUs.
            *seen = started;
            kthread::sleep_ms(5);
        }
    }
}
