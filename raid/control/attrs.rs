//! `/sys/block/rraidN/rraid/`: array and member status, in md's names and formats.

use super::parse::text;
use crate::raid::slots::Slots;
use crate::raid::sync::ActionError;
use crate::raid::{Array, Role};
use crate::sys::member::MemberDev;
use crate::sys::sysfs::{Attr, Buf, KobjRef, SysfsDir, SysfsOps};
use crate::sys::workqueue::{spawn, Job};
use crate::sys::LockKey;
use core::fmt::Write;
use core::sync::atomic::Ordering;
use kernel::{c_str, fmt, prelude::*, str::CString, sync::Arc};

fn emit(out: &mut Buf<'_>, args: core::fmt::Arguments<'_>) -> Result {
    out.write_fmt(args).map_err(|_| EINVAL)
}

const fn ro(name: &'static CStr) -> Attr {
    Attr {
        name,
        read: true,
        write: false,
    }
}

const fn wo(name: &'static CStr) -> Attr {
    Attr {
        name,
        read: false,
        write: true,
    }
}

pub(super) const fn rw(name: &'static CStr) -> Attr {
    Attr {
        name,
        read: true,
        write: true,
    }
}

/// The array directory.
pub struct ArrayAttrs {
    array: Arc<Array>,
}

impl ArrayAttrs {
    /// Status files of `array`.
    pub fn new(array: Arc<Array>) -> Self {
        Self { array }
    }
}

impl SysfsOps for ArrayAttrs {
    const ATTRS: &'static [Attr] = &[
        ro(c_str!("level")),
        ro(c_str!("chunk_size")),
        ro(c_str!("raid_disks")),
        ro(c_str!("array_state")),
        ro(c_str!("degraded")),
        ro(c_str!("component_size")),
        ro(c_str!("layout")),
        rw(c_str!("stripe_cache_size")),
        rw(c_str!("sync_action")),
        ro(c_str!("sync_completed")),
        ro(c_str!("sync_speed")),
        rw(c_str!("sync_speed_min")),
        rw(c_str!("sync_speed_max")),
        ro(c_str!("mismatch_cnt")),
        wo(c_str!("new_dev")),
        rw(c_str!("safe_mode_delay")),
        ro(c_str!("metadata_version")),
    ];

    fn lock_class() -> &'static LockKey {
        static KEY: LockKey = LockKey::new();
        &KEY
    }

    fn show(&self, idx: usize, out: &mut Buf<'_>) -> Result {
        let a = &self.array;
        match idx {
            0 => emit(out, format_args!("{}\n", a.level().name())),
            1 => emit(out, format_args!("{}\n", a.level().chunk_sectors() << 9)),
            2 => emit(out, format_args!("{}\n", a.members().len())),
            3 => emit(out, format_args!("{}\n", a.array_state())),
            4 => emit(out, format_args!("{}\n", a.degraded())),
            5 => emit(out, format_args!("{}\n", a.level().member_sectors() / 2)),
            6 => emit(out, format_args!("{}\n", a.level().layout())),
            // md has no stripe cache file on other levels; rraid shows 0 there.
            7 => emit(out, format_args!("{}\n", a.level().stripe_cache_size())),
            8 => emit(out, format_args!("{}\n", a.sync().action_name())),
            9 if a.sync().delayed() => emit(out, format_args!("delayed\n")),
            9 => match a.sync().completed() {
                Some((done, total)) => emit(out, format_args!("{done} / {total}\n")),
                None => emit(out, format_args!("none\n")),
            },
            10 => match a.sync().speed() {
                Some(kib) => emit(out, format_args!("{kib}\n")),
                None => emit(out, format_args!("none\n")),
            },
            11 | 12 => {
                let (v, local) = a.sync().speed_limit(idx == 12);
                let whose = if local { "local" } else { "system" };
                emit(out, format_args!("{v} ({whose})\n"))
            }
            15 => {
                let ms = a.meta().map_or(0, |m| m.safe_mode_ms());
                emit(out, format_args!("{}.{:03}\n", ms / 1000, ms % 1000))
            }
            16 => match a.meta() {
                Some(m) => emit(out, format_args!("{}\n", m.version().name())),
                None => emit(out, format_args!("none\n")),
            },
            _ => emit(out, format_args!("{}\n", a.sync().mismatches())),
        }
    }

    fn store(&self, idx: usize, input: &[u8]) -> Result {
        match idx {
            7 => self.store_cache_size(input),
            8 => self.store_action(input),
            11 | 12 => self.store_speed(idx == 12, input),
            14 => self.store_new_dev(input),
            15 => self.store_safe_mode(input),
            _ => Err(EINVAL),
        }
    }
}

