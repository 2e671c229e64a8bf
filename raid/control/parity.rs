//! `/sys/kernel/rraid/parity/`: the parity implementations usable here, the chosen one in
//! brackets (as `queue/scheduler` shows), one file per operation; writing a name forces it.

use super::attrs::rw;
use super::parse::text;
use crate::parity::{self, Op, IMPLS};
use crate::raid::engines::{index_of, Engines};
use crate::sys::sysfs::{Attr, Buf, SysfsOps};
use crate::sys::LockKey;
use core::fmt::Write;
use core::sync::atomic::Ordering;
use kernel::{c_str, prelude::*};

impl SysfsOps for Engines {
    const ATTRS: &'static [Attr] = &[
        rw(c_str!("xor")),
        rw(c_str!("gen")),
        rw(c_str!("rmw")),
        rw(c_str!("recov")),
    ];

    fn lock_class() -> &'static LockKey {
        static KEY: LockKey = LockKey::new();
        &KEY
    }

    fn show(&self, idx: usize, out: &mut Buf<'_>) -> Result {
        let chosen = self.chosen.get(idx).ok_or(EINVAL)?.load(Ordering::Relaxed);
        // Slowest first, as lib/raid6's table reads bottom up.
        let mut first = true;
        for (i, imp) in IMPLS.iter().enumerate().rev() {
            if self.usable & (1 << i) == 0 {
                continue;
            }
            let sep = if first { "" } else { " " };
            first = false;
            let r = if i == chosen {
                write!(out, "{sep}[{}]", imp.name)
            } else {
                write!(out, "{sep}{}", imp.name)
            };
            r.map_err(|_| EINVAL)?;
        }
        writeln!(out).map_err(|_| EINVAL)
    }

    fn store(&self, idx: usize, input: &[u8]) -> Result {
        let name = text(input).map_err(|e| {
            pr_err!("parity: {}\n", e.why);
            e.code
        })?;
        let slot = self.chosen.get(idx).ok_or(EINVAL)?;
        let found = parity::find(name).map(index_of);
        match found {
            Some(i) if self.usable & (1 << i) != 0 && (IMPLS[i].valid)(&self.cpu) => {
                slot.store(i, Ordering::Relaxed);
                pr_info!("parity: {} forced to {}\n", Op::ALL[idx].name(), name);
                Ok(())
            }
            _ => {
                pr_err!("parity: '{}' is not a usable implementation here\n", name);
                Err(EINVAL)
            }
        }
    }
}
