//! RAID 0: chunks striped round-robin over the members, in md's zones.
//!
//! Each member's size (less the data offset) is rounded down to a multiple of the chunk, as md
//! does. Zone 0 stripes over every member up to the smallest size; zone 1 over the members with
//! room left, up to the next smallest size; and so on, one zone per distinct member size (md's
//! `create_strip_zones`). Within a zone a member's data starts where it ended in the zone before
//! (md's `dev_start`), the zone's members keep slot order, and the array size is the sum of the
//! zones: every whole chunk of every member is used. With all members of one size (or `size=`
//! given) there is one zone.
//!
//! In zone 0 chunks go round-robin from the first member. Later zones have two placements,
//! md's versioned [`Raid0Layout`]s (md's `map_sector`): the original one numbers a chunk's
//! member by the chunk's number in the whole array, the alternate one (the placement Linux 3.14
//! brought in by mistake) by its number within the zone. They coincide when there is one zone,
//! or one member past zone 0.
//!
//! Everything is arithmetic on a fixed table of at most [`MAX_MEMBERS`] zones: no allocation,
//! no panics. A member's pieces of any array range are contiguous on that member, across zones
//! too, so [`Raid0::member_range`] describes them with one range.

use core::fmt;
use core::num::NonZeroU64;

use super::{check_chunk, Extent, GeometryError, MAX_MEMBERS};

/// md's RAID 0 layouts (`enum r0layout` in md's `raid0.h`), by md's numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Raid0Layout {
    /// 1, `RAID0_ORIG_LAYOUT`: a later zone's member is the chunk's array number modulo the
    /// zone's members. mdadm's default for new arrays, and rraid's.
    Original = 1,
    /// 2, `RAID0_ALT_MULTIZONE_LAYOUT`: a later zone's member is the chunk's number within the
    /// zone modulo the zone's members.
    Alternate = 2,
}

impl Raid0Layout {
    /// md's layout number.
    pub fn number(self) -> u32 {
        self as u32
    }

    /// mdadm's name (`--layout=`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Original => "original",
            Self::Alternate => "alternate",
        }
    }

    /// Parses mdadm's names, `original` and `alternate`, or md's numbers 1 and 2.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "original" | "1" => Some(Self::Original),
            "alternate" | "2" => Some(Self::Alternate),
            _ => None,
        }
    }
}

/// One zone: a run of array sectors striped over the members that still have room.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Zone {
    /// The first array sector past the zone; the next zone starts there.
    end: u64,
    /// The first member sector past the zone, relative to the data offset: the zone's members
    /// hold it from the previous zone's `dev_end` (0 for zone 0) to here.
    dev_end: u64,
    /// The zone's members: bit `i` is slot `i`. Their order in the zone is slot order.
    members: u64,
}

impl Zone {
    /// The zone's member count as a divisor that cannot be zero.
    fn width(&self) -> NonZeroU64 {
        NonZeroU64::new(u64::from(self.members.count_ones())).unwrap_or(NonZeroU64::MIN)
    }

    fn has(&self, member: usize) -> bool {
        member < 64 && self.members & (1 << member) != 0
    }
}

/// Where a zone lies: its array sectors, its member sectors and its members.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoneInfo {
    /// First array sector.
    pub start: u64,
    /// First array sector past the zone.
    pub end: u64,
    /// First member sector used, data offset included.
    pub dev_start: u64,
    /// First member sector past the zone, data offset included.
    pub dev_end: u64,
    /// The members, bit `i` for slot `i`.
    pub members: u64,
}

/// Geometry of a RAID 0 array.
///
/// # Invariants
///
/// `members` is in `2..=MAX_MEMBERS`, `chunk_shift` is that of a chunk that passed
/// [`check_chunk`], and `nzones` is in `1..=members`. `zones[..nzones]` are md's zones in order:
/// `end` and `dev_end` strictly increase and are multiples of the chunk, zone 0 holds every
/// member, each zone's members are a non-empty subset of the previous zone's, and
/// `end - previous end = (dev_end - previous dev_end) * member count`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Raid0 {
    members: usize,
    chunk_shift: u32,
    layout: Raid0Layout,
    data_offset: u64,
    nzones: usize,
    zones: [Zone; MAX_MEMBERS],
}

impl fmt::Debug for Raid0 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Raid0");
        d.field("members", &self.members)
            .field("chunk_sectors", &self.chunk_sectors())
            .field("layout", &self.layout)
            .field("data_offset", &self.data_offset);
        for z in self.zone_list() {
            d.field(
                "zone",
                &format_args!(
                    "end {} dev_end {} members {:#x}",
                    z.end, z.dev_end, z.members
                ),
            );
        }
        d.finish()
    }
}

/// The `k`-th (from 0) set bit of `bits`; 64 when there are not that many.
fn nth_bit(mut bits: u64, k: u64) -> usize {
    for _ in 0..k.min(64) {
        bits &= bits.wrapping_sub(1);
    }
    bits.trailing_zeros() as usize
}

