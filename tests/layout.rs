//! Property tests of the layout engines against a plain reference model.
//!
//! The reference model walks the array one chunk at a time with no shortcuts; the engines must
//! agree with it on random geometries and random ranges, and every forward map must invert.

use rraid_host_tests::layout::raid0::Raid0;
use rraid_host_tests::layout::raid1::Raid1;
use rraid_host_tests::layout::{check_chunk, GeometryError, MAX_MEMBERS};

/// A small deterministic PRNG (xorshift64*), so failures reproduce from the printed seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Reference RAID0: array sector -> (member, member sector), by counting chunks one by one.
fn ref_raid0(members: u64, chunk: u64, data_offset: u64, sector: u64) -> (usize, u64) {
    let chunk_no = sector / chunk;
    let stripe = chunk_no / members;
    let member = chunk_no - stripe * members;
    (
        member as usize,
        data_offset + stripe * chunk + sector % chunk,
    )
}

fn random_raid0(rng: &mut Rng) -> (Raid0, u64, u64) {
    let members = 2 + rng.below(15) as usize;
    let chunk = 8u64 << rng.below(13);
    let data_offset = if rng.below(2) == 0 {
        0
    } else {
        rng.below(4096) * 8
    };
    let sizes: Vec<u64> = (0..members)
        .map(|_| data_offset + chunk * (1 + rng.below(64)) + rng.below(chunk))
        .collect();
    let geo = Raid0::new(&sizes, chunk, data_offset).expect("valid geometry");
    let smallest = sizes.iter().min().unwrap() - data_offset;
    assert_eq!(geo.member_sectors(), smallest / chunk * chunk);
    (geo, chunk, data_offset)
}

#[test]
fn raid0_map_matches_reference_and_inverts() {
    let mut rng = Rng(0x5eed_0001);
    for _ in 0..2000 {
        let (geo, chunk, off) = random_raid0(&mut rng);
        let n = geo.members() as u64;
        for _ in 0..200 {
            let s = rng.below(geo.array_sectors());
            let got = geo.map(s);
            assert_eq!(got, ref_raid0(n, chunk, off, s), "geo {geo:?} sector {s}");
            assert_eq!(geo.unmap(got.0, got.1), Some(s));
        }
        // Every member sector in the data area maps back inside the array.
        for _ in 0..50 {
            let m = rng.below(n) as usize;
            let ms = off + rng.below(geo.member_sectors());
            let s = geo.unmap(m, ms).expect("in data area");
            assert!(s < geo.array_sectors());
            assert_eq!(geo.map(s), (m, ms));
        }
        assert_eq!(geo.unmap(0, off + geo.member_sectors()), None);
        if off > 0 {
            assert_eq!(geo.unmap(0, off - 1), None);
        }
        assert_eq!(geo.unmap(geo.members(), off), None);
    }
}

#[test]
fn raid0_extents_cover_range_exactly_once() {
    let mut rng = Rng(0x5eed_0002);
    for _ in 0..2000 {
        let (geo, chunk, off) = random_raid0(&mut rng);
        let total = geo.array_sectors();
        let start = rng.below(total);
        let len = 1 + rng.below((total - start).min(chunk * 40));
        let mut expect_off = 0;
        for e in geo.extents(start, len) {
            assert_eq!(e.offset, expect_off, "extents are in order and contiguous");
            assert!(e.len > 0 && e.len <= chunk);
            // Each extent stays in one chunk of one member, and agrees sector by sector.
            for i in [0, e.len / 2, e.len - 1] {
                let s = start + e.offset + i;
                assert_eq!(
                    (e.member, e.sector + i),
                    ref_raid0(geo.members() as u64, chunk, off, s)
                );
            }
            assert_eq!(
                (e.sector - off) / chunk,
                (e.sector - off + e.len - 1) / chunk
            );
            expect_off += e.len;
        }
        assert_eq!(expect_off, len);
    }
}

#[test]
fn raid0_member_range_is_union_of_extents() {
    let mut rng = Rng(0x5eed_0003);
    for _ in 0..3000 {
        let (geo, _chunk, _off) = random_raid0(&mut rng);
        let total = geo.array_sectors();
        let start = rng.below(total);
        let end = start + 1 + rng.below(total - start);
        for m in 0..geo.members() {
            let mut lo = u64::MAX;
            let mut hi = 0;
            let mut sum = 0;
            for e in geo.extents(start, end - start).filter(|e| e.member == m) {
                lo = lo.min(e.sector);
                hi = hi.max(e.sector + e.len);
                sum += e.len;
            }
            match geo.member_range(start, end, m) {
                None => assert_eq!(
                    sum, 0,
                    "member {m} holds part of [{start},{end}) of {geo:?}"
                ),
                Some((a, b)) => {
                    assert_eq!((a, b), (lo, hi), "member {m} [{start},{end}) {geo:?}");
                    assert_eq!(b - a, sum, "the member's pieces are contiguous");
                }
            }
        }
    }
}

#[test]
fn raid0_rejects_bad_geometry() {
    assert_eq!(
        Raid0::new(&[1 << 20], 128, 0),
        Err(GeometryError::MemberCount)
    );
    assert_eq!(
        Raid0::new(&[1 << 20; MAX_MEMBERS + 1], 128, 0),
        Err(GeometryError::MemberCount)
    );
    assert_eq!(Raid0::new(&[1 << 20; 2], 96, 0), Err(GeometryError::Chunk));
    assert_eq!(Raid0::new(&[1 << 20; 2], 4, 0), Err(GeometryError::Chunk));
    assert_eq!(
        Raid0::new(&[1 << 20; 2], 65536, 0),
        Err(GeometryError::Chunk)
    );
    assert_eq!(
        Raid0::new(&[100, 1 << 20], 128, 0),
        Err(GeometryError::MemberTooSmall)
    );
    assert_eq!(
        Raid0::new(&[1 << 20; 2], 128, 1 << 21),
        Err(GeometryError::MemberTooSmall)
    );
    assert!(check_chunk(8).is_ok() && check_chunk(32768).is_ok());
}

#[test]
fn raid1_maps_identity_plus_offset() {
    let mut rng = Rng(0x5eed_0004);
    for _ in 0..1000 {
        let members = 2 + rng.below(8) as usize;
        let off = rng.below(1024) * 8;
        let sizes: Vec<u64> = (0..members)
            .map(|_| off + 64 + rng.below(1 << 20))
            .collect();
        let geo = Raid1::new(&sizes, off).unwrap();
        let smallest = sizes.iter().min().unwrap() - off;
        assert_eq!(geo.array_sectors(), smallest & !7);
        for _ in 0..100 {
            let s = rng.below(geo.array_sectors());
            assert_eq!(geo.map(s), off + s);
            assert_eq!(geo.unmap(geo.map(s)), Some(s));
        }
        assert_eq!(geo.unmap(off + geo.array_sectors()), None);
    }
    assert_eq!(Raid1::new(&[1 << 20], 0), Err(GeometryError::MemberCount));
    assert_eq!(
        Raid1::new(&[4, 1 << 20], 0),
        Err(GeometryError::MemberTooSmall)
    );
}
