//! Property tests of the layout engines against a plain reference model.
//!
//! The reference model walks the array one chunk at a time with no shortcuts; the engines must
//! agree with it on random geometries and random ranges, and every forward map must invert.
//! The RAID 4/5/6 maps are also checked against md itself: `data/md-raid456.txt` holds what
//! Linux's md placed where, captured in the VM by `scripts/guest/md-vectors.sh`.

use rraid_host_tests::layout::raid0::Raid0;
use rraid_host_tests::layout::raid1::Raid1;
use rraid_host_tests::layout::raid5::{Algorithm, Raid5, StripeShape};
use rraid_host_tests::layout::{check_chunk, GeometryError, MAX_MEMBERS};

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

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

// ---------------------------------------------------------------------------------------------
// RAID 4/5/6
// ---------------------------------------------------------------------------------------------

/// What a member holds in one stripe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cell {
    P,
    Q,
    /// Data chunk with this index in the stripe (array chunk `stripe * data + k`).
    Data(usize),
}

/// Reference RAID 4/5/6 stripe, built from md's layouts as described, member list first:
/// P (and Q) go where the layout puts them, then the data chunks fill the other members in walk
/// order: from member 0 upwards for the asymmetric and parity-first/last layouts, from the
/// member after the parity block(s), wrapping, for the symmetric ones. Returns the cells and,
/// per member, Q's coefficient index: md numbers the data blocks for the syndrome by walking
/// from the member after Q, wrapping.
fn ref_stripe(level: u8, alg: Algorithm, n: usize, stripe: u64) -> (Vec<Cell>, Vec<Option<usize>>) {
    let r = (stripe % n as u64) as usize;
    let raid6 = level == 6;
    let d = if raid6 { n - 2 } else { n - 1 };
    let alg = if level == 4 {
        Algorithm::ParityLast
    } else {
        alg
    };
    let (p, q) = match alg {
        Algorithm::LeftAsymmetric | Algorithm::LeftSymmetric => (n - 1 - r, (n - r) % n),
        Algorithm::RightAsymmetric | Algorithm::RightSymmetric => (r, (r + 1) % n),
        Algorithm::ParityFirst => (0, 1),
        Algorithm::ParityLast => (d, d + 1),
    };
    let mut cells: Vec<Option<Cell>> = vec![None; n];
    cells[p] = Some(Cell::P);
    if raid6 {
        cells[q] = Some(Cell::Q);
    }
    let last_parity = if raid6 { q } else { p };
    let start = match alg {
        Algorithm::LeftSymmetric | Algorithm::RightSymmetric => (last_parity + 1) % n,
        _ => 0,
    };
    let mut k = 0;
    for step in 0..n {
        let m = (start + step) % n;
        if cells[m].is_none() {
            cells[m] = Some(Cell::Data(k));
            k += 1;
        }
    }
    assert_eq!(k, d);
    let cells: Vec<Cell> = cells.into_iter().map(|c| c.unwrap()).collect();
    let mut qi = vec![None; n];
    if raid6 {
        let mut i = 0;
        for step in 1..=n {
            let m = (q + step) % n;
            if let Cell::Data(_) = cells[m] {
                qi[m] = Some(i);
                i += 1;
            }
        }
    }
    (cells, qi)
}

/// The cells of one stripe as `Raid5` sees them.
fn raid5_cells(geo: &Raid5, stripe: u64) -> Vec<Cell> {
    let sh = geo.shape(stripe);
    (0..geo.members())
        .map(|m| {
            let k = geo.data_index(sh, m);
            if m == sh.pd {
                assert_eq!(k, None);
                Cell::P
            } else if Some(m) == sh.qd {
                assert_eq!(k, None);
                Cell::Q
            } else {
                Cell::Data(k.expect("a member is P, Q or data"))
            }
        })
        .collect()
}

fn raid5_q(geo: &Raid5, stripe: u64) -> Vec<Option<usize>> {
    let sh = geo.shape(stripe);
    (0..geo.members()).map(|m| geo.q_index(sh, m)).collect()
}

/// md's vectors, captured by scripts/guest/md-vectors.sh.
const MD_VECTORS: &str = include_str!("data/md-raid456.txt");

