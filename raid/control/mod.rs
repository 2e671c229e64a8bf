//! The control plane: `/sys/kernel/rraid/` (creating and removing arrays, here), create's
//! parsing ([`parse`]), the array and member files ([`attrs`]), members and spares
//! ([`members`]), and `/proc/rraidstat` ([`stat`]).

pub mod attrs;
pub mod members;
pub mod parity;
pub mod parse;
pub mod stat;

use crate::layout::raid10::{Raid10, Raid10Layout};
use crate::layout::raid5::{Algorithm, Raid5};
use crate::layout::{raid0::Raid0, raid1::Raid1, GeometryError, MAX_MEMBERS};
use crate::raid::level::{raid5::Stripes, Level};
use crate::raid::slots::Slots;
use crate::raid::sync::{Units, SPEED_MAX_SYSTEM, SPEED_MIN_SYSTEM};
use crate::raid::{Array, ArrayName, Member};
use crate::sys::disk::{Disk, Limits};
use crate::sys::member::{Holder, MemberDev};
use crate::sys::module_ref::ModuleRef;
use crate::sys::slot::DevSlot;
use crate::sys::sysfs::{Attr, Buf, Parent, SysfsDir, SysfsOps};
use crate::sys::workqueue::QueueRef;
use crate::sys::LockKey;
use attrs::ArrayAttrs;
use core::fmt::Write;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kernel::{
    c_str, fmt, new_mutex,
    prelude::*,
    str::CString,
    sync::{Arc, Mutex},
};
use parse::{CreateSpec, CtlError, LevelKind};
use stat::Registry;

/// Most requests an array holds at once (one tag space for all CPUs).
const MAX_QUEUE_DEPTH: u32 = 1024;

/// A live array and everything registered for it, torn down in field order after its sync
/// thread has stopped.
struct Entry {
    registry: Arc<Registry>,
    _dir: SysfsDir<ArrayAttrs>,
    disk: Disk<Array>,
    array: Arc<Array>,
}

impl Drop for Entry {
    fn drop(&mut self) {
        // The thread holds the array; it must be gone before the disk is. The member
        // directories hold it too, and go before the array's own.
        self.array.stop_sync();
        self.array.set_freezer(None);
        self.array.drop_dirs();
        self.registry.remove(&self.array);
    }
}

/// The module's control directory.
#[pin_data]
pub struct Control {
    module: &'static ThisModule,
    wq: QueueRef,
    /// Where RAID 4/5/6 stripe jobs run: apart from the request workers, which may wait for
    /// stripe heads that a queued job holds (under memory pressure a queue's rescuer runs one
    /// item at a time).
    stripe_wq: QueueRef,
    /// Arrays by creation; removed ones leave `None`.
    #[pin]
    arrays: Mutex<Slots<Entry>>,
    /// The arrays again, for `/proc/rraidstat`.
    registry: Arc<Registry>,
    /// What the arrays' sync jobs hold, so that arrays sharing a disk sync one at a time.
    units: Arc<Units>,
}

/// Creates `/sys/kernel/rraid`.
pub fn register(
    module: &'static ThisModule,
    wq: QueueRef,
    stripe_wq: QueueRef,
) -> Result<SysfsDir<Control>> {
    let registry = Registry::new()?;
    let units = Units::new()?;
    let control = KBox::pin_init(
        pin_init!(Control {
            module,
            wq,
            stripe_wq,
            arrays <- new_mutex!(Slots::new(), "rraid::arrays"),
            registry,
            units,
        }),
        GFP_KERNEL,
    )?;
    SysfsDir::new(&Parent::kernel()?, c_str!("rraid"), control)
}

/// Maps a failed member open to the documented codes.
fn open_error(e: Error) -> Error {
    if e == ENOENT || e == ENXIO || e == ENOTBLK || e == ENODEV {
        ENODEV
    } else {
        e
    }
}

