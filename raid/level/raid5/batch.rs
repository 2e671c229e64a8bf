//! A worker round's RAID 4/5/6 operations: gathered by window, so that adjacent writes that
//! together cover a stripe become one full-stripe write, then run in groups as jobs on the
//! stripe queue.

use super::cache::{Stripes, MAX_COLS};
use super::io::drop_failed_replacements;
use super::op::{Piece, StripeOp, WriteState};
use crate::plan::{bits, Set};
use crate::raid::Array;
use crate::sys::pageio::PageIo;
use crate::sys::request::RqBio;
use crate::sys::workqueue::{spawn, Job};
use crate::sys::{backoff, noio, nr_cpus, BlkStatus};
use core::sync::atomic::Ordering;
use kernel::{prelude::*, sync::Arc};

/// Columns (a window's 4 KiB rows, [`StripeOp::columns`]) run by one job, at most this many: a
/// job's requests complete only when the whole group is done, and the request worker takes no
/// new round until its own share is. With 16 whole windows to a job, a round of 32 full stripes
/// ended in two bursts, the submitter refilled in a burst while the other CPU idled (15 % idle
/// against md's 5 % on 4-member RAID 6); four windows keep requests completing as they go.
/// Counted by columns, not operations, so that small writes (one column each) still share a
/// job's two waits by the dozen.
const GROUP_COLS: u32 = 4 * MAX_COLS as u32;

/// Operations run by one job, at most this many: their reads go out together, then their
/// writes, so a job waits twice however many it carries.
const GROUP_MAX: usize = 16;

/// Room a round's batch makes at its first operation: a round gathers more operations than a
/// group of whole windows holds (rounds of random 4K writes carry 15-20).
const BATCH_ROOM: usize = 16;

/// What an operation of columns `cols` counts towards [`GROUP_COLS`]: one per column, and at
/// least one, so that every operation counts.
fn weight(cols: u32) -> u32 {
    cols.count_ones().max(1)
}

/// Operations that hold their heads, run together by one job.
struct Group {
    ops: KVec<StripeOp>,
}

/// A worker round's last group, holding its heads, not started: the request worker runs it
/// itself once the round's frames are gone ([`Batch::dispatch_keep_last`]).
pub struct Tail(Group);

impl Tail {
    /// Runs the group here, as its job would. Nothing may wait for heads before this: the
    /// group holds them.
    pub fn run(self) {
        self.0.run();
    }
}

/// Makes room for one more element, and for `want` in all (one allocation where a vector would
/// otherwise grow from one), waiting out allocation failures: a request on the I/O path has no
/// way back, and memory returns as member I/O completes.
fn room<T>(v: &mut KVec<T>, want: usize) {
    let more = want.saturating_sub(v.len()).max(1);
    while v.reserve(more, GFP_KERNEL).is_err() {
        backoff();
    }
}

/// The operations of one worker round.
pub(super) struct Batch {
    ops: KVec<StripeOp>,
}

impl Batch {
    /// An empty batch.
    pub(super) fn new() -> Self {
        Self { ops: KVec::new() }
    }

    /// Adds `len` sectors of `src` from sector `skip` on, which land at `chunk_off` in the
    /// chunk of `member` in `stripe`, split by window.
    #[expect(clippy::too_many_arguments)]
    pub(super) fn add(
        &mut self,
        st: &Stripes,
        src: &RqBio<Array>,
        read: bool,
        bad: Set,
        stripe: u64,
        member: usize,
        mut chunk_off: u64,
        mut skip: u64,
        mut len: u64,
    ) -> Result {
        let fua = !read && src.request().fua();
        while len > 0 {
            let (unit, win, off) = st.window(stripe, chunk_off);
            let n = len.min(st.window_sectors() - off);
            let piece = Piece {
                src: src.clone_ref(),
                skip,
                member,
                off,
                len: n,
            };
            let found = self
                .ops
                .iter_mut()
                .rev()
                .take(64)
                .find(|o| o.unit == unit && o.read == read && o.bad == bad);
            match found {
                Some(op) => {
                    op.fua |= fua;
                    room(&mut op.pieces, 1);
                    op.pieces.push(piece, GFP_KERNEL)?;
                }
                None => {
                    let mut pieces = KVec::new();
                    room(&mut pieces, 1);
                    pieces.push(piece, GFP_KERNEL)?;
                    room(&mut self.ops, BATCH_ROOM);
                    self.ops.push(
                        StripeOp {
                            unit,
                            stripe,
                            win,
                            read,
                            fua,
                            bad,
                            pieces,
                            slot: None,
                        },
                        GFP_KERNEL,
                    )?;
                }
            }
            chunk_off += n;
            skip += n;
            len -= n;
        }
        Ok(())
    }