/// The member counts the capture covers, per level.
fn md_member_counts(level: u8) -> &'static [usize] {
    if level == 6 {
        &[4, 5, 6, 8]
    } else {
        &[2, 3, 4, 5, 8]
    }
}

#[test]
fn raid456_matches_md_vectors() {
    use std::collections::BTreeMap;
    // (level, layout, members) -> stripes seen, for the map and q lines.
    let mut maps: BTreeMap<(u8, u32, usize), Vec<u64>> = BTreeMap::new();
    let mut qs: BTreeMap<(u8, u32, usize), Vec<u64>> = BTreeMap::new();
    let mut defaults = BTreeMap::new();
    let chunk = 8;
    for (no, line) in MD_VECTORS.lines().enumerate() {
        let at = format!("md-raid456.txt:{}: {line}", no + 1);
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.first().copied() {
            None | Some("#") => continue,
            Some("default") => {
                assert_eq!(f.len(), 3, "{at}");
                defaults.insert(f[1].parse::<u8>().unwrap(), f[2].parse::<u32>().unwrap());
                continue;
            }
            Some("map") | Some("q") => {}
            Some(other) => panic!("{at}: unknown record {other}"),
        }
        let level: u8 = f[1].parse().unwrap();
        let layout: u32 = f[2].parse().unwrap();
        let n: usize = f[3].parse().unwrap();
        let stripe: u64 = f[4].parse().unwrap();
        assert_eq!(f.len(), 5 + n, "{at}");
        let cells = &f[5..];
        // md reports layout 0 for RAID 4; Raid5 ignores the layout there.
        let alg = Algorithm::from_number(layout).unwrap_or_else(|| panic!("{at}: layout"));
        // Members of 64 chunks, past the captured stripes; a data offset to see it added.
        let off = 2048;
        let geo = Raid5::new(level, alg, &vec![off + 64 * chunk; n], chunk, None, off).unwrap();
        let d = geo.data() as u64;
        let sh = geo.shape(stripe);
        if f[0] == "q" {
            qs.entry((level, layout, n)).or_default().push(stripe);
            for (m, c) in cells.iter().enumerate() {
                let want = if *c == "-" {
                    None
                } else {
                    Some(c.parse::<usize>().unwrap())
                };
                assert_eq!(geo.q_index(sh, m), want, "{at}: member {m}");
            }
            continue;
        }
        maps.entry((level, layout, n)).or_default().push(stripe);
        for (m, c) in cells.iter().enumerate() {
            let ms = off + stripe * chunk;
            match *c {
                "P" => {
                    assert_eq!(sh.pd, m, "{at}: P on member {m}");
                    assert_eq!(geo.data_index(sh, m), None, "{at}");
                    assert_eq!(geo.unmap(m, ms), None, "{at}");
                }
                "Q" => {
                    assert_eq!(sh.qd, Some(m), "{at}: Q on member {m}");
                    assert_eq!(geo.data_index(sh, m), None, "{at}");
                    assert_eq!(geo.unmap(m, ms), None, "{at}");
                }
                _ => {
                    let chunk_no: u64 = c.parse().unwrap();
                    assert_eq!(chunk_no / d, stripe, "{at}");
                    let k = (chunk_no % d) as usize;
                    assert_eq!(geo.data_index(sh, m), Some(k), "{at}: member {m}");
                    assert_eq!(geo.data_member(sh, k), m, "{at}: data {k}");
                    for in_chunk in [0, 3, chunk - 1] {
                        let s = chunk_no * chunk + in_chunk;
                        let loc = geo.map(s);
                        assert_eq!(
                            (loc.stripe, loc.data_index, loc.member, loc.member_sector),
                            (stripe, k, m, ms + in_chunk),
                            "{at}: sector {s}"
                        );
                        assert_eq!(geo.unmap(m, ms + in_chunk), Some(s), "{at}");
                    }
                }
            }
        }
        if level != 6 {
            assert_eq!(sh.qd, None, "{at}");
        }
    }
    // What md shows for arrays made without --layout: RAID 4 reports 0 (its map ignores the
    // number), RAID 5 and 6 left-symmetric.
    assert_eq!(defaults.get(&4), Some(&0), "RAID 4's layout number");
    assert_eq!(defaults.get(&5), Some(&2), "RAID 5's default layout");
    assert_eq!(defaults.get(&6), Some(&2), "RAID 6's default layout");
    // The file covers every configuration, 2*M stripes each (a cut-off capture fails here).
    let mut want = Vec::new();
    for &n in md_member_counts(4) {
        want.push((4, defaults[&4], n));
    }
    for level in [5u8, 6] {
        for a in Algorithm::ALL {
            for &n in md_member_counts(level) {
                want.push((level, a.number(), n));
            }
        }
    }
    want.sort();
    assert_eq!(maps.keys().copied().collect::<Vec<_>>(), want);
    for (key, stripes) in &maps {
        assert_eq!(
            *stripes,
            (0..2 * key.2 as u64).collect::<Vec<_>>(),
            "{key:?}"
        );
        if key.0 == 6 {
            assert_eq!(qs.get(key), Some(stripes), "q lines of {key:?}");
        }
    }
    assert_eq!(qs.len(), 6 * md_member_counts(6).len());
}

