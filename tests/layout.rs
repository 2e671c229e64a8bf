//! Property tests of the layout engines against a plain reference model.
//!
//! The reference model walks the array one chunk at a time with no shortcuts; the engines must
//! agree with it on random geometries and random ranges, and every forward map must invert.
//! The RAID 4/5/6 maps are also checked against md itself: `data/md-raid456.txt` holds what
//! Linux's md placed where, captured in the VM by `scripts/guest/md-vectors.sh`; RAID 0's zones
//! likewise against `data/md-raid0.txt`, from `scripts/guest/md-raid0-vectors.sh`.

use rraid_host_tests::layout::raid0::{Raid0, Raid0Layout};
use rraid_host_tests::layout::raid1::Raid1;
use rraid_host_tests::layout::raid5::{Algorithm, Raid5, StripeShape};
use rraid_host_tests::layout::{check_chunk, GeometryError, MAX_MEMBERS};

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

/// Reference RAID 0, md's zones by allocation: walks the array chunk by chunk and hands each
/// chunk to a member of its zone, which takes its next free chunk. Returns, per array chunk,
/// (member, member chunk), and the rounded member sizes in chunks.
fn ref_raid0_chunks(sizes: &[u64], chunk: u64, off: u64, layout: Raid0Layout) -> Vec<(usize, u64)> {
    let chunks: Vec<u64> = sizes.iter().map(|s| (s - off) / chunk).collect();
    let mut distinct = chunks.clone();
    distinct.sort();
    distinct.dedup();
    let mut next = vec![0u64; sizes.len()];
    let mut out = Vec::new();
    let mut prev = 0;
    for &lim in &distinct {
        // The zone: members with more than `prev` chunks, in slot order.
        let zone: Vec<usize> = (0..sizes.len()).filter(|&m| chunks[m] > prev).collect();
        let zone_first = out.len() as u64;
        for k in 0..(lim - prev) * zone.len() as u64 {
            let pick = match layout {
                Raid0Layout::Original => (zone_first + k) as usize % zone.len(),
                Raid0Layout::Alternate => k as usize % zone.len(),
            };
            let m = zone[pick];
            assert!(
                next[m] >= prev && next[m] < lim,
                "reference model overfilled member {m}"
            );
            out.push((m, next[m]));
            next[m] += 1;
        }
        prev = lim;
    }
    out
}

/// Random member sizes: a few distinct sizes, repeated, plus sectors that rounding drops.
fn random_sizes(rng: &mut Rng, members: usize, chunk: u64, off: u64, max_chunks: u64) -> Vec<u64> {
    let kinds: Vec<u64> = (0..1 + rng.below(members as u64))
        .map(|_| 1 + rng.below(max_chunks))
        .collect();
    (0..members)
        .map(|_| off + kinds[rng.below(kinds.len() as u64) as usize] * chunk + rng.below(chunk))
        .collect()
}

fn random_layout(rng: &mut Rng) -> Raid0Layout {
    if rng.below(2) == 0 {
        Raid0Layout::Original
    } else {
        Raid0Layout::Alternate
    }
}

/// A random RAID 0 geometry with its sizes, chunk and data offset.
fn random_raid0(rng: &mut Rng, max_members: u64, max_chunks: u64) -> (Raid0, Vec<u64>, u64, u64) {
    let members = 2 + rng.below(max_members - 1) as usize;
    let chunk = 8u64 << rng.below(6);
    let off = if rng.below(2) == 0 {
        0
    } else {
        rng.below(4096) * 8
    };
    let sizes = random_sizes(rng, members, chunk, off, max_chunks);
    let geo = Raid0::new(&sizes, chunk, off, random_layout(rng)).expect("valid geometry");
    (geo, sizes, chunk, off)
}

