//! RAID 4, 5 and 6: md's parity layouts, forward and inverse.
//!
//! Array sectors are cut into chunks; each row of chunks across the members (a *stripe*, md's
//! `stripe` number) holds `data` data chunks, one P chunk and, for RAID 6, one Q chunk. Where P
//! and Q sit in a stripe, and in which order the data chunks follow them, is md's layout number
//! (`ALGORITHM_*` in md's `raid5.h`); the maps here are those of `raid5_compute_sector` and
//! `raid5_compute_blocknr`.
//!
//! Q's coefficients do not follow the data index. md numbers the data blocks of a stripe for
//! the syndrome by walking the members from the one after Q, wrapping, skipping P and Q. For
//! the symmetric and parity-first/last layouts that is the data order; for the asymmetric
//! RAID 6 layouts it is not, so [`Raid5::q_index`] is separate from the data index.

use core::num::{NonZeroU64, NonZeroUsize};

use super::{check_chunk, usable_member_sectors, GeometryError, MAX_MEMBERS};

/// md's layouts 0-5 (`ALGORITHM_LEFT_ASYMMETRIC` .. `ALGORITHM_PARITY_N`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// 0: parity rotates from the last member down; data starts at member 0.
    LeftAsymmetric = 0,
    /// 1: parity rotates from member 0 up; data starts at member 0.
    RightAsymmetric = 1,
    /// 2: parity rotates from the last member down; data starts after parity (md's default).
    LeftSymmetric = 2,
    /// 3: parity rotates from member 0 up; data starts after parity.
    RightSymmetric = 3,
    /// 4: parity (then Q) on the first members.
    ParityFirst = 4,
    /// 5: parity (then Q) on the last members; RAID 4's placement, although md reports layout
    /// 0 for the RAID 4 arrays mdadm makes (md's RAID 4 map ignores the number).
    ParityLast = 5,
}

impl Algorithm {
    /// Every supported layout, by md number.
    pub const ALL: [Algorithm; 6] = [
        Algorithm::LeftAsymmetric,
        Algorithm::RightAsymmetric,
        Algorithm::LeftSymmetric,
        Algorithm::RightSymmetric,
        Algorithm::ParityFirst,
        Algorithm::ParityLast,
    ];

    /// md's layout number.
    pub fn number(self) -> u32 {
        self as u32
    }

    /// The layout with md number `n`, if rraid supports it.
    pub fn from_number(n: u32) -> Option<Self> {
        Self::ALL.iter().copied().find(|a| a.number() == n)
    }

    /// mdadm's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::LeftAsymmetric => "left-asymmetric",
            Self::RightAsymmetric => "right-asymmetric",
            Self::LeftSymmetric => "left-symmetric",
            Self::RightSymmetric => "right-symmetric",
            Self::ParityFirst => "parity-first",
            Self::ParityLast => "parity-last",
        }
    }

    /// Parses mdadm's names and short aliases (`la`, `ra`, `ls`, `rs`).
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "left-asymmetric" | "la" => Self::LeftAsymmetric,
            "right-asymmetric" | "ra" => Self::RightAsymmetric,
            "left-symmetric" | "ls" => Self::LeftSymmetric,
            "right-symmetric" | "rs" => Self::RightSymmetric,
            "parity-first" => Self::ParityFirst,
            "parity-last" => Self::ParityLast,
            _ => return None,
        })
    }
}

/// Where one stripe keeps its parity, and how its data chunks are placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StripeShape {
    /// The member holding P.
    pub pd: usize,
    /// The member holding Q (RAID 6 only).
    pub qd: Option<usize>,
}

/// Geometry of a RAID 4/5/6 array.
///
/// # Invariants
///
/// `level` is 4, 5 or 6; `members` is in `2..=MAX_MEMBERS` (at least 4 for RAID 6);
/// `chunk_sectors` passed [`check_chunk`]; `member_sectors` is a non-zero multiple of the chunk;
/// RAID 4 uses [`Algorithm::ParityLast`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Raid5 {
    level: u8,
    algorithm: Algorithm,
    members: usize,
    chunk_shift: u32,
    member_sectors: u64,
    data_offset: u64,
}

impl Raid5 {
    /// Builds the geometry. `size`, when given, is the sectors used on each member (md's
    /// `component_size`); it is rounded down to a chunk and must fit every member.
    pub fn new(
        level: u8,
        algorithm: Algorithm,
        sizes: &[u64],
        chunk_sectors: u64,
        size: Option<u64>,
        data_offset: u64,
    ) -> Result<Self, GeometryError> {
        let min = match level {
            4 | 5 => 2,
            6 => 4,
            _ => return Err(GeometryError::MemberCount),
        };
        if !(min..=MAX_MEMBERS).contains(&sizes.len()) {
            return Err(GeometryError::MemberCount);
        }
        check_chunk(chunk_sectors)?;
        let usable = usable_member_sectors(sizes, data_offset, chunk_sectors)?;
        let member_sectors = match size {
            None => usable,
            Some(s) => {
                let s = s & !(chunk_sectors - 1);
                if s == 0 || s > usable {
                    return Err(GeometryError::MemberTooSmall);
                }
                s
            }
        };
        let algorithm = if level == 4 {
            Algorithm::ParityLast
        } else {
            algorithm
        };
        // INVARIANT: checked above.
        Ok(Self {
            level,
            algorithm,
            members: sizes.len(),
            chunk_shift: chunk_sectors.trailing_zeros(),
            member_sectors,
            data_offset,
        })
    }

