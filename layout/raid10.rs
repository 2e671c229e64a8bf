//! RAID 10: md's striped mirrors with near, far and offset copies, forward and inverse.
//!
//! md's layout number says how many copies of each chunk there are and where they go:
//! bits 0-7 are the *near* copies, bits 8-15 the *far* copies, bit 16 makes the far copies
//! *offset*, and bits 17-18 choose how far copies move between members (below). Every chunk
//! has `near × far` copies, each on a different member. mdadm's `-p nK` is `near = K, far = 1`
//! (0x100 + K), `-p fK` is `near = 1, far = K` (K << 8 | 1) and `-p oK` is the same with bit 16.
//!
//! - **Near.** The array's chunks, each repeated `near` times, fill the members row by row:
//!   the copies of one chunk sit side by side on consecutive members, at the same member
//!   sector (or, when a chunk's copies run past the last member, at the next row on member 0).
//! - **Far.** Each member is cut into `far` regions of `stride` sectors. Region 0 holds the near
//!   layout; region `f` holds it again, moved `f × near` members on.
//! - **Offset.** As far, but the regions are interleaved chunk row by chunk row: near row `r`
//!   becomes member row `r × far`, and its `f`th copy is row `r × far + f`, `f × near` members on.
//!
//! How far copies move on: with bits 17-18 clear (what mdadm writes) they rotate over all
//! members. Bit 18 (dm-raid's "far sets") keeps them inside sets of `near × far` members; bit
//! 17 is md's first, broken, attempt at that (sets of `members / far`). When the member count
//! is not a multiple of the set size, the last set takes the remainder. The maps here are md's
//! `__raid10_find_phys` step for step; the inverse is derived from it rather than taken from
//! md's `raid10_find_virt`, which does not invert it on some far-set geometries.
//!
//! Sizes are md's `calc_sectors` and `raid10_size`: from the member size (`size=`, md's
//! `component_size`), each far region holds `member chunks / far` rows, the array holds
//! `rows × members / near` chunks, and the member sectors in use are those chunks' copies
//! spread over the members, rounded up to a chunk.
//!
//! Geometries where md's map would put two copies of a chunk on one member, or two chunks on
//! one member sector, are refused: fewer members than copies, a far-set layout whose sets
//! overlap, and offset layouts with several near copies over a member count they do not divide
//! (md's near copies then wrap into the offset copies' row).

use core::num::{NonZeroU64, NonZeroUsize};

use super::{check_chunk, GeometryError, MAX_MEMBERS};

/// `x` as a divisor that cannot be zero (1 for 0), so that division has no panic path; every
/// divisor here is non-zero by the geometry's invariants.
fn nz(x: usize) -> NonZeroUsize {
    NonZeroUsize::new(x).unwrap_or(NonZeroUsize::MIN)
}

/// [`nz`] for `u64`.
fn nz64(x: u64) -> NonZeroU64 {
    NonZeroU64::new(x).unwrap_or(NonZeroU64::MIN)
}

/// How far copies move between members: md's layout bits 17-18.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FarSets {
    /// Bits clear: far copies rotate over all members (what mdadm makes).
    Whole = 0,
    /// Bit 17: sets of `members / far` members; md's first attempt, which it warns about.
    Legacy = 1,
    /// Bit 18: sets of `near × far` members (dm-raid's default for far and offset layouts).
    Sets = 2,
}

/// md's RAID 10 layout: near and far copies, offset, far sets.
///
/// # Invariants
///
/// `near` and `far` are non-zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Raid10Layout {
    near: u8,
    far: u8,
    offset: bool,
    sets: FarSets,
}

impl Raid10Layout {
    /// mdadm's default, `n2`: two near copies.
    pub const N2: Self = Self {
        near: 2,
        far: 1,
        offset: false,
        sets: FarSets::Whole,
    };

    /// The layout with md number `n`, if md accepts it (`setup_geo`): bits 0-18 only, near and
    /// far copies non-zero.
    pub fn from_number(n: u32) -> Option<Self> {
        if n >> 19 != 0 {
            return None;
        }
        let near = (n & 0xff) as u8;
        let far = ((n >> 8) & 0xff) as u8;
        let sets = match n >> 17 {
            0 => FarSets::Whole,
            1 => FarSets::Legacy,
            2 => FarSets::Sets,
            _ => return None,
        };
        if near == 0 || far == 0 {
            return None;
        }
        // INVARIANT: checked above.
        Some(Self {
            near,
            far,
            offset: n & (1 << 16) != 0,
            sets,
        })
    }

