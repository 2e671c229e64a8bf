//! Assembly (`meta::assemble::analyze`) against md's super_1_validate rules, case by case.

use rraid_host_tests::meta::assemble::{analyze, AssembleError, Part, Summary};
use rraid_host_tests::meta::super1::*;

use super::rng::Rng;

const S: u16 = ROLE_SPARE;
const F: u16 = ROLE_FAULTY;

/// Device `n`'s superblock of a 3-slot RAID 1 whose role table is `roles`, at `events`.
fn dev(n: u32, roles: &[u16], events: u64) -> Superblock {
    let mut sb = Superblock::new(roles.len() as u32);
    sb.set_uuid = [7; 16];
    sb.level = 1;
    sb.raid_disks = 3;
    sb.data_offset = 2048;
    sb.data_size = 100_000;
    sb.super_offset = 8;
    sb.dev_number = n;
    sb.device_uuid = [n as u8 + 1; 16];
    sb.events = events;
    sb.resync_offset = MAX_SECTOR;
    sb.dev_roles[..roles.len()].copy_from_slice(roles);
    sb
}

fn run(sbs: &[Superblock]) -> Result<(Summary, Vec<Part>), AssembleError> {
    let mut parts = vec![Part::Stale; sbs.len()];
    analyze(sbs, &mut parts).map(|s| (s, parts))
}

fn slot(slot: u32) -> Part {
    Part::Slot {
        slot,
        recovery: None,
    }
}

const R: &[u16] = &[0, 1, 2, S, S];

#[test]
fn fresh_set() {
    let (s, parts) = run(&[dev(0, R, 10), dev(1, R, 10), dev(2, R, 10)]).unwrap();
    assert_eq!(parts, [slot(0), slot(1), slot(2)]);
    let want = Summary {
        freshest: 0,
        events: 10,
        filled: 0b111,
        in_sync: 0b111,
    };
    assert_eq!(s, want);
}

#[test]
fn one_event_behind_takes_the_freshest_role() {
    // The freshest says device 2 failed; device 2 missed that update.
    let fresh = &[0, 1, F, S, S];
    let sbs = [dev(2, R, 9), dev(0, fresh, 10), dev(1, fresh, 10)];
    let (s, parts) = run(&sbs).unwrap();
    assert_eq!(parts, [Part::Faulty, slot(0), slot(1)]);
    // md: the first member is the reference; a later one with more events replaces it.
    assert_eq!((s.freshest, s.events, s.filled), (1, 10, 0b011));
    // The other way round: its own superblock says faulty, the freshest says it is in slot 2.
    let own = &[0, 1, F, S, S];
    let (_, parts) = run(&[dev(0, R, 10), dev(1, R, 10), dev(2, own, 9)]).unwrap();
    assert_eq!(parts[2], slot(2));
    // Same events: its own superblock counts.
    let (_, parts) = run(&[dev(0, R, 10), dev(1, R, 10), dev(2, own, 10)]).unwrap();
    assert_eq!(parts[2], Part::Faulty);
}

#[test]
fn two_events_behind_is_stale() {
    let (s, parts) = run(&[dev(0, R, 10), dev(1, R, 10), dev(2, R, 8)]).unwrap();
    assert_eq!(parts, [slot(0), slot(1), Part::Stale]);
    assert_eq!((s.filled, s.in_sync), (0b011, 0b011));
}

#[test]
fn spares() {
    // A spare's events do not matter: md does not write idle spares on every update.
    let (s, parts) = run(&[dev(0, R, 10), dev(1, R, 10), dev(3, R, 3)]).unwrap();
    assert_eq!(parts, [slot(0), slot(1), Part::Spare]);
    assert_eq!(s.filled, 0b011);
    // A spare with more events is not the freshest.
    let (s, parts) = run(&[dev(3, R, 20), dev(0, R, 10), dev(1, R, 10)]).unwrap();
    assert_eq!(parts, [Part::Spare, slot(0), slot(1)]);
    assert_eq!((s.freshest, s.events), (1, 10));
    // A spare one event behind that the freshest had put into slot 2.
    let fresh = &[0, 1, S, 2, S];
    let (s, parts) = run(&[dev(0, fresh, 10), dev(1, fresh, 10), dev(3, R, 9)]).unwrap();
    assert_eq!(parts[2], slot(2));
    assert_eq!(s.filled, 0b111);
    // No member at all (md: "cannot find a valid disk").
    let (s, parts) = run(&[dev(3, R, 5), dev(4, R, 6)]).unwrap();
    assert_eq!(parts, [Part::Spare, Part::Spare]);
    assert_eq!((s.freshest, s.filled), (0, 0));
}

