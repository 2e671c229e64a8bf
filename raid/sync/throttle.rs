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

impl Array {
    /// The throttle: above `sync_speed_min`, the job sleeps while it runs faster than
    /// `sync_speed_max`; and while other I/O is in flight to the members it yields as long as
    /// its last window took (`last_ns`), so it works half the time. md instead falls to
    /// `sync_speed_min` under any load; this keeps a rebuild going at about half its idle speed
    /// while the foreground still gets the members half the time.
    pub(super) fn throttle(&self, marks: &[Mark; MARKS], pos: u64, last_ns: u64) {
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
}
