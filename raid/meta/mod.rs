//! md's v1.x metadata of a live array: its superblocks, events, and clean and dirty.
//!
//! The format and the decisions of assembly are pure code in `crate::meta`; this room carries
//! them out. [`Meta`] holds the array-wide superblock fields and, per device, what md keeps in
//! its rdev (device number and UUID, where the superblock and the data lie). Writing follows
//! md's `md_update_sb`:
//!
//! - a member-set change (a member failed, a spare came, a rebuild started or ended, a device
//!   left) adds 1 to `events` and rewrites the superblock on every device that is not faulty,
//!   spares included, each write `REQ_PREFLUSH | REQ_FUA` and waited for. Changes are noted
//!   from any context ([`Meta::note_change`]) and written from task context
//!   ([`Meta::flush`]); a failed write's completion waits for that ([`crate::raid::io`]).
//! - clean and active (`md_write_start`, safe mode): a write request is counted from
//!   `queue_rq` to its end; the worker marks the array active on its members, and waits for
//!   that, before it maps a write after a clean period ([`Meta::write_start`]). The metadata
//!   thread marks it clean once no write was in flight for `safe_mode_delay`. These two go
//!   `+1` and back `-1` on a healthy array and skip spares one event behind, as md's
//!   `can_decrease_events` and `sync_sbs`.
//! - an active array's superblock records `resync_offset` 0, a clean one the resync point,
//!   so a crash while active resyncs from the start; a rebuilding device records its
//!   `recovery_offset`, written at least every 1/16 of the job ([`Meta::checkpoint`]).
//!
//! - with a write-intent bitmap ([`bitmap`]), its superblock is written with the events
//!   before the superblocks are, and its daemon runs on the metadata thread.
//!
//! RAID 0 has no clean or dirty: its superblocks are written at create only, as md's.
//! `metadata=none` arrays have none of this.

pub mod bitmap;

use crate::meta::events::Events;
use crate::meta::super1::{
    probe_090, sb090_offset, Placement, Superblock, Version, FAIL_FAST, FEATURE_BITMAP_OFFSET,
    FEATURE_RAID0_LAYOUT, FEATURE_RECOVERY_BITMAP, FEATURE_RECOVERY_OFFSET, FEATURE_REPLACEMENT,
    ROLE_FAULTY, ROLE_SPARE, SB_BYTES, SB_MAGIC,
};
use crate::raid::level::Level;
use crate::raid::{Array, Role};
use crate::sys::kthread::{self, Thread};
use crate::sys::member::MemberDev;
use crate::sys::pagebuf::PageBuf;
use bitmap::Bitmap;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use kernel::{fmt, new_mutex, prelude::*, str::CString, sync::Arc, sync::Mutex};

/// md's default `safe_mode_delay`: 200 ms.
pub const SAFE_MODE_MS: u32 = 200;

/// What md keeps per device (its rdev) that the superblock records.
#[derive(Clone, Copy)]
pub struct DevMeta {
    /// The device.
    pub devt: u32,
    /// md's `dev_number` (`desc_nr`): the device's index in `dev_roles`.
    pub dev_number: u32,
    /// The device UUID.
    pub uuid: [u8; 16],
    /// Where its superblock, data and bad-block log lie.
    pub place: Placement,
    /// `devflags`, `bblog_shift` and `cnt_corrected_read`, kept as read.
    pub devflags: u8,
    /// See `devflags`.
    pub bblog_shift: u8,
    /// See `devflags`.
    pub corrected: u32,
    /// The events its superblock holds on disk.
    pub sb_events: u64,
    /// Its `dev_roles` entry as last written (or read): what the superblocks keep saying
    /// while the device moves between its places (spares, a slot, a replacement).
    pub role: u16,
}