impl Control {
    /// The list of arrays that `/proc/rraidstat` shows.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    fn create<'a>(&self, input: &'a [u8]) -> Result<(), CtlError<'a>> {
        let spec = parse::parse_create(input)?;
        let mut arrays = self.arrays.lock();
        if arrays.iter().any(|e| e.array.name == spec.name) {
            return Err(CtlError::new(
                EEXIST,
                "create: array exists",
                spec.name_str(),
            ));
        }
        let module = ModuleRef::get(self.module)
            .map_err(|e| CtlError::new(e, "create: module is unloading", ""))?;
        let holder = Holder::new()?;
        let mut devs: KVec<MemberDev> = KVec::with_capacity(spec.paths.len(), GFP_KERNEL)?;
        let mut sizes = [0u64; MAX_MEMBERS];
        for (slot, &path) in spec.paths.iter().enumerate() {
            let cpath = CString::try_from_fmt(fmt!("{path}"))?;
            let dev = MemberDev::open(&cpath, &holder).map_err(|e| {
                CtlError::new(
                    open_error(e),
                    "create: cannot open member (missing, or in use)",
                    path,
                )
            })?;
            if devs.iter().any(|d| d.devt() == dev.devt()) {
                return Err(CtlError::new(EBUSY, "create: member given twice", path));
            }
            if dev.zoned() {
                return Err(CtlError::new(
                    EINVAL,
                    "create: zoned members are not supported",
                    path,
                ));
            }
            sizes[slot] = dev.sectors();
            devs.push(dev, GFP_KERNEL)?;
        }
        if let Some(kib) = spec.size_kib {
            // md's `component_size`: the same KiB of every member, which must hold it.
            let want = kib.saturating_mul(2);
            for (slot, size) in sizes.iter_mut().take(devs.len()).enumerate() {
                if *size < want {
                    let name = spec.paths.get(slot).copied().unwrap_or("?");
                    return Err(CtlError::new(EINVAL, "create: size= exceeds member", name));
                }
                *size = want;
            }
        }
        let level = spec.geometry(&sizes[..devs.len()], self.stripe_wq)?;
        let mut lim = Limits::stacking();
        let cname = CString::try_from_fmt(fmt!("{}", spec.name_str()))?;
        for d in devs.iter() {
            lim.stack(d, 0, &cname);
        }
        // Discard only when every member has it (stacking offers it when any has it): a member
        // that ignored a discard would then differ from its mirror or its stripe. Stricter than
        // md, which leaves that member's blocks as they were.
        level.limits(&mut lim, devs.iter().all(|d| d.discard()));
        // No more requests in flight than the members can take together.
        let depth = devs
            .iter()
            .fold(0u32, |n, d| n.saturating_add(d.nr_requests()))
            .clamp(1, MAX_QUEUE_DEPTH);
        let nmembers = devs.len();
        let mut members = KVec::with_capacity(nmembers, GFP_KERNEL)?;
        for dev in devs {
            members.push(
                Member {
                    dev: DevSlot::new(Some(dev))?,
                    replacement: DevSlot::new(None)?,
                    next_seq: AtomicU64::new(u64::MAX),
                    errors: AtomicU32::new(0),
                },
                GFP_KERNEL,
            )?;
        }
        let array_sectors = level.array_sectors();
        let array = Array::new(
            spec.name,
            level,
            members,
            spec.assume_clean,
            holder,
            module,
            self.wq,
            self.units.clone(),
        )?;
        let disk = Disk::add(
            spec.name_str(),
            lim,
            array_sectors,
            array.clone(),
            depth,
            self.wq,
        )
        .map_err(|e| CtlError::new(e, "create: cannot add disk", spec.name_str()))?;
        for slot in 0..nmembers {
            if let Some(d) = array.dev(slot) {
                disk.link_holder(&d)?;
            }
        }
        let dir = SysfsDir::new(
            &disk.kobj(),
            c_str!("rraid"),
            KBox::pin(ArrayAttrs::new(array.clone()), GFP_KERNEL)?,
        )?;
        array.set_freezer(Some(disk.freezer()?));
        let dirs = array.add_dirs(dir.kobj_ref());
        self.registry.add(array.clone())?;
        let zones = array.level().zones();
        let entry = Entry {
            _dir: dir,
            registry: self.registry.clone(),
            disk,
            array: array.clone(),
        };
        // On failure the entry's drop takes down what was made.
        dirs?;
        arrays.put(entry)?;
        pr_info!(
            "{}: {} with {} members, {} KiB each\n",
            spec.name_str(),
            array.level().name(),
            nmembers,
            array.level().member_sectors() / 2,
        );
        if let Some((n, layout)) = zones {
            // Members of unequal size: the line above gives what each member holds in zone 0.
            pr_info!(
                "{}: {} zones over members of unequal size, layout {} ({}), {} KiB in all\n",
                spec.name_str(),
                n,
                layout.name(),
                layout.number(),
                array_sectors / 2
            );
        }
        // An array not declared clean starts its resync now.
        if let Err(e) = array.start_sync() {
            pr_err!(
                "{}: resync not started ({:?}); reads use the first member until it runs\n",
                spec.name_str(),
                e
            );
        }
        Ok(())
    }

    fn remove<'a>(&self, input: &'a [u8]) -> Result<(), CtlError<'a>> {
        let s = parse::text(input)?;
        let name = ArrayName::parse(s.as_bytes()).ok_or(CtlError::new(
            EINVAL,
            "remove: not an array name",
            s,
        ))?;
        let mut arrays = self.arrays.lock();
        let e = arrays
            .find_mut(|e| e.array.name == name)
            .ok_or(CtlError::new(ENODEV, "remove: no such array", s))?;
        if e.disk.openers() > 0 {
            return Err(CtlError::new(EBUSY, "remove: array is open", s));
        }
        e.array
            .start_closing()
            .map_err(|code| CtlError::new(code, "remove: array is open", s))?;
        drop(arrays.take(|e| e.array.name == name));
        drop(arrays);
        // The disk's final drop runs on the module's queue (`sys::disk`, `free_disk`): done
        // when `remove` returns, unless an opener still holds the disk.
        self.wq.flush();
        pr_info!("{}: removed\n", s);
        Ok(())
    }
}