/// A random RAID 4/5/6 geometry: (geometry, chunk, data offset).
fn random_raid5(rng: &mut Rng) -> (Raid5, u64, u64) {
    let level = [4u8, 5, 6][rng.below(3) as usize];
    let min = if level == 6 { 4 } else { 2 };
    // Mostly small arrays, sometimes up to the limit.
    let members = if rng.below(8) == 0 {
        min + rng.below((MAX_MEMBERS - min + 1) as u64) as usize
    } else {
        min + rng.below(14) as usize
    };
    let alg = Algorithm::ALL[rng.below(6) as usize];
    let chunk = 8u64 << rng.below(13);
    let data_offset = if rng.below(2) == 0 {
        0
    } else {
        rng.below(4096) * 8
    };
    let sizes: Vec<u64> = (0..members)
        .map(|_| data_offset + chunk * (1 + rng.below(200)) + rng.below(chunk))
        .collect();
    let geo = Raid5::new(level, alg, &sizes, chunk, None, data_offset).expect("valid geometry");
    let smallest = sizes.iter().min().unwrap() - data_offset;
    assert_eq!(geo.member_sectors(), smallest / chunk * chunk);
    assert_eq!(geo.level(), level);
    assert_eq!(geo.members(), members);
    assert_eq!(geo.parity(), if level == 6 { 2 } else { 1 });
    assert_eq!(geo.data(), members - geo.parity());
    assert_eq!(
        geo.algorithm(),
        if level == 4 {
            Algorithm::ParityLast
        } else {
            alg
        }
    );
    (geo, chunk, data_offset)
}

#[test]
fn raid5_stripes_match_reference() {
    let mut rng = Rng(0x5eed_0005);
    for _ in 0..3000 {
        let (geo, _, _) = random_raid5(&mut rng);
        let n = geo.members();
        // Two full rotations, then random stripes.
        let stripes: Vec<u64> = (0..2 * n as u64)
            .chain((0..20).map(|_| rng.below(geo.stripes())))
            .collect();
        for s in stripes {
            let (cells, qi) = ref_stripe(geo.level(), geo.algorithm(), n, s);
            assert_eq!(raid5_cells(&geo, s), cells, "{geo:?} stripe {s}");
            assert_eq!(raid5_q(&geo, s), qi, "{geo:?} stripe {s}");
            let sh = geo.shape(s);
            for (m, c) in cells.iter().enumerate() {
                if let Cell::Data(k) = c {
                    assert_eq!(geo.data_member(sh, *k), m);
                }
            }
        }
    }
}

#[test]
fn raid5_stripe_members_partition() {
    let mut rng = Rng(0x5eed_0006);
    for _ in 0..3000 {
        let (geo, _, _) = random_raid5(&mut rng);
        let n = geo.members();
        let d = geo.data();
        for _ in 0..20 {
            let s = rng.below(geo.stripes());
            let sh = geo.shape(s);
            assert!(sh.pd < n);
            assert_eq!(sh.qd.is_some(), geo.level() == 6);
            assert_ne!(sh.qd, Some(sh.pd));
            let mut data_seen = vec![false; d];
            let mut q_seen = vec![false; d];
            for m in 0..n {
                let parity = m == sh.pd || Some(m) == sh.qd;
                match geo.data_index(sh, m) {
                    None => assert!(parity, "member {m} of {geo:?} stripe {s} is nothing"),
                    Some(k) => {
                        assert!(!parity && k < d && !data_seen[k]);
                        data_seen[k] = true;
                    }
                }
                match geo.q_index(sh, m) {
                    None => assert!(parity || geo.level() != 6),
                    Some(i) => {
                        assert!(geo.level() == 6 && !parity && i < d && !q_seen[i]);
                        q_seen[i] = true;
                    }
                }
            }
            assert!(data_seen.iter().all(|&x| x));
            assert_eq!(q_seen.iter().all(|&x| x), geo.level() == 6);
            // Members out of range are nothing.
            assert_eq!(geo.data_index(sh, n), None);
            assert_eq!(geo.q_index(sh, n), None);
        }
    }
}

