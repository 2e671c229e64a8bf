//! Devices of an array beyond its slots: spares and faulty devices taken out of their slot, as
//! md's rdevs (their sysfs directories are in `attrs`). `new_dev` adds a spare; the sync thread
//! puts spares into slots that are out of sync and rebuilds them (`recover`); `remove` lets a
//! faulty device or a spare go.

use crate::plan::bits;
use crate::raid::{Array, Role, EV_STATE, EV_UEVENT};
use crate::sys::member::MemberDev;
use core::sync::atomic::Ordering;
use kernel::{fmt, prelude::*, str::CString, sync::Arc};

/// A device of the array that is in no slot.
pub struct Spare {
    /// The open device.
    pub dev: MemberDev,
    /// Taken out of its slot after it failed (md's faulty rdev), or marked faulty as a spare:
    /// never used again, kept until `remove`.
    pub faulty: bool,
    /// The slot a faulty device left (md's `saved_raid_disk`): `re-add` puts it back there.
    pub slot: Option<usize>,
}

impl Spare {
    /// A device to use: a spare.
    fn new(dev: MemberDev) -> Self {
        Self {
            dev,
            faulty: false,
            slot: None,
        }
    }

    /// A faulty device that left slot `slot`, which `re-add` may put it back into.
    fn left(dev: MemberDev, slot: usize) -> Self {
        Self {
            dev,
            faulty: true,
            slot: Some(slot),
        }
    }
}