    /// Whether some write in the batch would have to read before writing, so that waiting
    /// for more requests might save the reads.
    pub(super) fn has_partial_writes(&self, st: &Stripes) -> bool {
        let data = st.geo.data();
        self.ops.iter().any(|op| {
            if op.read {
                return false;
            }
            let masks = op.masks();
            // A touched column is partial unless every data member overwrites it whole.
            (0..st.cols).any(|c| {
                let col = |m: &u128| (m >> (c * 8)) as u8;
                let touched = masks.iter().any(|m| col(m) != 0);
                let full = masks.iter().filter(|m| col(m) == 0xff).count();
                touched && full < data
            })
        })
    }

    /// Starts every operation: each takes its slot (waiting for one if needed) and runs as a
    /// job on the stripe queue, apart from the request workers that wait for heads here.
    ///
    /// Operations are grouped, one group per CPU and up to `GROUP_COLS` columns and `GROUP_MAX`
    /// operations to a job. Heads are taken without waiting while the group fills; when they
    /// cannot be (the window is busy, maybe with an earlier operation of this very group, or
    /// the cache is short), the group is started first, so that nothing waits on heads held by
    /// a group that was never started.
    pub(super) fn dispatch(self, st: &Stripes) {
        if let Some(mut tail) = self.dispatch_keep_last(st) {
            tail.0.start(st);
        }
    }

    /// [`Batch::dispatch`], but the last group is handed back unstarted, for the request
    /// worker to run once it has left the round's frames: saves a wakeup and a hand-off per
    /// round, as md's `raid5d` handles the stripes its own pass released.
    pub(super) fn dispatch_keep_last(self, st: &Stripes) -> Option<Tail> {
        // The round is shared out between the CPUs by the columns it carries: the worker runs
        // the last share itself while jobs run the others beside it, so one submitter's writes
        // use every CPU.
        let total: u32 = self.ops.iter().map(|op| weight(op.columns(st))).sum();
        let per = total.div_ceil(nr_cpus().max(1) as u32).clamp(1, GROUP_COLS);
        let n = self.ops.len();
        let mut group = Group { ops: KVec::new() };
        let mut carried = 0;
        for (i, mut op) in self.ops.into_iter().enumerate() {
            let cols = op.columns(st);
            let slot = match st.try_acquire(op.unit, cols) {
                Some(slot) => slot,
                None => {
                    group.start(st);
                    carried = 0;
                    st.acquire(op.unit, cols)
                }
            };
            op.slot = Some(slot);
            room(&mut group.ops, GROUP_MAX.min(n - i));
            // Room was made above: this push does not allocate, so cannot fail.
            let _ = group.ops.push(op, GFP_KERNEL);
            carried += weight(cols);
            // The last share stays for the worker.
            if (carried >= per || group.ops.len() >= GROUP_MAX) && i + 1 < n {
                group.start(st);
                carried = 0;
            }
        }
        // Never run here, below `hw_work` and the round's frames: a RAID 6 double-failure
        // write run from this frame overflowed the 16 KiB kernel stack (8ebfe4c, reverted in
        // bd982cd). The caller runs it from the request worker's top frame instead.
        (!group.ops.is_empty()).then_some(Tail(group))
    }
}

impl Default for Batch {
    fn default() -> Self {
        Self::new()
    }
}

impl Group {
    /// Hands the operations gathered so far to a job. Never run here: the request worker's
    /// stack holds the gathering already (the two overflowed 16 KiB together). Without memory
    /// for the work item, it tries again after a moment, as a mempool would wait.
    fn start(&mut self, st: &Stripes) {
        if self.ops.is_empty() {
            return;
        }
        let mut group = Group {
            ops: core::mem::take(&mut self.ops),
        };
        while let Err(g) = spawn(&st.wq, group) {
            group = g;
            crate::sys::kthread::sleep_ms(1);
        }
    }
}