#[test]
fn replacement() {
    let roles = &[0, 1, 2, 0, S];
    let mut r = dev(3, roles, 10);
    r.feature_map = FEATURE_REPLACEMENT | FEATURE_RECOVERY_OFFSET;
    r.recovery_offset = 5000;
    let sbs = [dev(0, roles, 10), dev(1, roles, 10), dev(2, roles, 10), r];
    let (s, parts) = run(&sbs).unwrap();
    let want = Part::Replacement {
        slot: 0,
        recovery: 5000,
    };
    assert_eq!(parts[3], want);
    assert_eq!((s.filled, s.in_sync), (0b111, 0b111));
    // Complete (no recovery offset): in sync everywhere.
    r.feature_map = FEATURE_REPLACEMENT;
    let sbs = [dev(0, roles, 10), r];
    let (_, parts) = run(&sbs).unwrap();
    let want = Part::Replacement {
        slot: 0,
        recovery: MAX_SECTOR,
    };
    assert_eq!(parts[1], want);
}

#[test]
fn recovering() {
    let mut d = dev(2, R, 10);
    d.feature_map = FEATURE_RECOVERY_OFFSET;
    d.recovery_offset = 777;
    let (s, parts) = run(&[dev(0, R, 10), dev(1, R, 10), d]).unwrap();
    let want = Part::Slot {
        slot: 2,
        recovery: Some(777),
    };
    assert_eq!(parts[2], want);
    assert_eq!((s.filled, s.in_sync), (0b111, 0b011));
}

#[test]
fn journal_role_is_left_out() {
    let roles = &[0, 1, ROLE_JOURNAL, S, S];
    let (_, parts) = run(&[dev(0, roles, 10), dev(2, roles, 10)]).unwrap();
    assert_eq!(parts, [slot(0), Part::Faulty]);
}

#[test]
fn device_numbers_out_of_the_table() {
    // Beyond its own max_dev: a spare (md).
    let (_, parts) = run(&[dev(0, R, 10), dev(7, R, 10)]).unwrap();
    assert_eq!(parts[1], Part::Spare);
    // Beyond what rraid can record.
    let (_, parts) = run(&[dev(0, R, 10), dev(MAX_DEV as u32, R, 10)]).unwrap();
    assert_eq!(parts[1], Part::Faulty);
    // One behind, with a number the freshest has no role for: md refuses it.
    let long = &[0, 1, 2, S, S, S, S, 1];
    let (_, parts) = run(&[dev(0, R, 10), dev(7, long, 9)]).unwrap();
    assert_eq!(parts[1], Part::Stale);
}

#[test]
fn different_arrays() {
    let edits: [fn(&mut Superblock); 5] = [
        |sb| sb.set_uuid[15] ^= 1,
        |sb| sb.level = 5,
        |sb| sb.layout = 2,
        |sb| sb.chunksize = 128,
        |sb| sb.raid_disks = 4,
    ];
    for edit in edits {
        let mut other = dev(2, R, 10);
        edit(&mut other);
        let err = run(&[dev(0, R, 10), dev(1, R, 10), other]).unwrap_err();
        assert_eq!(err, AssembleError::Different { a: 0, b: 2 });
    }
}

#[test]
fn duplicates() {
    let err = run(&[dev(0, R, 10), dev(1, R, 10), dev(0, R, 10)]).unwrap_err();
    assert_eq!(err, AssembleError::Duplicate { a: 0, b: 2 });
    let mut copy = dev(2, R, 10);
    copy.device_uuid = dev(1, R, 10).device_uuid;
    let err = run(&[dev(0, R, 10), dev(1, R, 10), copy]).unwrap_err();
    assert_eq!(err, AssembleError::Duplicate { a: 1, b: 2 });
    // md never sets device_uuid: zeros are not a match.
    let mut sbs = [dev(0, R, 10), dev(1, R, 10)];
    sbs[0].device_uuid = [0; 16];
    sbs[1].device_uuid = [0; 16];
    assert!(run(&sbs).is_ok());
}

#[test]
fn slot_taken() {
    let roles = &[0, 1, 2, 1, S];
    let sbs = [
        dev(0, roles, 10),
        dev(1, roles, 10),
        dev(2, roles, 10),
        dev(3, roles, 10),
    ];
    let err = run(&sbs).unwrap_err();
    assert_eq!(
        err,
        AssembleError::SlotTaken {
            a: 1,
            b: 3,
            slot: 1
        }
    );
    let roles = &[0, 1, 2, 0, 0];
    let mut a = dev(3, roles, 10);
    a.feature_map = FEATURE_REPLACEMENT;
    let mut b = dev(4, roles, 10);
    b.feature_map = FEATURE_REPLACEMENT;
    let err = run(&[dev(0, roles, 10), a, b]).unwrap_err();
    assert_eq!(
        err,
        AssembleError::SlotTaken {
            a: 1,
            b: 2,
            slot: 0
        }
    );
}

#[test]
fn bad_roles() {
    for role in [3, 0x00ff, ROLE_MAX - 1, ROLE_MAX, 0xff01, 0xfffc] {
        let roles = &[0, 1, role, S, S];
        let err = run(&[dev(0, roles, 10), dev(2, roles, 10)]).unwrap_err();
        assert_eq!(err, AssembleError::BadRole { a: 1, role });
    }
}

