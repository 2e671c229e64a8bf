//! RAID 0: chunks striped round-robin over equal members.
//!
//! This is md's single-zone raid0 layout. Members of unequal size are all cut to the smallest
//! one (rounded down to a chunk, as md does), so there is always exactly one zone and md's
//! `raid0.default_layout` question never arises.

use core::num::NonZeroU64;

use super::{check_chunk, usable_member_sectors, Extent, GeometryError, MAX_MEMBERS};

/// Versioned layout names, as md names its raid0 layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Raid0Layout {
    /// One zone over members cut to the smallest: md's layout for equal members.
    SingleZone = 1,
}

/// Geometry of a RAID 0 array.
///
/// # Invariants
///
/// `members` is in `2..=MAX_MEMBERS`, `chunk_sectors` passed [`check_chunk`], and
/// `member_sectors` is a non-zero multiple of `chunk_sectors`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Raid0 {
    members: usize,
    chunk_shift: u32,
    member_sectors: u64,
    data_offset: u64,
}

impl Raid0 {
    /// Builds the geometry for members of the given sizes (in sectors).
    pub fn new(sizes: &[u64], chunk_sectors: u64, data_offset: u64) -> Result<Self, GeometryError> {
        if !(2..=MAX_MEMBERS).contains(&sizes.len()) {
            return Err(GeometryError::MemberCount);
        }
        check_chunk(chunk_sectors)?;
        let member_sectors = usable_member_sectors(sizes, data_offset, chunk_sectors)?;
        // INVARIANT: checked above.
        Ok(Self {
            members: sizes.len(),
            chunk_shift: chunk_sectors.trailing_zeros(),
            member_sectors,
            data_offset,
        })
    }

    /// The layout variant.
    pub fn layout(&self) -> Raid0Layout {
        Raid0Layout::SingleZone
    }

    /// The member count as a divisor that cannot be zero, so division has no panic path.
    fn members_nz(&self) -> NonZeroU64 {
        NonZeroU64::new(self.members as u64).unwrap_or(NonZeroU64::MIN)
    }

    /// Number of members.
    pub fn members(&self) -> usize {
        self.members
    }

    /// Chunk size in sectors.
    pub fn chunk_sectors(&self) -> u64 {
        1 << self.chunk_shift
    }

    /// Sectors of each member that hold array data.
    pub fn member_sectors(&self) -> u64 {
        self.member_sectors
    }

    /// Size of the array in sectors.
    pub fn array_sectors(&self) -> u64 {
        self.member_sectors * self.members as u64
    }

    /// Maps one array sector to its member and member sector.
    pub fn map(&self, sector: u64) -> (usize, u64) {
        let chunk = sector >> self.chunk_shift;
        let in_chunk = sector & (self.chunk_sectors() - 1);
        let members = self.members_nz();
        let member = (chunk % members) as usize;
        let member_chunk = chunk / members;
        (
            member,
            self.data_offset + (member_chunk << self.chunk_shift) + in_chunk,
        )
    }

    /// Maps a member sector back to its array sector: the inverse of [`Raid0::map`].
    ///
    /// Returns `None` for sectors outside the member's data area.
    pub fn unmap(&self, member: usize, member_sector: u64) -> Option<u64> {
        let rel = member_sector.checked_sub(self.data_offset)?;
        if member >= self.members || rel >= self.member_sectors {
            return None;
        }
        let member_chunk = rel >> self.chunk_shift;
        let in_chunk = rel & (self.chunk_sectors() - 1);
        let chunk = member_chunk * self.members as u64 + member as u64;
        Some((chunk << self.chunk_shift) + in_chunk)
    }

    /// Splits the array range `[sector, sector + len)` into per-chunk extents, in order.
    ///
    /// The caller keeps the range inside the array; pieces past the end are still computed
    /// arithmetically, never indexed.
    pub fn extents(&self, sector: u64, len: u64) -> Raid0Extents {
        Raid0Extents {
            geo: *self,
            sector,
            offset: 0,
            len,
        }
    }

    /// The part of member `member` that the array range `[start, end)` covers.
    ///
    /// Over a range of whole stripes and partial edges, a member's pieces are adjacent on that
    /// member, so one range per member describes them all: discard and write-zeroes go out as
    /// at most one bio per member, as in md. Returns `None` when the member holds none of it.
    pub fn member_range(&self, start: u64, end: u64, member: usize) -> Option<(u64, u64)> {
        if start >= end || member >= self.members {
            return None;
        }
        let chunk = self.chunk_sectors();
        let stripe = NonZeroU64::new(chunk * self.members as u64).unwrap_or(NonZeroU64::MIN);
        // Member-relative offset of array position `pos`: the member's data before it. Within a
        // stripe that is the part of the member's chunk that `pos` has passed, so the same
        // clamp gives the first sector at or after `start` and the end before `end`.
        let chunk_start = member as u64 * chunk;
        let offset = |pos: u64| {
            (pos / stripe) * chunk + (pos % stripe).saturating_sub(chunk_start).min(chunk)
        };
        let (first, last) = (offset(start), offset(end));
        if first >= last {
            return None;
        }
        Some((self.data_offset + first, self.data_offset + last))
    }
}

/// Iterator over the per-chunk extents of an array range; see [`Raid0::extents`].
pub struct Raid0Extents {
    geo: Raid0,
    sector: u64,
    offset: u64,
    len: u64,
}

impl Iterator for Raid0Extents {
    type Item = Extent;

    fn next(&mut self) -> Option<Extent> {
        if self.len == 0 {
            return None;
        }
        let chunk = self.geo.chunk_sectors();
        let room = chunk - (self.sector & (chunk - 1));
        let len = room.min(self.len);
        let (member, member_sector) = self.geo.map(self.sector);
        let extent = Extent {
            member,
            sector: member_sector,
            offset: self.offset,
            len,
        };
        self.sector += len;
        self.offset += len;
        self.len -= len;
        Some(extent)
    }
}
