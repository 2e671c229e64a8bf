//! RAID 10 layout tests: md's own placement (captured vectors), a plain reference model of
//! the layouts mdadm makes, round trips and collision checks on random geometries (far sets
//! included), the survival check against brute force, sizes, and refused geometries.

use rraid_host_tests::layout::raid10::{FarSets, Raid10, Raid10Layout, Replica};
use rraid_host_tests::layout::{GeometryError, MAX_MEMBERS};
use std::collections::HashMap;

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

const VECTORS: &str = include_str!("data/md-raid10.txt");

fn layout(n: u32) -> Raid10Layout {
    Raid10Layout::from_number(n).expect("md layout number")
}

#[test]
fn layout_names_and_numbers_match_mdadm() {
    let mut seen = 0;
    for line in VECTORS.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.first() {
            Some(&"default") => {
                assert_eq!(w[1].parse::<u32>().unwrap(), Raid10Layout::N2.number());
                seen += 1;
            }
            Some(&"layout") => {
                let n: u32 = w[2].parse().unwrap();
                let l = Raid10Layout::parse(w[1]).expect(w[1]);
                assert_eq!(l.number(), n, "{line}");
                assert_eq!(Raid10Layout::parse(w[2]), Some(l), "{line}");
                assert_eq!(l.sets(), FarSets::Whole);
                seen += 1;
            }
            _ => {}
        }
    }
    assert!(seen >= 5, "vectors hold {seen} layout lines");
}

#[test]
fn layout_parse_refuses_bad_names() {
    for s in [
        "", "n", "n0", "f0", "o0", "x2", "n2x", "n256", "n-1", "0", "2", "256", "524288",
        "9999999", "12345678", "near2", "N2", " n2",
    ] {
        assert_eq!(Raid10Layout::parse(s), None, "{s:?}");
    }
    assert_eq!(Raid10Layout::parse("258"), Some(Raid10Layout::N2));
    assert_eq!(Raid10Layout::parse("n1").map(|l| l.copies()), Some(1));
    let sets = Raid10Layout::from_number(0x40000 | 0x10201).unwrap();
    assert_eq!(
        (sets.sets(), sets.offset(), sets.far(), sets.near()),
        (FarSets::Sets, true, 2, 1)
    );
    assert_eq!(sets.number(), 0x50201);
    assert_eq!(
        Raid10Layout::from_number(0x20201).unwrap().sets(),
        FarSets::Legacy
    );
    assert_eq!(Raid10Layout::from_number(0x60201), None);
    assert_eq!(Raid10Layout::from_number(1 << 19 | 0x102), None);
}