impl ArrayAttrs {
    /// `new_dev`: md's `MAJOR:MINOR`, or a device path, added as a spare.
    fn store_new_dev(&self, input: &[u8]) -> Result {
        let name = self.array.name();
        let spec = text(input).map_err(|e| {
            pr_err!("{}: new_dev: {}\n", name, e.why);
            e.code
        })?;
        let added = self.array.open_spare(spec).and_then(|dev| {
            let devt = dev.devt();
            self.array.add_member_dir(&dev)?;
            // Refused after all (no room for its superblock, no memory): its directory goes.
            self.array
                .add_spare(dev)
                .inspect_err(|_| self.array.undo_member_dir(devt))
        });
        added.map_err(|(code, why)| {
            pr_err!("{}: new_dev {}: {}\n", name, spec, why);
            code
        })
    }

    /// `safe_mode_delay`: seconds with up to three decimals, as md's (`0.2`, `1`, `0.050`).
    fn store_safe_mode(&self, input: &[u8]) -> Result {
        let name = self.array.name();
        let v = text(input).map_err(|e| {
            pr_err!("{}: safe_mode_delay: {}\n", name, e.why);
            e.code
        })?;
        let (int, frac) = v.split_once('.').unwrap_or((v, ""));
        let ok = !int.is_empty()
            && int.len() <= 6
            && frac.len() <= 3
            && int.bytes().all(|b| b.is_ascii_digit())
            && frac.bytes().all(|b| b.is_ascii_digit());
        let ms = if ok {
            let scale = [1000u32, 100, 10, 1].get(frac.len()).copied().unwrap_or(1);
            let f = frac.parse::<u32>().unwrap_or(0) * scale;
            int.parse::<u32>().ok().map(|i| i * 1000 + f)
        } else {
            None
        };
        let Some(ms) = ms else {
            pr_err!(
                "{}: safe_mode_delay: not seconds (e.g. 0.200): {}\n",
                name,
                v
            );
            return Err(EINVAL);
        };
        match self.array.meta() {
            Some(m) => {
                m.set_safe_mode_ms(ms);
                Ok(())
            }
            None => {
                pr_err!("{}: safe_mode_delay: the array has no superblock\n", name);
                Err(EINVAL)
            }
        }
    }

    /// `sync_action`: `check`, `repair`, `idle`, `frozen` (and md's `resync`, `recover`).
    fn store_action(&self, input: &[u8]) -> Result {
        let name = self.array.name();
        let cmd = text(input).map_err(|e| {
            pr_err!("{}: sync_action: {}\n", name, e.why);
            e.code
        })?;
        let res = self.array.sync_action(cmd);
        self.array.flush_events();
        res.map_err(|e| match e {
            ActionError::Unknown => {
                pr_err!("{}: sync_action: unknown action '{}'\n", name, cmd);
                EINVAL
            }
            ActionError::Busy(why) => {
                pr_err!("{}: sync_action {}: {}\n", name, cmd, why);
                EBUSY
            }
            ActionError::NoRedundancy => {
                pr_err!(
                    "{}: sync_action {}: not supported on {}\n",
                    name,
                    cmd,
                    self.array.level().name()
                );
                EINVAL
            }
        })
    }

    /// `sync_speed_min`/`max`: KiB/s, or `system` (also 0) for md's default.
    fn store_speed(&self, max: bool, input: &[u8]) -> Result {
        let name = self.array.name();
        let file = if max {
            "sync_speed_max"
        } else {
            "sync_speed_min"
        };
        let v = text(input).map_err(|e| {
            pr_err!("{}: {}: {}\n", name, file, e.why);
            e.code
        })?;
        let n = if v == "system" {
            0
        } else {
            v.parse::<u32>().map_err(|_| {
                pr_err!("{}: {}: not a number of KiB/s: '{}'\n", name, file, v);
                EINVAL
            })?
        };
        self.array.sync().set_speed_limit(max, n);
        Ok(())
    }

    /// `stripe_cache_size`: the level's (md's RAID 4/5/6 own the file).
    fn store_cache_size(&self, input: &[u8]) -> Result {
        let name = self.array.name();
        let v = text(input).map_err(|e| {
            pr_err!("{}: stripe_cache_size: {}\n", name, e.why);
            e.code
        })?;
        self.array.level().store_stripe_cache_size(name, v)
    }
}

/// `bitmap/`: md 6.12's bitmap files, in md's formats; there without a bitmap too, where
/// `location` reads `none` (mdadm reads it).
pub struct BitmapAttrs {
    array: Arc<Array>,
}

impl BitmapAttrs {
    /// The bitmap files of `array`.
    pub fn new(array: Arc<Array>) -> Self {
        Self { array }
    }
}

