//! `/proc/rraidstat`: every array in `/proc/mdstat`'s format, with its progress bar while a
//! sync runs, so that tools and eyes used to mdstat read it as they read md's.

use crate::raid::slots::Slots;
use crate::raid::sync::Action;
use crate::raid::{Array, Role};
use crate::sys::procfs::ProcShow;
use core::fmt::{self, Write};
use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

/// The arrays that exist, for `/proc/rraidstat`.
#[pin_data]
pub struct Registry {
    #[pin]
    arrays: Mutex<Slots<Arc<Array>>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                arrays <- new_mutex!(Slots::new(), "rraid::registry"),
            }),
            GFP_KERNEL,
        )
    }

    /// Lists `array`.
    pub fn add(&self, array: Arc<Array>) -> Result {
        self.arrays.lock().put(array)
    }

    /// Unlists the array named `name`.
    pub fn remove(&self, array: &Array) {
        let gone = self.arrays.lock().take(|a| core::ptr::eq(&**a, array));
        drop(gone);
    }
}

impl crate::sys::reboot::RebootOps for Registry {
    /// md's `md_notify_reboot`: every array is left clean on its members.
    fn reboot(&self) {
        for a in self.arrays.lock().iter() {
            if let Some(m) = a.meta() {
                m.stop_writes(a);
            }
        }
    }
}

/// `fmt::Write` into a `KVec<u8>`.
struct Out<'a>(&'a mut KVec<u8>);

impl Write for Out<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0
            .extend_from_slice(s.as_bytes(), GFP_KERNEL)
            .map_err(|_| fmt::Error)
    }
}

impl ProcShow for Registry {
    fn show(&self, out: &mut KVec<u8>) -> Result {
        let mut w = Out(out);
        let arrays: KVec<Arc<Array>> = {
            let v = self.arrays.lock();
            let mut list = KVec::new();
            for a in v.iter() {
                list.push(a.clone(), GFP_KERNEL)?;
            }
            list
        };
        let res = (|| -> fmt::Result {
            writeln!(
                w,
                "Personalities : [raid0] [raid1] [raid4] [raid5] [raid6] [raid10]"
            )?;
            for a in arrays.iter() {
                a.mdstat(&mut w)?;
            }
            writeln!(w, "unused devices: <none>")
        })();
        res.map_err(|_| ENOMEM)
    }
}

impl Array {
    /// This array's paragraph of `/proc/rraidstat`, as md's `md_seq_show` writes it.
    fn mdstat(&self, w: &mut impl Write) -> fmt::Result {
        let state = if self.is_broken() { "broken" } else { "active" };
        write!(w, "{} : {} {}", self.name(), state, self.level.name())?;
        let n = self.members.len();
        for slot in 0..n {
            if let Some(d) = self.dev(slot) {
                let flag = match self.state_of(Role::Slot(slot)) {
                    "faulty" => "(F)",
                    _ => "",
                };
                write!(w, " {}[{}]{}", d.name(), slot, flag)?;
            }
        }
        for (slot, m) in self.members.iter().enumerate() {
            if let Some(d) = m.replacement.get() {
                write!(w, " {}[{}](R)", d.name(), slot)?;
            }
        }
        for (k, s) in self.spares.lock().iter().enumerate() {
            let flag = if s.faulty { "(F)" } else { "(S)" };
            write!(w, " {}[{}]{}", s.dev.name(), n + k, flag)?;
        }
        writeln!(w)?;
        // md's words: `super 1.2` for a persistent superblock.
        match self.meta() {
            Some(m) => write!(
                w,
                "      {} blocks super {}",
                self.level.array_sectors() / 2,
                m.version().name()
            )?,
            None => write!(
                w,
                "      {} blocks super non-persistent",
                self.level.array_sectors() / 2
            )?,
        }
        if self.level.status(w)? {
            self.slots_line(w)?;
        } else {
            writeln!(w)?;
        }
        self.progress_line(w)?;
        writeln!(w)
    }

    /// ` [n/m] [UU_]`: slots, slots in sync, and which.
    fn slots_line(&self, w: &mut impl Write) -> fmt::Result {
        let n = self.members.len();
        write!(w, " [{}/{}] [", n, n - self.degraded())?;
        for slot in 0..n {
            w.write_char(if self.in_sync() & (1 << slot) != 0 {
                'U'
            } else {
                '_'
            })?;
        }
        writeln!(w, "]")
    }

    /// md's progress line of a running sync, or the note of an owed one.
    fn progress_line(&self, w: &mut impl Write) -> fmt::Result {
        let s = self.sync();
        if s.delayed() {
            return writeln!(w, "        resync=DELAYED");
        }
        let (Some(action), Some((done, total))) = (s.running(), s.completed()) else {
            if s.needs_resync() && self.level.redundancy(self.members.len()) > 0 {
                writeln!(w, "        resync=PENDING")?;
            }
            return Ok(());
        };
        let total = total.max(1);
        let per_milli = (done.min(total) * 1000 / total) as usize;
        let x = per_milli / 50;
        w.write_str("      [")?;
        for i in 0..20 {
            w.write_char(match i.cmp(&x) {
                core::cmp::Ordering::Less => '=',
                core::cmp::Ordering::Equal => '>',
                core::cmp::Ordering::Greater => '.',
            })?;
        }
        // md shows a repair as a resync.
        let name = match action {
            Action::Recover => "recovery",
            Action::Check => "check",
            Action::Resync | Action::Repair => "resync",
        };
        let speed = s.speed().unwrap_or(0).max(1);
        let left_s = (total - done.min(total)) / 2 / speed;
        writeln!(
            w,
            "]  {} = {:2}.{}% ({}/{}) finish={}.{}min speed={}K/sec",
            name,
            per_milli / 10,
            per_milli % 10,
            done / 2,
            total / 2,
            left_s / 60,
            (left_s % 60) / 6,
            speed
        )
    }
}