#[test]
fn raid0_zones_match_reference_and_invert() {
    let mut rng = Rng(0x5eed_0001);
    for _ in 0..3000 {
        let (geo, sizes, chunk, off) = random_raid0(&mut rng, 12, 24);
        let want = ref_raid0_chunks(&sizes, chunk, off, geo.layout());
        let rounded: Vec<u64> = sizes.iter().map(|s| (s - off) / chunk * chunk).collect();
        // md's raid0_size: the sum of the rounded members; one zone per distinct size.
        assert_eq!(geo.array_sectors(), rounded.iter().sum::<u64>(), "{geo:?}");
        assert_eq!(geo.array_sectors(), want.len() as u64 * chunk);
        let mut distinct = rounded.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(geo.zones(), distinct.len(), "{geo:?}");
        assert_eq!(geo.member_sectors(), distinct[0]);
        for (m, r) in rounded.iter().enumerate() {
            assert_eq!(geo.member_data_sectors(m), *r);
        }
        assert_eq!(
            geo.md_layout(),
            if distinct.len() > 1 {
                geo.layout().number() as i32
            } else {
                -1
            }
        );
        for (c, &(m, mc)) in want.iter().enumerate() {
            let s = c as u64 * chunk + rng.below(chunk);
            let ms = off + mc * chunk + s % chunk;
            assert_eq!(geo.map(s), (m, ms), "{geo:?} sector {s}");
            assert_eq!(geo.unmap(m, ms), Some(s), "{geo:?} member {m} sector {ms}");
        }
        // Every member sector of the data area maps back, and nothing outside it does.
        for m in 0..geo.members() {
            for _ in 0..8 {
                let ms = off + rng.below(rounded[m]);
                let s = geo.unmap(m, ms).expect("in the data area");
                assert!(s < geo.array_sectors());
                assert_eq!(geo.map(s), (m, ms));
            }
            assert_eq!(geo.unmap(m, off + rounded[m]), None, "{geo:?} member {m}");
            assert_eq!(geo.unmap(m, off + rounded[m] + rng.below(1 << 20)), None);
            if off > 0 {
                assert_eq!(geo.unmap(m, off - 1), None);
            }
        }
        assert_eq!(geo.unmap(geo.members(), off), None);
    }
}

#[test]
fn raid0_equal_members_stripe_round_robin() {
    // One zone: chunk c on member c mod n, member chunk c / n, whatever the layout.
    let mut rng = Rng(0x5eed_0004);
    for _ in 0..500 {
        let n = 2 + rng.below(63);
        let chunk = 8u64 << rng.below(13);
        let size = chunk * (1 + rng.below(100));
        let sizes: Vec<u64> = (0..n).map(|_| size + rng.below(chunk)).collect();
        for layout in [Raid0Layout::Original, Raid0Layout::Alternate] {
            let geo = Raid0::new(&sizes, chunk, 0, layout).unwrap();
            assert_eq!(geo.zones(), 1);
            assert_eq!(geo.md_layout(), -1);
            assert_eq!(geo.member_sectors(), size);
            assert_eq!(geo.array_sectors(), size * n);
            for _ in 0..50 {
                let s = rng.below(geo.array_sectors());
                let c = s / chunk;
                assert_eq!(geo.map(s), ((c % n) as usize, (c / n) * chunk + s % chunk));
            }
        }
    }
}

#[test]
fn raid0_many_zones() {
    // 64 members of 64 different sizes: 64 zones, the last over one member.
    let chunk = 8;
    let sizes: Vec<u64> = (0..64).map(|i| (64 - i) * 3 * chunk).collect();
    for layout in [Raid0Layout::Original, Raid0Layout::Alternate] {
        let geo = Raid0::new(&sizes, chunk, 0, layout).unwrap();
        assert_eq!(geo.zones(), 64);
        let want = ref_raid0_chunks(&sizes, chunk, 0, layout);
        assert_eq!(geo.array_sectors(), want.len() as u64 * chunk);
        for (c, &(m, mc)) in want.iter().enumerate() {
            assert_eq!(geo.map(c as u64 * chunk + 3), (m, mc * chunk + 3));
            assert_eq!(geo.unmap(m, mc * chunk + 3), Some(c as u64 * chunk + 3));
        }
        let last = geo.zone(63).unwrap();
        assert_eq!(last.members, 1);
        assert_eq!(last.end, geo.array_sectors());
        assert_eq!(geo.zone(64), None);
    }
}

