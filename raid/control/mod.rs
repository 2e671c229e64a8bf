//! The control plane: `/sys/kernel/rraid/` (creating and removing arrays, here), create's
//! parsing ([`parse`]), the array and member files ([`attrs`]), members and spares
//! ([`members`]), and `/proc/rraidstat` ([`stat`]).

mod assemble;
pub mod attrs;
pub mod members;
pub mod parity;
pub mod parse;
pub mod stat;

use crate::layout::raid10::{Raid10, Raid10Layout};
use crate::layout::raid5::{Algorithm, Raid5};
use crate::layout::{raid0::Raid0, raid1::Raid1, GeometryError, MAX_MEMBERS};
use crate::meta::bitmap::{self as bitmap_fmt, BitmapSuper};
use crate::meta::super1 as meta_fmt;
use crate::meta::super1::{Superblock, Version, FEATURE_BITMAP_OFFSET};
use crate::raid::level::{raid5::Stripes, Level};
use crate::raid::meta::bitmap::Bitmap;
use crate::raid::meta::{self, Meta};
use crate::raid::slots::Slots;
use crate::raid::sync::{Units, SPEED_MAX_SYSTEM, SPEED_MIN_SYSTEM};
use crate::raid::{Array, ArrayName, Member};
use crate::sys::disk::{Disk, Limits};
use crate::sys::member::{Holder, MemberDev};
use crate::sys::module_ref::ModuleRef;
use crate::sys::pagebuf::PageBuf;
use crate::sys::slot::DevSlot;
use crate::sys::sysfs::{Attr, Buf, Parent, SysfsDir, SysfsOps};
use crate::sys::workqueue::QueueRef;
use crate::sys::LockKey;
use attrs::{ArrayAttrs, BitmapAttrs};
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
    /// `bitmap/`, inside `_dir`, so dropped first.
    _bitmap_dir: SysfsDir<BitmapAttrs>,
    _dir: SysfsDir<ArrayAttrs>,
    disk: Disk<Array>,
    array: Arc<Array>,
}

impl Drop for Entry {
    fn drop(&mut self) {
        // The thread holds the array; it must be gone before the disk is. The member
        // directories hold it too, and go before the array's own.
        self.array.stop_sync();
        // md's `__md_stop_writes`: the array is left clean on its members.
        if let Some(m) = self.array.meta() {
            m.stop_thread();
            m.stop_writes(&self.array);
        }
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
    /// Devices handed to `incremental` whose array has not started yet.
    #[pin]
    pending: Mutex<KVec<assemble::Pending>>,
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
            pending <- new_mutex!(KVec::new(), "rraid::pending"),
        }),
        GFP_KERNEL,
    )?;
    SysfsDir::new(&Parent::kernel()?, c_str!("rraid"), control)
}

/// What `launch` brings up: the level built, the devices by part, and where syncs stand.
struct Launch<'a> {
    name: ArrayName,
    name_text: &'a str,
    level: Level,
    /// Each slot's device, `None` for a missing member.
    slots: KVec<Option<MemberDev>>,
    /// Slots in sync (of those with a device).
    in_sync: u64,
    resync_point: u64,
    meta: Option<Pin<KBox<Meta>>>,
    spares: KVec<MemberDev>,
    /// Replacements being built, by slot.
    replacements: KVec<(usize, MemberDev)>,
    /// An interrupted rebuild: slots, replacements, point, and whether from the bitmap.
    rebuild: Option<(u64, u64, u64, bool)>,
    /// `create` (a new array, whose first superblocks are to be written) or `assemble`.
    verb: Verb,
    module: ModuleRef,
    holder: Holder,
}

/// Which control write brings an array up: its refusals say so.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Verb {
    Create,
    Assemble,
}

impl Verb {
    fn cannot_open(self) -> &'static str {
        match self {
            Self::Create => "create: cannot open member (missing, or in use)",
            Self::Assemble => "assemble: cannot open device (missing, or in use)",
        }
    }

    fn given_twice(self) -> &'static str {
        match self {
            Self::Create => "create: member given twice",
            Self::Assemble => "assemble: device given twice",
        }
    }

    fn zoned(self) -> &'static str {
        match self {
            Self::Create => "create: zoned members are not supported",
            Self::Assemble => "assemble: zoned members are not supported",
        }
    }

    fn cannot_add_disk(self) -> &'static str {
        match self {
            Self::Create => "create: cannot add disk",
            Self::Assemble => "assemble: cannot add disk",
        }
    }
}

