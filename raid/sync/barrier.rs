//! The write barrier against the sync thread: md's `wait_barrier`/`raise_barrier`, per 64 MiB
//! bucket of member space. The thread raises a bucket and waits until no write in it is in
//! flight; writes to a raised bucket wait in [`Barrier::enter`]; writes elsewhere go on.

use crate::sys::kthread;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{
    new_condvar, new_mutex,
    prelude::*,
    sync::{CondVar, Mutex},
};

/// md's barrier unit: 64 MiB of member space.
const BUCKET_SHIFT: u32 = 17;
/// Barrier buckets per array; member space is hashed onto them, as md does.
const BUCKETS: usize = 1024;

/// The bucket of member sector `sector`.
pub(super) fn bucket(sector: u64) -> usize {
    ((sector >> BUCKET_SHIFT) % BUCKETS as u64) as usize
}

/// The first member sector of the bucket after the one `sector` is in.
pub(super) fn bucket_end(sector: u64) -> u64 {
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
    pub(super) fn new() -> impl PinInit<Self> {
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
        self.enter_buckets(first, last)
    }

    /// As [`Barrier::enter`], over buckets `first..=last` (a [`Barrier::hold`]'s range, for a
    /// write sent again). Task context.
    pub fn enter_buckets(&self, first: u64, last: u64) -> Entered<'_> {
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

    /// As [`Barrier::enter`], without waiting: `None` when the sync thread holds a bucket of
    /// the range or writes wait for one (they go first), and then nothing is counted. Any
    /// context.
    pub fn try_enter(&self, start: u64, len: u64) -> Option<Entered<'_>> {
        let (first, last) = bucket_range(start, len);
        for b in first..=last {
            let i = (b % BUCKETS as u64) as usize;
            // Counted first, then looked at, as in `enter`.
            self.pending[i].fetch_add(1, Ordering::SeqCst);
            if self.raised[i].load(Ordering::SeqCst) != 0
                || self.waiting[i].load(Ordering::SeqCst) != 0
            {
                self.release(first, b);
                return None;
            }
        }
        Some(Entered {
            barrier: self,
            first,
            last,
        })
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
    pub(super) fn raise(&self, i: usize) {
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
    pub(super) fn lower(&self, i: usize) {
        self.raised[i].fetch_sub(1, Ordering::SeqCst);
        let _g = self.lock.lock();
        self.lowered.notify_all();
    }
}
