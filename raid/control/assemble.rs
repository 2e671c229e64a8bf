//! `/sys/kernel/rraid/assemble`: an array from the md v1.x superblocks on its devices, as md's
//! `analyze_sbs` with mdadm's `--assemble --run`.
//!
//! `NAME [force] DEVICE...`: the devices take the roles their superblocks record, whatever the
//! order given; spares come back as spares; a device more than one event behind the freshest
//! is left out ("kicking non-fresh"). Anything that does not make one array rraid can run is
//! refused with one `rraid:` line before a single byte is written.

use super::parse::{text, CreateSpec, CtlError, LevelKind};
use super::{open_members, Control, Launch, Verb};
use crate::layout::raid0::Raid0Layout;
use crate::layout::raid10::Raid10Layout;
use crate::layout::raid5::Algorithm;
use crate::layout::MAX_MEMBERS;
use crate::meta::assemble::{analyze, AssembleError, Part};
use crate::meta::bitmap::{self as bitmap_fmt, BitmapError, BitmapSuper};
use crate::meta::super1::{
    probe_090, sb090_offset, SbError, Superblock, Version, FAIL_FAST, FEATURE_BITMAP_OFFSET,
    FEATURE_RAID0_LAYOUT, FEATURE_RECOVERY_BITMAP, MAX_SECTOR, SB_BYTES, SB_MAGIC,
};
use crate::raid::meta::bitmap::Bitmap;
use crate::raid::meta::{DevMeta, Meta};
use crate::raid::ArrayName;
use crate::sys::member::{Holder, MemberDev};
use crate::sys::module_ref::ModuleRef;
use crate::sys::pagebuf::{PageBuf, PAGE_BYTES};
use kernel::{alloc::KVVec, prelude::*};

/// A device handed to `incremental`, waiting for the rest of its array.
pub(super) struct Pending {
    uuid: [u8; 16],
    /// Its path, as written.
    path: KVec<u8>,
    /// A member by its own superblock (not a spare).
    member: bool,
}

/// A parsed `assemble` line.
struct AssembleSpec<'a> {
    name: ArrayName,
    name_text: &'a str,
    /// md's `start_dirty_degraded`.
    force: bool,
    paths: KVec<&'a str>,
}

fn parse_assemble(input: &[u8]) -> Result<AssembleSpec<'_>, CtlError<'_>> {
    let s = text(input)?;
    let mut words = s.split_ascii_whitespace();
    let first = words
        .next()
        .ok_or(CtlError::new(EINVAL, "assemble: empty line", ""))?;
    let name = ArrayName::parse(first.as_bytes()).ok_or(CtlError::new(
        EINVAL,
        "assemble: name must be rraid followed by 1 to 3 digits",
        first,
    ))?;
    let mut force = false;
    let mut paths = KVec::new();
    for w in words {
        if w == "force" {
            force = true;
        } else if w.starts_with('/') && w.len() <= 255 {
            if paths.len() >= 2 * MAX_MEMBERS {
                return Err(CtlError::new(EINVAL, "assemble: too many devices", w));
            }
            paths.push(w, GFP_KERNEL)?;
        } else {
            return Err(CtlError::new(EINVAL, "assemble: unknown word", w));
        }
    }
    if paths.is_empty() {
        return Err(CtlError::new(EINVAL, "assemble: no devices given", first));
    }
    Ok(AssembleSpec {
        name,
        name_text: first,
        force,
        paths,
    })
}

/// Why a superblock was refused, in words.
fn sb_error(e: SbError) -> &'static str {
    match e {
        SbError::Short | SbError::NoMagic | SbError::Major(_) => {
            "assemble: no md v1.x superblock on the device"
        }
        SbError::Version090 => "assemble: metadata 0.90 is not supported",
        SbError::MaxDev(_) => "assemble: superblock has more than 384 device roles",
        SbError::Checksum { .. } => "assemble: superblock checksum is wrong",
        SbError::Padding => "assemble: superblock padding is not zero (a newer format?)",
        SbError::DataSize => "assemble: superblock data_size is under 10 sectors",
        SbError::UnknownFeature(_) => "assemble: superblock has unknown feature bits",
        SbError::Offset { .. } => "assemble: superblock records another position",
        SbError::DataOffset => "assemble: superblock data offset overlaps the superblock",
        SbError::Raid0Layout => "assemble: RAID 0 layout feature on another level",
        SbError::BadBlockLog => "assemble: superblock bad-block log is malformed",
    }
}

