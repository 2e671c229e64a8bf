//! mdadm 4.2's placement defaults (`meta::super1::default_data_offset` and friends) against
//! values worked out by hand from super1.c and Create.c.

use rraid_host_tests::meta::super1::*;

#[test]
fn choose_bm_space_is_mdadm_42s() {
    assert_eq!(choose_bm_space(0), 0);
    assert_eq!(choose_bm_space(127), 0);
    assert_eq!(choose_bm_space(128), 8);
    // 8 GiB = 16777216 sectors: 4 KiB up to 8 GiB + 4 KiB.
    assert_eq!(choose_bm_space(16777216 + 8), 8);
    assert_eq!(choose_bm_space(16777216 + 9), 128);
    // 200 GiB = 419430400 sectors: 128 KiB from 200 GiB + 64 KiB.
    assert_eq!(choose_bm_space(419430400 + 127), 128);
    assert_eq!(choose_bm_space(419430400 + 128), 256);
    assert_eq!(choose_bm_space(u64::MAX), 256);
}

/// One worked mdadm 4.2 geometry (see `geometry_defaults_are_mdadm_42s`).
struct Geo {
    v: Version,
    level: i32,
    dev: u64,
    chunk: u64,
    data_offset: u64,
    avail: u64,
    size: u64,
    place: Placement,
}

#[test]
fn geometry_defaults_are_mdadm_42s() {
    const MIB: u64 = 2048;
    let p = |super_offset, data_offset, data_size, bblog_offset, bblog_size| Placement {
        super_offset,
        data_offset,
        data_size,
        bblog_offset,
        bblog_size,
    };
    let cases = [
        // 1.2 RAID 1, 64 MiB = 131072 sectors, chunk 0. bm = 8 (under 8 GiB). Headroom
        // halves from 262144 while headroom*1024 > 131072: stops at 128. 24 + 8 + 128 = 160
        // -> 2048. Avail 131072 - 2048 = 129024; size 129024 & !127 = 129024. bm(size) = 8;
        // 2048 >= 8 + 8 + 8 + 8, so the log is at 8 + 8 = 16.
        Geo {
            v: Version::V1_2,
            level: 1,
            dev: 64 * MIB,
            chunk: 0,
            data_offset: 2048,
            avail: 129024,
            size: 129024,
            place: p(8, 2048, 129024, 16, 8),
        },
        // 1.2 RAID 5, 64 MiB, chunk 512K = 1024. Halving also needs headroom/2 >= 2048: from
        // 4096 to 2048, then 1024 >= 2048 fails. 24 + 8 + 2048 = 2080 -> 4096. Avail
        // 131072 - 4096 = 126976 = 124 chunks. Log at 16.
        Geo {
            v: Version::V1_2,
            level: 5,
            dev: 64 * MIB,
            chunk: 1024,
            data_offset: 4096,
            avail: 126976,
            size: 126976,
            place: p(8, 4096, 126976, 16, 8),
        },
        // 1.2 RAID 5, 1 GiB = 2097152, chunk 64K = 128. bm = 8. Halving stops at 2048
        // (2048*1024 = 2097152, not more; 1024 >= 256 would allow more). 2080 -> 4096. Avail
        // 2093056 = 16352 chunks. Log at 16.
        Geo {
            v: Version::V1_2,
            level: 5,
            dev: 1024 * MIB,
            chunk: 128,
            data_offset: 4096,
            avail: 2093056,
            size: 2093056,
            place: p(8, 4096, 2093056, 16, 8),
        },
        // 1.2 RAID 1, 20 GiB = 41943040. bm = 128 (over 8 GiB). Halving stops at 32768
        // (32768*1024 = 33554432 <= 41943040). 24 + 128 + 32768 = 32920 -> 17 MiB = 34816.
        // Avail 41943040 - 34816 = 41908224 = 327408 * 128. bm(size) = 128, log at 136.
        Geo {
            v: Version::V1_2,
            level: 1,
            dev: 20 * 1024 * MIB,
            chunk: 0,
            data_offset: 34816,
            avail: 41908224,
            size: 41908224,
            place: p(8, 34816, 41908224, 136, 8),
        },
        // 1.0 RAID 1, 64 MiB. Data at 0. Avail (131072 & !7) - (16 + 8 + 8) = 131040; size
        // 131040 & !127 = 130944. Superblock at (131072 - 16) & !7 = 131056; space
        // bm(130944) + 8 = 16 fits (130944 + 16 <= 131056): data_size 131056 - 16 = 131040,
        // log at -8.
        Geo {
            v: Version::V1_0,
            level: 1,
            dev: 64 * MIB,
            chunk: 0,
            data_offset: 0,
            avail: 131040,
            size: 130944,
            place: p(131056, 0, 131040, (-8i32) as u32, 8),
        },
        // 1.1 RAID 5, 256 MiB = 524288, default chunk 512K = 1024. Halving: 4096 -> 2048,
        // then 1024 >= 2048 fails. 2080 -> 4096. Avail 520192 = 508 chunks. Superblock at 0;
        // 4096 >= 0 + 8 + 8 + 8: log at 16.
        Geo {
            v: Version::V1_1,
            level: 5,
            dev: 256 * MIB,
            chunk: 1024,
            data_offset: 4096,
            avail: 520192,
            size: 520192,
            place: p(0, 4096, 520192, 16, 8),
        },
    ];
    for (i, g) in cases.iter().enumerate() {
        assert_eq!(
            default_data_offset(g.v, g.dev, g.chunk),
            g.data_offset,
            "case {i}"
        );
        let avail = avail_sectors(g.v, g.dev, g.data_offset);
        assert_eq!(avail, Some(g.avail), "case {i}");
        assert_eq!(default_size(g.level, g.avail, g.chunk), g.size, "case {i}");
        assert_eq!(
            placement(g.v, g.dev, g.size, g.data_offset),
            g.place,
            "case {i}"
        );
    }
}

