//! md's write-intent bitmap (`meta::bitmap`): fields at md-bitmap.h's offsets, every refusal,
//! mdadm 4.2's placement worked out by hand, and mdadm itself as the oracle (`mdadm -X` on the
//! bitmap, `mdadm -E` on a member image carrying it).

use super::rng::Rng;
use rraid_host_tests::meta::bitmap::*;
use rraid_host_tests::meta::super1::{
    default_data_offset, placement, placement_with_bitmap, Superblock, Version,
    FEATURE_BITMAP_OFFSET, MAX_SECTOR, SB_BYTES as SB1_BYTES,
};
use std::path::Path;
use std::process::Command;

fn le(buf: &[u8], at: usize, n: usize) -> u64 {
    (0..n).rev().fold(0, |v, i| v << 8 | buf[at + i] as u64)
}

fn sample() -> BitmapSuper {
    let mut sb = BitmapSuper::new([0x42; 16], 1 << 20, 129024);
    sb.events = 17;
    sb.events_cleared = 15;
    sb
}

#[test]
fn fields_lie_at_md_offsets() {
    let mut sb = sample();
    sb.events = 0x0102_0304_0506_0708;
    sb.events_cleared = 0x1112_1314_1516_1718;
    sb.sync_size = 0x2122_2324_2526_2728;
    sb.state = 0x3132_3334;
    sb.write_behind = 0x55;
    sb.sectors_reserved = 0x66;
    sb.cluster_name = [0x77; 64];
    let mut b = vec![0xeeu8; 512];
    sb.encode(&mut b).unwrap();
    let want: &[(usize, usize, u64)] = &[
        (0, 4, 0x6d74_6962),
        (4, 4, 4),
        (24, 8, 0x0102_0304_0506_0708),
        (32, 8, 0x1112_1314_1516_1718),
        (40, 8, 0x2122_2324_2526_2728),
        (48, 4, 0x3132_3334),
        (52, 4, 1 << 20),
        (56, 4, 5),
        (60, 4, 0x55),
        (64, 4, 0x66),
        (68, 4, 0),
    ];
    for &(at, n, v) in want {
        assert_eq!(le(&b, at, n), v, "field at byte {at}");
    }
    assert!(b[8..24].iter().all(|&x| x == 0x42));
    assert!(b[72..136].iter().all(|&x| x == 0x77));
    assert!(b[136..256].iter().all(|&x| x == 0), "pad");
    assert!(
        b[256..].iter().all(|&x| x == 0xee),
        "only 256 bytes written"
    );
    assert_eq!(BitmapSuper::decode(&b), Ok(sb));
}