    /// md's layout number.
    pub fn number(&self) -> u32 {
        u32::from(self.near)
            | u32::from(self.far) << 8
            | u32::from(self.offset) << 16
            | (self.sets as u32) << 17
    }

    /// Parses mdadm's `-p` names (`n2`, `f3`, `o2`: a letter and a copy count from 1 to 255)
    /// or md's layout number in decimal.
    pub fn parse(s: &str) -> Option<Self> {
        let b = s.as_bytes();
        let (&kind, digits) = b.split_first()?;
        if kind.is_ascii_digit() {
            if s.len() > 7 || !b.iter().all(u8::is_ascii_digit) {
                return None;
            }
            return Self::from_number(s.parse().ok()?);
        }
        if digits.is_empty() || digits.len() > 3 || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let k: u8 = s.get(1..)?.parse().ok().filter(|&k| k > 0)?;
        let (near, far, offset) = match kind {
            b'n' => (k, 1, false),
            b'f' => (1, k, false),
            b'o' => (1, k, true),
            _ => return None,
        };
        // INVARIANT: `k` is non-zero.
        Some(Self {
            near,
            far,
            offset,
            sets: FarSets::Whole,
        })
    }

    /// Near copies.
    pub fn near(&self) -> usize {
        usize::from(self.near)
    }

    /// Far copies (1: none).
    pub fn far(&self) -> usize {
        usize::from(self.far)
    }

    /// Whether far copies are offset (interleaved by chunk row).
    pub fn offset(&self) -> bool {
        self.offset
    }

    /// How far copies move between members.
    pub fn sets(&self) -> FarSets {
        self.sets
    }

    /// Copies of each chunk.
    pub fn copies(&self) -> usize {
        self.near() * self.far()
    }
}

/// One copy of an array sector: its member and member sector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replica {
    /// Index of the member (its slot).
    pub member: usize,
    /// Sector on the member, data offset included.
    pub sector: u64,
}

/// Geometry of a RAID 10 array.
///
/// # Invariants
///
/// `members` is in `2..=MAX_MEMBERS` and at least `layout.copies()`, which is at least 2;
/// `chunk_sectors` passed [`check_chunk`]; `far_set_size` is in `1..=members`; `array_sectors`,
/// `member_sectors` and `stride` are non-zero multiples of the chunk; the copies of every chunk
/// lie on distinct members and [`Raid10::next_far`] is a permutation of the members.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Raid10 {
    layout: Raid10Layout,
    members: usize,
    chunk_shift: u32,
    far_set_size: usize,
    /// md's `dev_sectors`: sectors of each member in use.
    member_sectors: u64,
    /// Sectors between a chunk's far copies on their members (offset layouts: one chunk).
    stride: u64,
    array_sectors: u64,
    data_offset: u64,
}