impl<'a> CreateSpec<'a> {
    fn name_str(&self) -> &'a str {
        self.name_text
    }

    fn geometry(&self, sizes: &[u64], stripe_wq: QueueRef) -> Result<Level, CtlError<'a>> {
        let geo = match self.level {
            LevelKind::Raid0 => {
                // md's zone table (1.5 KiB) lives on the heap. Matching on a reference copies
                // the geometry once, into the box; a moved Result costs more copies on this
                // stack (measured: 6 KiB for the frame).
                return match &Raid0::new(sizes, self.chunk_sectors, 0, self.raid0_layout) {
                    Ok(g) => Ok(Level::Raid0(KBox::new(*g, GFP_KERNEL)?)),
                    Err(e) => Err(self.geometry_error(*e)),
                };
            }
            LevelKind::Raid1 => Raid1::new(sizes, 0).map(Level::Raid1),
            LevelKind::Parity(l) => {
                let g = Raid5::new(
                    l,
                    self.layout.unwrap_or(Algorithm::LeftSymmetric),
                    sizes,
                    self.chunk_sectors,
                    None,
                    0,
                )
                .map_err(|e| self.geometry_error(e))?;
                // The stripe cache holds the geometry.
                return Stripes::new(g, stripe_wq).map(Level::Raid5).map_err(|e| {
                    CtlError::new(e, "create: no memory for the stripe cache", self.name_str())
                });
            }
            LevelKind::Raid10 => Raid10::new(
                self.layout10.unwrap_or(Raid10Layout::N2),
                sizes,
                self.chunk_sectors,
                0,
            )
            .map(Level::Raid10),
        };
        geo.map_err(|e| self.geometry_error(e))
    }

    fn geometry_error(&self, e: GeometryError) -> CtlError<'a> {
        match e {
            GeometryError::MemberTooSmall => CtlError::new(
                EINVAL,
                "create: a member is smaller than one chunk",
                self.name_str(),
            ),
            GeometryError::MemberCount => CtlError::new(
                EINVAL,
                "create: member count (RAID 0/1/4/5: at least 2, RAID 6: at least 4, RAID 10: at least its copies, at most 64)",
                self.name_str(),
            ),
            GeometryError::Chunk => CtlError::new(EINVAL, "create: bad chunk", ""),
            GeometryError::Layout => CtlError::new(
                EINVAL,
                "create: RAID 10 layout has under 2 copies or cannot place them on distinct members",
                self.name_str(),
            ),
        }
    }
}