#[test]
fn roundtrip_and_refusals() {
    let mut rng = Rng(0xb17_3a9);
    for _ in 0..2000 {
        let mut sb = sample();
        rng.fill(&mut sb.uuid);
        sb.events = rng.next();
        sb.events_cleared = rng.next();
        sb.sync_size = rng.next();
        sb.state = rng.next() as u32;
        sb.chunksize = 512 << rng.below(22);
        sb.daemon_sleep = 1 + rng.below(MAX_DAEMON_SLEEP as u64) as u32;
        sb.write_behind = rng.below(COUNTER_MAX as u64 + 1) as u32;
        let mut b = vec![0u8; SB_BYTES];
        sb.encode(&mut b).unwrap();
        assert_eq!(BitmapSuper::decode(&b), Ok(sb));
    }
    let good = {
        let mut b = vec![0u8; SB_BYTES];
        sample().encode(&mut b).unwrap();
        b
    };
    let edit = |at: usize, v: u32| {
        let mut b = good.clone();
        b[at..at + 4].copy_from_slice(&v.to_le_bytes());
        BitmapSuper::decode(&b)
    };
    assert_eq!(BitmapSuper::decode(&good[..255]), Err(BitmapError::Short));
    assert_eq!(edit(0, 0x6d74_6963), Err(BitmapError::Magic));
    assert_eq!(edit(4, 3), Err(BitmapError::HostEndian));
    assert_eq!(edit(4, 5), Err(BitmapError::Clustered));
    assert_eq!(edit(4, 6), Err(BitmapError::Version(6)));
    assert_eq!(edit(4, 2), Err(BitmapError::Version(2)));
    assert_eq!(edit(68, 1), Err(BitmapError::Clustered));
    assert_eq!(edit(52, 256), Err(BitmapError::ChunkSize));
    assert_eq!(edit(52, 3 << 10), Err(BitmapError::ChunkSize));
    assert!(edit(52, 512).is_ok());
    assert_eq!(edit(56, 0), Err(BitmapError::DaemonSleep));
    assert_eq!(
        edit(56, MAX_DAEMON_SLEEP + 1),
        Err(BitmapError::DaemonSleep)
    );
    assert_eq!(edit(60, COUNTER_MAX + 1), Err(BitmapError::WriteBehind));
    assert!(sample().encode(&mut [0u8; 255]).is_err());
    // Stale: flagged, or behind the superblocks.
    let sb = sample();
    assert!(!sb.is_stale(17));
    assert!(!sb.is_stale(16));
    assert!(sb.is_stale(18));
    let mut st = sb;
    st.state = STATE_STALE;
    assert!(st.is_stale(0));
}

#[test]
fn garbage_never_panics() {
    let mut rng = Rng(0x6a7_ba9e);
    let mut buf = vec![0u8; 600];
    for i in 0..20000 {
        rng.fill(&mut buf);
        if i % 2 == 0 {
            buf[0..4].copy_from_slice(&BITMAP_MAGIC.to_le_bytes());
            buf[4..8].copy_from_slice(&4u32.to_le_bytes());
        }
        let len = rng.below(buf.len() as u64 + 1) as usize;
        let _ = BitmapSuper::decode(&buf[..len]);
        let (a, c) = (rng.next() >> rng.below(64), rng.next() as u32);
        let _ = (chunks(a, c), bytes(a, c, rng.next() >> rng.below(64)));
        let k = rng.next() >> rng.below(64);
        let _ = test_bit(&buf[..len], k);
        set_bit(&mut buf[..len], k, i % 3 == 0);
        let _ = count_set(&buf[..len], rng.below(10000));
        let v = [Version::V1_0, Version::V1_1, Version::V1_2][i % 3];
        let ch = (i % 4 != 0).then(|| rng.next() >> rng.below(64));
        let _ = add_internal(v, a, rng.next() >> rng.below(64), ch);
    }
}

#[test]
fn bits_little_endian() {
    let mut r = vec![0u8; 300];
    set_bit(&mut r, 0, true);
    set_bit(&mut r, 9, true);
    assert_eq!(r[256], 1);
    assert_eq!(r[257], 2);
    assert!(test_bit(&r, 9) && !test_bit(&r, 8));
    assert_eq!(count_set(&r, 100), 2);
    set_bit(&mut r, 9, false);
    assert_eq!(count_set(&r, 100), 1);
    // Outside the buffer: nothing, and reads as clear.
    set_bit(&mut r, 8 * 44, true);
    assert!(!test_bit(&r, 8 * 44));
    assert_eq!(bit_pos(8 * 3840 - 1), (4095, 0x80));
}