/// Reads the superblock of `dev`: 1.2, 1.1 or 1.0, whichever carries md's magic at its place.
fn read_sb(dev: &MemberDev, buf: &mut PageBuf) -> Result<(Version, Superblock), &'static str> {
    let size = dev.sectors();
    for v in [Version::V1_2, Version::V1_1, Version::V1_0] {
        let at = v.sb_offset(size);
        if at.saturating_add(8) > size || dev.read_meta(at, buf, SB_BYTES).is_err() {
            continue;
        }
        if buf.bytes().get(..4) != Some(&SB_MAGIC.to_le_bytes()[..]) {
            continue;
        }
        let sb = Superblock::decode(buf.bytes(), v, at).map_err(sb_error)?;
        if let Some((_, feature)) = sb.unsupported() {
            return Err(feature_error(feature));
        }
        if !sb.fits(v, size) {
            return Err("assemble: superblock data_size exceeds the device");
        }
        return Ok((v, sb));
    }
    let at = sb090_offset(size);
    if at < size && dev.read_meta(at, buf, SB_BYTES).is_ok() && probe_090(buf.bytes()) {
        return Err("assemble: metadata 0.90 is not supported");
    }
    Err("assemble: no md v1.x superblock on the device")
}

/// Reads the write-intent bitmap recorded by `sb` on the member in sync `dev` (md's
/// `md_bitmap_read_sb` and `md_bitmap_init_from_disk`). A bitmap with fewer events than the
/// array is stale: all its chunks count as set. Set chunks must be synced from `resync_point`
/// on, or everywhere when the array is `degraded` and writes may have missed a member since
/// the bitmap was last cleared.
fn load_bitmap(
    v: Version,
    dev: &MemberDev,
    sb: &Superblock,
    sync: u64,
    events: u64,
    degraded: bool,
    resync_point: u64,
) -> Result<Pin<KBox<Bitmap>>, &'static str> {
    const NOMEM: &str = "assemble: no memory for the bitmap";
    let offset = i64::from(sb.bitmap_offset as i32);
    let at = u64::try_from(v.sb_offset(dev.sectors()) as i64 + offset)
        .map_err(|_| "assemble: bitmap offset outside the device")?;
    let mut buf = PageBuf::new(false).map_err(|_| NOMEM)?;
    dev.read_meta(at, &mut buf, PAGE_BYTES)
        .map_err(|_| "assemble: cannot read the bitmap")?;
    let mut bsb = BitmapSuper::decode(buf.bytes()).map_err(bitmap_error)?;
    if bsb.uuid != sb.set_uuid {
        return Err("assemble: bitmap superblock UUID mismatch");
    }
    let stale = bsb.is_stale(events);
    // As md: the size is the array's, whatever the bitmap recorded.
    bsb.sync_size = sync;
    let bytes = usize::try_from(bitmap_fmt::bytes(sync, bsb.chunksize, 512))
        .map_err(|_| "assemble: bitmap too large")?;
    let mut img: KVVec<u8> = KVVec::with_capacity(bytes, GFP_KERNEL).map_err(|_| NOMEM)?;
    let mut from = 0;
    while from < bytes {
        let len = (bytes - from).min(PAGE_BYTES);
        dev.read_meta(at + (from / 512) as u64, &mut buf, len)
            .map_err(|_| "assemble: cannot read the bitmap")?;
        img.extend_from_slice(buf.bytes().get(..len).unwrap_or(&[]), GFP_KERNEL)
            .map_err(|_| NOMEM)?;
        from += len;
    }
    if stale {
        pr_warn!(
            "rraid: bitmap is out of date ({} < {}): every chunk is resynced\n",
            bsb.events,
            events
        );
    }
    let needed_from = if !degraded || bsb.events_cleared == events {
        resync_point
    } else {
        0
    };
    Bitmap::new(v, offset, bsb, Some(&img), stale, needed_from).map_err(|e| {
        if e == ENOMEM {
            NOMEM
        } else {
            "assemble: bitmap geometry not supported"
        }
    })
}

