//! RAID layout engines: pure arithmetic from array sectors to member sectors.
//!
//! Everything here is a function of the geometry: no allocation, no locking, no `unsafe`. The
//! same files compile into `rraid.ko` and into the host test crate, which checks every forward
//! map against its inverse and against a plain reference model.
//!
//! Units are 512-byte sectors throughout, as in the block layer.

// Safe code only: `unsafe` lives in `sys/` (and `parity/`'s SIMD).
#![deny(unsafe_code)]

pub mod raid0;
pub mod raid1;
pub mod raid10;
pub mod raid5;

/// Why a geometry cannot be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeometryError {
    /// Fewer members than the level needs, or more than rraid supports.
    MemberCount,
    /// The chunk is not a power of two within [`MIN_CHUNK_SECTORS`, `MAX_CHUNK_SECTORS`].
    Chunk,
    /// A member is too small to hold the data offset plus one chunk.
    MemberTooSmall,
    /// A layout the level cannot place safely (RAID 10: fewer than 2 copies, or copies that
    /// md's map would put on one member).
    Layout,
}

/// The smallest chunk: 4 KiB.
pub const MIN_CHUNK_SECTORS: u64 = 8;
/// The largest chunk: 16 MiB.
pub const MAX_CHUNK_SECTORS: u64 = 32768;
/// The most members an array may have; member sets are kept in a `u64` bitmap.
pub const MAX_MEMBERS: usize = 64;

/// One contiguous piece of an array range, placed on one member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    /// Index of the member (its slot).
    pub member: usize,
    /// First sector on the member, data offset included.
    pub sector: u64,
    /// Offset of this piece from the start of the mapped array range.
    pub offset: u64,
    /// Length in sectors.
    pub len: u64,
}

/// Checks that `chunk_sectors` is a power of two in the supported range.
pub fn check_chunk(chunk_sectors: u64) -> Result<(), GeometryError> {
    if chunk_sectors.is_power_of_two()
        && (MIN_CHUNK_SECTORS..=MAX_CHUNK_SECTORS).contains(&chunk_sectors)
    {
        Ok(())
    } else {
        Err(GeometryError::Chunk)
    }
}

/// The smallest of `sizes`, less `data_offset`, rounded down to `align` (a power of two).
///
/// Returns [`GeometryError::MemberTooSmall`] when that leaves less than `align` sectors.
pub fn usable_member_sectors(
    sizes: &[u64],
    data_offset: u64,
    align: u64,
) -> Result<u64, GeometryError> {
    let smallest = sizes
        .iter()
        .copied()
        .min()
        .ok_or(GeometryError::MemberCount)?;
    let usable = smallest
        .checked_sub(data_offset)
        .ok_or(GeometryError::MemberTooSmall)?
        & !(align - 1);
    if usable < align {
        return Err(GeometryError::MemberTooSmall);
    }
    Ok(usable)
}