impl SysfsOps for BitmapAttrs {
    const ATTRS: &'static [Attr] = &[
        ro(c_str!("location")),
        ro(c_str!("chunksize")),
        rw(c_str!("time_base")),
        ro(c_str!("backlog")),
        ro(c_str!("metadata")),
        rw(c_str!("can_clear")),
        ro(c_str!("space")),
        ro(c_str!("max_backlog_used")),
    ];

    fn lock_class() -> &'static LockKey {
        static KEY: LockKey = LockKey::new();
        &KEY
    }

    fn show(&self, idx: usize, out: &mut Buf<'_>) -> Result {
        let b = self.array.bitmap();
        match (idx, b) {
            (0, Some(b)) => emit(out, format_args!("{:+}\n", b.offset())),
            (0, None) => emit(out, format_args!("none\n")),
            (1, b) => emit(out, format_args!("{}\n", b.map_or(0, |b| b.chunk_bytes()))),
            (2, b) => emit(out, format_args!("{}\n", b.map_or(5, |b| b.daemon_sleep()))),
            (4, _) => emit(out, format_args!("internal\n")),
            (5, Some(b)) => emit(out, format_args!("{}\n", b.can_clear())),
            (5, None) => emit(out, format_args!("\n")),
            // md: no room to grow on 1.1/1.2; on 1.0 up to the superblock.
            (6, Some(b)) if b.offset() < 0 => emit(out, format_args!("{}\n", -b.offset())),
            _ => emit(out, format_args!("0\n")),
        }
    }

    fn store(&self, idx: usize, input: &[u8]) -> Result {
        let a = &self.array;
        let v = text(input).map_err(|e| {
            pr_err!("{}: bitmap: {}\n", a.name(), e.why);
            e.code
        })?;
        let Some(b) = a.bitmap() else {
            pr_err!("{}: bitmap: the array has no bitmap\n", a.name());
            return Err(ENOENT);
        };
        match idx {
            2 => {
                let s = v
                    .parse::<u32>()
                    .ok()
                    .filter(|s| (1..=3600).contains(s))
                    .ok_or_else(|| {
                        pr_err!("{}: bitmap/time_base: whole seconds, 1 to 3600\n", a.name());
                        EINVAL
                    })?;
                b.set_daemon_sleep(s);
                Ok(())
            }
            5 => match v {
                "false" => {
                    b.set_can_clear(false);
                    Ok(())
                }
                "true" if a.degraded() > 0 => {
                    pr_err!("{}: bitmap/can_clear: the array is degraded\n", a.name());
                    Err(EBUSY)
                }
                "true" => {
                    b.set_can_clear(true);
                    Ok(())
                }
                _ => {
                    pr_err!("{}: bitmap/can_clear: true or false\n", a.name());
                    Err(EINVAL)
                }
            },
            _ => Err(EINVAL),
        }
    }
}

/// A member directory, `dev-<name>`, of one device (in a slot or not).
pub struct MemberAttrs {
    array: Arc<Array>,
    devt: u32,
}

impl MemberAttrs {
    /// Status files of the device numbered `devt` in `array`.
    pub fn new(array: Arc<Array>, devt: u32) -> Self {
        Self { array, devt }
    }
}

impl SysfsOps for MemberAttrs {
    const ATTRS: &'static [Attr] = &[
        ro(c_str!("slot")),
        rw(c_str!("state")),
        ro(c_str!("errors")),
    ];

    fn lock_class() -> &'static LockKey {
        static KEY: LockKey = LockKey::new();
        &KEY
    }

    fn show(&self, idx: usize, out: &mut Buf<'_>) -> Result {
        let role = self.array.role_of(self.devt).ok_or(ENODEV)?;
        match (idx, role) {
            (0, Role::Slot(s) | Role::Replacement(s)) => emit(out, format_args!("{s}\n")),
            (0, Role::Spare { .. }) => emit(out, format_args!("none\n")),
            (1, r) => {
                let ff = if self.array.failfast_of(self.devt) {
                    ",failfast"
                } else {
                    ""
                };
                emit(out, format_args!("{}{}\n", self.array.state_of(r), ff))
            }
            (_, Role::Slot(s)) => emit(
                out,
                format_args!(
                    "{}\n",
                    self.array
                        .members()
                        .get(s)
                        .map_or(0, |m| m.errors.load(Ordering::Relaxed))
                ),
            ),
            (_, Role::Spare { .. } | Role::Replacement(_)) => emit(out, format_args!("0\n")),
        }
    }

    fn store(&self, _idx: usize, input: &[u8]) -> Result {
        let a = &self.array;
        let name = a.name();
        let role = a.role_of(self.devt).ok_or(ENODEV)?;
        let cmd = text(input).map_err(|e| {
            pr_err!("{}: dev state: {}\n", name, e.why);
            e.code
        })?;
        let res = match (cmd, role) {
            ("faulty", Role::Slot(s)) => a
                .fail_member(s)
                .map(|_| ())
                .map_err(|e| (e, "cannot fail it: the array would lose data")),
            ("faulty", Role::Spare { .. }) => {
                a.fail_spare(self.devt);
                Ok(())
            }
            ("faulty", Role::Replacement(s)) => {
                a.fail_replacement(s);
                Ok(())
            }
            ("re-add", _) => a.readd(self.devt),
            ("failfast", _) => a.set_failfast(self.devt, true),
            ("-failfast", _) => a.set_failfast(self.devt, false),
            ("want_replacement", Role::Slot(s)) => a.want_replacement(s, true),
            ("-want_replacement", Role::Slot(s)) => a.want_replacement(s, false),
            ("remove", _) => a
                .remove_dev(self.devt)
                .map(|()| a.drop_member_dir(self.devt)),
            _ => Err((EINVAL, "unsupported state change")),
        };
        res.map_err(|(code, why)| {
            pr_err!("{}: dev state {}: {}\n", name, cmd, why);
            code
        })?;
        a.kick_if_needed();
        Ok(())
    }
}

