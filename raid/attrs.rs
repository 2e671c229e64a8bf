//! `/sys/block/rraidN/rraid/`: array and member status, in md's names and formats.

use super::members::Role;
use super::parse::text;
use super::sync::ActionError;
use super::Array;
use crate::sys::sysfs::{Attr, Buf, SysfsOps};
use crate::sys::LockKey;
use core::fmt::Write;
use core::sync::atomic::Ordering;
use kernel::{c_str, prelude::*, sync::Arc};

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

const fn rw(name: &'static CStr) -> Attr {
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
            7 => emit(
                out,
                format_args!("{}\n", a.stripes().map_or(0, |s| s.cache_size())),
            ),
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
            _ => emit(out, format_args!("{}\n", a.sync().mismatches())),
        }
    }

    fn store(&self, idx: usize, input: &[u8]) -> Result {
        match idx {
            7 => self.store_cache_size(input),
            8 => self.store_action(input),
            11 | 12 => self.store_speed(idx == 12, input),
            14 => self.store_new_dev(input),
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
        self.array.new_dev(spec).map_err(|(code, why)| {
            pr_err!("{}: new_dev {}: {}\n", name, spec, why);
            code
        })
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

    fn store_cache_size(&self, input: &[u8]) -> Result {
        let name = self.array.name();
        let Some(st) = self.array.stripes() else {
            pr_err!(
                "{}: stripe_cache_size: only RAID 4/5/6 have a stripe cache\n",
                name
            );
            return Err(EINVAL);
        };
        let v = text(input).map_err(|e| {
            pr_err!("{}: stripe_cache_size: {}\n", name, e.why);
            e.code
        })?;
        let size = v
            .parse::<u32>()
            .ok()
            .filter(|n| (super::stripe::CACHE_MIN..=super::stripe::CACHE_MAX).contains(n));
        let Some(size) = size else {
            pr_err!(
                "{}: stripe_cache_size must be a number from {} to {}\n",
                name,
                super::stripe::CACHE_MIN,
                super::stripe::CACHE_MAX
            );
            return Err(EINVAL);
        };
        st.set_cache_size(size).inspect_err(|e| {
            pr_err!("{}: stripe_cache_size {}: failed ({:?})\n", name, size, e);
        })
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
            (1, r) => emit(out, format_args!("{}\n", self.array.state_of(r))),
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
            ("want_replacement", Role::Slot(s)) => a.want_replacement(s, true),
            ("-want_replacement", Role::Slot(s)) => a.want_replacement(s, false),
            ("remove", _) => a.remove_dev(self.devt),
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