impl DevMeta {
    /// The record of device `devt`, whose superblock is `sb`.
    pub fn from_super(devt: u32, sb: &Superblock) -> Self {
        Self {
            devt,
            dev_number: sb.dev_number,
            uuid: sb.device_uuid,
            place: Placement {
                super_offset: sb.super_offset,
                data_offset: sb.data_offset,
                data_size: sb.data_size,
                bblog_offset: sb.bblog_offset,
                bblog_size: sb.bblog_size,
            },
            devflags: sb.devflags,
            bblog_shift: sb.bblog_shift,
            corrected: sb.cnt_corrected_read,
            sb_events: sb.events,
            role: sb.own_role(),
        }
    }
}

/// A device's part, as its superblock records it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum DevRole {
    /// In slot `0`, in sync.
    InSync(u32),
    /// In slot `0`, being rebuilt.
    Recovering(u32),
    /// Being built as slot `0`'s replacement.
    Replacement(u32),
    Spare,
    Faulty,
}

struct Inner {
    /// The array-wide fields; per-device ones are filled in for each write.
    sb: KBox<Superblock>,
    devs: KVec<DevMeta>,
    /// md's event count and `can_decrease_events` (the step rules are `meta::events`').
    events: Events,
    /// The superblocks on disk say clean.
    clean_on_disk: bool,
    /// RAID 0's superblocks are written (at create), never again.
    raid0_done: bool,
    buf: PageBuf,
}

/// The metadata of an array with superblocks.
#[pin_data]
pub struct Meta {
    version: Version,
    /// RAID 0: written once, at create.
    raid0: bool,
    #[pin]
    inner: Mutex<Inner>,
    /// Write requests started, ever: the safe-mode timer's sign of life.
    gen: AtomicU64,
    /// The superblocks say (or are about to say) active: the fast path of `write_start`.
    active: AtomicBool,
    /// A member-set change waits to be written.
    change: AtomicBool,
    safe_mode_ms: AtomicU32,
    /// The events the superblocks hold (or are being written with).
    events_now: AtomicU64,
    bitmap: Option<Pin<KBox<Bitmap>>>,
    #[pin]
    thread: Mutex<Option<Thread<Array>>>,
}

impl Meta {
    /// The metadata of a new array: `sb` holds the array-wide fields, `devs` each device's,
    /// `events` what the superblocks on disk hold, `clean` whether they say clean.
    pub fn new(
        version: Version,
        sb: KBox<Superblock>,
        devs: KVec<DevMeta>,
        events: u64,
        clean: bool,
        created: bool,
        bitmap: Option<Pin<KBox<Bitmap>>>,
    ) -> Result<impl PinInit<Self>> {
        let raid0 = sb.level == 0;
        let raid0_done = raid0 && !created;
        let buf = PageBuf::new(false)?;
        Ok(pin_init!(Self {
            version,
            raid0,
            inner <- new_mutex!(
                Inner {
                    sb,
                    devs,
                    events: Events::new(events),
                    clean_on_disk: clean,
                    raid0_done,
                    buf,
                },
                "rraid::meta"
            ),
            gen: AtomicU64::new(0),
            active: AtomicBool::new(!clean),
            change: AtomicBool::new(false),
            safe_mode_ms: AtomicU32::new(SAFE_MODE_MS),
            events_now: AtomicU64::new(events),
            bitmap,
            thread <- new_mutex!(None, "rraid::meta_thread"),
        }))
    }

    /// The write-intent bitmap, if the array has one.
    pub fn bitmap(&self) -> Option<&Bitmap> {
        self.bitmap.as_deref()
    }

    /// The events the superblocks hold.
    pub fn events(&self) -> u64 {
        self.events_now.load(Ordering::Acquire)
    }

    /// The metadata version.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The array UUID, as the superblock holds it.
    pub fn uuid(&self) -> [u8; 16] {
        self.inner.lock().sb.set_uuid
    }

    /// `safe_mode_delay` in milliseconds (0: never marked clean while it runs).
    pub fn safe_mode_ms(&self) -> u32 {
        self.safe_mode_ms.load(Ordering::Relaxed)
    }

    /// Sets `safe_mode_delay`.
    pub fn set_safe_mode_ms(&self, ms: u32) {
        self.safe_mode_ms.store(ms, Ordering::Relaxed);
    }