impl Raid10 {
    /// Builds the geometry for members of the given sizes (in sectors), as md builds it from a
    /// `component_size` of the smallest member less `data_offset`, rounded down to the chunk.
    pub fn new(
        layout: Raid10Layout,
        sizes: &[u64],
        chunk_sectors: u64,
        data_offset: u64,
    ) -> Result<Self, GeometryError> {
        let members = sizes.len();
        if !(2..=MAX_MEMBERS).contains(&members) {
            return Err(GeometryError::MemberCount);
        }
        check_chunk(chunk_sectors)?;
        let copies = layout.copies();
        if copies < 2 {
            return Err(GeometryError::Layout);
        }
        if copies > members {
            return Err(GeometryError::MemberCount);
        }
        let (near, far) = (layout.near(), layout.far());
        if layout.offset() && near > 1 && members % nz(near) != 0 {
            return Err(GeometryError::Layout);
        }
        let far_set_size = match layout.sets() {
            FarSets::Whole => members,
            FarSets::Legacy => members / nz(far),
            FarSets::Sets => copies,
        };
        if far_set_size == 0 || far_set_size > members {
            return Err(GeometryError::Layout);
        }
        let smallest = sizes
            .iter()
            .copied()
            .min()
            .ok_or(GeometryError::MemberCount)?;
        let avail = smallest
            .checked_sub(data_offset)
            .ok_or(GeometryError::MemberTooSmall)?;
        let chunk_shift = chunk_sectors.trailing_zeros();
        // md's calc_sectors, in chunks: each far region's rows, the array's chunks, then their
        // copies spread over the members, rounded up. Only members of more than 2^57 chunks
        // could overflow; they are refused.
        let (m, n, f, c) = (members as u64, near as u64, far as u64, copies as u64);
        let too_big = GeometryError::MemberTooSmall;
        let rows = (avail >> chunk_shift) / nz64(f);
        let array_chunks = rows.checked_mul(m).ok_or(too_big)? / nz64(n);
        let dev_chunks = (array_chunks.checked_mul(c).ok_or(too_big)? + m - 1) / nz64(m);
        let stride_chunks = if layout.offset() {
            1
        } else {
            dev_chunks / nz64(f)
        };
        // md's raid10_size, from the member chunks in use.
        let size_chunks = (dev_chunks / nz64(f)).checked_mul(m).ok_or(too_big)? / nz64(n);
        let geo = Self {
            layout,
            members,
            chunk_shift,
            far_set_size,
            member_sectors: dev_chunks << chunk_shift,
            stride: stride_chunks << chunk_shift,
            array_sectors: size_chunks << chunk_shift,
            data_offset,
        };
        if geo.array_sectors == 0 || geo.stride == 0 {
            return Err(GeometryError::MemberTooSmall);
        }
        // The far step must be a permutation, and every chunk's copies on distinct members;
        // md's far sets can break both.
        let mut image = 0u64;
        for d in 0..members {
            image |= 1 << geo.next_far(d);
        }
        if image.count_ones() as usize != members {
            return Err(GeometryError::Layout);
        }
        for first in 0..members {
            let mut seen = 0u64;
            for d in geo.copy_members(first) {
                if seen & (1 << d) != 0 {
                    return Err(GeometryError::Layout);
                }
                seen |= 1 << d;
            }
        }
        // INVARIANT: every condition checked above.
        Ok(geo)
    }

    /// The layout.
    pub fn layout(&self) -> Raid10Layout {
        self.layout
    }

    /// Number of members.
    pub fn members(&self) -> usize {
        self.members
    }

    /// Copies of each chunk.
    pub fn copies(&self) -> usize {
        self.layout.copies()
    }

    /// First member sector of data (md's `data_offset`).
    pub fn data_offset(&self) -> u64 {
        self.data_offset
    }

    /// Chunk size in sectors.
    pub fn chunk_sectors(&self) -> u64 {
        1 << self.chunk_shift
    }

    /// Sectors of each member in use (md's `component_size`, in sectors).
    pub fn member_sectors(&self) -> u64 {
        self.member_sectors
    }

    /// Size of the array in sectors.
    pub fn array_sectors(&self) -> u64 {
        self.array_sectors
    }

    /// Sectors between far copies on a member (one chunk on offset layouts).
    pub fn stride(&self) -> u64 {
        self.stride
    }

    /// Members the array's full data stripes span, for `io_opt` as md (`raid10_nr_stripes`).
    pub fn stripe_members(&self) -> usize {
        let near = self.layout.near();
        if self.members % nz(near) != 0 {
            self.members
        } else {
            self.members / nz(near)
        }
    }

    /// The member the next far copy of a copy on member `d` goes to (md's far step).
    fn next_far(&self, d: usize) -> usize {
        let (m, fs, near) = (self.members, nz(self.far_set_size), self.layout.near());
        // md's last far set takes the members the others leave over.
        let last_start = (m / fs).saturating_sub(1) * fs.get();
        let last_size = nz(fs.get() + m % fs);
        let set = d / fs;
        let d = d + near;
        if m % fs != 0 && d > last_start {
            (d - last_start) % last_size + last_start
        } else {
            d % fs + fs.get() * set
        }
    }

    /// The member whose next far copy goes to member `d`.
    fn prev_far(&self, d: usize) -> usize {
        // A permutation (checked at construction): exactly one member maps to `d`.
        (0..self.members)
            .find(|&p| self.next_far(p) == d)
            .unwrap_or(d)
    }