#[test]
fn mdadm_placement_by_hand() {
    // 64 MiB RAID 1 member at 1.2: data offset 2048, component 129024 sectors.
    assert_eq!(default_data_offset(Version::V1_2, 131072, 0), 2048);
    // 1 MiB chunks: 63 bits, 4 KiB from the superblock.
    assert_eq!(
        add_internal(Version::V1_2, 129024, 129024, Some(1 << 20)),
        Ok((1 << 20, 8))
    );
    assert_eq!(chunks(129024, 1 << 20), 63);
    assert_eq!(bytes(129024, 1 << 20, 4096), 4096);
    assert_eq!(bytes(129024, 1 << 20, 512), 512);
    // 4 KiB chunks still fit the 4 KiB of room (16128 bits of 30720); nothing smaller.
    assert_eq!(
        add_internal(Version::V1_2, 129024, 129024, Some(4096)),
        Ok((4096, 8))
    );
    assert_eq!(
        add_internal(Version::V1_2, 129024, 129024, Some(2048)),
        Err(BitmapError::ChunkTooSmall)
    );
    assert_eq!(
        add_internal(Version::V1_2, 129024, 129024, Some(3 << 20)),
        Err(BitmapError::ChunkTooSmall)
    );
    // mdadm's default: at least 64 MiB.
    assert_eq!(
        add_internal(Version::V1_2, 129024, 129024, None),
        Ok((64 << 20, 8))
    );
    // Up to 8 GiB the room is 4 KiB: 30720 bits. 8 GiB at 4 KiB chunks would need 2 Mi bits:
    // the smallest chunk is 512 KiB (16384 bits... halved until within 30720).
    let eight = 8u64 << 21;
    assert_eq!(
        add_internal(Version::V1_2, eight - 4096, eight - 4096, Some(256 << 10)),
        Err(BitmapError::ChunkTooSmall)
    );
    assert_eq!(
        add_internal(Version::V1_2, eight - 4096, eight - 4096, Some(512 << 10)),
        Ok((512 << 10, 8))
    );
    // 20 GiB: 64 KiB of room (522240 bits); the default stays 64 MiB.
    let twenty = 20u64 << 21;
    assert_eq!(
        add_internal(Version::V1_2, twenty, twenty, None),
        Ok((64 << 20, 8))
    );
    assert_eq!(
        add_internal(Version::V1_2, twenty, twenty, Some(32 << 10)),
        Err(BitmapError::ChunkTooSmall)
    );
    assert_eq!(
        add_internal(Version::V1_2, twenty, twenty, Some(64 << 10)),
        Ok((64 << 10, 8))
    );
    // 1.0: before the superblock and its bad-block log, on a 4 KiB boundary.
    assert_eq!(
        add_internal(Version::V1_0, 130944, 130944, Some(1 << 20)),
        Ok((1 << 20, -16))
    );
    // 4 KiB chunks: 16369 bits and the superblock, one 4 KiB block still.
    assert_eq!(
        add_internal(Version::V1_0, 130944, 130944, Some(4096)),
        Ok((4096, -16))
    );
    assert_eq!(
        add_internal(Version::V1_0, 130944, 130944, Some(8192)),
        Ok((8192, -16))
    );
    // Members too small for any bitmap room.
    assert_eq!(
        add_internal(Version::V1_2, 100, 100, None),
        Err(BitmapError::NoRoom)
    );
    // Placement: a bitmap of one 4 KiB block changes nothing on 1.2; on 1.0 data_size ends
    // before the bitmap and the log.
    let p = placement(Version::V1_2, 131072, 129024, 2048);
    assert_eq!(
        placement_with_bitmap(Version::V1_2, 131072, 129024, 2048, 4096),
        p
    );
    assert_eq!(p.bblog_offset, 16);
    let q = placement_with_bitmap(Version::V1_2, 131072, 129024, 2048, 8192);
    assert_eq!(q.bblog_offset, 24);
    let r = placement_with_bitmap(Version::V1_0, 131072, 130944, 0, 4096);
    assert_eq!(r.super_offset, 131056);
    assert_eq!(r.data_size, 131056 - 16);
    assert_eq!(r.bblog_offset as i32, -8);
}

fn mdadm() -> String {
    for p in ["/sbin/mdadm", "/usr/sbin/mdadm"] {
        if Path::new(p).exists() {
            return p.into();
        }
    }
    panic!("mdadm is not installed: apt-get install mdadm (the bitmap oracle needs it)");
}