#[test]
fn placement_edges() {
    // RAID 0: size 0, bm(0) = 0. 1.2: log right after the superblock, at 8.
    let p = placement(Version::V1_2, 1 << 21, 0, 4096);
    assert_eq!(
        (p.bblog_offset, p.bblog_size, p.data_size),
        (8, 8, (1 << 21) - 4096)
    );
    // 1.0 RAID 0: space 8, all of it the log.
    let p = placement(Version::V1_0, 131072, 0, 0);
    assert_eq!(p.data_size, 131048);
    assert_eq!((p.bblog_offset, p.bblog_size), ((-8i32) as u32, 8));
    // 1.2 with data too early for log after the bitmap space: the 8 sectors before data.
    let p = placement(Version::V1_2, 131072, 129024, 24);
    assert_eq!((p.bblog_offset, p.bblog_size), (8, 8));
    let p = placement(Version::V1_2, 131072, 129024, 31);
    assert_eq!((p.bblog_offset, p.bblog_size), (15, 8));
    let p = placement(Version::V1_2, 131072, 129024, 23);
    assert_eq!((p.bblog_offset, p.bblog_size), (0, 0));
    // 1.1 at 0: data at 16 is the least with a log.
    let p = placement(Version::V1_1, 131072, 129024, 16);
    assert_eq!((p.bblog_offset, p.bblog_size), (8, 8));
    // 1.0 with a component that leaves less than the space: the space shrinks, and under 8
    // sectors there is no log.
    let p = placement(Version::V1_0, 131072, 131044, 0);
    assert_eq!((p.data_size, p.bblog_size), (131044, 8));
    let p = placement(Version::V1_0, 131072, 131050, 0);
    assert_eq!((p.data_size, p.bblog_size, p.bblog_offset), (131050, 0, 0));
    // Nothing panics on absurd sizes.
    let p = placement(Version::V1_0, 3, u64::MAX, 0);
    assert_eq!(p.data_size, 0);
    let _ = placement(Version::V1_2, 0, u64::MAX, u64::MAX);
    assert_eq!(avail_sectors(Version::V1_0, 31, 0), Some(0));
    assert_eq!(avail_sectors(Version::V1_0, 23, 0), None);
    assert_eq!(avail_sectors(Version::V1_2, 2047, 2048), None);
    assert_eq!(default_data_offset(Version::V1_0, 1 << 30, 0), 0);
    assert_eq!(default_data_offset(Version::V1_2, 0, 0), 2048);
    assert_eq!(
        default_data_offset(Version::V1_2, u64::MAX, u64::MAX),
        264192
    );
    assert_eq!(default_size(0, 5000, 128), 0);
    assert_eq!(default_size(-1, 5000, 0), 0);
    assert_eq!(default_size(10, 5000, 1024), 4096);
    assert_eq!(default_size(6, 5000, 0), 5000);
}