impl Array {
    /// md's `dev-NAME/state` for a device.
    pub fn state_of(&self, role: Role) -> &'static str {
        let want = self.sync().want_replace();
        match role {
            Role::Slot(s) if self.in_sync() & (1 << s) != 0 && want & (1 << s) != 0 => {
                "in_sync,want_replacement"
            }
            Role::Slot(s) if self.in_sync() & (1 << s) != 0 => "in_sync",
            Role::Replacement(s) if self.sync().replacing() & (1 << s) != 0 => "spare,replacement",
            Role::Replacement(_) => "faulty,replacement",
            Role::Slot(s) if self.sync().recovering() & (1 << s) != 0 => "spare",
            Role::Slot(_) | Role::Spare { faulty: true } => "faulty",
            Role::Spare { faulty: false } => "spare",
        }
    }

    /// md's `new_dev`, first half: opens `MAJOR:MINOR` (or, an rraid extension, a device path)
    /// to be a spare, if the array can take it ([`Array::add_spare`] adds it).
    pub fn open_spare(&self, spec: &str) -> Result<MemberDev, (Error, &'static str)> {
        let dev = match spec.split_once(':') {
            Some((ma, mi)) if !spec.starts_with('/') => {
                let (Ok(ma), Ok(mi)) = (ma.parse::<u32>(), mi.parse::<u32>()) else {
                    return Err((EINVAL, "not MAJOR:MINOR or a device path"));
                };
                MemberDev::open_devt(ma, mi, &self.holder)
            }
            _ if spec.starts_with('/') => {
                let path = CString::try_from_fmt(fmt!("{spec}")).map_err(|e| (e, "no memory"))?;
                MemberDev::open(&path, &self.holder)
            }
            _ => return Err((EINVAL, "not MAJOR:MINOR or a device path")),
        }
        .map_err(|e| {
            let why = if e == ENOMEM {
                "no memory"
            } else {
                "cannot open the device (missing, or in use)"
            };
            (e, why)
        })?;
        if self.role_of(dev.devt()).is_some() {
            return Err((EBUSY, "the device is in the array already"));
        }
        if dev.zoned() {
            return Err((EINVAL, "zoned devices are not supported"));
        }
        let need = self.level.member_sectors() + self.level.data_offset();
        if dev.sectors() < need {
            return Err((ENOSPC, "the device is smaller than a member"));
        }
        if self.level.redundancy(self.members.len()) == 0 {
            return Err((EINVAL, "RAID 0 has no spares"));
        }
        self.admit(&dev)?;
        Ok(dev)
    }

    /// md's `new_dev`, second half: `dev`, opened by [`Array::open_spare`] and given its
    /// directory, becomes a spare; a recovery may start.
    pub fn add_spare(self: &Arc<Self>, dev: MemberDev) -> Result<(), (Error, &'static str)> {
        if let Some(m) = self.meta() {
            // A member of this array coming back (under any name): md's re-add.
            let reconfig = self.reconfig.lock();
            let busy = self.in_sync() | self.sync().recovering() | self.sync().readd_pending();
            if let Some(slot) = m.returning(self, &dev, busy)? {
                pr_info!(
                    "{}: {} comes back to slot {}\n",
                    self.name(),
                    dev.name(),
                    slot
                );
                // Linked once `reconfig` is released: linking takes the freezer lock, which a
                // recovery holds while it takes `reconfig`.
                let devt = dev.devt();
                if let Err(e) = self.put_back(dev, slot) {
                    m.forget(devt);
                    return Err(e);
                }
                drop(reconfig);
                if let Some(d) = self.members.get(slot).and_then(|m| m.dev.get()) {
                    self.link_dev(&d);
                }
                self.sync().enable_auto();
                self.sync().mark_readd(slot);
                self.note(EV_STATE | EV_UEVENT);
                self.kick_if_needed();
                return Ok(());
            }
            drop(reconfig);
            m.add_dev(&dev, self.level.data_offset()).map_err(|e| {
                let why = if e == ENOSPC {
                    "no room for its superblock or data"
                } else if e == ENOMEM {
                    "no memory"
                } else {
                    "cannot clear its old superblocks"
                };
                (e, why)
            })?;
        }
        self.link_dev(&dev);
        let devt = dev.devt();
        let put = self.spares.lock().try_put(Spare::new(dev));
        if let Err(sp) = put {
            if let Some(m) = self.meta() {
                m.forget(devt);
            }
            // Unlinked and closed, as a removed spare.
            self.release_dev(Some(sp.dev));
            return Err((ENOMEM, "no memory"));
        }
        self.with_dev(devt, |d| {
            pr_info!("{}: added spare {}\n", self.name(), d.name())
        });
        self.note(EV_STATE);
        // A new device is the change an aborted recovery waits for.
        self.sync().enable_auto();
        self.sync().want_kick();
        self.kick_if_needed();
        Ok(())
    }

    /// md's failfast metadata writes (`md_super_write`): device `dev` in slot `slot` is marked
    /// failfast, the level mirrors (RAID 1, 10), and the array survives without it (it is not
    /// md's `LastDev`).
    pub(crate) fn meta_failfast(&self, dev: &MemberDev, slot: usize) -> bool {
        dev.failfast()
            && self.level.takes_failfast()
            && self
                .level
                .survives(self.in_sync() & !(1u64 << slot), self.members.len())
    }

    /// Whether device `devt` is marked failfast.
    pub fn failfast_of(&self, devt: u32) -> bool {
        self.with_dev(devt, |d| d.failfast()).unwrap_or(false)
    }

    /// `failfast` / `-failfast` written to a device's state (md's): its mirror bios may fail
    /// fast from now on, and its superblock records it (`devflags`). RAID 4/5/6 take the flag
    /// and ignore it, as md.
    pub fn set_failfast(&self, devt: u32, on: bool) -> Result<(), (Error, &'static str)> {
        self.with_dev(devt, |d| d.set_failfast(on))
            .ok_or((ENODEV, "not a device of the array"))?;
        if let Some(m) = self.meta() {
            m.set_failfast(devt, on);
            m.flush(self);
        }
        Ok(())
    }

    /// Adds `dev` as a spare, as assembly found it.
    pub(crate) fn put_spare(&self, dev: MemberDev) -> Result {
        self.spares.lock().put(Spare::new(dev))
    }

    /// Runs `f` on device `devt` of the array, wherever it is (slot, replacement, spare).
    pub(crate) fn with_dev<R>(&self, devt: u32, f: impl FnOnce(&MemberDev) -> R) -> Option<R> {
        for m in self.members.iter() {
            for d in [m.dev.get(), m.replacement.get()].into_iter().flatten() {
                if d.devt() == devt {
                    return Some(f(&d));
                }
            }
        }
        let sp = self.spares.lock();
        let r = sp.iter().find(|s| s.dev.devt() == devt).map(|s| f(&s.dev));
        r
    }

    /// Runs `f` on every device of the array: slots, replacements, spares.
    pub(crate) fn for_each_dev(&self, mut f: impl FnMut(&MemberDev) -> Result) -> Result {
        for m in self.members.iter() {
            for d in [m.dev.get(), m.replacement.get()].into_iter().flatten() {
                f(&d)?;
            }
        }
        for s in self.spares.lock().iter() {
            f(&s.dev)?;
        }
        Ok(())
    }

    /// `remove` written to a device's state: a spare or a faulty device leaves the array and
    /// is released, as md's. An in-sync member, or one being recovered, is refused.
    pub fn remove_dev(&self, devt: u32) -> Result<(), (Error, &'static str)> {
        let reconfig = self.reconfig.lock();
        // Closed once `reconfig` is released: closing takes the device's `open_mutex`, which is
        // taken before I/O, and a recovery takes `reconfig` with the array's queue frozen.
        let gone: Option<MemberDev> = match self
            .role_of(devt)
            .ok_or((ENODEV, "not a device of the array"))?
        {
            Role::Replacement(s) => {
                if self.sync().replacing() & (1 << s) != 0 {
                    return Err((
                        EBUSY,
                        "the replacement is being built: mark it faulty first",
                    ));
                }
                let slot = self.members.get(s).ok_or((ENODEV, "no such slot"))?;
                slot.replacement
                    .replace(None)
                    .map_err(|e| (e, "no memory"))?
            }
            Role::Slot(s) => {
                if (self.in_sync() | self.sync().recovering()) & (1 << s) != 0 {
                    return Err((EBUSY, "the device is in use: mark it faulty first"));
                }
                let slot = self.members.get(s).ok_or((ENODEV, "no such slot"))?;
                // Waits for I/O still in flight to it; none new can start.
                slot.dev.replace(None).map_err(|e| (e, "no memory"))?
            }
            // Spares hold no I/O.
            Role::Spare { .. } => self
                .spares
                .lock()
                .take(|s| s.dev.devt() == devt)
                .map(|s| s.dev),
        };
        drop(reconfig);
        if let Some(m) = self.meta() {
            m.forget(devt);
        }
        // Unlinked (the array disk's `open_mutex`) and closed outside `reconfig` too.
        self.release_dev(gone);
        self.note(EV_STATE);
        Ok(())
    }

    /// md's `re-add`, written to a faulty device's state: the device goes back into the slot
    /// it left (it is still there, or that slot has no device in use), and the next recovery
    /// rebuilds it from the write-intent bitmap: only the chunks written while it was out
    /// (without a bitmap, all of it). Refused (`EBUSY`, as md) for any other device.
    pub fn readd(&self, devt: u32) -> Result<(), (Error, &'static str)> {
        let _reconfig = self.reconfig.lock();
        let busy = |s: usize| (self.in_sync() | self.sync().recovering()) & (1 << s) != 0;
        let slot = match self.role_of(devt) {
            Some(Role::Slot(s)) if !busy(s) => s,
            Some(Role::Spare { faulty: true }) => {
                let saved = self
                    .spares
                    .lock()
                    .iter()
                    .find(|x| x.dev.devt() == devt)
                    .and_then(|x| x.slot);
                let s = saved.ok_or((EBUSY, "the device knows no slot to go back to"))?;
                if busy(s) {
                    return Err((EBUSY, "its slot has another member now"));
                }
                self.take_back(devt, s)?;
                s
            }
            _ => return Err((EBUSY, "only a faulty device can be re-added")),
        };
        self.sync().enable_auto();
        self.sync().mark_readd(slot);
        self.note(EV_STATE | EV_UEVENT);
        Ok(())
    }

    /// Puts the spare `devt` into slot `s`. Called with `reconfig` held.
    fn take_back(&self, devt: u32, s: usize) -> Result<(), (Error, &'static str)> {
        let back = self
            .spares
            .lock()
            .take(|x| x.dev.devt() == devt)
            .ok_or((ENODEV, "not a device of the array"))?;
        self.put_back(back.dev, s)
    }

    /// Puts `dev` into slot `s`, whose device (faulty, unused) goes to the spares as faulty.
    /// Called with `reconfig` held.
    fn put_back(&self, dev: MemberDev, s: usize) -> Result<(), (Error, &'static str)> {
        let m = self.members.get(s).ok_or((ENODEV, "no such slot"))?;
        let old = match m.dev.replace(Some(dev)) {
            Ok(old) => old,
            Err(_) => return Err((ENOMEM, "no memory")),
        };
        if let Some(old) = old {
            let _ = self.spares.lock().put(Spare::left(old, s));
        }
        Ok(())
    }

    /// `faulty` written to a spare's state: it is never used, and stays until `remove`.
    pub fn fail_spare(&self, devt: u32) {
        let mut sp = self.spares.lock();
        if let Some(s) = sp.find_mut(|s| s.dev.devt() == devt) {
            s.faulty = true;
        }
    }

    /// `want_replacement` written to a member's state: a spare (now or when one comes) is built
    /// as its replacement while it serves, then takes its slot (md's). `-want_replacement`
    /// withdraws the wish.
    pub fn want_replacement(&self, slot: usize, want: bool) -> Result<(), (Error, &'static str)> {
        if want && self.in_sync() & (1 << slot) == 0 {
            return Err((EBUSY, "only a member in sync can be replaced"));
        }
        self.sync().set_want_replace(slot, want);
        self.note(EV_STATE);
        Ok(())
    }

    /// `faulty` written to a replacement's state: it is given up.
    pub fn fail_replacement(&self, slot: usize) {
        if self.sync().drop_replacing(slot) {
            pr_warn!(
                "{}: replacement for slot {} marked faulty\n",
                self.name(),
                slot
            );
        }
        self.note(EV_STATE);
    }

    /// Whether a member in sync wants a replacement and a spare could be it.
    pub(crate) fn replacement_wanted(&self) -> bool {
        let want = self.sync().want_replace() & self.in_sync() & !self.sync().replacing();
        want != 0 && self.spares.lock().iter().any(|s| !s.faulty)
    }

    /// Moves a replacement given up out of its slot's place, to the spares: as faulty when its
    /// member still serves (the replacement failed, or was marked faulty), as a spare when the
    /// member itself failed (the device is sound; it is rebuilt into the slot from the start).
    fn retire_replacements(&self) {
        for (s, m) in self.members.iter().enumerate() {
            if self.sync().replacing() & (1 << s) != 0 || !m.replacement.is_some() {
                continue;
            }
            let faulty = self.in_sync() & (1 << s) != 0;
            if let Ok(Some(dev)) = m.replacement.replace(None) {
                // A replacement never held its slot's data: it knows no slot for `re-add`,
                // which would rebuild only the bitmap's chunks over a half-built copy.
                let _ = self.spares.lock().put(Spare {
                    dev,
                    faulty,
                    slot: None,
                });
            }
        }
    }

    /// A recovery that cannot go on (no copy, or not enough of the stripe, can be read at
    /// member sector `at`): the devices being rebuilt leave their slots as spares, not in sync,
    /// and no recovery starts again by itself until something changes (md's
    /// `recovery_disabled`: a new spare, a `sync_action` write). Sync thread only.
    pub(crate) fn abort_recovery(&self, at: u64) {
        let reconfig = self.reconfig.lock();
        let (rec, rep) = self.sync().end_recovery();
        self.sync().disable_auto();
        for s in bits(rec) {
            let Some(m) = self.members.get(s) else {
                continue;
            };
            if let Ok(Some(dev)) = m.dev.replace(None) {
                pr_err!(
                    "{}: recovery aborted: sector {} of slot {} cannot be read from any \
                     member; {} is a spare again, not in sync\n",
                    self.name(),
                    at,
                    s,
                    dev.name()
                );
                let _ = self.spares.lock().put(Spare::new(dev));
            }
        }
        for s in bits(rep) {
            let Some(m) = self.members.get(s) else {
                continue;
            };
            if let Ok(Some(dev)) = m.replacement.replace(None) {
                pr_err!(
                    "{}: replacement aborted: sector {} of slot {} cannot be read; {} is a \
                     spare again\n",
                    self.name(),
                    at,
                    s,
                    dev.name()
                );
                let _ = self.spares.lock().put(Spare::new(dev));
            }
        }
        drop(reconfig);
        self.note(EV_STATE | EV_UEVENT);
    }

    /// Whether a slot is out of sync and a spare could take it.
    pub(crate) fn spare_wanted(&self) -> bool {
        let open = self.failed_set() & !self.sync().recovering();
        open != 0 && self.spares.lock().iter().any(|s| !s.faulty)
    }

    /// Puts spares into the slots out of sync, the faulty devices there going to the spare
    /// list as faulty, and starts their recovery from 0; or goes on with one interrupted.
    /// Returns whether there is a recovery to run. Sync thread only.
    pub(crate) fn start_recovery(&self) -> bool {
        if self.sync().recovering() | self.sync().replacing() != 0 {
            return true;
        }
        let _reconfig = self.reconfig.lock();
        self.retire_replacements();
        // Re-added devices are in their slots already (unless removed since).
        let mut readd = self.sync().take_readd() & self.failed_set();
        for s in bits(readd) {
            if !self.members.get(s).is_some_and(|m| m.dev.is_some()) {
                readd &= !(1 << s);
            }
        }
        let mut taken = readd;
        for s in bits(readd) {
            if let Some(m) = self.members.get(s) {
                m.errors.store(0, Ordering::Relaxed);
            }
            self.with_name(s, |name| {
                pr_info!("{}: {} re-added to slot {}\n", self.name(), name, s)
            });
        }
        for s in bits(self.failed_set() & !readd) {
            let spare = self.spares.lock().take(|x| !x.faulty);
            let Some(spare) = spare else { break };
            let Some(slot) = self.members.get(s) else {
                break;
            };
            let name = CString::try_from_fmt(fmt!("{}", spare.dev.name()));
            // The slot's faulty device has no I/O left to wait for once failed.
            let old = match slot.dev.replace(Some(spare.dev)) {
                Ok(old) => old,
                Err(_) => break,
            };
            if let Ok(name) = &name {
                pr_info!(
                    "{}: {} takes slot {}{}\n",
                    self.name(),
                    name.to_str().unwrap_or("?"),
                    s,
                    if old.is_some() {
                        " from a faulty member"
                    } else {
                        ""
                    }
                );
            }
            if let Some(old) = old {
                // Kept, as md keeps a faulty rdev, until `remove`.
                let _ = self.spares.lock().put(Spare::left(old, s));
            }
            if let Some(m) = self.members.get(s) {
                m.errors.store(0, Ordering::Relaxed);
            }
            taken |= 1 << s;
        }
        let mut repl = 0u64;
        for s in bits(self.sync().want_replace() & self.in_sync() & !taken) {
            let Some(m) = self.members.get(s) else { break };
            if m.replacement.is_some() {
                continue;
            }
            let Some(spare) = self.spares.lock().take(|x| !x.faulty) else {
                break;
            };
            let name = CString::try_from_fmt(fmt!("{}", spare.dev.name()));
            if m.replacement.replace(Some(spare.dev)).is_err() {
                break;
            }
            if let Ok(name) = &name {
                pr_info!(
                    "{}: {} is being built as the replacement of slot {}\n",
                    self.name(),
                    name.to_str().unwrap_or("?"),
                    s
                );
            }
            repl |= 1 << s;
        }
        if taken | repl == 0 {
            return false;
        }
        self.note(EV_STATE);
        // Only re-added devices: the bitmap says what they missed (md's `Bitmap_sync`).
        let from_bitmap = readd != 0 && taken == readd && repl == 0 && self.bitmap().is_some();
        self.sync().begin_recovery(taken, repl, from_bitmap);
        true
    }

    /// Sets (or clears) what holds the array's I/O off while a replacement takes its slot.
    pub fn set_freezer(&self, f: Option<crate::sys::disk::Freezer>) {
        let old = core::mem::replace(&mut *self.freezer.lock(), f);
        drop(old);
    }

    /// A recovery ran to its end: the rebuilt slots are in sync, and replacements take their
    /// slots with the array's I/O held off, so that no write goes to the old device only.
    pub(crate) fn finish_recovery(&self) {
        let f = self.freezer.lock();
        match f.as_ref() {
            Some(f) => f.frozen(|| self.finish_recovery_quiet()),
            None => self.finish_recovery_quiet(),
        }
    }

    fn finish_recovery_quiet(&self) {
        let _reconfig = self.reconfig.lock();
        // The rebuilt slots go in sync before they stop recovering: a superblock written in
        // between records them active, never faulty, and a member failing in between is seen
        // by `fail_member` in one state or the other. One that failed while still recovering
        // (only that bit was dropped) goes out of sync again.
        let rebuilt = self.sync().recovering();
        self.in_sync.fetch_or(rebuilt, Ordering::AcqRel);
        let (done, replaced) = self.sync().end_recovery();
        let failed = rebuilt & !done;
        if failed != 0 {
            self.in_sync.fetch_and(!failed, Ordering::AcqRel);
        }
        for s in bits(replaced) {
            let Some(m) = self.members.get(s) else {
                continue;
            };
            // The replacement takes the slot, its cache flushed first (array flushes did not
            // reach it); the device it replaces goes faulty, as md's.
            if let Some(r) = m.replacement.get() {
                if r.flush().is_err() {
                    pr_err!(
                        "{}: flush of slot {}'s replacement failed\n",
                        self.name(),
                        s
                    );
                }
            }
            let Ok(Some(new)) = m.replacement.replace(None) else {
                continue;
            };
            match m.dev.replace(Some(new)) {
                Ok(Some(old)) => {
                    pr_info!(
                        "{}: slot {} replaced; {} is faulty\n",
                        self.name(),
                        s,
                        old.name()
                    );
                    let _ = self.spares.lock().put(Spare::left(old, s));
                }
                Ok(None) => {}
                Err(_) => pr_err!(
                    "{}: slot {}: no memory to swap in its replacement\n",
                    self.name(),
                    s
                ),
            }
            m.errors.store(0, Ordering::Relaxed);
            self.sync().set_want_replace(s, false);
        }
        pr_info!(
            "{}: recovery done, {} of {} members in sync\n",
            self.name(),
            self.members.len() - self.degraded(),
            self.members.len()
        );
    }
}
