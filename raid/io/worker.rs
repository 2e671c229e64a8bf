//! Which requests `queue_rq` hands to the worker although it could map them itself: a deep
//! submitter's, while some other CPU has no submitter of its own to keep busy.

use crate::raid::Array;
use crate::sys::request::InflightRequest;
use core::sync::atomic::Ordering;

/// Ticks between two bursts of small requests sent to the worker only to see whether their
/// submitter has more to send (about 200 ms at HZ=250, [`Array::small_to_worker`]). A request
/// on the worker waits for a wakeup that under TCG costs about as much as 30 inline 4K
/// requests, so probing one request in [`DEEP_PROBE`], as for large ones, cost a QD 1 stream
/// a third of its speed.
const SMALL_PROBE_TICKS: usize = 50;

/// Small requests in a probe: with fewer than three on the worker a deep queue never shows.
const SMALL_PROBE: u32 = 3;

/// Lone large requests after the last that overlapped, still sent to the worker.
const DEEP_EXIT: u32 = 8;

/// While large requests come one at a time, one in this many still goes to the worker.
const DEEP_PROBE: u32 = 64;

/// Ticks after its last read or write request that a CPU still counts as having a submitter
/// of its own (one or two ticks: 4-8 ms at HZ=250).
pub(crate) const SUBMITTER_TICKS: usize = 1;

impl Array {
    /// Records that hardware queue `q`'s CPU has a submitter now. The tick is stored only when
    /// it changed, so CPUs do not bounce the cache line on every request.
    pub(super) fn note_submitter(&self, q: usize) {
        if let Some(t) = self.submit_tick.get(q) {
            let now = crate::sys::jiffies();
            if t.load(Ordering::Relaxed) != now {
                t.store(now, Ordering::Relaxed);
            }
        }
    }

    /// Whether some CPU other than hardware queue `q`'s issued no read or write for
    /// [`SUBMITTER_TICKS`]: one the worker can have to itself.
    fn cpu_without_submitter(&self, q: usize) -> bool {
        let now = crate::sys::jiffies();
        self.submit_tick
            .iter()
            .enumerate()
            .any(|(i, t)| i != q && now.wrapping_sub(t.load(Ordering::Relaxed)) > SUBMITTER_TICKS)
    }

    /// Whether a request over [`INLINE_MAX_SECTORS`](super::INLINE_MAX_SECTORS) goes to the worker. Only an idle worker
    /// takes one, and only while some CPU has no submitter of its own: a busy worker would
    /// queue it behind its work, and where every CPU has a submitter the worker's CPU is
    /// taken from one of them, so the hand-off adds two context switches and overlaps
    /// nothing (RAID 0, 64K at QD 1, 4 jobs on 2 vCPUs: 1.4 context switches per request and
    /// 0.81-0.83 of md's speed while it was taken). So a deep submitter's requests are shared
    /// between its CPU and an otherwise idle one, and many shallow submitters keep their own
    /// CPUs. It takes one while large requests find others in flight, and for the first
    /// [`DEEP_EXIT`] after the last that did. Past that the submitter is taken to issue one at
    /// a time, and only every [`DEEP_PROBE`]th goes to the worker: members that complete in the
    /// submitter's context (brd) end an inline request before the next arrives, so only a
    /// request on the worker can show that the submitter had more to send. The counts are racy
    /// hints, never a correctness matter.
    pub(super) fn large_to_worker(&self, rq: &InflightRequest<Array>, worker_busy: bool) -> bool {
        let n = if self.rw_reqs.load(Ordering::Relaxed) > 1 {
            self.lone_large.store(0, Ordering::Relaxed);
            0
        } else {
            self.lone_large
                .fetch_add(1, Ordering::Relaxed)
                .wrapping_add(1)
        };
        !worker_busy
            && (n < DEEP_EXIT || n % DEEP_PROBE == 0)
            && self.cpu_without_submitter(rq.hw_queue())
    }

    /// Whether a request of at most [`INLINE_MAX_SECTORS`](super::INLINE_MAX_SECTORS) goes to the worker, busy or not:
    /// while more than two are in flight (two at a time only ping-pong with the worker: RAID 0
    /// 8K at QD 2 fell to 0.48 of md when two sufficed), for the [`DEEP_EXIT`] after the last
    /// time there were, and in a burst of [`SMALL_PROBE`] every [`SMALL_PROBE_TICKS`]; only
    /// while some CPU other than the submitter's has no submitter of its own. Mapped inline,
    /// one deep submitter's stream runs wholly on its CPU (brd copies there too) while the
    /// other idles: RAID 0 4K random reads at QD 32 left half of both CPUs idle, md's too, at
    /// 0.84 of md. On the worker the submitter only issues and reaps while the worker maps and
    /// copies beside it. Members that complete in the submitter's context end an inline request
    /// before the next arrives, so only requests on the worker show that more were coming:
    /// hence the probe. The counts are racy hints, never a correctness matter.
    pub(super) fn small_to_worker(&self, rq: &InflightRequest<Array>) -> bool {
        if !self.cpu_without_submitter(rq.hw_queue()) {
            return false;
        }
        // `lone_small`: 0 deep, up to `DEEP_EXIT` leaving it, then lone. Stored only when it
        // changes, so no shared line is written per inline request.
        let n = self.lone_small.load(Ordering::Relaxed);
        if self.rw_reqs.load(Ordering::Relaxed) > 2 {
            if n != 0 {
                self.lone_small.store(0, Ordering::Relaxed);
            }
            return true;
        }
        if n < DEEP_EXIT {
            self.lone_small.store(n + 1, Ordering::Relaxed);
            return true;
        }
        let now = crate::sys::jiffies();
        let last = self.small_probe.load(Ordering::Relaxed);
        if now.wrapping_sub(last) < SMALL_PROBE_TICKS
            || self
                .small_probe
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return false;
        }
        // This one and the next `SMALL_PROBE - 1` go: enough in flight to show a deep queue.
        self.lone_small
            .store(DEEP_EXIT + 1 - SMALL_PROBE, Ordering::Relaxed);
        true
    }
}