    /// 4, 5 or 6.
    pub fn level(&self) -> u8 {
        self.level
    }

    /// The layout.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// Number of members.
    pub fn members(&self) -> usize {
        self.members
    }

    /// Parity chunks per stripe: 1, or 2 for RAID 6.
    pub fn parity(&self) -> usize {
        if self.level == 6 {
            2
        } else {
            1
        }
    }

    /// Data chunks per stripe.
    pub fn data(&self) -> usize {
        self.members - self.parity()
    }

    /// Chunk size in sectors.
    pub fn chunk_sectors(&self) -> u64 {
        1 << self.chunk_shift
    }

    /// Sectors of each member that hold array data or parity.
    pub fn member_sectors(&self) -> u64 {
        self.member_sectors
    }

    /// First member sector in use.
    pub fn data_offset(&self) -> u64 {
        self.data_offset
    }

    /// Size of the array in sectors.
    pub fn array_sectors(&self) -> u64 {
        self.member_sectors * self.data() as u64
    }

    /// Sectors of data in one stripe.
    pub fn stripe_data_sectors(&self) -> u64 {
        self.chunk_sectors() * self.data() as u64
    }

    /// Number of stripes.
    pub fn stripes(&self) -> u64 {
        self.member_sectors >> self.chunk_shift
    }

    fn nz(n: usize) -> NonZeroU64 {
        NonZeroU64::new(n as u64).unwrap_or(NonZeroU64::MIN)
    }

    /// `x % members`, without a panic path.
    fn wrap(&self, x: usize) -> usize {
        x % NonZeroUsize::new(self.members).unwrap_or(NonZeroUsize::MIN)
    }

    /// `stripe % members`, without a panic path.
    fn rot(&self, stripe: u64) -> usize {
        (stripe % Self::nz(self.members)) as usize
    }

    /// P and Q of `stripe`.
    pub fn shape(&self, stripe: u64) -> StripeShape {
        let n = self.members;
        let d = self.data();
        // `r < n`, and `n - 1` is `d` (RAID 4/5) or `d + 1` (RAID 6): no subtraction below wraps.
        let r = self.rot(stripe);
        if self.level != 6 {
            let pd = match self.algorithm {
                Algorithm::LeftAsymmetric | Algorithm::LeftSymmetric => d - r,
                Algorithm::RightAsymmetric | Algorithm::RightSymmetric => r,
                Algorithm::ParityFirst => 0,
                Algorithm::ParityLast => d,
            };
            return StripeShape { pd, qd: None };
        }
        // Q follows P, wrapping to member 0 after the last.
        let (pd, qd) = match self.algorithm {
            Algorithm::LeftAsymmetric | Algorithm::LeftSymmetric => (n - 1 - r, self.wrap(n - r)),
            Algorithm::RightAsymmetric | Algorithm::RightSymmetric => (r, self.wrap(r + 1)),
            Algorithm::ParityFirst => (0, 1),
            Algorithm::ParityLast => (d, d + 1),
        };
        StripeShape { pd, qd: Some(qd) }
    }

    /// Whether `sh` names members of this array, P and Q apart, Q only on RAID 6.
    fn valid_shape(&self, sh: StripeShape) -> bool {
        let n = self.members;
        match sh.qd {
            None => self.level != 6 && sh.pd < n,
            Some(qd) => self.level == 6 && sh.pd < n && qd < n && qd != sh.pd,
        }
    }

    /// The member holding data chunk `k` (`k < data()`) of a stripe of shape `sh`.
    ///
    /// For a `k` or a shape that no stripe of this array has, the answer is some member below
    /// `members()`, meaningless but computed without a panic path.
    pub fn data_member(&self, sh: StripeShape, k: usize) -> usize {
        let pd = sh.pd;
        let after = |x: usize, by: usize| self.wrap(x.wrapping_add(by));
        if self.level != 6 {
            return match self.algorithm {
                // D D P D: data in member order, stepping over P.
                Algorithm::LeftAsymmetric | Algorithm::RightAsymmetric => {
                    if k >= pd {
                        after(k, 1)
                    } else {
                        self.wrap(k)
                    }
                }
                // Data from the member after P, wrapping.
                Algorithm::LeftSymmetric | Algorithm::RightSymmetric => {
                    after(pd, k.wrapping_add(1))
                }
                Algorithm::ParityFirst => after(k, 1),
                Algorithm::ParityLast => self.wrap(k),
            };
        }
        match self.algorithm {
            Algorithm::LeftAsymmetric | Algorithm::RightAsymmetric => {
                if pd == self.members - 1 {
                    // Q D D D P
                    after(k, 1)
                } else if k >= pd {
                    // D D P Q D
                    after(k, 2)
                } else {
                    k
                }
            }
            // Data from the member after Q, wrapping.
            Algorithm::LeftSymmetric | Algorithm::RightSymmetric => after(pd, k.wrapping_add(2)),
            Algorithm::ParityFirst => after(k, 2),
            Algorithm::ParityLast => self.wrap(k),
        }
    }