#[test]
fn raid_disks_and_empty() {
    for n in [0, 65] {
        let mut d = dev(0, R, 10);
        d.raid_disks = n;
        assert_eq!(run(&[d]).unwrap_err(), AssembleError::RaidDisks(n));
    }
    let mut d = dev(0, &[63], 10);
    d.raid_disks = 64;
    let (s, _) = run(&[d]).unwrap();
    assert_eq!(s.filled, 1 << 63);
    assert_eq!(run(&[]).unwrap_err(), AssembleError::Empty);
    let mut parts = [Part::Spare; 1];
    let sbs = [dev(0, R, 10), dev(1, R, 10)];
    assert_eq!(analyze(&sbs, &mut parts), Err(AssembleError::Empty));
}

/// Heap's algorithm: calls `f` with every permutation of `0..n`.
fn permutations(n: usize, f: &mut impl FnMut(&[usize])) {
    fn go(k: usize, p: &mut Vec<usize>, f: &mut impl FnMut(&[usize])) {
        if k <= 1 {
            f(p);
            return;
        }
        for i in 0..k {
            go(k - 1, p, f);
            let j = if k.is_multiple_of(2) { i } else { 0 };
            p.swap(j, k - 1);
        }
    }
    let mut p: Vec<usize> = (0..n).collect();
    go(n, &mut p, f);
}

#[test]
fn order_does_not_matter() {
    // The freshest view of the table: device 1 failed, device 3 spare, 4 replaces slot 0.
    let fresh = &[0, F, 2, S, 0, F, 1];
    let mut recovering = dev(2, fresh, 10);
    recovering.feature_map = FEATURE_RECOVERY_OFFSET;
    recovering.recovery_offset = 500;
    let mut repl = dev(4, fresh, 10);
    repl.feature_map = FEATURE_REPLACEMENT | FEATURE_RECOVERY_OFFSET;
    repl.recovery_offset = 100;
    let own = &[0, 1, 2, S, 0, 1, S];
    let sbs = [
        dev(0, fresh, 10),
        dev(1, own, 9),
        recovering,
        dev(3, fresh, 4),
        repl,
        dev(5, own, 7),
        dev(6, fresh, 10),
    ];
    let (s0, p0) = run(&sbs).unwrap();
    let want = [
        slot(0),
        Part::Faulty,
        Part::Slot {
            slot: 2,
            recovery: Some(500),
        },
        Part::Spare,
        Part::Replacement {
            slot: 0,
            recovery: 100,
        },
        Part::Stale,
        slot(1),
    ];
    assert_eq!(p0, want);
    assert_eq!((s0.events, s0.filled, s0.in_sync), (10, 0b111, 0b011));
    let mut count = 0;
    permutations(sbs.len(), &mut |perm| {
        let shuffled: Vec<Superblock> = perm.iter().map(|&i| sbs[i]).collect();
        let (s, parts) = run(&shuffled).unwrap();
        for (k, &i) in perm.iter().enumerate() {
            assert_eq!(parts[k], p0[i], "permutation {perm:?}");
        }
        assert_eq!(
            (s.events, s.filled, s.in_sync),
            (s0.events, s0.filled, s0.in_sync)
        );
        assert_eq!(shuffled[s.freshest].events, 10);
        count += 1;
    });
    assert_eq!(count, 5040);
}

#[test]
fn random_sets_never_panic() {
    let mut rng = Rng(0x0a55_eb1e);
    for _ in 0..20000 {
        let n = 1 + rng.below(8) as usize;
        let raid_disks = rng.below(67) as u32;
        let sbs: Vec<Superblock> = (0..n)
            .map(|i| {
                let max_dev = rng.below(10) as u32;
                let mut sb = Superblock::new(max_dev);
                sb.raid_disks = raid_disks;
                sb.dev_number = if rng.below(8) == 0 {
                    rng.next() as u32
                } else {
                    i as u32
                };
                sb.device_uuid = [i as u8 + 1; 16];
                sb.events = rng.below(4) + if rng.below(16) == 0 { u64::MAX - 3 } else { 0 };
                sb.feature_map = rng.next() as u32;
                sb.recovery_offset = rng.next();
                for r in sb.dev_roles.iter_mut().take(max_dev as usize) {
                    *r = match rng.below(4) {
                        0 => S,
                        1 => F,
                        2 => rng.next() as u16,
                        _ => rng.below(u64::from(raid_disks.max(1))) as u16,
                    };
                }
                sb
            })
            .collect();
        let mut parts = vec![Part::Stale; n];
        if let Ok(s) = analyze(&sbs, &mut parts) {
            assert!(s.freshest < n);
            assert_eq!(s.in_sync & !s.filled, 0);
        }
    }
}