/// The number of set bits of `bits` below bit `i`.
fn rank(bits: u64, i: usize) -> u64 {
    let below = 1u64.checked_shl(i as u32).unwrap_or(0).wrapping_sub(1);
    u64::from((bits & below).count_ones())
}

impl Raid0 {
    /// Builds md's zones for members of the given sizes (in sectors), with layout `layout`.
    ///
    /// Each member's size less `data_offset` is rounded down to the chunk; every member must
    /// keep at least one chunk.
    pub fn new(
        sizes: &[u64],
        chunk_sectors: u64,
        data_offset: u64,
        layout: Raid0Layout,
    ) -> Result<Self, GeometryError> {
        if !(2..=MAX_MEMBERS).contains(&sizes.len()) {
            return Err(GeometryError::MemberCount);
        }
        check_chunk(chunk_sectors)?;
        let mask = !(chunk_sectors - 1);
        for &size in sizes {
            let usable = size
                .checked_sub(data_offset)
                .ok_or(GeometryError::MemberTooSmall)?
                & mask;
            if usable < chunk_sectors {
                return Err(GeometryError::MemberTooSmall);
            }
        }
        // Checked above: no member is smaller than the data offset.
        let usable = sizes.iter().map(|&s| s.saturating_sub(data_offset) & mask);
        let mut zones = [Zone::default(); MAX_MEMBERS];
        let mut nzones = 0;
        let (mut dev_start, mut end) = (0u64, 0u64);
        // One zone per distinct size, smallest first: md's `create_strip_zones`.
        while let Some(dev_end) = usable.clone().filter(|&u| u > dev_start).min() {
            let members = usable
                .clone()
                .enumerate()
                .filter(|&(_, u)| u >= dev_end)
                .fold(0u64, |bits, (i, _)| bits | 1 << i);
            let width = u64::from(members.count_ones());
            end = end.saturating_add((dev_end - dev_start).saturating_mul(width));
            let Some(z) = zones.get_mut(nzones) else {
                break;
            };
            *z = Zone {
                end,
                dev_end,
                members,
            };
            nzones += 1;
            dev_start = dev_end;
        }
        // INVARIANT: the sizes are chunk multiples of at least a chunk, so there is at least one
        // zone, at most one per member, and zone 0 (up to the smallest) holds every member.
        Ok(Self {
            members: sizes.len(),
            chunk_shift: chunk_sectors.trailing_zeros(),
            layout,
            data_offset,
            nzones,
            zones,
        })
    }

    /// The layout asked for at create. It only matters when there is more than one zone.
    pub fn layout(&self) -> Raid0Layout {
        self.layout
    }

    /// md's `layout` file for this array: the layout number when there are several zones, -1
    /// with one zone, where md ignores the layout and shows -1 (md 6.12, both for `mdadm
    /// --build` and for arrays that `mdadm --create` made).
    pub fn md_layout(&self) -> i32 {
        if self.nzones > 1 {
            self.layout.number() as i32
        } else {
            -1
        }
    }

    /// Number of members.
    pub fn members(&self) -> usize {
        self.members
    }

    /// First member sector of data (md's `data_offset`).
    pub fn data_offset(&self) -> u64 {
        self.data_offset
    }

    /// Chunk size in sectors.
    pub fn chunk_sectors(&self) -> u64 {
        1 << self.chunk_shift
    }

    /// Number of zones: 1 when all members hold the same number of chunks.
    pub fn zones(&self) -> usize {
        self.nzones
    }

    /// Zone `i`, if there is one.
    pub fn zone(&self, i: usize) -> Option<ZoneInfo> {
        let z = self.zone_list().get(i)?;
        let (start, dev_start) = self.zone_start(i);
        Some(ZoneInfo {
            start,
            end: z.end,
            dev_start: self.data_offset + dev_start,
            dev_end: self.data_offset + z.dev_end,
            members: z.members,
        })
    }

    /// Sectors that every member holds data in: zone 0's share, the smallest member rounded
    /// down to the chunk. As md's `component_size` of a RAID 0, which is the smallest member.
    pub fn member_sectors(&self) -> u64 {
        self.zone_list().first().map_or(0, |z| z.dev_end)
    }

    /// Sectors of member `member` that hold array data (0 for no such member).
    pub fn member_data_sectors(&self, member: usize) -> u64 {
        self.zone_list()
            .iter()
            .take_while(|z| z.has(member))
            .last()
            .map_or(0, |z| z.dev_end)
    }

    /// Size of the array in sectors: the sum of the zones.
    pub fn array_sectors(&self) -> u64 {
        self.zone_list().last().map_or(0, |z| z.end)
    }

    fn zone_list(&self) -> &[Zone] {
        self.zones.get(..self.nzones).unwrap_or(&[])
    }

    /// Where zone `i` starts: its first array sector and its first member sector (relative to
    /// the data offset).
    fn zone_start(&self, i: usize) -> (u64, u64) {
        match i.checked_sub(1).and_then(|p| self.zone_list().get(p)) {
            Some(prev) => (prev.end, prev.dev_end),
            None => (0, 0),
        }
    }

