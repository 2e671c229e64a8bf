//! What each device is in an array being assembled: md's analyze_sbs and super_1_validate.
//!
//! md picks the freshest superblock (the highest event count among devices that are members
//! by their own superblock), leaves out devices more than one event behind it, and trusts
//! the freshest superblock over a device's own about a device one event behind: that device
//! may have been failed by an update its superblock missed.

use super::super1::{
    Superblock, FEATURE_RECOVERY_OFFSET, FEATURE_REPLACEMENT, MAX_DEV, MAX_SECTOR, ROLE_FAULTY,
    ROLE_JOURNAL, ROLE_MAX, ROLE_SPARE,
};

/// The most slots rraid assembles (layout::MAX_MEMBERS): slot sets are `u64` bitmasks, and
/// every slot below it has a bit.
const MAX_SLOTS: u32 = 64;

/// What a device is in the assembled array.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Part {
    /// Takes slot `slot`.
    Slot {
        /// The slot (md's raid_disk).
        slot: u32,
        /// `Some(offset)` when its own superblock has FEATURE_RECOVERY_OFFSET (it was being
        /// rebuilt and is in sync below `offset`, counted from the data offset), `None` when in
        /// sync.
        recovery: Option<u64>,
    },
    /// Being built as the replacement of `slot` (FEATURE_REPLACEMENT in its own superblock).
    Replacement {
        /// The slot it replaces.
        slot: u32,
        /// In sync below this sector (from the data offset); [`MAX_SECTOR`] when its
        /// superblock has no FEATURE_RECOVERY_OFFSET, that is, when it is complete.
        recovery: u64,
    },
    /// A spare.
    Spare,
    /// Recorded faulty by the freshest superblock: left out (md keeps it Faulty). Also a
    /// journal device (rraid has none), and a device whose number rraid cannot record in its
    /// role table (dev_number >= [`MAX_DEV`]; md kicks those beyond its own limit).
    Faulty,
    /// More than one event behind the freshest: left out ("kicking non-fresh"). Also a device
    /// one event behind whose number the freshest superblock has no role for (md refuses it
    /// the same way).
    Stale,
}

/// Why a set of superblocks does not make one array.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AssembleError {
    /// No superblocks given (or `parts` is not as long as `sbs`).
    Empty,
    /// Device `b`'s superblock belongs to another array than device `a`'s (set_uuid, level,
    /// layout, chunksize or raid_disks differ; md's "strangely different superblock").
    Different {
        /// The reference device (the first).
        a: usize,
        /// The device that differs.
        b: usize,
    },
    /// Devices `a` and `b` carry the same dev_number or the same device_uuid (the same disk
    /// seen twice, or a copy). An all-zero device_uuid (md itself never sets one) is not
    /// compared.
    Duplicate {
        /// The earlier device.
        a: usize,
        /// The later device.
        b: usize,
    },
    /// Devices `a` and `b` both claim slot `slot` (as members, or both as its replacement).
    SlotTaken {
        /// The earlier device.
        a: usize,
        /// The later device.
        b: usize,
        /// The slot.
        slot: u32,
    },
    /// Device `a` has a role that is neither a slot below raid_disks nor spare, faulty or
    /// journal (md would make it a spare; rraid takes it for corruption or a newer format).
    BadRole {
        /// The device.
        a: usize,
        /// The role it was given.
        role: u16,
    },
    /// raid_disks is 0 or above 64 (rraid's limit, layout::MAX_MEMBERS).
    RaidDisks(u32),
}

/// The assembled array's shape.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Summary {
    /// Index of the freshest superblock: the highest events among devices that are not spares
    /// by their own superblock; md's ordering: the first such device is the reference, a later
    /// one with more events replaces it. 0 when no device is a member (md: "cannot find a
    /// valid disk"); `filled` is then 0.
    pub freshest: usize,
    /// The freshest superblock's event count: the array's.
    pub events: u64,
    /// Slots that get a device (Slot parts), as a bitmask (bit i = slot i).
    pub filled: u64,
    /// Slots whose device is in sync (Slot with recovery None).
    pub in_sync: u64,
}

/// Whether two superblocks describe the same array (md's refdev comparison, and raid_disks).
fn same_array(a: &Superblock, b: &Superblock) -> bool {
    a.set_uuid == b.set_uuid
        && a.level == b.level
        && a.layout == b.layout
        && a.chunksize == b.chunksize
        && a.raid_disks == b.raid_disks
}

/// md's "not spare disk": its own role is a slot or the journal.
fn is_member(sb: &Superblock) -> bool {
    let role = sb.own_role();
    role < ROLE_MAX || role == ROLE_JOURNAL
}