    /// Whether the superblocks say (or are about to say) active.
    pub fn is_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// A write request started (`queue_rq`: atomic context).
    pub(crate) fn write_queued(&self) {
        self.gen.fetch_add(1, Ordering::Relaxed);
    }

    /// A member-set change happened; any context. [`Meta::flush`] writes it.
    pub fn note_change(&self) {
        if !self.raid0 {
            self.change.store(true, Ordering::Release);
        }
    }

    /// Drops device `devt`'s record: it left the array (`remove`), or never joined it. Until
    /// then a device with a record and no place in the array is between places, and keeps it.
    pub fn forget(&self, devt: u32) {
        let mut i = self.inner.lock();
        let mut devs = match KVec::with_capacity(i.devs.len(), GFP_KERNEL) {
            Ok(v) => v,
            // Kept: it is written nowhere, and its last role (a spare's or a faulty device's)
            // stays in `dev_roles`, which is what md's keeps for a faulty one.
            Err(_) => return,
        };
        for d in i.devs.iter().filter(|d| d.devt != devt) {
            // Cannot fail: the capacity is there.
            let _ = devs.push(*d, GFP_KERNEL);
        }
        i.devs = devs;
        drop(i);
        self.note_change();
    }

    /// Records device `devt`'s failfast flag in its `devflags`, for the next superblock write.
    pub fn set_failfast(&self, devt: u32, on: bool) {
        let mut i = self.inner.lock();
        if let Some(d) = i.devs.iter_mut().find(|d| d.devt == devt) {
            d.devflags = if on {
                d.devflags | FAIL_FAST
            } else {
                d.devflags & !FAIL_FAST
            };
        }
        drop(i);
        self.note_change();
    }

    /// Adds a device (a spare joining) with its own device number and UUID; it gets its
    /// superblock at the next write.
    pub fn add_dev(&self, dev: &MemberDev, data_offset: u64) -> Result {
        let mut i = self.inner.lock();
        let used = |n: u32| i.devs.iter().any(|d| d.dev_number == n);
        let mut n = 0;
        while used(n) {
            n += 1;
        }
        if n as usize >= crate::meta::super1::MAX_DEV {
            return Err(ENOSPC);
        }
        let avail = crate::meta::super1::avail_sectors(self.version, dev.sectors(), data_offset);
        if !avail.is_some_and(|a| a >= i.sb.size) {
            return Err(ENOSPC);
        }
        let mut buf = PageBuf::new(false)?;
        wipe_others(dev, Some(self.version), &mut buf)?;
        let bm = self.bitmap().map_or(0, |b| b.reserved_bytes());
        let rec = new_dev(self.version, dev, n, i.sb.size, data_offset, bm);
        i.devs.push(rec, GFP_KERNEL)?;
        if i.sb.max_dev <= n {
            i.sb.max_dev = n + 1;
        }
        drop(i);
        self.note_change();
        Ok(())
    }