/// md's captured placement: sizes, and for every 4 KiB block of every member's data area the
/// array block md put there (or nothing).
#[test]
fn map_and_unmap_match_md() {
    let mut geoms: HashMap<(u32, usize, u64), Raid10> = HashMap::new();
    // Array block -> cells holding it, per geometry.
    let mut holders: HashMap<(u32, usize, u64), HashMap<u64, Vec<(usize, u64)>>> = HashMap::new();
    let (mut ngeom, mut ncells) = (0, 0);
    for line in VECTORS.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.first() {
            Some(&"geom") => {
                let n: u32 = w[2].parse().unwrap();
                let m: usize = w[3].parse().unwrap();
                let ck: u64 = w[4].parse().unwrap();
                let (size, comp, arr): (u64, u64, u64) = (
                    w[5].parse().unwrap(),
                    w[6].parse().unwrap(),
                    w[7].parse().unwrap(),
                );
                // What mdadm asked for and md's own component_size give md's sizes.
                for s in [size, comp] {
                    let g = Raid10::new(layout(n), &vec![s * 2; m], ck * 2, 0)
                        .unwrap_or_else(|e| panic!("{line}: {e:?}"));
                    assert_eq!(g.member_sectors(), comp * 2, "{line} from {s} KiB");
                    assert_eq!(g.array_sectors(), arr * 2, "{line} from {s} KiB");
                }
                let g = Raid10::new(layout(n), &vec![comp * 2; m], ck * 2, 0).unwrap();
                geoms.insert((n, m, ck), g);
                ngeom += 1;
            }
            Some(&"blk") => {
                let n: u32 = w[2].parse().unwrap();
                let m: usize = w[3].parse().unwrap();
                let ck: u64 = w[4].parse().unwrap();
                let row: u64 = w[5].parse().unwrap();
                let g = geoms[&(n, m, ck)];
                assert_eq!(w.len(), 6 + m, "{line}");
                for (i, cell) in w[6..].iter().enumerate() {
                    let ms = row * 8;
                    ncells += 1;
                    if *cell == "-" {
                        for k in [0, 7] {
                            assert_eq!(g.unmap(i, ms + k), None, "{line}: member {i}");
                        }
                        continue;
                    }
                    let b: u64 = cell.parse().unwrap();
                    for k in [0, 3, 7] {
                        assert_eq!(g.unmap(i, ms + k), Some(b * 8 + k), "{line}: member {i}");
                    }
                    let want = Replica {
                        member: i,
                        sector: ms,
                    };
                    assert!(
                        g.map(b * 8).any(|c| c == want),
                        "{line}: member {i}: {:?}",
                        { g.map(b * 8).collect::<Vec<_>>() }
                    );
                    holders
                        .entry((n, m, ck))
                        .or_default()
                        .entry(b)
                        .or_default()
                        .push((i, ms));
                }
            }
            _ => {}
        }
    }
    assert!(
        ngeom >= 30 && ncells > 10000,
        "{ngeom} geometries, {ncells} cells"
    );
    // Every array block sits on exactly as many member blocks as it has copies, which are
    // exactly the copies map() names.
    for (key, blocks) in &holders {
        let g = geoms[key];
        assert_eq!(blocks.len() as u64, g.array_sectors() / 8, "{key:?}");
        for (b, cells) in blocks {
            let mut got = cells.clone();
            got.sort();
            let mut want: Vec<_> = g.map(b * 8).map(|c| (c.member, c.sector)).collect();
            want.sort();
            assert_eq!(got, want, "{key:?} block {b}");
        }
    }
}

fn random_layout(rng: &mut Rng) -> Raid10Layout {
    let near = 1 + rng.below(4) as u32;
    let far = 1 + rng.below(4) as u32;
    let offset = rng.below(2) as u32;
    let sets = match rng.below(6) {
        0 => 1,
        1 | 2 => 2,
        _ => 0,
    };
    layout(near | far << 8 | offset << 16 | sets << 17)
}

/// A random geometry md would run, with its member sizes.
fn random_geo(rng: &mut Rng) -> (Raid10, Vec<u64>) {
    loop {
        let l = random_layout(rng);
        let members = 2 + rng.below(15) as usize;
        let chunk = 8u64 << rng.below(6);
        let off = if rng.below(3) == 0 {
            rng.below(64) * 8
        } else {
            0
        };
        let sizes: Vec<u64> = (0..members)
            .map(|_| off + chunk * (1 + rng.below(40)) + rng.below(chunk))
            .collect();
        if let Ok(g) = Raid10::new(l, &sizes, chunk, off) {
            return (g, sizes);
        }
    }
}