#[test]
fn raid5_map_inverts() {
    let mut rng = Rng(0x5eed_0007);
    for _ in 0..3000 {
        let (geo, chunk, off) = random_raid5(&mut rng);
        let d = geo.data() as u64;
        assert_eq!(geo.array_sectors(), geo.member_sectors() * d);
        assert_eq!(geo.stripes(), geo.member_sectors() / chunk);
        assert_eq!(geo.stripe_data_sectors(), chunk * d);
        for _ in 0..100 {
            let s = rng.below(geo.array_sectors());
            let loc = geo.map(s);
            assert_eq!(loc.stripe, s / (chunk * d));
            assert_eq!(loc.data_index as u64, s / chunk % d);
            assert_eq!(loc.shape, geo.shape(loc.stripe));
            assert_eq!(geo.data_member(loc.shape, loc.data_index), loc.member);
            assert_eq!(
                loc.member_sector,
                off + loc.stripe * chunk + s % chunk,
                "{geo:?} sector {s}"
            );
            assert_eq!(geo.stripe_start(loc.stripe), loc.member_sector - s % chunk);
            assert!(geo.stripe_array_start(loc.stripe) <= s);
            assert!(s < geo.stripe_array_start(loc.stripe + 1));
            assert_eq!(geo.unmap(loc.member, loc.member_sector), Some(s));
        }
        // Every member sector in the data area is data (mapping back to it) or parity.
        for _ in 0..50 {
            let m = rng.below(geo.members() as u64) as usize;
            let ms = off + rng.below(geo.member_sectors());
            let sh = geo.shape((ms - off) / chunk);
            match geo.unmap(m, ms) {
                Some(s) => {
                    assert!(s < geo.array_sectors());
                    let loc = geo.map(s);
                    assert_eq!((loc.member, loc.member_sector), (m, ms));
                }
                None => assert!(m == sh.pd || Some(m) == sh.qd),
            }
        }
        let (first_data, _) = (0..geo.members())
            .filter_map(|m| Some((m, geo.data_index(geo.shape(0), m)?)))
            .next()
            .unwrap();
        assert_eq!(geo.unmap(first_data, off), Some(0));
        assert_eq!(geo.unmap(first_data, off + geo.member_sectors()), None);
        if off > 0 {
            assert_eq!(geo.unmap(first_data, off - 1), None);
        }
        assert_eq!(geo.unmap(geo.members(), off), None);
    }
}

#[test]
fn raid5_helpers_do_not_panic_on_foreign_shapes() {
    // Shapes that no stripe of the array has (a caller's bug) give answers, not panics.
    let geo = Raid5::new(6, Algorithm::LeftSymmetric, &[1 << 20; 6], 128, None, 0).unwrap();
    let g5 = Raid5::new(5, Algorithm::LeftSymmetric, &[1 << 20; 6], 128, None, 0).unwrap();
    for pd in [0, 5, 6, 64, usize::MAX] {
        for qd in [None, Some(0), Some(6), Some(usize::MAX)] {
            let sh = StripeShape { pd, qd };
            for m in [0, 3, 5, 6, usize::MAX] {
                let _ = geo.data_index(sh, m);
                let _ = geo.q_index(sh, m);
                let _ = g5.data_index(sh, m);
                let _ = g5.q_index(sh, m);
            }
            for k in [0, 3, 4, usize::MAX] {
                let _ = geo.data_member(sh, k);
                let _ = g5.data_member(sh, k);
            }
        }
    }
}