/// The part of `sb` given the freshest superblock (`None` when `sb` is the freshest itself, or
/// no device is a member), or the role it cannot take.
fn part_of(sb: &Superblock, fresh: Option<&Superblock>) -> Result<Part, u16> {
    if sb.dev_number as usize >= MAX_DEV {
        return Ok(Part::Faulty);
    }
    let role = match fresh {
        Some(f) if is_member(sb) && sb.events.saturating_add(1) < f.events => {
            return Ok(Part::Stale)
        }
        _ if sb.dev_number >= sb.max_dev => ROLE_SPARE,
        // One event behind: it may have missed being failed.
        Some(f) if sb.events < f.events => {
            if sb.dev_number >= f.max_dev {
                return Ok(Part::Stale);
            }
            f.role_of(sb.dev_number)
        }
        _ => sb.own_role(),
    };
    let recovery = (sb.feature_map & FEATURE_RECOVERY_OFFSET != 0).then_some(sb.recovery_offset);
    Ok(match role {
        ROLE_SPARE => Part::Spare,
        ROLE_FAULTY | ROLE_JOURNAL => Part::Faulty,
        r if u32::from(r) < sb.raid_disks => {
            let slot = u32::from(r);
            if sb.feature_map & FEATURE_REPLACEMENT != 0 {
                Part::Replacement {
                    slot,
                    recovery: recovery.unwrap_or(MAX_SECTOR),
                }
            } else {
                Part::Slot { slot, recovery }
            }
        }
        r => return Err(r),
    })
}

/// Decides each device's part, writing `parts[i]` for `sbs[i]`, as md's super_1_validate
/// does when assembling.
///
/// `parts.len()` must equal `sbs.len()`, else [`AssembleError::Empty`]. All superblocks must
/// be of one array and of distinct devices. Then: a device whose own role is not a spare and
/// whose events + 1 < the freshest's is Stale; a device one event behind takes its role from
/// the freshest superblock's dev_roles[dev_number]; any other from its own. Role ROLE_SPARE
/// is Spare, ROLE_FAULTY Faulty, ROLE_JOURNAL Faulty (rraid has no journal; the caller
/// refuses the JOURNAL feature anyway), a slot role Slot (or Replacement when the device's
/// own superblock has FEATURE_REPLACEMENT; the recovery offset is from its own superblock
/// when that has FEATURE_RECOVERY_OFFSET). Two members of one slot, or two replacements of
/// one slot, are [`AssembleError::SlotTaken`].
///
/// The parts do not depend on the order of `sbs`; only which of two equally fresh devices is
/// reported as `freshest` does.
pub fn analyze(sbs: &[Superblock], parts: &mut [Part]) -> Result<Summary, AssembleError> {
    let first = sbs.first().ok_or(AssembleError::Empty)?;
    if parts.len() != sbs.len() {
        return Err(AssembleError::Empty);
    }
    if let Some(b) = sbs.iter().position(|sb| !same_array(first, sb)) {
        return Err(AssembleError::Different { a: 0, b });
    }
    if first.raid_disks == 0 || first.raid_disks > MAX_SLOTS {
        return Err(AssembleError::RaidDisks(first.raid_disks));
    }
    for (a, x) in sbs.iter().enumerate() {
        for (b, y) in sbs.iter().enumerate().skip(a + 1) {
            let same_uuid = x.device_uuid != [0; 16] && x.device_uuid == y.device_uuid;
            if x.dev_number == y.dev_number || same_uuid {
                return Err(AssembleError::Duplicate { a, b });
            }
        }
    }

    let mut freshest: Option<usize> = None;
    for (i, sb) in sbs.iter().enumerate() {
        let fresher = match freshest.and_then(|f| sbs.get(f)) {
            None => true,
            Some(f) => sb.events > f.events,
        };
        if is_member(sb) && fresher {
            freshest = Some(i);
        }
    }
    let fresh = freshest.and_then(|f| sbs.get(f));

    let mut filled = 0u64;
    let mut in_sync = 0u64;
    let mut replaced = 0u64;
    for (b, sb) in sbs.iter().enumerate() {
        let reference = if freshest == Some(b) { None } else { fresh };
        let part = part_of(sb, reference).map_err(|role| AssembleError::BadRole { a: b, role })?;
        let (slot, taken) = match part {
            Part::Slot { slot, recovery } => {
                let bit = 1u64.checked_shl(slot).unwrap_or(0);
                let taken = filled & bit != 0;
                filled |= bit;
                if recovery.is_none() {
                    in_sync |= bit;
                }
                (slot, taken)
            }
            Part::Replacement { slot, .. } => {
                let bit = 1u64.checked_shl(slot).unwrap_or(0);
                let taken = replaced & bit != 0;
                replaced |= bit;
                (slot, taken)
            }
            _ => (0, false),
        };
        if taken {
            let a = parts
                .iter()
                .take(b)
                .position(|p| same_claim(p, &part))
                .unwrap_or(0);
            return Err(AssembleError::SlotTaken { a, b, slot });
        }
        if let Some(p) = parts.get_mut(b) {
            *p = part;
        }
    }
    Ok(Summary {
        freshest: freshest.unwrap_or(0),
        events: fresh.unwrap_or(first).events,
        filled,
        in_sync,
    })
}

/// Whether two parts claim the same place: members of one slot, or replacements of one slot.
fn same_claim(x: &Part, y: &Part) -> bool {
    match (x, y) {
        (Part::Slot { slot: s, .. }, Part::Slot { slot: t, .. }) => s == t,
        (Part::Replacement { slot: s, .. }, Part::Replacement { slot: t, .. }) => s == t,
        _ => false,
    }
}