/// Hand-computed from md's `create_strip_zones` and `map_sector`: members of 5, 7 and 9 chunks
/// (chunk 8 sectors, sizes not chunk multiples). Zone 0 is array chunks 0-14 over all three
/// (member chunks 0-4); zone 1 is chunks 15-18 over members 1 and 2 (member chunks 5-6);
/// zone 2 is chunks 19-20 on member 2 (member chunks 7-8). Zone 1 starts at array chunk 15, odd:
/// the original layout starts its rows at the zone's second member (md's `disk_shift` 1).
#[test]
fn raid0_md_hand_example() {
    let sizes = [5 * 8 + 3, 7 * 8 + 7, 9 * 8];
    let orig = Raid0::new(&sizes, 8, 0, Raid0Layout::Original).unwrap();
    let alt = Raid0::new(&sizes, 8, 0, Raid0Layout::Alternate).unwrap();
    for geo in [&orig, &alt] {
        assert_eq!(geo.array_sectors(), 21 * 8);
        assert_eq!(geo.zones(), 3);
        assert_eq!(geo.zone(1).unwrap().start, 15 * 8);
        assert_eq!(geo.zone(1).unwrap().dev_start, 5 * 8);
        assert_eq!(geo.zone(1).unwrap().members, 0b110);
        assert_eq!(geo.zone(2).unwrap().start, 19 * 8);
        for c in 0..15u64 {
            assert_eq!(geo.map(c * 8 + 1), ((c % 3) as usize, (c / 3) * 8 + 1));
        }
        assert_eq!(geo.map(19 * 8), (2, 7 * 8));
        assert_eq!(geo.map(20 * 8 + 7), (2, 8 * 8 + 7));
    }
    // (array chunk, member, member chunk) in zone 1.
    for (c, m, mc) in [(15, 2, 5), (16, 1, 5), (17, 2, 6), (18, 1, 6)] {
        assert_eq!(orig.map(c * 8), (m, mc * 8), "original, chunk {c}");
    }
    for (c, m, mc) in [(15, 1, 5), (16, 2, 5), (17, 1, 6), (18, 2, 6)] {
        assert_eq!(alt.map(c * 8), (m, mc * 8), "alternate, chunk {c}");
    }
    assert_eq!(orig.md_layout(), 1);
    assert_eq!(alt.md_layout(), 2);
    // Chunks 14-16 span zones 0 and 1. Member 2 holds chunk 14 (its chunk 4) and, original,
    // chunk 15 or, alternate, chunk 16 (its chunk 5): adjacent on the member. Member 1 holds
    // one chunk of zone 1, member 0 none.
    for geo in [&orig, &alt] {
        assert_eq!(geo.member_range(14 * 8, 17 * 8, 0), None);
        assert_eq!(geo.member_range(14 * 8, 17 * 8, 1), Some((5 * 8, 6 * 8)));
        assert_eq!(geo.member_range(14 * 8, 17 * 8, 2), Some((4 * 8, 6 * 8)));
    }
    // From the middle of chunk 14 to the first sector of chunk 16.
    assert_eq!(
        orig.member_range(14 * 8 + 4, 16 * 8 + 1, 1),
        Some((5 * 8, 5 * 8 + 1))
    );
    assert_eq!(
        orig.member_range(14 * 8 + 4, 16 * 8 + 1, 2),
        Some((4 * 8 + 4, 6 * 8))
    );
    assert_eq!(
        alt.member_range(14 * 8 + 4, 16 * 8 + 1, 1),
        Some((5 * 8, 6 * 8))
    );
    assert_eq!(
        alt.member_range(14 * 8 + 4, 16 * 8 + 1, 2),
        Some((4 * 8 + 4, 5 * 8 + 1))
    );
}

const MD_RAID0_VECTORS: &str = include_str!("data/md-raid0.txt");