    /// md's `super_1_validate` for a device joining a running array with a bitmap: one that
    /// was a member of this array, knows its slot, and is not older than the bitmap's
    /// `events_cleared`, goes back to that slot (if free: not in `busy`) with its device
    /// number and UUID, and only what the bitmap marks is rebuilt. Returns the slot; `None`
    /// for a spare (rebuilt whole). `EBUSY` while its device number is still another device's
    /// (md's `bind_rdev_to_array`): the old device must be removed first.
    pub fn returning(
        &self,
        array: &Array,
        dev: &MemberDev,
        busy: u64,
    ) -> Result<Option<usize>, (Error, &'static str)> {
        let Some(b) = self.bitmap() else {
            return Ok(None);
        };
        let mut buf = PageBuf::new(false).map_err(|e| (e, "no memory"))?;
        let at = self.version.sb_offset(dev.sectors());
        if dev.read_meta(at, &mut buf, SB_BYTES).is_err() {
            return Ok(None);
        }
        let Ok(sb) = Superblock::decode(buf.bytes(), self.version, at) else {
            return Ok(None);
        };
        let mut i = self.inner.lock();
        let role = u32::from(sb.own_role());
        let whole = sb.feature_map & FEATURE_RECOVERY_OFFSET != 0
            && sb.feature_map & FEATURE_RECOVERY_BITMAP == 0;
        if sb.set_uuid != i.sb.set_uuid
            || sb.events < b.events_cleared()
            || whole
            || role >= i.sb.raid_disks
            || busy & (1u64 << (role & 63)) != 0
            || sb.data_offset != array.level().data_offset()
        {
            return Ok(None);
        }
        if i.devs.iter().any(|d| d.dev_number == sb.dev_number) {
            return Err((
                EBUSY,
                "its device number is still another device's: remove that one first",
            ));
        }
        dev.set_failfast(sb.devflags & FAIL_FAST != 0);
        let rec = DevMeta::from_super(dev.devt(), &sb);
        i.devs
            .push(rec, GFP_KERNEL)
            .map_err(|_| (ENOMEM, "no memory"))?;
        drop(i);
        self.note_change();
        Ok(Some(role as usize))
    }

    /// Writes a noted member-set change, if any. Task context; takes no array lock but the
    /// spares list.
    pub fn flush(&self, array: &Array) {
        if self.change.swap(false, Ordering::AcqRel) {
            let mut i = self.inner.lock();
            let _ = self.update(array, &mut i, false);
        }
    }

    /// Records where rebuilds (and, on a clean array, the resync) are: at least every 1/16 of
    /// a job, and when it stops. Task context.
    pub fn checkpoint(&self, array: &Array) {
        self.change.store(false, Ordering::Release);
        let mut i = self.inner.lock();
        let _ = self.update(array, &mut i, false);
    }

    /// md's `md_write_start`: before a write is mapped, the superblocks say active. Task
    /// context (a worker); the fast path reads one flag.
    pub fn write_start(&self, array: &Array) {
        if self.raid0 || self.active.load(Ordering::SeqCst) {
            return;
        }
        let mut i = self.inner.lock();
        if i.clean_on_disk {
            i.clean_on_disk = false;
            let _ = self.update(array, &mut i, true);
        }
        self.active.store(true, Ordering::SeqCst);
    }

    /// md's safe mode: marks the array clean if no write request is in flight, and none
    /// starts meanwhile (a writer counts itself before it reads `active`, this publishes
    /// `active` false before it reads the count).
    fn try_clean(&self, array: &Array) -> bool {
        let mut i = self.inner.lock();
        if i.clean_on_disk {
            return true;
        }
        self.active.store(false, Ordering::SeqCst);
        if array.write_reqs.load(Ordering::SeqCst) != 0 {
            self.active.store(true, Ordering::SeqCst);
            return false;
        }
        i.clean_on_disk = true;
        let _ = self.update(array, &mut i, true);
        true
    }

    /// Leaves the array clean: at `remove` and at reboot. Writes in flight are not waited
    /// for (at `remove` there are none).
    pub fn stop_writes(&self, array: &Array) {
        self.flush(array);
        // md's `md_bitmap_flush`: passes enough to clear every idle chunk.
        if let Some(b) = self.bitmap() {
            for _ in 0..3 {
                b.daemon(array, true);
            }
        }
        if !self.raid0 {
            let _ = self.try_clean(array);
        }
    }