impl SysfsOps for Control {
    const ATTRS: &'static [Attr] = &[
        Attr {
            name: c_str!("create"),
            read: false,
            write: true,
        },
        Attr {
            name: c_str!("remove"),
            read: false,
            write: true,
        },
        Attr {
            name: c_str!("arrays"),
            read: true,
            write: false,
        },
        Attr {
            name: c_str!("speed_limit_min"),
            read: true,
            write: true,
        },
        Attr {
            name: c_str!("speed_limit_max"),
            read: true,
            write: true,
        },
    ];

    fn lock_class() -> &'static LockKey {
        static KEY: LockKey = LockKey::new();
        &KEY
    }

    fn show(&self, idx: usize, out: &mut Buf<'_>) -> Result {
        match idx {
            3 | 4 => {
                let v = if idx == 3 {
                    &SPEED_MIN_SYSTEM
                } else {
                    &SPEED_MAX_SYSTEM
                };
                writeln!(out, "{}", v.load(Ordering::Relaxed)).map_err(|_| EINVAL)
            }
            _ => {
                // `arrays`: the names, one per line.
                for e in self.arrays.lock().iter() {
                    writeln!(out, "{}", e.array.name()).map_err(|_| EINVAL)?;
                }
                Ok(())
            }
        }
    }

    fn store(&self, idx: usize, input: &[u8]) -> Result {
        let res = match idx {
            0 => self.create(input),
            1 => self.remove(input),
            // md's `dev.raid.speed_limit_min`/`_max`: KiB/s, at least 1.
            _ => parse::text(input).and_then(|v| {
                let n = v
                    .parse::<u32>()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or(CtlError::new(
                        EINVAL,
                        "speed limit: not a positive KiB/s",
                        v,
                    ))?;
                let slot = if idx == 3 {
                    &SPEED_MIN_SYSTEM
                } else {
                    &SPEED_MAX_SYSTEM
                };
                slot.store(n, Ordering::Relaxed);
                Ok(())
            }),
        };
        res.map_err(|e| {
            pr_err!("{}: {}\n", e.why, e.what);
            e.code
        })
    }
}

impl Array {
    /// Takes `dev`'s limits into the array's before it joins as a spare, as md's
    /// `mddev_stack_new_rdev`: its write cache and FUA (so flushes and FUA reach it once it
    /// holds a slot), transfer sizes and alignment. Refused: a device without discard while
    /// the array offers discard (only when every member has it, see `create`: it would keep
    /// data its mirror dropped), and one whose logical block size is larger than the array's
    /// (I/O in flight and file systems rely on the size the array has shown).
    pub(crate) fn admit(&self, dev: &MemberDev) -> Result<(), (Error, &'static str)> {
        let name = CString::try_from_fmt(fmt!("{}", self.name())).map_err(|e| (e, "no memory"))?;
        let f = self.freezer.lock();
        let f = f.as_ref().ok_or((ENODEV, "the array is going away"))?;
        let discard = f.discard();
        if discard && !dev.discard() {
            return Err((EINVAL, "the array offers discard and the device has none"));
        }
        f.update_limits(|lim| {
            if dev.logical_block_size() > lim.logical_block_size() {
                return Err((
                    EINVAL,
                    "the device's logical block size is larger than the array's",
                ));
            }
            lim.stack(dev, self.level.data_offset(), &name);
            self.level.limits(lim, discard);
            Ok(())
        })
        .map_err(|e| (e, "the array's limits cannot take the device"))?
    }

    /// Links a device that joined the array under its disk (`holders/`, `slaves/`), as md
    /// links every device of an array; a failure only leaves the link out.
    pub(crate) fn link_dev(&self, dev: &MemberDev) {
        if let Some(f) = self.freezer.lock().as_ref() {
            if let Err(e) = f.link(dev) {
                pr_warn!("{}: cannot link {}: {:?}\n", self.name(), dev.name(), e);
            }
        }
    }

    /// Closes a device that left the array, its link gone first.
    pub(crate) fn release_dev(&self, dev: Option<MemberDev>) {
        if let (Some(f), Some(d)) = (self.freezer.lock().as_ref(), dev.as_ref()) {
            f.unlink(d);
        }
        drop(dev);
    }
}