/// Every copy of every array chunk lands on its own member chunk, inside the data area; a
/// chunk's copies are on distinct members; unmap inverts map; member blocks that no chunk
/// uses unmap to nothing.
#[test]
fn random_geometries_place_every_copy_once_and_invert() {
    let mut rng = Rng(0x5eed_1010);
    for _ in 0..3000 {
        let (g, _) = random_geo(&mut rng);
        let chunk = g.chunk_sectors();
        let off = g.map(0).map(|c| c.sector).min().unwrap();
        let mut used: HashMap<(usize, u64), u64> = HashMap::new();
        for c in 0..g.array_sectors() / chunk {
            let s = c * chunk + rng.below(chunk);
            let copies: Vec<Replica> = g.map(s).collect();
            assert_eq!(copies.len(), g.copies(), "{g:?}");
            let mut members: Vec<usize> = copies.iter().map(|c| c.member).collect();
            members.sort();
            members.dedup();
            assert_eq!(members.len(), g.copies(), "{g:?} sector {s}: {copies:?}");
            for r in &copies {
                assert!(r.member < g.members());
                assert!(
                    r.sector >= off && r.sector - off < g.member_sectors(),
                    "{g:?} {r:?}"
                );
                assert_eq!(g.unmap(r.member, r.sector), Some(s), "{g:?} {r:?}");
                let key = (r.member, (r.sector - off) / chunk);
                if let Some(prev) = used.insert(key, c) {
                    panic!("{g:?}: chunks {prev} and {c} both on {key:?}");
                }
            }
        }
        for m in 0..g.members() {
            for mc in 0..g.member_sectors() / chunk {
                let ms = off + mc * chunk + rng.below(chunk);
                match used.get(&(m, mc)) {
                    Some(&c) => assert_eq!(g.unmap(m, ms).map(|s| s / chunk), Some(c)),
                    None => assert_eq!(g.unmap(m, ms), None, "{g:?} member {m} {ms}"),
                }
            }
            assert_eq!(g.unmap(m, off + g.member_sectors()), None);
            if off > 0 {
                assert_eq!(g.unmap(m, off - 1), None);
            }
        }
        assert_eq!(g.unmap(g.members(), off), None);
    }
}

/// The layouts mdadm makes (far copies rotating over all members), described plainly: the
/// near copies fill the members row by row; far copy `f` is `f × near` members on, in region
/// `f` (far) or in the chunk row after (offset).
fn reference(g: &Raid10, off: u64, sector: u64) -> Vec<Replica> {
    let l = g.layout();
    let (d, chunk) = (g.members() as u64, g.chunk_sectors());
    let (near, far) = (l.near() as u64, l.far() as u64);
    let c = sector / chunk;
    let mut out = Vec::new();
    for n in 0..near {
        let k = c * near + n;
        let (row, dev) = (k / d, k % d);
        for f in 0..far {
            let member = ((dev + f * near) % d) as usize;
            let row = if l.offset() { row * far + f } else { row };
            let region = if l.offset() { 0 } else { f * g.stride() };
            out.push(Replica {
                member,
                sector: off + region + row * chunk + sector % chunk,
            });
        }
    }
    out
}

#[test]
fn mdadm_layouts_match_reference_model() {
    let mut rng = Rng(0x5eed_1011);
    let mut tried = 0;
    while tried < 3000 {
        let (g, _) = random_geo(&mut rng);
        if g.layout().sets() != FarSets::Whole {
            continue;
        }
        tried += 1;
        let off = g.map(0).map(|c| c.sector).min().unwrap();
        for _ in 0..100 {
            let s = rng.below(g.array_sectors());
            assert_eq!(
                g.map(s).collect::<Vec<_>>(),
                reference(&g, off, s),
                "{g:?} sector {s}"
            );
        }
    }
}

/// md's sizes: far regions of member chunks / far rows, array chunks = rows × members / near,
/// member chunks in use = the copies spread over the members, rounded up. Giving md's
/// component_size back (what rraid's size= does) gives the same geometry.
#[test]
fn sizes_follow_md_and_component_size_is_a_fixed_point() {
    let mut rng = Rng(0x5eed_1012);
    for _ in 0..5000 {
        let (g, sizes) = random_geo(&mut rng);
        let l = g.layout();
        let chunk = g.chunk_sectors();
        let off = g.map(0).map(|c| c.sector).min().unwrap();
        let d = g.members() as u64;
        let (near, far) = (l.near() as u64, l.far() as u64);
        let rows = (sizes.iter().min().unwrap() - off) / chunk / far;
        let array = rows * d / near;
        let dev = (array * near * far).div_ceil(d);
        assert_eq!(g.member_sectors(), dev * chunk, "{g:?}");
        assert_eq!(g.array_sectors(), dev / far * d / near * chunk, "{g:?}");
        let stride = if l.offset() { chunk } else { dev / far * chunk };
        assert_eq!(g.stride(), stride);
        let again = Raid10::new(l, &vec![off + g.member_sectors(); sizes.len()], chunk, off)
            .expect("md's own component size");
        assert_eq!(again, g);
    }
    // md's io_opt: chunk × members / near, or × members when near does not divide them.
    let n2 = Raid10::new(Raid10Layout::N2, &[1 << 16; 4], 128, 0).unwrap();
    assert_eq!(n2.stripe_members(), 2);
    let n2 = Raid10::new(Raid10Layout::N2, &[1 << 16; 5], 128, 0).unwrap();
    assert_eq!(n2.stripe_members(), 5);
}