/// Opens `paths` for an array claimed by `holder`, refusing one given twice and zoned ones.
fn open_members<'a>(
    verb: Verb,
    paths: &[&'a str],
    holder: &Holder,
) -> Result<KVec<MemberDev>, CtlError<'a>> {
    let mut devs: KVec<MemberDev> = KVec::with_capacity(paths.len(), GFP_KERNEL)?;
    for &path in paths.iter() {
        let cpath = CString::try_from_fmt(fmt!("{path}"))?;
        let dev = MemberDev::open(&cpath, holder)
            .map_err(|e| CtlError::new(open_error(e), verb.cannot_open(), path))?;
        if devs.iter().any(|d| d.devt() == dev.devt()) {
            return Err(CtlError::new(EBUSY, verb.given_twice(), path));
        }
        if dev.zoned() {
            return Err(CtlError::new(EINVAL, verb.zoned(), path));
        }
        devs.push(dev, GFP_KERNEL)?;
    }
    Ok(devs)
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
        let devs = open_members(Verb::Create, &spec.paths, &holder)?;
        let (sizes, data_offset) = spec.member_sizes(&devs)?;
        let level = spec.geometry(&sizes[..devs.len()], data_offset, self.stripe_wq)?;
        let meta = match spec.metadata {
            None => None,
            Some(v) => Some(self.new_meta(&spec, v, &level, &devs)?),
        };
        let slots = {
            let mut slots = KVec::with_capacity(devs.len(), GFP_KERNEL)?;
            for d in devs {
                slots.push(Some(d), GFP_KERNEL)?;
            }
            slots
        };
        self.launch(
            &mut arrays,
            Launch {
                name: spec.name,
                name_text: spec.name_str(),
                level,
                slots,
                in_sync: u64::MAX,
                resync_point: if spec.assume_clean { u64::MAX } else { 0 },
                meta,
                spares: KVec::new(),
                replacements: KVec::new(),
                rebuild: None,
                verb: Verb::Create,
                module,
                holder,
            },
        )
    }

    /// md's superblocks for a new array over `devs`: old v1.x superblocks wiped, the
    /// array's fields and each member's record.
    fn new_meta<'a>(
        &self,
        spec: &CreateSpec<'a>,
        v: Version,
        level: &Level,
        devs: &[MemberDev],
    ) -> Result<Pin<KBox<Meta>>, CtlError<'a>> {
        let mut buf = PageBuf::new(false)?;
        for (d, path) in devs.iter().zip(spec.paths.iter()) {
            meta::wipe_others(d, Some(v), &mut buf)
                .map_err(|e| CtlError::new(e, "create: cannot wipe old superblocks", path))?;
        }
        let uuid = spec.uuid.unwrap_or_else(|| {
            let mut u = [0u8; 16];
            crate::sys::random_bytes(&mut u);
            u
        });
        let mut sb = meta::new_array_sb(
            level,
            devs.len(),
            uuid,
            spec.sb_name.unwrap_or(spec.name_str()),
        )?;
        let bitmap = if spec.bitmap {
            Some(self.new_bitmap(spec, v, level, &mut sb)?)
        } else {
            None
        };
        let bm_bytes = bitmap.as_ref().map_or(0, |b| b.reserved_bytes());
        let mut recs = KVec::with_capacity(devs.len(), GFP_KERNEL)?;
        for (slot, d) in devs.iter().enumerate() {
            recs.push(
                meta::new_dev(v, d, slot as u32, sb.size, level.data_offset(), bm_bytes),
                GFP_KERNEL,
            )?;
        }
        Ok(KBox::pin_init(
            Meta::new(v, sb, recs, 0, true, true, bitmap)?,
            GFP_KERNEL,
        )?)
    }

    /// The write-intent bitmap of a new array, placed and sized as mdadm's
    /// `add_internal_bitmap1` does, recorded in the superblock `sb`; all its bits set, as
    /// mdadm writes them (the initial resync clears them; with `assume-clean` the daemon).
    fn new_bitmap<'a>(
        &self,
        spec: &CreateSpec<'a>,
        v: Version,
        level: &Level,
        sb: &mut Superblock,
    ) -> Result<Pin<KBox<Bitmap>>, CtlError<'a>> {
        let sync = level.sync_sectors();
        let (chunk, offset) = bitmap_fmt::add_internal(v, sync, sb.size, spec.bitmap_chunk)
            .map_err(|_| {
                CtlError::new(
                    EINVAL,
                    "create: bitmap_chunk too small: the bitmap does not fit its space",
                    spec.name_str(),
                )
            })?;
        sb.feature_map |= FEATURE_BITMAP_OFFSET;
        sb.bitmap_offset = offset as u32;
        let bsb = BitmapSuper::new(sb.set_uuid, chunk, sync);
        let needed_from = if spec.assume_clean { u64::MAX } else { 0 };
        Ok(Bitmap::new(
            v,
            i64::from(offset),
            bsb,
            None,
            false,
            needed_from,
        )?)
    }

    /// Brings up an array built by `create` or `assemble`: its disk, directories and threads.
    fn launch<'a>(&self, arrays: &mut Slots<Entry>, l: Launch<'a>) -> Result<(), CtlError<'a>> {
        let mut lim = Limits::stacking();
        let cname = CString::try_from_fmt(fmt!("{}", l.name_text))?;
        let offset = l.level.data_offset();
        let all_devs = Iterator::chain(
            Iterator::chain(l.slots.iter().flatten(), l.spares.iter()),
            l.replacements.iter().map(|(_, d)| d),
        );
        let mut discard = true;
        let mut depth = 0u32;
        for d in all_devs {
            lim.stack(d, offset, &cname);
            discard &= d.discard();
        }
        for d in l.slots.iter().flatten() {
            depth = depth.saturating_add(d.nr_requests());
        }
        // Discard only when every member has it (stacking offers it when any has it): a member
        // that ignored a discard would then differ from its mirror or its stripe. Stricter than
        // md, which leaves that member's blocks as they were.
        l.level.limits(&mut lim, discard);
        // No more requests in flight than the members can take together.
        let depth = depth.clamp(1, MAX_QUEUE_DEPTH);
        let nmembers = l.slots.len();
        let mut members = KVec::with_capacity(nmembers, GFP_KERNEL)?;
        let mut filled = 0u64;
        let mut repl_of: [Option<MemberDev>; MAX_MEMBERS] = [const { None }; MAX_MEMBERS];
        for (s, d) in l.replacements {
            if let Some(r) = repl_of.get_mut(s) {
                *r = Some(d);
            }
        }
        for (s, (dev, repl)) in l.slots.into_iter().zip(repl_of.iter_mut()).enumerate() {
            if dev.is_some() {
                filled |= 1 << s;
            }
            members.push(
                Member {
                    dev: DevSlot::new(dev)?,
                    replacement: DevSlot::new(repl.take())?,
                    next_seq: AtomicU64::new(u64::MAX),
                    errors: AtomicU32::new(0),
                },
                GFP_KERNEL,
            )?;
        }
        let array_sectors = l.level.array_sectors();
        let array = Array::new(
            l.name,
            l.level,
            members,
            l.in_sync & filled,
            l.resync_point,
            l.meta,
            l.holder,
            l.module,
            self.wq,
            self.units.clone(),
        )?;
        for dev in l.spares {
            array.put_spare(dev)?;
        }
        if let Some((slots, repl, point, bitmap)) = l.rebuild {
            array.sync().resume_recovery(slots, repl, point, bitmap);
        }
        if l.verb == Verb::Create {
            if let Some(m) = array.meta() {
                m.write_initial(&array).map_err(|e| {
                    CtlError::new(e, "create: cannot write the superblocks", l.name_text)
                })?;
            }
        }
        let disk = Disk::add(
            l.name_text,
            lim,
            array_sectors,
            array.clone(),
            depth,
            self.wq,
        )
        .map_err(|e| CtlError::new(e, l.verb.cannot_add_disk(), l.name_text))?;
        array.for_each_dev(|d| disk.link_holder(d))?;
        let dir = SysfsDir::new(
            &disk.kobj(),
            c_str!("rraid"),
            KBox::pin(ArrayAttrs::new(array.clone()), GFP_KERNEL)?,
        )?;
        let bitmap_dir = SysfsDir::new(
            &dir.as_parent(),
            c_str!("bitmap"),
            KBox::pin(BitmapAttrs::new(array.clone()), GFP_KERNEL)?,
        )?;
        array.set_freezer(Some(disk.freezer()?));
        let dirs = array.add_dirs(dir.kobj_ref());
        self.registry.add(array.clone())?;
        let zones = array.level().zones();
        let entry = Entry {
            _bitmap_dir: bitmap_dir,
            _dir: dir,
            registry: self.registry.clone(),
            disk,
            array: array.clone(),
        };
        // On failure the entry's drop takes down what was made.
        dirs?;
        if let Some(m) = array.meta() {
            m.start_thread(&array)?;
        }
        arrays.put(entry)?;
        pr_info!(
            "{}: {} with {} members, {} KiB each, metadata {}\n",
            l.name_text,
            array.level().name(),
            nmembers,
            array.level().member_sectors() / 2,
            array.meta().map_or("none", |m| m.version().name())
        );
        if let Some((n, layout)) = zones {
            // Members of unequal size: the line above gives what each member holds in zone 0.
            pr_info!(
                "{}: {} zones over members of unequal size, layout {} ({}), {} KiB in all\n",
                l.name_text,
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
                l.name_text,
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

    /// Each member's size as the geometry takes it (data offset included), and the data
    /// offset: mdadm's choices with a superblock (`validate_geometry1`: the data offset from
    /// the first member, the size from the smallest), the whole member without.
    fn member_sizes(&self, devs: &[MemberDev]) -> Result<([u64; MAX_MEMBERS], u64), CtlError<'a>> {
        let mut sizes = [0u64; MAX_MEMBERS];
        let first = devs.first().map(|d| d.sectors()).unwrap_or(0);
        let chunk = match self.level {
            LevelKind::Raid1 => 0,
            _ => self.chunk_sectors,
        };
        let offset = match self.metadata {
            None => 0,
            Some(v) => self
                .data_offset
                .unwrap_or_else(|| meta_fmt::default_data_offset(v, first, chunk)),
        };
        let mut min = u64::MAX;
        for (slot, d) in devs.iter().enumerate() {
            let avail = match self.metadata {
                None => Some(d.sectors()),
                Some(v) => meta_fmt::avail_sectors(v, d.sectors(), offset),
            };
            let name = self.paths.get(slot).copied().unwrap_or("?");
            let avail = avail.filter(|&a| a > 0).ok_or(CtlError::new(
                EINVAL,
                "create: member too small for its superblock and data offset",
                name,
            ))?;
            if let Some(s) = sizes.get_mut(slot) {
                *s = avail;
            }
            min = min.min(avail);
        }
        if let Some(kib) = self.size_kib {
            // md's `component_size`: the same KiB of every member, which must hold it.
            let want = kib.saturating_mul(2);
            for (slot, size) in sizes.iter_mut().take(devs.len()).enumerate() {
                if *size < want {
                    let name = self.paths.get(slot).copied().unwrap_or("?");
                    return Err(CtlError::new(EINVAL, "create: size= exceeds member", name));
                }
                *size = want;
            }
        } else if self.metadata.is_some() && self.level != LevelKind::Raid0 {
            // mdadm's size: the smallest member's, rounded (RAID 1 to 64 KiB).
            let level = match self.level {
                LevelKind::Raid0 => 0,
                LevelKind::Raid1 => 1,
                LevelKind::Parity(l) => i32::from(l),
                LevelKind::Raid10 => 10,
            };
            let size = meta_fmt::default_size(level, min, chunk);
            for s in sizes.iter_mut().take(devs.len()) {
                *s = size;
            }
        }
        // The geometry counts the data offset in.
        for s in sizes.iter_mut().take(devs.len()) {
            *s = s.saturating_add(offset);
        }
        Ok((sizes, offset))
    }

    pub(super) fn geometry(
        &self,
        sizes: &[u64],
        data_offset: u64,
        stripe_wq: QueueRef,
    ) -> Result<Level, CtlError<'a>> {
        let geo = match self.level {
            LevelKind::Raid0 => {
                // md's zone table (1.5 KiB) lives on the heap. Matching on a reference copies
                // the geometry once, into the box; a moved Result costs more copies on this
                // stack (measured: 6 KiB for the frame).
                return match &Raid0::new(sizes, self.chunk_sectors, data_offset, self.raid0_layout)
                {
                    Ok(g) => Ok(Level::Raid0(KBox::new(*g, GFP_KERNEL)?)),
                    Err(e) => Err(self.geometry_error(*e)),
                };
            }
            LevelKind::Raid1 => Raid1::new(sizes, data_offset).map(Level::Raid1),
            LevelKind::Parity(l) => {
                let g = Raid5::new(
                    l,
                    self.layout.unwrap_or(Algorithm::LeftSymmetric),
                    sizes,
                    self.chunk_sectors,
                    None,
                    data_offset,
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
                data_offset,
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
            name: c_str!("assemble"),
            read: false,
            write: true,
        },
        Attr {
            name: c_str!("incremental"),
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
            5 | 6 => {
                let v = if idx == 5 {
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
            2 => self.assemble(input),
            3 => self.incremental(input),
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
                let slot = if idx == 5 {
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