/// The refusal of a bitmap superblock md would refuse.
fn bitmap_error(_e: BitmapError) -> &'static str {
    "assemble: bitmap superblock is invalid"
}

/// The refusal of a feature rraid does not implement, naming it.
fn feature_error(feature: &str) -> &'static str {
    match feature {
        "bad blocks" => "assemble: feature not supported: bad blocks recorded",
        "reshape" => "assemble: feature not supported: reshape in progress",
        "reshape backwards" => "assemble: feature not supported: reshape backwards",
        "new offset" => "assemble: feature not supported: new data offset",
        "clustered" => "assemble: feature not supported: clustered",
        "journal" => "assemble: feature not supported: journal",
        "ppl" => "assemble: feature not supported: ppl",
        "multiple ppls" => "assemble: feature not supported: multiple ppls",
        _ => "assemble: feature not supported",
    }
}

fn analyze_error(e: AssembleError) -> (&'static str, usize) {
    match e {
        AssembleError::Empty => ("assemble: no devices", 0),
        AssembleError::Different { b, .. } => ("assemble: devices of different arrays", b),
        AssembleError::Duplicate { b, .. } => (
            "assemble: two devices with the same device number or UUID (one disk seen twice?)",
            b,
        ),
        AssembleError::SlotTaken { b, .. } => ("assemble: two devices claim one slot", b),
        AssembleError::BadRole { a, .. } => ("assemble: a device role out of range", a),
        AssembleError::RaidDisks(_) => ("assemble: raid_disks out of range (1 to 64)", 0),
    }
}

