//! The sync thread: md's `md_do_sync` for rraid. One kernel thread per array (`rraidN_sync`),
//! started when there is work and gone when there is none, runs one job at a time in windows
//! (see the module above); what it starts next, its throttle, and the claims on shared units.

use super::barrier::{bucket, bucket_end};
use super::{Action, ActionError, Ctl};
use crate::raid::{Array, ArrayName, EV_STATE, EV_SYNC, EV_UEVENT};
use crate::sys::kthread::{self, Thread};
use crate::sys::noio;
use crate::sys::workqueue::{spawn, Job};
use core::sync::atomic::Ordering;
use kernel::{fmt, prelude::*, str::CString, sync::Arc};

use super::throttle::{Mark, Share, MARKS, MARK_NS};

impl Array {
    /// Why `action` cannot run now, if so. Resync, check and repair compare or copy between
    /// members in sync: RAID 1 needs two, RAID 4/5/6 all (md skips a degraded one). Recovery
    /// needs a slot to rebuild and the data to rebuild it from.
    pub(crate) fn cannot_sync(&self, action: Action) -> Option<&'static str> {
        let sync = self.in_sync().count_ones();
        if self.level.redundancy(self.members.len()) == 0 {
            return Some("no redundancy");
        }
        if self.is_broken() {
            return Some("the array is broken");
        }
        match action {
            Action::Recover if self.sync.recovering() | self.sync.replacing() == 0 => {
                Some("nothing to recover")
            }
            Action::Recover if sync == 0 => Some("no member in sync"),
            Action::Recover => None,
            _ => self.level.cannot_compare(sync, self.degraded()),
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
            || self.sync.readd_pending() & self.failed_set() != 0
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
                if self.level.redundancy(self.members.len()) == 0 {
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
                            .store(self.level.sync_sectors(), Ordering::Release);
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

    /// Whether `action` copies only what the write-intent bitmap marks: a resync, and a
    /// recovery of re-added devices.
    fn bitmap_guided(&self, action: Action) -> bool {
        self.bitmap().is_some()
            && match action {
                Action::Resync => true,
                Action::Recover => self.sync.bitmap_recovery(),
                _ => false,
            }
    }

    /// md's `md_bitmap_start_sync` for the window `[start, start + len)` of `action`, called
    /// with the window's writes kept out (its barrier bucket raised, or its stripe heads
    /// held): whether the window is clean in the bitmap and skipped. A window synced takes its
    /// chunks' marks on, unless the array stays degraded.
    pub(crate) fn bitmap_skips(&self, action: Action, start: u64, len: u64) -> bool {
        let Some(bm) = self.bitmap() else {
            return false;
        };
        let degraded = match action {
            Action::Recover => self.failed_set() & !self.sync.recovering() != 0,
            _ => self.degraded() > 0,
        };
        !bm.start_sync(start, len, degraded) && self.bitmap_guided(action)
    }

    /// One job over the whole member space.
    fn run_job(&self, action: Action) {
        let total = self.level.sync_sectors();
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
        let guided = self.bitmap_guided(action);
        let (mut win, step) = match self.level.sync_buffers(action, self.members.len(), guided) {
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
        // At nice 19 while the throttle says `Beside`.
        let mut niced = false;
        let mut seen = self.started.load(Ordering::Relaxed);
        let mut pos = start;
        let mut ok = true;
        let mut aborted = false;
        // md records where a rebuild (and a clean array's resync) is at least every 1/16.
        let step16 = (total / 16).max(1);
        let mut next_ckpt = pos.saturating_add(step16);
        // md's `md_bitmap_start_sync`: a resync, and a recovery of re-added devices, copy only
        // the chunks the write-intent bitmap marks; every job moves the marks it covers on.
        let bitmap = self.bitmap();
        let chunk = bitmap.map_or(1, |b| b.chunk_sectors());
        // Chunks below `ended` are done with (their marks ended).
        let mut ended = pos & !(chunk - 1);
        let mut skipped = 0u64;
        while pos < total {
            if pos >= next_ckpt && matches!(action, Action::Resync | Action::Recover) {
                next_ckpt = pos.saturating_add(step16);
                if let Some(m) = self.meta() {
                    m.checkpoint(self);
                }
            }
            if kthread::should_stop() || self.sync.c.interrupt.load(Ordering::Acquire) {
                ok = false;
                break;
            }
            if let Some(why) = self.cannot_sync(action) {
                pr_warn!("{}: {} stopped: {}\n", self.name(), action.desc(), why);
                ok = false;
                break;
            }
            let n = step.min(total - pos).min(bucket_end(pos) - pos);
            let b = bucket(pos);
            // Marks are read with the bucket raised: a write in flight there has ended and
            // marked what it missed, and the next one maps after the points moved. RAID 4/5/6
            // read them under each window's stripe heads instead.
            if bitmap.is_some() && !self.level.syncs_in_stripes() {
                if guided {
                    self.sync.barrier.raise(b);
                    let skip = self.bitmap_skips(action, pos, n);
                    if skip {
                        match action {
                            Action::Resync => {
                                self.sync.c.resync_point.store(pos + n, Ordering::Release)
                            }
                            _ => self.sync.built_to(pos + n),
                        }
                    }
                    self.sync.barrier.lower(b);
                    if skip {
                        pos += n;
                        skipped += n;
                        self.sync.c.done.store(pos, Ordering::Release);
                        continue;
                    }
                } else {
                    self.bitmap_skips(action, pos, n);
                }
            }
            let share = self.throttle(&marks, pos, &mut seen);
            if (share == Share::Beside) != niced {
                niced = !niced;
                kthread::set_nice(if niced { 19 } else { 0 });
            }
            self.sync.barrier.raise(b);
            let live = self.in_sync() | self.sync.recovering();
            win.solo = share != Share::Alone;
            // With the bucket raised, reclaim must not write to the array: a write there would
            // wait for this window (md's resync allocates with GFP_NOIO).
            let done = noio(|| self.level.sync_window(self, action, pos, n, &mut win));
            // md's `abort_sync_write`: a member that left during the window (a sync write
            // failed, or any other error) may lack it: its chunks stay needed.
            if let Some(bm) = bitmap {
                if (self.in_sync() | self.sync.recovering()) & live != live {
                    bm.end_sync(pos, n, true);
                }
            }
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
            pos += n;
            if let Some(bm) = bitmap {
                let to = if pos >= total {
                    total
                } else {
                    pos & !(chunk - 1)
                };
                if to > ended {
                    bm.end_sync(ended, to - ended, false);
                    ended = to;
                }
            }
            self.sync.c.done.store(pos, Ordering::Release);
            // Marks: one a second; the throttle measures from the oldest kept.
            let now = kthread::now_ns();
            if now.saturating_sub(marks[next_mark].ns) >= MARK_NS {
                next_mark = (next_mark + 1) % MARKS;
                marks[next_mark] = Mark { ns: now, done: pos };
            }
        }
        if niced {
            kthread::set_nice(0);
        }
        if let Some(bm) = bitmap {
            if ended < total {
                bm.end_sync(ended, total - ended, !ok);
            }
            if skipped > 0 {
                pr_info!(
                    "{}: {}: {} KiB per member skipped, clean in the bitmap\n",
                    self.name(),
                    action.desc(),
                    skipped / 2
                );
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
        if matches!(action, Action::Resync | Action::Recover) {
            if let Some(m) = self.meta() {
                m.checkpoint(self);
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
}

/// A queued [`Array::kick_if_needed`].
struct Kick(Arc<Array>);

impl Job for Kick {
    fn run(self) {
        self.0.sync.c.kick_queued.store(false, Ordering::Release);
        self.0.kick_if_needed();
    }
}