/// md's own zones: every member block md filled must be where rraid maps that array block, in
/// both layouts, and the array sizes agree (`data/md-raid0.txt`, from
/// `scripts/guest/md-raid0-vectors.sh`).
#[test]
fn raid0_matches_md_vectors() {
    use std::collections::BTreeMap;
    let mut geos: BTreeMap<u32, (u64, Vec<u64>)> = BTreeMap::new();
    let (mut arrays, mut members) = (0, 0);
    let mut multi_zone_differs = false;
    for (no, line) in MD_RAID0_VECTORS.lines().enumerate() {
        let at = format!("md-raid0.txt:{}: {line}", no + 1);
        let f: Vec<&str> = line.split_whitespace().collect();
        let num = |i: usize| -> u64 { f[i].parse().unwrap_or_else(|_| panic!("{at}")) };
        match f.first().copied() {
            None | Some("#") => continue,
            Some("geo") => {
                let sizes = (3..f.len()).map(num).collect();
                geos.insert(num(1) as u32, (num(2), sizes));
                continue;
            }
            Some("md") | Some("member") => {}
            Some(other) => panic!("{at}: unknown record {other}"),
        }
        let (chunk, sizes) = geos
            .get(&(num(1) as u32))
            .unwrap_or_else(|| panic!("{at}: geo"));
        let layout = match num(2) {
            1 => Raid0Layout::Original,
            2 => Raid0Layout::Alternate,
            _ => panic!("{at}: layout"),
        };
        let geo = Raid0::new(sizes, *chunk, 0, layout).unwrap();
        if f[0] == "md" {
            assert_eq!(geo.array_sectors(), num(3), "{at}");
            // md's layout file reads -1 for `mdadm --build` arrays, whatever the zones.
            assert_eq!(f[4], "-1", "{at}");
            arrays += 1;
            continue;
        }
        let m = num(3) as usize;
        let blocks: Vec<u64> = (4..f.len()).map(num).collect();
        // md filled the member's data area: its size rounded down to the chunk.
        assert_eq!(blocks.len() as u64 * 8, geo.member_data_sectors(m), "{at}");
        for (i, &b) in blocks.iter().enumerate() {
            let ms = i as u64 * 8;
            assert_eq!(geo.map(b * 8), (m, ms), "{at}: array block {b}");
            assert_eq!(geo.map(b * 8 + 7), (m, ms + 7), "{at}: array block {b}");
            assert_eq!(geo.unmap(m, ms), Some(b * 8), "{at}: member block {i}");
            let other = match layout {
                Raid0Layout::Original => Raid0Layout::Alternate,
                Raid0Layout::Alternate => Raid0Layout::Original,
            };
            if Raid0::new(sizes, *chunk, 0, other).unwrap().map(b * 8) != (m, ms) {
                multi_zone_differs = true;
            }
        }
        members += 1;
    }
    assert_eq!(arrays, 2 * geos.len());
    assert!(members >= 2 * 3 * geos.len());
    assert!(multi_zone_differs, "the vectors tell the two layouts apart");
}

#[test]
fn raid0_extents_cover_range_exactly_once() {
    let mut rng = Rng(0x5eed_0002);
    for _ in 0..3000 {
        let (geo, _sizes, chunk, _off) = random_raid0(&mut rng, 16, 64);
        let total = geo.array_sectors();
        let start = rng.below(total);
        let len = 1 + rng.below((total - start).min(chunk * 80));
        let zone_of = |s: u64| {
            (0..geo.zones())
                .find(|&i| s < geo.zone(i).unwrap().end)
                .unwrap()
        };
        let mut expect_off = 0;
        for e in geo.extents(start, len) {
            assert_eq!(e.offset, expect_off, "extents are in order and contiguous");
            assert!(e.len > 0 && e.len <= chunk);
            let s0 = start + e.offset;
            // Each extent stays in one chunk of one member, in one zone, and agrees with map
            // sector by sector.
            assert_eq!(s0 / chunk, (s0 + e.len - 1) / chunk);
            assert_eq!(zone_of(s0), zone_of(s0 + e.len - 1));
            for i in [0, e.len / 2, e.len - 1] {
                assert_eq!((e.member, e.sector + i), geo.map(s0 + i), "{geo:?}");
            }
            expect_off += e.len;
        }
        assert_eq!(expect_off, len);
    }
}