/// The member directories (`dev-NAME`) and where new ones go.
pub struct Dirs {
    /// The array's `rraid` directory; `None` before it exists and after the array is removed.
    pub parent: Option<KobjRef>,
    /// Each device's directory, by device number.
    pub members: Slots<(u32, SysfsDir<MemberAttrs>)>,
}

/// Drops a member directory on the workqueue: a directory cannot be removed from one of its
/// own files' callbacks, which removal waits for.
struct DropDir(#[allow(dead_code)] SysfsDir<MemberAttrs>);

impl Job for DropDir {
    fn run(self) {}
}

impl Array {
    /// Registers the array's directory and creates a member directory for each of its
    /// devices (slots, replacements, spares).
    pub fn add_dirs(self: &Arc<Self>, parent: KobjRef) -> Result {
        let mut d = self.dirs.lock();
        for m in self.members().iter() {
            for dev in [m.dev.get(), m.replacement.get()].into_iter().flatten() {
                let dir = self.member_dir(&parent, &dev)?;
                d.members.put((dev.devt(), dir))?;
            }
        }
        for s in self.spares.lock().iter() {
            let dir = self.member_dir(&parent, &s.dev)?;
            d.members.put((s.dev.devt(), dir))?;
        }
        d.parent = Some(parent);
        Ok(())
    }

    /// Removes every member directory: the array is going away.
    pub fn drop_dirs(&self) {
        let old = {
            let mut d = self.dirs.lock();
            d.parent = None;
            core::mem::take(&mut d.members)
        };
        drop(old);
    }

    fn member_dir(
        self: &Arc<Self>,
        parent: &KobjRef,
        dev: &MemberDev,
    ) -> Result<SysfsDir<MemberAttrs>> {
        let name = CString::try_from_fmt(fmt!("dev-{}", dev.name()))?;
        let attrs = KBox::pin(MemberAttrs::new(self.clone(), dev.devt()), GFP_KERNEL)?;
        SysfsDir::new(&parent.as_parent(), &name, attrs)
    }

    /// The directory of a device joining the array (`new_dev`).
    fn add_member_dir(self: &Arc<Self>, dev: &MemberDev) -> Result<(), (Error, &'static str)> {
        let mut d = self.dirs.lock();
        let Some(parent) = d.parent.as_ref() else {
            return Err((ENODEV, "the array is going away"));
        };
        let dir = self
            .member_dir(parent, dev)
            .map_err(|e| (e, "cannot create its directory"))?;
        d.members
            .put((dev.devt(), dir))
            .map_err(|_| (ENOMEM, "no memory"))
    }

    /// Removes the directory of a device that did not join after all. Not from one of the
    /// directory's own files (`new_dev` is the array's), so at once.
    fn undo_member_dir(&self, devt: u32) {
        let dir = self.dirs.lock().members.take(|(t, _)| *t == devt);
        drop(dir);
    }

    /// Removes the directory of a device that left the array (`remove`), from a job: this
    /// runs in one of its files' callbacks.
    fn drop_member_dir(&self, devt: u32) {
        let dir = self.dirs.lock().members.take(|(t, _)| *t == devt);
        if let Some((_, dir)) = dir {
            if let Err(job) = spawn(&self.wq, DropDir(dir)) {
                // No memory for the job: keep the directory, unreachable, until the array goes.
                let _ = self.dirs.lock().members.put((0, job.0));
            }
        }
    }
}