    /// The data index of `member` in a stripe of shape `sh`, or `None` for P and Q: the inverse
    /// of [`Raid5::data_member`]. `None` too for a member or shape foreign to the array.
    pub fn data_index(&self, sh: StripeShape, member: usize) -> Option<usize> {
        let n = self.members;
        if !self.valid_shape(sh) || member >= n || member == sh.pd || Some(member) == sh.qd {
            return None;
        }
        // From here `member` and `pd` are below `n`.
        let pd = sh.pd;
        if self.level != 6 {
            return match self.algorithm {
                Algorithm::LeftAsymmetric | Algorithm::RightAsymmetric => {
                    Some(if member > pd { member - 1 } else { member })
                }
                Algorithm::LeftSymmetric | Algorithm::RightSymmetric => {
                    Some(self.wrap(member + n - pd - 1))
                }
                Algorithm::ParityFirst => member.checked_sub(1),
                Algorithm::ParityLast => Some(member),
            };
        }
        match self.algorithm {
            Algorithm::LeftAsymmetric | Algorithm::RightAsymmetric => {
                if pd == n - 1 {
                    member.checked_sub(1)
                } else if member > pd {
                    member.checked_sub(2)
                } else {
                    Some(member)
                }
            }
            Algorithm::LeftSymmetric | Algorithm::RightSymmetric => {
                (member + n).checked_sub(pd + 2).map(|x| self.wrap(x))
            }
            Algorithm::ParityFirst => member.checked_sub(2),
            Algorithm::ParityLast => Some(member),
        }
    }

    /// Q's coefficient index of `member` (its power of g in the syndrome), or `None` for P, Q
    /// and on RAID 4/5: the position of the member in the walk from the member after Q.
    pub fn q_index(&self, sh: StripeShape, member: usize) -> Option<usize> {
        let n = self.members;
        let qd = sh.qd?;
        if !self.valid_shape(sh) || member >= n || member == sh.pd || member == qd {
            return None;
        }
        // All below `n` from here. md's walk starts at raid6_d0: the member after Q.
        let d0 = self.wrap(qd + 1);
        let pos = |x: usize| self.wrap(x + n - d0);
        let dist = pos(member);
        // Members from d0 up to `member`, wrapping, less P and Q when they lie on the way.
        let skipped = [sh.pd, qd].iter().filter(|&&x| pos(x) < dist).count();
        dist.checked_sub(skipped)
    }

    /// Maps an array sector: (stripe, data index, member, member sector).
    pub fn map(&self, sector: u64) -> Location {
        let chunk_no = sector >> self.chunk_shift;
        let offset = sector & (self.chunk_sectors() - 1);
        let d = Self::nz(self.data());
        let stripe = chunk_no / d;
        let k = (chunk_no % d) as usize;
        let sh = self.shape(stripe);
        Location {
            stripe,
            shape: sh,
            data_index: k,
            member: self.data_member(sh, k),
            member_sector: self.data_offset + (stripe << self.chunk_shift) + offset,
        }
    }

    /// The array sector held at `member_sector` of `member`, or `None` for parity and sectors
    /// outside the data area: md's `raid5_compute_blocknr`.
    pub fn unmap(&self, member: usize, member_sector: u64) -> Option<u64> {
        let rel = member_sector.checked_sub(self.data_offset)?;
        if rel >= self.member_sectors {
            return None;
        }
        let stripe = rel >> self.chunk_shift;
        let k = self.data_index(self.shape(stripe), member)? as u64;
        let chunk_no = stripe * self.data() as u64 + k;
        Some((chunk_no << self.chunk_shift) + (rel & (self.chunk_sectors() - 1)))
    }

    /// The member sector where `stripe` starts.
    pub fn stripe_start(&self, stripe: u64) -> u64 {
        self.data_offset + (stripe << self.chunk_shift)
    }

    /// The array sector where `stripe` starts.
    pub fn stripe_array_start(&self, stripe: u64) -> u64 {
        stripe * self.stripe_data_sectors()
    }
}

/// Where an array sector lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// The stripe (row of chunks).
    pub stripe: u64,
    /// P and Q of that stripe.
    pub shape: StripeShape,
    /// Index of the data chunk within the stripe.
    pub data_index: usize,
    /// The member holding it.
    pub member: usize,
    /// Its sector on that member, data offset included.
    pub member_sector: u64,
}