    /// Writes the superblocks of every device that is not faulty (md's `md_update_sb`). `clean`
    /// says this is only a clean/active step, which may skip spares and take back the last
    /// step's event.
    /// Returns how many superblock writes failed.
    fn update(&self, array: &Array, i: &mut Inner, clean_step: bool) -> usize {
        if i.raid0_done {
            return 0;
        }
        i.raid0_done = self.raid0;
        // Each device's role, once. A device between places (a spare joining, one taking a
        // slot) has none for now: it keeps its last, and is written at the next update, which
        // its move asks for. Only `forget` drops a record.
        let mut roles: KVec<Option<DevRole>> = KVec::new();
        for d in i.devs.iter() {
            if roles.push(role_of(array, d.devt), GFP_KERNEL).is_err() {
                pr_err!("{}: no memory to write superblocks\n", array.name());
                return 1;
            }
        }
        let clean = i.clean_on_disk && !array.sync().needs_resync();
        let nospares = i.events.step(clean_step, array.degraded() > 0, clean);
        let events = i.events.count;
        self.events_now.store(events, Ordering::Release);
        // md's `md_bitmap_update_sb` comes first: a bitmap never holds fewer events than the
        // superblocks, or assembly would call it stale. Every page when devices changed, so a
        // device that just took a slot holds the whole bitmap.
        if let Some(b) = self.bitmap() {
            b.update_sb(array, events, !clean_step);
        }
        i.sb.utime = crate::sys::real_seconds();
        i.sb.events = events;
        i.sb.resync_offset = if i.clean_on_disk || self.raid0 {
            array.sync().resync_offset()
        } else {
            0
        };
        // The roles, as md's `super_1_sync`.
        for r in i.sb.dev_roles.iter_mut() {
            *r = ROLE_SPARE;
        }
        let Inner { sb, devs, .. } = &mut *i;
        for (d, role) in devs.iter_mut().zip(roles.iter()) {
            if let Some(role) = role {
                d.role = match *role {
                    DevRole::InSync(s) | DevRole::Recovering(s) | DevRole::Replacement(s) => {
                        s as u16
                    }
                    DevRole::Spare => ROLE_SPARE,
                    DevRole::Faulty => ROLE_FAULTY,
                };
            }
            if let Some(r) = sb.dev_roles.get_mut(d.dev_number as usize) {
                *r = d.role;
            }
        }
        let max_dev = devs.iter().map(|d| d.dev_number + 1).max().unwrap_or(0);
        if max_dev > i.sb.max_dev {
            i.sb.max_dev = max_dev;
        }
        let point = array.sync().rebuild_offset();
        let mut failed = 0;
        let Inner {
            sb: asb,
            devs,
            events: ev,
            buf,
            ..
        } = &mut *i;
        for (d, role) in devs.iter_mut().zip(roles.iter()) {
            let Some(role) = *role else { continue };
            if role == DevRole::Faulty
                || !ev.needs_write(d.sb_events, role == DevRole::Spare, nospares)
            {
                continue;
            }
            let mut sb: Superblock = **asb;
            sb.feature_map &= FEATURE_RAID0_LAYOUT | FEATURE_BITMAP_OFFSET;
            sb.dev_number = d.dev_number;
            sb.device_uuid = d.uuid;
            sb.super_offset = d.place.super_offset;
            sb.data_offset = d.place.data_offset;
            sb.data_size = d.place.data_size;
            sb.bblog_offset = d.place.bblog_offset;
            sb.bblog_size = d.place.bblog_size;
            sb.bblog_shift = d.bblog_shift;
            sb.devflags = d.devflags;
            sb.cnt_corrected_read = d.corrected;
            sb.recovery_offset = 0;
            match role {
                DevRole::Recovering(_) => {
                    sb.feature_map |= FEATURE_RECOVERY_OFFSET;
                    // A re-added device rebuilt from the bitmap resumes as such.
                    if array.sync().bitmap_recovery() {
                        sb.feature_map |= FEATURE_RECOVERY_BITMAP;
                    }
                    sb.recovery_offset = point;
                }
                DevRole::Replacement(_) => {
                    sb.feature_map |= FEATURE_RECOVERY_OFFSET | FEATURE_REPLACEMENT;
                    sb.recovery_offset = point;
                }
                _ => {}
            }
            if write_one(array, buf, &sb, d.devt).is_ok() {
                d.sb_events = events;
            } else {
                failed += 1;
            }
        }
        failed
    }