#[test]
fn raid0_member_range_matches_per_sector_map() {
    let mut rng = Rng(0x5eed_0003);
    for _ in 0..1500 {
        // Small geometries, so that every sector of the range is mapped on its own.
        let members = 2 + rng.below(6) as usize;
        let chunk = 8u64 << rng.below(3);
        let off = if rng.below(2) == 0 {
            0
        } else {
            8 * rng.below(64)
        };
        let sizes = random_sizes(&mut rng, members, chunk, off, 12);
        let geo = Raid0::new(&sizes, chunk, off, random_layout(&mut rng)).unwrap();
        let total = geo.array_sectors();
        for _ in 0..6 {
            let start = rng.below(total);
            let end = start + 1 + rng.below(total - start);
            let mut lo = vec![u64::MAX; members];
            let mut hi = vec![0u64; members];
            let mut n = vec![0u64; members];
            for s in start..end {
                let (m, ms) = geo.map(s);
                lo[m] = lo[m].min(ms);
                hi[m] = hi[m].max(ms + 1);
                n[m] += 1;
            }
            for m in 0..members {
                let got = geo.member_range(start, end, m);
                if n[m] == 0 {
                    assert_eq!(got, None, "member {m} [{start},{end}) {geo:?}");
                } else {
                    assert_eq!(
                        got,
                        Some((lo[m], hi[m])),
                        "member {m} [{start},{end}) {geo:?}"
                    );
                    assert_eq!(hi[m] - lo[m], n[m], "the member's pieces are contiguous");
                }
            }
        }
        assert_eq!(geo.member_range(5, 5, 0), None);
        assert_eq!(geo.member_range(0, total, members), None);
        for m in 0..members {
            assert_eq!(
                geo.member_range(0, total, m),
                Some((off, off + geo.member_data_sectors(m)))
            );
        }
    }
}

#[test]
fn raid0_member_range_is_union_of_extents() {
    let mut rng = Rng(0x5eed_0005);
    for _ in 0..3000 {
        let (geo, _sizes, _chunk, _off) = random_raid0(&mut rng, 20, 200);
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
fn raid0_layout_names_and_numbers() {
    for (s, l) in [
        ("original", Raid0Layout::Original),
        ("1", Raid0Layout::Original),
        ("alternate", Raid0Layout::Alternate),
        ("2", Raid0Layout::Alternate),
    ] {
        assert_eq!(Raid0Layout::parse(s), Some(l));
    }
    for s in [
        "",
        "0",
        "3",
        "dangerous",
        "orig",
        "Original",
        "left-symmetric",
        "-1",
        "01",
    ] {
        assert_eq!(Raid0Layout::parse(s), None, "{s}");
    }
    assert_eq!(Raid0Layout::Original.number(), 1);
    assert_eq!(Raid0Layout::Alternate.number(), 2);
    assert_eq!(
        Raid0Layout::parse(Raid0Layout::Alternate.name()),
        Some(Raid0Layout::Alternate)
    );
}

#[test]
fn raid0_rejects_bad_geometry() {
    let o = Raid0Layout::Original;
    assert_eq!(
        Raid0::new(&[1 << 20], 128, 0, o),
        Err(GeometryError::MemberCount)
    );
    assert_eq!(
        Raid0::new(&[1 << 20; MAX_MEMBERS + 1], 128, 0, o),
        Err(GeometryError::MemberCount)
    );
    assert_eq!(
        Raid0::new(&[1 << 20; 2], 96, 0, o),
        Err(GeometryError::Chunk)
    );
    assert_eq!(
        Raid0::new(&[1 << 20; 2], 4, 0, o),
        Err(GeometryError::Chunk)
    );
    assert_eq!(
        Raid0::new(&[1 << 20; 2], 65536, 0, o),
        Err(GeometryError::Chunk)
    );
    assert_eq!(
        Raid0::new(&[100, 1 << 20], 128, 0, o),
        Err(GeometryError::MemberTooSmall)
    );
    assert_eq!(
        Raid0::new(&[1 << 20; 2], 128, 1 << 21, o),
        Err(GeometryError::MemberTooSmall)
    );
    assert!(Raid0::new(&[128, 1 << 20], 128, 0, o).is_ok());
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