impl Control {
    pub(super) fn assemble<'a>(&self, input: &'a [u8]) -> Result<(), CtlError<'a>> {
        let spec = parse_assemble(input)?;
        let mut arrays = self.arrays.lock();
        if arrays.iter().any(|e| e.array.name == spec.name) {
            return Err(CtlError::new(
                EEXIST,
                "assemble: array exists",
                spec.name_text,
            ));
        }
        let module = ModuleRef::get(self.module)
            .map_err(|e| CtlError::new(e, "assemble: module is unloading", ""))?;
        let holder = Holder::new()?;
        let devs = open_members(Verb::Assemble, &spec.paths, &holder)?;
        let mut buf = PageBuf::new(false)?;
        let mut sbs: KVec<Superblock> = KVec::with_capacity(devs.len(), GFP_KERNEL)?;
        let mut version = None;
        for (d, path) in devs.iter().zip(spec.paths.iter()) {
            let (v, sb) = read_sb(d, &mut buf).map_err(|why| CtlError::new(EINVAL, why, path))?;
            if version.is_some_and(|x| x != v) {
                return Err(CtlError::new(
                    EINVAL,
                    "assemble: devices carry different metadata versions",
                    path,
                ));
            }
            version = Some(v);
            sbs.push(sb, GFP_KERNEL)?;
        }
        let version = version.ok_or(CtlError::new(EINVAL, "assemble: no devices", ""))?;
        let mut parts = KVec::with_capacity(devs.len(), GFP_KERNEL)?;
        for _ in 0..devs.len() {
            parts.push(Part::Spare, GFP_KERNEL)?;
        }
        let sum = analyze(&sbs, &mut parts).map_err(|e| {
            let (why, i) = analyze_error(e);
            CtlError::new(EINVAL, why, spec.paths.get(i).copied().unwrap_or(""))
        })?;
        let fresh = sbs.get(sum.freshest).ok_or(EINVAL)?;
        let (level, layout, layout10, raid0_layout) = self.shape(&spec, fresh)?;
        let n = fresh.raid_disks as usize;
        let offset = fresh.data_offset;
        for (sb, path) in sbs.iter().zip(spec.paths.iter()) {
            if sb.data_offset != offset {
                return Err(CtlError::new(
                    EINVAL,
                    "assemble: devices with different data offsets are not supported",
                    path,
                ));
            }
        }
        // Sizes as the geometry takes them: md's component size, or on RAID 0 each member's
        // data size, with the data offset.
        let mut sizes = [0u64; MAX_MEMBERS];
        for s in sizes.iter_mut().take(n) {
            *s = offset.saturating_add(fresh.size);
        }
        if level == LevelKind::Raid0 {
            for (p, sb) in parts.iter().zip(sbs.iter()) {
                if let Part::Slot { slot, .. } = p {
                    if let Some(s) = sizes.get_mut(*slot as usize) {
                        *s = offset.saturating_add(sb.data_size);
                    }
                }
            }
            if sum.in_sync.count_ones() as usize != n {
                return Err(CtlError::new(
                    EINVAL,
                    "assemble: RAID 0 needs all its members",
                    spec.name_text,
                ));
            }
        }
        let cs = CreateSpec {
            name: spec.name,
            name_text: spec.name_text,
            level,
            chunk_sectors: u64::from(fresh.chunksize),
            assume_clean: false,
            layout,
            layout10,
            raid0_layout,
            size_kib: None,
            metadata: Some(version),
            data_offset: Some(offset),
            uuid: None,
            sb_name: None,
            bitmap: false,
            bitmap_chunk: None,
            paths: KVec::new(),
        };
        let geo = cs.geometry(&sizes[..n], offset, self.stripe_wq)?;
        if level == LevelKind::Raid0
            && geo.zones().is_some()
            && fresh.feature_map & FEATURE_RAID0_LAYOUT == 0
        {
            return Err(CtlError::new(
                EINVAL,
                "assemble: multi-zone RAID 0 without a recorded layout",
                spec.name_text,
            ));
        }
        if geo.member_sectors() < fresh.size && level != LevelKind::Raid0 {
            return Err(CtlError::new(
                EINVAL,
                "assemble: component size does not fit the geometry",
                spec.name_text,
            ));
        }
        if !geo.survives(sum.in_sync, n) {
            return Err(CtlError::new(
                EINVAL,
                "assemble: not enough members in sync to start the array",
                spec.name_text,
            ));
        }
        let degraded = n - sum.in_sync.count_ones() as usize;
        let dirty = fresh.resync_offset != MAX_SECTOR;
        if dirty && degraded > 0 && matches!(level, LevelKind::Parity(_)) {
            if !spec.force {
                return Err(CtlError::new(
                    EINVAL,
                    "assemble: cannot start dirty degraded array (force starts it)",
                    spec.name_text,
                ));
            }
            pr_crit!(
                "{}: starting dirty degraded array - data corruption possible\n",
                spec.name_text
            );
        }
        // What goes where; left-out devices close here, unread.
        let mut slots: KVec<Option<MemberDev>> = KVec::with_capacity(n, GFP_KERNEL)?;
        for _ in 0..n {
            slots.push(None, GFP_KERNEL)?;
        }
        let mut spares = KVec::new();
        let mut repl = KVec::new();
        let mut recs: KVec<DevMeta> = KVec::new();
        let (mut rec_slots, mut rec_repl, mut point) = (0u64, 0u64, u64::MAX);
        // Every device rebuilt was being rebuilt from the bitmap (md's `Bitmap_sync`).
        let mut rec_bitmap = true;
        let mut changed = false;
        for ((dev, p), sb) in devs.into_iter().zip(parts.iter()).zip(sbs.iter()) {
            let keep = match *p {
                Part::Slot { slot, recovery } => {
                    if let Some(off) = recovery {
                        rec_slots |= 1 << slot;
                        point = point.min(off);
                        rec_bitmap &= sb.feature_map & FEATURE_RECOVERY_BITMAP != 0;
                    }
                    true
                }
                Part::Replacement { slot, recovery } => {
                    if recovery != MAX_SECTOR {
                        rec_repl |= 1 << slot;
                        point = point.min(recovery);
                    }
                    true
                }
                Part::Spare => true,
                Part::Faulty => {
                    pr_info!(
                        "{}: {} is recorded faulty: left out\n",
                        spec.name_text,
                        dev.name()
                    );
                    changed = true;
                    false
                }
                Part::Stale => {
                    pr_warn!(
                        "{}: kicking non-fresh {} from array (events {}, array {})\n",
                        spec.name_text,
                        dev.name(),
                        sb.events,
                        sum.events
                    );
                    changed = true;
                    false
                }
            };
            if !keep {
                continue;
            }
            changed |= sb.events != sum.events;
            dev.set_failfast(sb.devflags & FAIL_FAST != 0);
            recs.push(DevMeta::from_super(dev.devt(), sb), GFP_KERNEL)?;
            match *p {
                Part::Slot { slot, .. } => {
                    if let Some(s) = slots.get_mut(slot as usize) {
                        *s = Some(dev);
                    }
                }
                Part::Replacement { slot, recovery } if recovery != MAX_SECTOR => {
                    repl.push((slot as usize, dev), GFP_KERNEL)?
                }
                _ => spares.push(dev, GFP_KERNEL)?,
            }
        }
        let resync_point = if dirty {
            fresh.resync_offset.min(geo.sync_sectors())
        } else {
            u64::MAX
        };
        let bitmap = if fresh.feature_map & FEATURE_BITMAP_OFFSET != 0 {
            // md reads the bitmap from the first member in sync.
            let from = slots
                .iter()
                .enumerate()
                .find(|(s, d)| d.is_some() && sum.in_sync & (1 << s) != 0)
                .and_then(|(_, d)| d.as_ref())
                .ok_or(CtlError::new(
                    EINVAL,
                    "assemble: no member in sync to read the bitmap from",
                    spec.name_text,
                ))?;
            let b = load_bitmap(
                version,
                from,
                fresh,
                geo.sync_sectors(),
                sum.events,
                degraded > 0 || rec_slots != 0,
                resync_point,
            )
            .map_err(|why| CtlError::new(EINVAL, why, spec.name_text))?;
            Some(b)
        } else {
            None
        };
        let mut template = KBox::new(*fresh, GFP_KERNEL)?;
        template.feature_map &= FEATURE_RAID0_LAYOUT | FEATURE_BITMAP_OFFSET;
        let from_bitmap = bitmap.is_some() && rec_bitmap;
        let meta = KBox::pin_init(
            Meta::new(version, template, recs, sum.events, true, false, bitmap)?,
            GFP_KERNEL,
        )?;
        let rebuild =
            (rec_slots | rec_repl != 0).then_some((rec_slots, rec_repl, point, from_bitmap));
        pr_info!(
            "{}: assembling from {} devices, {} of {} in sync, events {}{}\n",
            spec.name_text,
            spec.paths.len(),
            sum.in_sync.count_ones(),
            n,
            sum.events,
            if dirty { ", not clean: resync" } else { "" }
        );
        let name_text = spec.name_text;
        self.launch(
            &mut arrays,
            Launch {
                name: spec.name,
                name_text,
                level: geo,
                slots,
                in_sync: sum.in_sync,
                resync_point,
                meta: Some(meta),
                spares,
                replacements: repl,
                rebuild,
                verb: Verb::Assemble,
                module,
                holder,
            },
        )?;
        if changed {
            if let Some(e) = arrays.iter().find(|e| e.array.name == spec.name) {
                if let Some(m) = e.array.meta() {
                    m.checkpoint(&e.array);
                }
            }
        }
        Ok(())
    }

    /// `incremental`: `DEVICE [run]`, as `mdadm --incremental`: the device's superblock is
    /// read and the device kept (not opened) until every member of its array has come, or
    /// with `run` until enough have; then the array is assembled, under the name its
    /// superblock records if that is a free rraid name, else the first free `rraidN`.
    pub(super) fn incremental<'a>(&self, input: &'a [u8]) -> Result<(), CtlError<'a>> {
        let s = text(input)?;
        let mut words = s.split_ascii_whitespace();
        let path = words
            .next()
            .filter(|p| p.starts_with('/') && p.len() <= 255)
            .ok_or(CtlError::new(EINVAL, "incremental: not a device path", s))?;
        let run = match words.next() {
            None => false,
            Some("run") if words.next().is_none() => true,
            Some(w) => return Err(CtlError::new(EINVAL, "incremental: unknown word", w)),
        };
        let sb = {
            let holder = Holder::new()?;
            let devs = open_members(Verb::Assemble, &[path], &holder)?;
            let dev = devs.first().ok_or(EINVAL)?;
            let mut buf = PageBuf::new(false)?;
            read_sb(dev, &mut buf)
                .map(|(_, sb)| KBox::new(sb, GFP_KERNEL))
                .map_err(|why| CtlError::new(EINVAL, why, path))??
        };
        if self
            .arrays
            .lock()
            .iter()
            .any(|e| e.array.meta().is_some_and(|m| m.uuid() == sb.set_uuid))
        {
            return Err(CtlError::new(
                EBUSY,
                "incremental: its array is running",
                path,
            ));
        }
        let mut line = KVec::new();
        {
            let mut p = self.pending.lock();
            if !p.iter().any(|x| x.path.as_slice() == path.as_bytes()) {
                let mut pb = KVec::new();
                pb.extend_from_slice(path.as_bytes(), GFP_KERNEL)?;
                p.push(
                    Pending {
                        uuid: sb.set_uuid,
                        path: pb,
                        member: sb.own_role() < crate::meta::super1::ROLE_MAX,
                    },
                    GFP_KERNEL,
                )?;
            }
            let mine = || p.iter().filter(|x| x.uuid == sb.set_uuid);
            let members = mine().filter(|x| x.member).count();
            if members < sb.raid_disks as usize && !run {
                pr_info!(
                    "rraid: incremental: {} added, {} of {} members of its array here\n",
                    path,
                    members,
                    sb.raid_disks
                );
                return Ok(());
            }
            let name = self.free_name(&sb.set_name)?;
            line.extend_from_slice(name.as_str().as_bytes(), GFP_KERNEL)?;
            for x in mine() {
                line.push(b' ', GFP_KERNEL)?;
                line.extend_from_slice(&x.path, GFP_KERNEL)?;
            }
        }
        // Assembled with the lines' own checks; what it refuses is said there.
        match self.assemble(&line) {
            Ok(()) => {
                let mut p = self.pending.lock();
                let mut kept = KVec::with_capacity(p.len(), GFP_KERNEL)?;
                for x in core::mem::take(&mut *p) {
                    if x.uuid != sb.set_uuid {
                        kept.push(x, GFP_KERNEL)?;
                    }
                }
                *p = kept;
                Ok(())
            }
            // Its reason, with this device's path.
            Err(e) => Err(CtlError::new(e.code, e.why, path)),
        }
    }

    /// The name a superblock records if it is a free rraid name, else the first free one.
    fn free_name(&self, sb_name: &[u8; 32]) -> Result<ArrayName, CtlError<'static>> {
        let arrays = self.arrays.lock();
        let free = |n: &ArrayName| !arrays.iter().any(|e| e.array.name == *n);
        let len = sb_name.iter().position(|&b| b == 0).unwrap_or(32);
        if let Some(n) = sb_name.get(..len).and_then(ArrayName::parse) {
            if free(&n) {
                return Ok(n);
            }
        }
        if let Some(n) = (0..1000).filter_map(ArrayName::numbered).find(|n| free(n)) {
            return Ok(n);
        }
        Err(CtlError::new(ENOSPC, "incremental: no free array name", ""))
    }

    /// The level and layout a superblock records, as `create` spells them.
    fn shape<'a>(
        &self,
        spec: &AssembleSpec<'a>,
        sb: &Superblock,
    ) -> Result<
        (
            LevelKind,
            Option<Algorithm>,
            Option<Raid10Layout>,
            Raid0Layout,
        ),
        CtlError<'a>,
    > {
        let bad = |why| CtlError::new(EINVAL, why, spec.name_text);
        Ok(match sb.level {
            0 => {
                let l = if sb.feature_map & FEATURE_RAID0_LAYOUT != 0 {
                    match sb.layout {
                        1 => Raid0Layout::Original,
                        2 => Raid0Layout::Alternate,
                        _ => return Err(bad("assemble: unknown RAID 0 layout")),
                    }
                } else {
                    Raid0Layout::Original
                };
                (LevelKind::Raid0, None, None, l)
            }
            1 => (LevelKind::Raid1, None, None, Raid0Layout::Original),
            4 => (
                LevelKind::Parity(4),
                Some(Algorithm::ParityLast),
                None,
                Raid0Layout::Original,
            ),
            5 | 6 => (
                LevelKind::Parity(sb.level as u8),
                Some(
                    Algorithm::from_number(sb.layout)
                        .ok_or(bad("assemble: RAID 5/6 layout not supported"))?,
                ),
                None,
                Raid0Layout::Original,
            ),
            10 => (
                LevelKind::Raid10,
                None,
                Some(
                    Raid10Layout::from_number(sb.layout)
                        .ok_or(bad("assemble: RAID 10 layout not supported"))?,
                ),
                Raid0Layout::Original,
            ),
            _ => return Err(bad("assemble: level not supported (0, 1, 4, 5, 6, 10)")),
        })
    }
}