/// `survives` against brute force: every chunk keeps a copy on some member of the set.
#[test]
fn survives_matches_brute_force() {
    let mut rng = Rng(0x5eed_1013);
    let mut tried = 0;
    while tried < 400 {
        let (g, _) = random_geo(&mut rng);
        if g.members() > 8 || g.array_sectors() / g.chunk_sectors() < (g.members() * 2) as u64 {
            continue;
        }
        tried += 1;
        let chunk = g.chunk_sectors();
        let sets: Vec<u64> = (0..g.array_sectors() / chunk)
            .map(|c| g.map(c * chunk).fold(0u64, |s, r| s | 1 << r.member))
            .collect();
        for in_sync in 0u64..1 << g.members() {
            let want = sets.iter().all(|s| s & in_sync != 0);
            assert_eq!(g.survives(in_sync), want, "{g:?} in sync {in_sync:b}");
        }
    }
    // n2 over 4: pairs (0,1) and (2,3); losing one of each is fine, both of one pair is not.
    let g = Raid10::new(Raid10Layout::N2, &[1 << 16; 4], 128, 0).unwrap();
    assert!(g.survives(0b1010) && g.survives(0b0101) && g.survives(0b0110));
    assert!(!g.survives(0b1100) && !g.survives(0b0011));
    // f2 over 3: copies on neighbours; any single loss survives, no pair does.
    let g = Raid10::new(layout(0x201), &[1 << 16; 3], 128, 0).unwrap();
    assert!((0..3).all(|i| g.survives(0b111 & !(1 << i))));
    assert!((0..3).all(|i| !g.survives(1 << i)));
}

#[test]
fn refuses_bad_geometry() {
    use GeometryError::*;
    let big = [1u64 << 20; MAX_MEMBERS + 1];
    let new = |n: u32, m: usize, chunk: u64| Raid10::new(layout(n), &big[..m], chunk, 0).err();
    // Fewer members than copies, one member, too many members.
    assert_eq!(new(0x102, 1, 128), Some(MemberCount));
    assert_eq!(new(0x103, 2, 128), Some(MemberCount));
    assert_eq!(new(0x301, 2, 128), Some(MemberCount));
    assert_eq!(new(0x10301, 2, 128), Some(MemberCount));
    assert_eq!(new(0x202, 3, 128), Some(MemberCount));
    assert_eq!(new(0x102, MAX_MEMBERS + 1, 128), Some(MemberCount));
    assert_eq!(new(0x102, MAX_MEMBERS, 128), None);
    // One copy.
    assert_eq!(new(0x101, 4, 128), Some(Layout));
    // Offset with near copies over a member count they do not divide.
    assert_eq!(new(0x10202, 5, 128), Some(Layout));
    assert_eq!(new(0x10202, 4, 128), None);
    // md's broken far sets: members / far smaller than the copies.
    assert_eq!(new(0x20202, 6, 128), Some(Layout));
    // Chunks.
    assert_eq!(new(0x102, 4, 4), Some(Chunk));
    assert_eq!(new(0x102, 4, 96), Some(Chunk));
    assert_eq!(new(0x102, 4, 1 << 16), Some(Chunk));
    // Members too small for a chunk per far region, or below the data offset.
    let small = [1024u64; 4];
    assert_eq!(
        Raid10::new(layout(0x201), &small, 1024, 0),
        Err(MemberTooSmall)
    );
    assert_eq!(
        Raid10::new(layout(0x201), &small, 512, 0).map(|g| g.array_sectors()),
        Ok(2048)
    );
    assert_eq!(
        Raid10::new(Raid10Layout::N2, &small, 8, 2048),
        Err(MemberTooSmall)
    );
    assert_eq!(Raid10::new(Raid10Layout::N2, &[], 8, 0), Err(MemberCount));
}