    /// The zone holding array sector `sector` (the last zone for sectors past the end): its
    /// first array sector, its first member sector, and the zone.
    fn find_zone(&self, sector: u64) -> (u64, u64, Zone) {
        let zones = self.zone_list();
        let i = zones
            .partition_point(|z| z.end <= sector)
            .min(zones.len().saturating_sub(1));
        let (start, dev_start) = self.zone_start(i);
        (start, dev_start, zones.get(i).copied().unwrap_or_default())
    }

    /// The position in the zone's rows (0 = first chunk of a row) of the zone member with index
    /// `idx` (its rank among the zone's members): `idx` itself, except in the original layout's
    /// later zones, whose rows start at the member the array's chunk count points at (md's
    /// `disk_shift`).
    fn row_position(&self, start: u64, width: NonZeroU64, idx: u64) -> u64 {
        match self.layout {
            Raid0Layout::Alternate => idx,
            Raid0Layout::Original => {
                let shift = (start >> self.chunk_shift) % width;
                (idx + width.get() - shift) % width
            }
        }
    }

    /// Maps one array sector to its member and member sector (md's `find_zone` and
    /// `map_sector`).
    pub fn map(&self, sector: u64) -> (usize, u64) {
        let (start, dev_start, z) = self.find_zone(sector);
        let width = z.width();
        let in_chunk = sector & (self.chunk_sectors() - 1);
        let zone_chunk = (sector - start) >> self.chunk_shift;
        let idx = match self.layout {
            Raid0Layout::Original => (sector >> self.chunk_shift) % width,
            Raid0Layout::Alternate => zone_chunk % width,
        };
        let member = if z.members.count_ones() as usize == self.members {
            idx as usize
        } else {
            nth_bit(z.members, idx)
        };
        let dev_chunk = zone_chunk / width;
        (
            member,
            self.data_offset + dev_start + (dev_chunk << self.chunk_shift) + in_chunk,
        )
    }

    /// Maps a member sector back to its array sector: the inverse of [`Raid0::map`].
    ///
    /// Returns `None` for sectors outside the member's data area.
    pub fn unmap(&self, member: usize, member_sector: u64) -> Option<u64> {
        let rel = member_sector.checked_sub(self.data_offset)?;
        if member >= self.members {
            return None;
        }
        let i = self.zone_list().partition_point(|z| z.dev_end <= rel);
        let z = *self.zone_list().get(i)?;
        if !z.has(member) {
            return None;
        }
        let (start, dev_start) = self.zone_start(i);
        let width = z.width();
        let r = rel - dev_start;
        let pos = self.row_position(start, width, rank(z.members, member));
        let zone_chunk = (r >> self.chunk_shift) * width.get() + pos;
        Some(start + (zone_chunk << self.chunk_shift) + (r & (self.chunk_sectors() - 1)))
    }

    /// How many of member `member`'s data sectors map below array sector `pos`.
    ///
    /// The member's sectors map to increasing array sectors, zone after zone, so these are the
    /// member's first ones.
    fn member_prefix(&self, member: usize, pos: u64) -> u64 {
        if pos >= self.array_sectors() {
            return self.member_data_sectors(member);
        }
        let (start, dev_start, z) = self.find_zone(pos);
        if !z.has(member) {
            // The member ended in an earlier zone: all of it lies below.
            return self.member_data_sectors(member);
        }
        let width = z.width();
        let chunk = self.chunk_sectors();
        let row = NonZeroU64::new(width.get() << self.chunk_shift).unwrap_or(NonZeroU64::MIN);
        let off = pos - start;
        let at = self.row_position(start, width, rank(z.members, member)) << self.chunk_shift;
        dev_start + (off / row) * chunk + (off % row).saturating_sub(at).min(chunk)
    }

    /// The part of member `member` that the array range `[start, end)` covers.
    ///
    /// A member's pieces of a range are adjacent on that member, within a zone and from one
    /// zone to the next (its sectors map to increasing array sectors), so one range per member
    /// describes them all: discard and write-zeroes go out as at most one bio per member, and
    /// touch nothing outside the range. Returns `None` when the member holds none of it.
    pub fn member_range(&self, start: u64, end: u64, member: usize) -> Option<(u64, u64)> {
        if start >= end || member >= self.members {
            return None;
        }
        let (first, last) = (
            self.member_prefix(member, start),
            self.member_prefix(member, end),
        );
        if first >= last {
            return None;
        }
        Some((self.data_offset + first, self.data_offset + last))
    }

    /// Splits the array range `[sector, sector + len)` into per-chunk extents, in order.
    ///
    /// Zones start and end on chunk boundaries, so no extent crosses a zone. The caller keeps the
    /// range inside the array; pieces past the end are still computed arithmetically, never
    /// indexed.
    pub fn extents(&self, sector: u64, len: u64) -> Raid0Extents<'_> {
        Raid0Extents {
            geo: self,
            sector,
            offset: 0,
            len,
        }
    }
}

/// Iterator over the per-chunk extents of an array range; see [`Raid0::extents`].
pub struct Raid0Extents<'a> {
    geo: &'a Raid0,
    sector: u64,
    offset: u64,
    len: u64,
}

impl Iterator for Raid0Extents<'_> {
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