impl Job for Group {
    fn run(mut self) {
        let Some(first) = self.ops.first().and_then(|op| op.pieces.first()) else {
            return;
        };
        // The pieces hold their requests, and the requests the array; this reference keeps
        // one request, and so the array, until the heads are back.
        let rq = first.src.request().clone();
        let array = rq.data();
        let Some(st) = array.level().stripe_cache() else {
            for op in self.ops.iter() {
                op.fail(BlkStatus::IOERR);
            }
            return;
        };
        noio(|| run_group(&array, st, &mut self.ops));
        for op in self.ops.iter_mut() {
            if let Some(slot) = op.slot.take() {
                st.release(op.unit, slot);
            }
        }
        // A member failed here: a spare may take its place.
        if array.sync().kick_pending() {
            Arc::from(array).kick_later();
        }
        // Dropping the operations drops their pieces, which completes requests whose last
        // piece this was.
    }
}

/// Runs a group's operations: reads of failed members' blocks one by one; writes in three
/// phases, all reads, all computing, all writes. A write whose reads failed starts over on its
/// own, re-planned around the failing member.
fn run_group(array: &Array, st: &Stripes, ops: &mut [StripeOp]) {
    let n = array.members().len();
    let nops = ops.len();
    let mut states: KVec<Option<WriteState>> = KVec::new();
    for op in ops.iter_mut() {
        room(&mut states, nops);
        let state = if op.read {
            op.run_alone(array, st);
            None
        } else {
            match op.plan_write(array, st, 0) {
                Ok(w) => Some(w),
                Err(status) => {
                    op.fail(status);
                    None
                }
            }
        };
        let _ = states.push(state, GFP_KERNEL);
    }
    // Reads of every write, together.
    let bad = group_io(array, st, ops, &states, false);
    if bad != Ok(0) {
        // Rare: a member failed a read. Each write then runs alone, re-planned.
        if let Ok(bad) = bad {
            for m in bits(bad) {
                array.count_error(m, None);
            }
        }
        for (op, w) in ops.iter_mut().zip(states.iter()) {
            if w.is_some() {
                op.run_alone(array, st);
            }
        }
        return;
    }
    for (op, w) in ops.iter_mut().zip(states.iter_mut()) {
        // Only writes that planned: taking the slot of any other operation here would lose it.
        let Some(state) = w.as_ref() else { continue };
        let Some(mut slot) = op.slot.take() else {
            continue;
        };
        let res = op.compute(st, state, &mut slot, n);
        op.slot = Some(slot);
        if let Err(status) = res {
            op.fail(status);
            *w = None;
        }
    }
    array.writes.fetch_add(1, Ordering::Acquire);
    let bad = group_io(array, st, ops, &states, true);
    array.writes.fetch_sub(1, Ordering::Release);
    for (op, w) in ops.iter().zip(states.iter()) {
        let Some(w) = w else { continue };
        let res = match bad {
            Ok(bad) => op.after_writes(array, st, bad & w.written_members(), w.rewrite),
            Err(status) => Err(status),
        };
        if let Err(status) = res {
            op.fail(status);
        }
    }
}

/// One phase of a group: the reads (or the writes) of every planned write, waited for together.
/// Returns the members whose I/O failed.
fn group_io(
    array: &Array,
    st: &Stripes,
    ops: &[StripeOp],
    states: &[Option<WriteState>],
    write: bool,
) -> Result<Set, BlkStatus> {
    let cols = st.cols.min(MAX_COLS);
    PageIo::batch(|io| {
        for (op, w) in ops.iter().zip(states.iter()) {
            let (Some(w), Some(slot)) = (w, op.slot.as_ref()) else {
                continue;
            };
            let sets = if write { w.writes() } else { w.reads() };
            op.submit(io, st, array, slot, &sets[..cols], write)?;
        }
        let bad = io.wait();
        drop_failed_replacements(array, io.failed_replacements());
        Ok(bad)
    })
}