    /// The members holding the copies of a chunk whose first copy is on member `first`, in
    /// md's copy order.
    fn copy_members(&self, first: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.layout.near()).flat_map(move |n| {
            let mut d = (first + n) % nz(self.members);
            (0..self.layout.far()).map(move |f| {
                if f > 0 {
                    d = self.next_far(d);
                }
                d
            })
        })
    }

    /// Every copy of array sector `sector`, in md's order (near copy by near copy, each
    /// followed by its far copies). Within a chunk each copy continues on its member, so a
    /// range inside one chunk is one contiguous range on each copy's member.
    pub fn map(&self, sector: u64) -> Copies {
        let members = nz64(self.members as u64);
        let chunk = sector >> self.chunk_shift;
        let in_chunk = sector & (self.chunk_sectors() - 1);
        // The chunk's first slot in the near layout's row-major stream.
        let slot = chunk.saturating_mul(self.layout.near() as u64);
        let mut row = slot / members;
        let dev = (slot % members) as usize;
        if self.layout.offset() {
            row = row.saturating_mul(self.layout.far() as u64);
        }
        Copies {
            geo: *self,
            near_dev: dev,
            near_sector: self.data_offset + (row << self.chunk_shift) + in_chunk,
            n: 0,
            f: 0,
            dev,
            sector: 0,
        }
    }

    /// The array sector whose copy lies at `member_sector` of member `member`: the inverse of
    /// [`Raid10::map`]. `None` for sectors outside the data area or that hold no copy.
    pub fn unmap(&self, member: usize, member_sector: u64) -> Option<u64> {
        let rel = member_sector.checked_sub(self.data_offset)?;
        if member >= self.members || rel >= self.member_sectors {
            return None;
        }
        let far = nz64(self.layout.far() as u64);
        let in_chunk = rel & (self.chunk_sectors() - 1);
        let (row, f) = if self.layout.offset() {
            let r = rel >> self.chunk_shift;
            (r / far, r % far)
        } else {
            let f = rel / nz64(self.stride);
            if f >= far.get() {
                return None;
            }
            ((rel - f * self.stride) >> self.chunk_shift, f)
        };
        let mut d = member;
        for _ in 0..f {
            d = self.prev_far(d);
        }
        let slot = row.checked_mul(self.members as u64)? + d as u64;
        let chunk = slot / nz64(self.layout.near() as u64);
        let sector = (chunk << self.chunk_shift) + in_chunk;
        (sector < self.array_sectors).then_some(sector)
    }

    /// Whether the array still holds every chunk with only the members in `in_sync` (bit `i`:
    /// member `i`): some copy of every chunk lies on one of them. md's `enough()`, exact for
    /// every layout (md's own check is stricter on far-set layouts).
    pub fn survives(&self, in_sync: u64) -> bool {
        let near = self.layout.near();
        (0..self.members).all(|k| {
            let first = (k * near) % nz(self.members);
            self.copy_members(first).any(|d| in_sync & (1 << d) != 0)
        })
    }
}

/// The copies of one array sector; see [`Raid10::map`].
pub struct Copies {
    geo: Raid10,
    /// Member and sector of the current near copy.
    near_dev: usize,
    near_sector: u64,
    /// Next near copy and far copy to yield.
    n: usize,
    f: usize,
    /// Member and sector of the last far copy yielded.
    dev: usize,
    sector: u64,
}

impl Iterator for Copies {
    type Item = Replica;

    fn next(&mut self) -> Option<Replica> {
        let g = &self.geo;
        if self.f == g.layout.far() {
            self.f = 0;
            self.n += 1;
            self.near_dev += 1;
            if self.near_dev >= g.members {
                self.near_dev = 0;
                self.near_sector += g.chunk_sectors();
            }
        }
        if self.n >= g.layout.near() {
            return None;
        }
        if self.f == 0 {
            self.dev = self.near_dev;
            self.sector = self.near_sector;
        } else {
            self.dev = g.next_far(self.dev);
            self.sector += g.stride;
        }
        self.f += 1;
        Some(Replica {
            member: self.dev,
            sector: self.sector,
        })
    }
}