#[test]
fn raid5_rejects_bad_geometry() {
    let big = [1u64 << 20; MAX_MEMBERS + 1];
    let la = Algorithm::LeftAsymmetric;
    let new = |level: u8, sizes: &[u64], chunk: u64, off: u64| {
        Raid5::new(level, la, sizes, chunk, None, off).err()
    };
    use GeometryError::*;
    /// Level, member sizes, chunk, data offset, the error expected.
    type Case<'a> = (u8, &'a [u64], u64, u64, Option<GeometryError>);
    let cases: &[Case] = &[
        (5, &big[..1], 128, 0, Some(MemberCount)),
        (4, &big[..1], 128, 0, Some(MemberCount)),
        (6, &big[..3], 128, 0, Some(MemberCount)),
        (5, &big, 128, 0, Some(MemberCount)),
        (6, &big, 128, 0, Some(MemberCount)),
        (0, &big[..4], 128, 0, Some(MemberCount)),
        (1, &big[..4], 128, 0, Some(MemberCount)),
        (3, &big[..4], 128, 0, Some(MemberCount)),
        (7, &big[..4], 128, 0, Some(MemberCount)),
        (10, &big[..4], 128, 0, Some(MemberCount)),
        (4, &big[..2], 128, 0, None),
        (5, &big[..2], 128, 0, None),
        (6, &big[..4], 128, 0, None),
        (6, &big[..MAX_MEMBERS], 128, 0, None),
        (5, &big[..3], 96, 0, Some(Chunk)),
        (5, &big[..3], 4, 0, Some(Chunk)),
        (5, &big[..3], 65536, 0, Some(Chunk)),
        (5, &[100, 1 << 20, 1 << 20], 128, 0, Some(MemberTooSmall)),
        (5, &big[..3], 128, 1 << 21, Some(MemberTooSmall)),
    ];
    for &(level, sizes, chunk, off, want) in cases {
        assert_eq!(
            new(level, sizes, chunk, off),
            want,
            "level {level}, {} members, chunk {chunk}, offset {off}",
            sizes.len()
        );
    }
    // An explicit size: rounded down to the chunk, never beyond the members, never zero.
    let g = Raid5::new(5, la, &big[..3], 128, Some(1000), 8).unwrap();
    assert_eq!(g.member_sectors(), 896);
    assert_eq!(g.array_sectors(), 1792);
    assert_eq!(g.data_offset(), 8);
    assert_eq!(
        Raid5::new(5, la, &big[..3], 128, Some(100), 0),
        Err(GeometryError::MemberTooSmall)
    );
    assert_eq!(
        Raid5::new(5, la, &big[..3], 128, Some((1 << 20) - 8 + 128), 8),
        Err(GeometryError::MemberTooSmall)
    );
    let g = Raid5::new(5, la, &big[..3], 128, Some(1 << 20), 0).unwrap();
    assert_eq!(g.member_sectors(), 1 << 20);
    // RAID 4 is parity-last whatever the layout asked.
    for a in Algorithm::ALL {
        let g = Raid5::new(4, a, &big[..4], 128, None, 0).unwrap();
        assert_eq!(g.algorithm(), Algorithm::ParityLast);
    }
}

#[test]
fn raid5_algorithm_names_and_numbers() {
    // mdadm's names for md's layouts 0-5.
    let names = [
        "left-asymmetric",
        "right-asymmetric",
        "left-symmetric",
        "right-symmetric",
        "parity-first",
        "parity-last",
    ];
    for (n, a) in Algorithm::ALL.iter().enumerate() {
        assert_eq!(a.number(), n as u32);
        assert_eq!(Algorithm::from_number(n as u32), Some(*a));
        assert_eq!(a.name(), names[n]);
        assert_eq!(Algorithm::parse(names[n]), Some(*a));
    }
    for (alias, n) in [("la", 0), ("ra", 1), ("ls", 2), ("rs", 3)] {
        assert_eq!(Algorithm::parse(alias), Algorithm::from_number(n));
    }
    for n in [6, 7, 8, 16, 17, 18, 19, 20, u32::MAX] {
        assert_eq!(Algorithm::from_number(n), None, "{n}");
    }
    for s in [
        "",
        "2",
        "left",
        "Left-Symmetric",
        "left-symmetric ",
        "left-symmetric-6",
        "pf",
    ] {
        assert_eq!(Algorithm::parse(s), None, "{s:?}");
    }
}