fn fields(out: &[u8]) -> std::collections::HashMap<String, String> {
    String::from_utf8_lossy(out)
        .lines()
        .filter_map(|l| l.split_once(" : "))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// mdadm -X reads a regular file as the bitmap itself; mdadm -E a member image with the
/// bitmap 8 sectors past its 1.2 superblock.
#[test]
fn mdadm_oracle() {
    let mdadm = mdadm();
    let dir = std::env::temp_dir().join(format!("rraid-bitmap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (sync, chunk, set) in [
        (129024u64, 1u32 << 20, &[0u64, 5, 62][..]),
        (130944, 8192, &[1, 7, 8, 9, 8183][..]),
        (41943040, 64 << 20, &[][..]),
    ] {
        let mut sb = BitmapSuper::new([0x5a; 16], chunk, sync);
        sb.events = 21;
        sb.events_cleared = 20;
        let n = bytes(sync, chunk, 4096) as usize;
        let mut region = vec![0u8; n];
        sb.encode(&mut region).unwrap();
        for &c in set {
            set_bit(&mut region, c, true);
        }
        let path = dir.join(format!("bm-{chunk}.img"));
        std::fs::write(&path, &region).unwrap();
        let out = Command::new(&mdadm).arg("-X").arg(&path).output().unwrap();
        let m = fields(&out.stdout);
        let get = |k: &str| {
            m.get(k)
                .cloned()
                .unwrap_or_else(|| panic!("no {k}: {m:#?}"))
        };
        assert_eq!(get("Magic"), "6d746962");
        assert_eq!(get("Version"), "4");
        assert_eq!(get("UUID"), "5a5a5a5a:5a5a5a5a:5a5a5a5a:5a5a5a5a");
        assert_eq!(get("Events"), "21");
        assert_eq!(get("Events Cleared"), "20");
        assert_eq!(get("State"), "OK");
        assert_eq!(get("Daemon"), "5s flush period");
        assert!(get("Sync Size").starts_with(&format!("{} ", sync / 2)));
        let want = format!(
            "{} bits (chunks), {} dirty",
            chunks(sync, chunk),
            count_set(&region, chunks(sync, chunk))
        );
        assert!(
            get("Bitmap").starts_with(&want),
            "{} vs {want}",
            get("Bitmap")
        );
        assert_eq!(count_set(&region, chunks(sync, chunk)), set.len() as u64);
    }
    // A 1.2 member with its bitmap: -E sees the offset, -X on the image finds the bitmap.
    let mut s = Superblock::new(128);
    s.set_uuid = [0x5a; 16];
    s.set_name_str("bm");
    s.level = 1;
    s.raid_disks = 2;
    s.size = 129024;
    s.data_offset = 2048;
    s.data_size = 129024;
    s.super_offset = 8;
    s.bblog_offset = 16;
    s.bblog_size = 8;
    s.feature_map = FEATURE_BITMAP_OFFSET;
    s.bitmap_offset = 8;
    s.events = 21;
    s.resync_offset = MAX_SECTOR;
    s.dev_roles[0] = 0;
    s.dev_roles[1] = 1;
    let mut img = vec![0u8; 131072 * 512];
    s.encode(&mut img[8 * 512..8 * 512 + SB1_BYTES]).unwrap();
    let mut bsb = BitmapSuper::new([0x5a; 16], 1 << 20, 129024);
    bsb.events = 21;
    bsb.encode(&mut img[16 * 512..]).unwrap();
    set_bit(&mut img[16 * 512..20 * 512], 3, true);
    let path = dir.join("member.img");
    std::fs::write(&path, &img).unwrap();
    let out = Command::new(&mdadm).arg("-E").arg(&path).output().unwrap();
    let m = fields(&out.stdout);
    assert_eq!(
        m.get("Internal Bitmap").map(String::as_str),
        Some("8 sectors from superblock"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    std::fs::remove_dir_all(&dir).ok();
}