    /// Writes the first superblocks of a new array; fails if any device's write failed.
    pub fn write_initial(&self, array: &Array) -> Result {
        let mut i = self.inner.lock();
        if self.update(array, &mut i, false) == 0 {
            Ok(())
        } else {
            Err(EIO)
        }
    }

    /// Starts the metadata thread (safe mode), for arrays that have clean and dirty.
    pub fn start_thread(&self, array: &Arc<Array>) -> Result {
        if self.raid0 {
            return Ok(());
        }
        let name = CString::try_from_fmt(fmt!("{}_meta", array.name()))?;
        let t = Thread::spawn(&name, array.clone(), meta_thread)?;
        *self.thread.lock() = Some(t);
        Ok(())
    }

    /// Stops the metadata thread, waiting for it.
    pub fn stop_thread(&self) {
        let t = self.thread.lock().take();
        drop(t);
    }
}

/// The metadata thread: writes noted changes, and marks the array clean once no write was in
/// flight for `safe_mode_delay` (two quiet looks half the delay apart).
fn meta_thread(array: &Array) {
    let Some(meta) = array.meta() else {
        return;
    };
    let mut quiet = 0u32;
    let mut last_gen = meta.gen.load(Ordering::Relaxed);
    while !kthread::should_stop() {
        let delay = meta.safe_mode_ms();
        kthread::sleep_ms(if delay == 0 {
            100
        } else {
            (delay / 2).clamp(5, 100)
        });
        meta.flush(array);
        if let Some(b) = meta.bitmap() {
            b.daemon(array, false);
        }
        let gen = meta.gen.load(Ordering::Relaxed);
        if gen != last_gen || array.write_reqs.load(Ordering::Acquire) != 0 || delay == 0 {
            last_gen = gen;
            quiet = 0;
            continue;
        }
        quiet = quiet.saturating_add((delay / 2).clamp(5, 100));
        if quiet >= delay && meta.active.load(Ordering::Acquire) && meta.try_clean(array) {
            quiet = 0;
        }
    }
}

/// What device `devt` is to the array now, as its superblock records it, if it belongs to it.
fn role_of(array: &Array, devt: u32) -> Option<DevRole> {
    let (in_sync, sync) = (array.in_sync(), array.sync());
    let bit = |s: usize| 1u64 << s;
    Some(match array.role_of(devt)? {
        Role::Slot(s) if in_sync & bit(s) != 0 => DevRole::InSync(s as u32),
        Role::Slot(s) if sync.recovering() & bit(s) != 0 => DevRole::Recovering(s as u32),
        Role::Replacement(s) if sync.replacing() & bit(s) != 0 => DevRole::Replacement(s as u32),
        Role::Spare { faulty: false } => DevRole::Spare,
        Role::Slot(_) | Role::Replacement(_) | Role::Spare { faulty: true } => DevRole::Faulty,
    })
}

/// Encodes `sb` and writes it to device `devt` of the array. A failed write fails the member
/// holding it (md's `super_written`), which is recorded at the next write.
fn write_one(array: &Array, buf: &mut PageBuf, sb: &Superblock, devt: u32) -> Result {
    if sb.encode(buf.bytes_mut()).is_err() {
        return Err(EINVAL);
    }
    let slot = match array.role_of(devt) {
        Some(Role::Slot(s)) => Some(s),
        _ => None,
    };
    let res = array.with_dev(devt, |dev| {
        let len = sb.sb_bytes(dev.logical_block_size()).min(SB_BYTES);
        let ff = slot.is_some_and(|s| array.meta_failfast(dev, s));
        dev.write_meta(sb.super_offset, buf, len, ff)
    });
    match res {
        Some(Ok(())) => Ok(()),
        Some(Err(st)) => {
            pr_err!(
                "{}: superblock write failed on device {}:{} (status {:?})\n",
                array.name(),
                devt >> 20,
                devt & 0xfffff,
                st
            );
            // Where the device is now: it may have left its slot during the write.
            if let Some(Role::Slot(s)) = array.role_of(devt) {
                let _ = array.fail_member(s);
            }
            Err(EIO)
        }
        None => Err(ENODEV),
    }
}

