//! RAID 1: every member holds a full copy.

use super::{usable_member_sectors, GeometryError, MAX_MEMBERS};

/// Members are used to a multiple of 4 KiB, so that any logical block size up to 4 KiB stays
/// aligned; md's raid1 uses the smallest member whole.
const ALIGN_SECTORS: u64 = 8;

/// Geometry of a RAID 1 array.
///
/// # Invariants
///
/// `members` is in `2..=MAX_MEMBERS` and `member_sectors` is non-zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Raid1 {
    members: usize,
    member_sectors: u64,
    data_offset: u64,
}

impl Raid1 {
    /// Builds the geometry for members of the given sizes (in sectors).
    pub fn new(sizes: &[u64], data_offset: u64) -> Result<Self, GeometryError> {
        if !(2..=MAX_MEMBERS).contains(&sizes.len()) {
            return Err(GeometryError::MemberCount);
        }
        let member_sectors = usable_member_sectors(sizes, data_offset, ALIGN_SECTORS)?;
        // INVARIANT: checked above.
        Ok(Self {
            members: sizes.len(),
            member_sectors,
            data_offset,
        })
    }

    /// Number of members.
    pub fn members(&self) -> usize {
        self.members
    }

    /// Sectors of each member that hold array data.
    pub fn member_sectors(&self) -> u64 {
        self.member_sectors
    }

    /// Size of the array in sectors.
    pub fn array_sectors(&self) -> u64 {
        self.member_sectors
    }

    /// The sector of every copy of array sector `sector`.
    pub fn map(&self, sector: u64) -> u64 {
        self.data_offset + sector
    }

    /// The array sector held at `member_sector` of any member: the inverse of [`Raid1::map`].
    pub fn unmap(&self, member_sector: u64) -> Option<u64> {
        let rel = member_sector.checked_sub(self.data_offset)?;
        (rel < self.member_sectors).then_some(rel)
    }
}