/// The array-wide superblock fields of a new array (mdadm's `init_super1`): `level` as built,
/// `members` slots, the UUID and name.
pub fn new_array_sb(
    level: &Level,
    members: usize,
    uuid: [u8; 16],
    name: &str,
) -> Result<KBox<Superblock>> {
    // mdadm's superblock holds the roles of up to 128 devices in 512 bytes.
    let mut sb = KBox::new(Superblock::new(MDADM_MAX_DEV), GFP_KERNEL)?;
    sb.set_uuid = uuid;
    sb.set_name_str(name);
    sb.ctime = crate::sys::real_seconds();
    sb.utime = sb.ctime;
    sb.level = level.number();
    sb.raid_disks = members as u32;
    sb.chunksize = level.chunk_sectors() as u32;
    match level.zones() {
        // RAID 0: md's layout only over members of unequal size, and no component size.
        Some((_, layout)) => {
            sb.layout = layout.number();
            sb.feature_map |= FEATURE_RAID0_LAYOUT;
        }
        None => sb.layout = u32::try_from(level.layout()).unwrap_or(0),
    }
    sb.size = if level.number() == 0 {
        0
    } else {
        level.member_sectors()
    };
    sb.resync_offset = 0;
    Ok(sb)
}

/// Roles mdadm's 1.x superblock of up to 128 devices has room for (a 512-byte superblock).
const MDADM_MAX_DEV: u32 = 128;

/// The record of a new array's member `slot` (mdadm's `add_to_super1`): device number
/// `slot`, a random device UUID, mdadm's placement.
pub fn new_dev(
    version: Version,
    dev: &MemberDev,
    slot: u32,
    size: u64,
    data_offset: u64,
    bitmap_bytes: u64,
) -> DevMeta {
    let mut uuid = [0u8; 16];
    crate::sys::random_bytes(&mut uuid);
    DevMeta {
        devt: dev.devt(),
        dev_number: slot,
        uuid,
        place: if bitmap_bytes == 0 {
            crate::meta::super1::placement(version, dev.sectors(), size, data_offset)
        } else {
            crate::meta::super1::placement_with_bitmap(
                version,
                dev.sectors(),
                size,
                data_offset,
                bitmap_bytes,
            )
        },
        devflags: 0,
        bblog_shift: 0,
        corrected: 0,
        sb_events: 0,
        role: ROLE_SPARE,
    }
}

/// Zeroes v1.x superblocks of other versions than `keep` on `dev`, and a 0.90 one, as mdadm's
/// create wipes old metadata first, so that assembly (rraid's or mdadm's) finds only the new
/// one.
pub fn wipe_others(dev: &MemberDev, keep: Option<Version>, buf: &mut PageBuf) -> Result {
    let v1 = |b: &[u8]| b.get(..4) == Some(&SB_MAGIC.to_le_bytes()[..]);
    for v in [Version::V1_0, Version::V1_1, Version::V1_2] {
        if Some(v) != keep {
            wipe_at(dev, v.sb_offset(dev.sectors()), buf, v1)?;
        }
    }
    // A 0.90 superblock lies in the last 64 KiB-aligned 64 KiB, inside a 1.1 or 1.2 array's
    // data: mdadm would still find the old array there until that data is written.
    let at = sb090_offset(dev.sectors());
    if at > 0 {
        wipe_at(dev, at, buf, probe_090)?;
    }
    Ok(())
}

/// Zeroes the superblock at `at` on `dev` if `found` recognises it; one that cannot be read is
/// left alone.
fn wipe_at(dev: &MemberDev, at: u64, buf: &mut PageBuf, found: impl Fn(&[u8]) -> bool) -> Result {
    if dev.read_meta(at, buf, SB_BYTES).is_ok() && found(buf.bytes()) {
        buf.bytes_mut().fill(0);
        dev.write_meta(at, buf, SB_BYTES, false).map_err(|_| EIO)?;
    }
    Ok(())
}
