//! Tests of md's v1.x superblock (`meta::super1`), mdadm's placement defaults and assembly
//! (`meta::assemble`).
//!
//! The encoding is checked three ways: field by field against md_p.h's offsets written out
//! here, the checksum against a plain reimplementation and hand-computed values, and whole
//! superblocks against mdadm 4.2 itself (`mdadm --examine` on sparse image files).

use rraid_host_tests::meta::events::Events;
use rraid_host_tests::meta::super1::*;

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

#[path = "meta/oracle.rs"]
mod oracle;

#[path = "meta/assembly.rs"]
mod assembly;

#[path = "meta/geometry.rs"]
mod geometry;

#[path = "meta/bitmap.rs"]
mod bitmap;

/// A plausible 1.2 superblock of a 64 MiB RAID 1 member, as mdadm writes it.
fn sample(max_dev: u32) -> Superblock {
    let mut sb = Superblock::new(max_dev);
    sb.set_uuid = *b"\x01\x23\x45\x67\x89\xab\xcd\xef\xfe\xdc\xba\x98\x76\x54\x32\x10";
    sb.set_name_str("host:zero");
    sb.ctime = 1_700_000_000;
    sb.utime = 1_700_000_100;
    sb.level = 1;
    sb.raid_disks = 2;
    sb.size = 129024;
    sb.data_offset = 2048;
    sb.data_size = 129024;
    sb.super_offset = 8;
    sb.bblog_size = 8;
    sb.bblog_offset = 16;
    sb.device_uuid = [0x5a; 16];
    sb.events = 17;
    sb.resync_offset = MAX_SECTOR;
    sb.dev_roles[0] = 0;
    sb.dev_roles[1] = 1;
    sb
}

fn enc(sb: &Superblock) -> Vec<u8> {
    let mut buf = vec![0xeeu8; SB_BYTES];
    sb.encode(&mut buf).expect("encode");
    buf
}

/// md's checksum, written the plain way: sum the words with sb_csum zeroed, fold once.
fn ref_csum(buf: &[u8], max_dev: u32) -> u32 {
    let n = 256 + 2 * max_dev as usize;
    let mut b = buf[..n].to_vec();
    b[216..220].fill(0);
    let mut sum: u64 = 0;
    let mut i = 0;
    while i + 4 <= n {
        sum += u32::from_le_bytes(b[i..i + 4].try_into().unwrap()) as u64;
        i += 4;
    }
    if n - i == 2 {
        sum += u16::from_le_bytes(b[i..i + 2].try_into().unwrap()) as u64;
    }
    ((sum & 0xffff_ffff) + (sum >> 32)) as u32
}

/// Rewrites sb_csum after a test edited the buffer.
fn fix_csum(buf: &mut [u8]) {
    let max_dev = u32::from_le_bytes(buf[220..224].try_into().unwrap());
    let c = csum(buf, max_dev).unwrap();
    buf[216..220].copy_from_slice(&c.to_le_bytes());
}

fn le(buf: &[u8], at: usize, n: usize) -> u64 {
    let mut v = 0u64;
    for i in (0..n).rev() {
        v = v << 8 | buf[at + i] as u64;
    }
    v
}

#[test]
fn fields_lie_at_md_offsets() {
    let mut sb = Superblock::new(5);
    sb.feature_map = FEATURE_RECOVERY_OFFSET | FEATURE_REPLACEMENT;
    sb.set_uuid = [0x11; 16];
    sb.set_name = [0x22; 32];
    sb.ctime = 0x0102_0304_0506_0708;
    sb.level = -1;
    sb.layout = 0x0a0b_0c0d;
    sb.size = 0x1111_2222_3333_4444;
    sb.chunksize = 0x1234;
    sb.raid_disks = 5;
    sb.bitmap_offset = 0xffff_fff0;
    sb.new_level = 6;
    sb.reshape_position = 0x5555_6666_7777_8888;
    sb.delta_disks = 0xffff_ffff;
    sb.new_layout = 0x77;
    sb.new_chunk = 0x88;
    sb.new_offset = 0x99;
    sb.data_offset = 0xaaaa;
    sb.data_size = 0xbbbb_bbbb_bbbb;
    sb.super_offset = 0xcccc;
    sb.recovery_offset = 0xdddd_dddd;
    sb.dev_number = 3;
    sb.cnt_corrected_read = 0xeeee;
    sb.device_uuid = [0x33; 16];
    sb.devflags = WRITE_MOSTLY | FAIL_FAST;
    sb.bblog_shift = 4;
    sb.bblog_size = 0x0102;
    sb.bblog_offset = 0xffff_fff8;
    sb.utime = 0x0f0e_0d0c_0b0a_0908;
    sb.events = 0x1234_5678_9abc_def0;
    sb.resync_offset = 0x4242;
    sb.dev_roles[..5].copy_from_slice(&[0, ROLE_SPARE, 1, ROLE_FAULTY, 0x0304]);
    let b = enc(&sb);
    // (offset, width, value): struct mdp_superblock_1 of md_p.h.
    let want: &[(usize, usize, u64)] = &[
        (0, 4, 0xa92b_4efc),
        (4, 4, 1),
        (8, 4, 0x12),
        (12, 4, 0),
        (64, 8, 0x0102_0304_0506_0708),
        (72, 4, 0xffff_ffff),
        (76, 4, 0x0a0b_0c0d),
        (80, 8, 0x1111_2222_3333_4444),
        (88, 4, 0x1234),
        (92, 4, 5),
        (96, 4, 0xffff_fff0),
        (100, 4, 6),
        (104, 8, 0x5555_6666_7777_8888),
        (112, 4, 0xffff_ffff),
        (116, 4, 0x77),
        (120, 4, 0x88),
        (124, 4, 0x99),
        (128, 8, 0xaaaa),
        (136, 8, 0xbbbb_bbbb_bbbb),
        (144, 8, 0xcccc),
        (152, 8, 0xdddd_dddd),
        (160, 4, 3),
        (164, 4, 0xeeee),
        (184, 1, 3),
        (185, 1, 4),
        (186, 2, 0x0102),
        (188, 4, 0xffff_fff8),
        (192, 8, 0x0f0e_0d0c_0b0a_0908),
        (200, 8, 0x1234_5678_9abc_def0),
        (208, 8, 0x4242),
        (220, 4, 5),
        (256, 2, 0),
        (258, 2, 0xffff),
        (260, 2, 1),
        (262, 2, 0xfffe),
        (264, 2, 0x0304),
    ];
    for &(at, n, v) in want {
        assert_eq!(le(&b, at, n), v, "field at byte {at}");
    }
    assert!(b[16..32].iter().all(|&x| x == 0x11));
    assert!(b[32..64].iter().all(|&x| x == 0x22));
    assert!(b[168..184].iter().all(|&x| x == 0x33));
    assert!(b[224..256].iter().all(|&x| x == 0), "pad3");
    // Everything past the roles is zeroed, although the buffer came in as 0xee.
    assert!(b[266..].iter().all(|&x| x == 0));
    assert_eq!(le(&b, 216, 4), ref_csum(&b, 5) as u64);
}

#[test]
fn csum_known_answers() {
    // max_dev 0: magic + major + max_dev(0) = 0xa92b4efc + 1.
    let b = enc(&Superblock::new(0));
    assert_eq!(csum(&b, 0), Some(0xa92b_4efd));
    assert_eq!(le(&b, 216, 4), 0xa92b_4efd);
    // max_dev 1: + max_dev(1) + the final half word, role 0xffff.
    let b = enc(&Superblock::new(1));
    assert_eq!(csum(&b, 1), Some(0xa92b_4efc + 1 + 1 + 0xffff));
    // Carries into the high half: five all-ones words (two roles, ctime, events) add
    // 0x4_fffffffb; total 0x5_a92b4efa; folded 0xa92b4efa + 5.
    let mut sb = Superblock::new(2);
    sb.ctime = u64::MAX;
    sb.events = u64::MAX;
    let b = enc(&sb);
    assert_eq!(csum(&b, 2), Some(0xa92b_4eff));
    // Too short for the roles it names.
    assert_eq!(csum(&b[..259], 2), None);
    assert_eq!(csum(&b[..260], 2), Some(0xa92b_4eff));

    let mut rng = Rng(0x5eed_c5c5);
    let mut buf = vec![0u8; SB_BYTES];
    for _ in 0..2000 {
        rng.fill(&mut buf);
        let max_dev = rng.below(MAX_DEV as u64 + 1) as u32;
        assert_eq!(
            csum(&buf, max_dev),
            Some(ref_csum(&buf, max_dev)),
            "max_dev {max_dev}"
        );
    }
}

/// A random superblock that decode accepts at `at` for `v`.
fn random_sb(rng: &mut Rng, v: Version, at: u64) -> Superblock {
    let max_dev = rng.below(MAX_DEV as u64 + 1) as u32;
    let mut sb = Superblock::new(max_dev);
    let mut feats = rng.next() as u32 & FEATURE_ALL & !FEATURE_BAD_BLOCKS;
    sb.level = [0, 1, 4, 5, 6, 10, -1][rng.below(7) as usize];
    if sb.level != 0 {
        feats &= !FEATURE_RAID0_LAYOUT;
    }
    // Keep a reshape's new data offset past the superblock.
    feats &= !FEATURE_NEW_OFFSET;
    sb.feature_map = feats;
    rng.fill(&mut sb.set_uuid);
    rng.fill(&mut sb.set_name);
    rng.fill(&mut sb.device_uuid);
    sb.ctime = rng.next();
    sb.layout = rng.next() as u32;
    sb.size = rng.next();
    sb.chunksize = rng.next() as u32;
    sb.raid_disks = rng.next() as u32;
    sb.bitmap_offset = rng.next() as u32;
    sb.new_level = rng.next() as u32;
    sb.reshape_position = rng.next();
    sb.delta_disks = rng.next() as u32;
    sb.new_layout = rng.next() as u32;
    sb.new_chunk = rng.next() as u32;
    sb.new_offset = rng.next() as u32;
    sb.data_offset = at + 16 + rng.below(1 << 40);
    sb.data_size = 10 + rng.below(u64::MAX - 10);
    sb.super_offset = at;
    sb.recovery_offset = rng.next();
    sb.dev_number = rng.next() as u32;
    sb.cnt_corrected_read = rng.next() as u32;
    sb.devflags = rng.next() as u8;
    sb.bblog_shift = rng.next() as u8;
    sb.bblog_size = rng.below(9) as u16;
    sb.bblog_offset = rng.next() as u32;
    sb.utime = rng.next();
    sb.events = rng.next();
    sb.resync_offset = rng.next();
    for r in sb.dev_roles.iter_mut().take(max_dev as usize) {
        *r = rng.next() as u16;
    }
    let _ = v;
    sb
}

#[test]
fn encode_decode_roundtrip() {
    let mut rng = Rng(0x0dd_ba11);
    for i in 0..3000 {
        let v = [Version::V1_0, Version::V1_1, Version::V1_2][i % 3];
        let at = v.sb_offset(1 << 30);
        let sb = random_sb(&mut rng, v, at);
        let b = enc(&sb);
        assert_eq!(le(&b, 216, 4), ref_csum(&b, sb.max_dev) as u64);
        let back = Superblock::decode(&b, v, at).expect("decode");
        assert_eq!(back, sb, "case {i}");
        // Bytes past the roles do not count: md does not checksum them.
        let mut b2 = b.clone();
        b2[SB_BYTES - 1] ^= 0xff;
        if 256 + 2 * (sb.max_dev as usize) < SB_BYTES {
            assert_eq!(Superblock::decode(&b2, v, at), Ok(sb));
        }
        // Exactly the covered bytes are enough to decode.
        let n = 256 + 2 * sb.max_dev as usize;
        assert_eq!(Superblock::decode(&b[..n], v, at), Ok(sb));
    }
}

#[test]
fn garbage_never_panics() {
    let mut rng = Rng(0xbad_5eed);
    let mut buf = vec![0u8; SB_BYTES];
    let good = enc(&sample(128));
    for i in 0..20000 {
        rng.fill(&mut buf);
        if i % 2 == 0 {
            // Past the magic and major checks, into the rest.
            buf[..8].copy_from_slice(&good[..8]);
            buf[220..224].copy_from_slice(&(rng.below(400) as u32).to_le_bytes());
            if i % 4 == 0 {
                fix_csum(&mut buf);
            }
        }
        let len = rng.below(SB_BYTES as u64 + 1) as usize;
        let v = [Version::V1_0, Version::V1_1, Version::V1_2][i % 3];
        if let Ok(sb) = Superblock::decode(&buf[..len], v, rng.next()) {
            let _ = (
                sb.unsupported(),
                sb.name(),
                sb.own_role(),
                sb.sb_bytes(rng.next() as u32),
            );
            let _ = sb.fits(v, rng.next());
        }
        let _ = csum(&buf[..len], rng.next() as u32);
        let _ = probe_090(&buf[..len]);
        let (d, x, y) = (
            rng.next() >> rng.below(64),
            rng.next() >> rng.below(64),
            rng.next(),
        );
        let _ = (
            choose_bm_space(d),
            default_data_offset(v, d, x),
            avail_sectors(v, d, x),
        );
        let _ = (
            default_size(y as i32, d, x),
            placement(v, d, x, y >> rng.below(64)),
        );
        let _ = (v.sb_offset(d), sb090_offset(d));
    }
}

#[test]
fn encode_refuses() {
    let sb = sample(384);
    assert_eq!(sb.sb_bytes(512), 1024);
    let mut small = vec![0u8; 1023];
    assert_eq!(sb.encode(&mut small), Err(SbError::Short));
    let mut exact = vec![0u8; 1024];
    assert_eq!(sb.encode(&mut exact), Ok(()));
    let mut big = sample(2);
    big.max_dev = 385;
    assert_eq!(big.encode(&mut vec![0u8; 4096]), Err(SbError::MaxDev(385)));
}

#[test]
fn sb_bytes_rounds_to_the_block() {
    assert_eq!(sample(0).sb_bytes(512), 512);
    assert_eq!(sample(128).sb_bytes(512), 512);
    assert_eq!(sample(129).sb_bytes(512), 1024);
    assert_eq!(sample(129).sb_bytes(0), 1024);
    assert_eq!(sample(128).sb_bytes(4096), 4096);
    assert_eq!(sample(384).sb_bytes(1024), 1024);
}

#[test]
fn decode_refuses_each_case() {
    let v = Version::V1_2;
    let good = sample(128);
    let b = enc(&good);
    assert_eq!(Superblock::decode(&b, v, 8), Ok(good));
    let dec = |b: &[u8]| Superblock::decode(b, v, 8);

    assert_eq!(dec(&b[..255]), Err(SbError::Short));
    assert_eq!(dec(&b[..511]), Err(SbError::Short));
    let mut x = b.clone();
    x[0] ^= 1;
    assert_eq!(dec(&x), Err(SbError::NoMagic));
    let mut x = b.clone();
    x[4..8].copy_from_slice(&0u32.to_le_bytes());
    assert_eq!(dec(&x), Err(SbError::Version090));
    let mut x = b.clone();
    x[4..8].copy_from_slice(&2u32.to_le_bytes());
    assert_eq!(dec(&x), Err(SbError::Major(2)));
    let mut x = b.clone();
    x[220..224].copy_from_slice(&385u32.to_le_bytes());
    fix_csum(&mut x);
    assert_eq!(dec(&x), Err(SbError::MaxDev(385)));
    // A flipped role bit, then a corrupt sb_csum itself.
    let mut x = b.clone();
    x[300] ^= 0x40;
    let stored = le(&b, 216, 4) as u32;
    assert_eq!(
        dec(&x),
        Err(SbError::Checksum {
            stored,
            computed: ref_csum(&x, 128)
        })
    );
    let mut x = b.clone();
    x[216] ^= 1;
    assert!(matches!(dec(&x), Err(SbError::Checksum { .. })));

    let edit = |at: usize, bytes: &[u8]| {
        let mut x = b.clone();
        x[at..at + bytes.len()].copy_from_slice(bytes);
        fix_csum(&mut x);
        x
    };
    assert_eq!(dec(&edit(12, &[1])), Err(SbError::Padding));
    assert_eq!(dec(&edit(15, &[0x80])), Err(SbError::Padding));
    assert_eq!(dec(&edit(224, &[1])), Err(SbError::Padding));
    assert_eq!(dec(&edit(255, &[1])), Err(SbError::Padding));
    assert_eq!(dec(&edit(136, &9u64.to_le_bytes())), Err(SbError::DataSize));
    assert!(dec(&edit(136, &10u64.to_le_bytes())).is_ok());
    assert_eq!(
        dec(&edit(8, &(1u32 << 13).to_le_bytes())),
        Err(SbError::UnknownFeature(1 << 13))
    );
    assert_eq!(
        dec(&edit(8, &0xffff_ffffu32.to_le_bytes())),
        Err(SbError::UnknownFeature(!FEATURE_ALL))
    );
    assert_eq!(
        Superblock::decode(&b, v, 0),
        Err(SbError::Offset {
            stored: 8,
            expected: 0
        })
    );
    let mut r0 = good;
    r0.feature_map = FEATURE_RAID0_LAYOUT;
    assert_eq!(dec(&enc(&r0)), Err(SbError::Raid0Layout));
    r0.level = 0;
    assert!(dec(&enc(&r0)).is_ok());
}

#[test]
fn decode_checks_the_data_offset() {
    // md: 1.1/1.2 data must start past the superblock, which takes 256 + 2*max_dev bytes
    // rounded to 512: one sector for 128 roles, two for 384.
    let mut sb = sample(384);
    sb.data_offset = 9;
    assert_eq!(
        Superblock::decode(&enc(&sb), Version::V1_2, 8),
        Err(SbError::DataOffset)
    );
    sb.data_offset = 10;
    assert!(Superblock::decode(&enc(&sb), Version::V1_2, 8).is_ok());
    let mut sb = sample(128);
    sb.data_offset = 9;
    assert!(Superblock::decode(&enc(&sb), Version::V1_2, 8).is_ok());
    sb.data_offset = 8;
    assert_eq!(
        Superblock::decode(&enc(&sb), Version::V1_2, 8),
        Err(SbError::DataOffset)
    );
    // 1.1 at sector 0 with data at 0; 1.0 keeps its data at 0 before the superblock.
    sb.super_offset = 0;
    sb.data_offset = 0;
    assert_eq!(
        Superblock::decode(&enc(&sb), Version::V1_1, 0),
        Err(SbError::DataOffset)
    );
    sb.super_offset = 131056;
    assert!(Superblock::decode(&enc(&sb), Version::V1_0, 131056).is_ok());
    // A reshape's new data offset is held to the same rule (md's new_data_offset).
    let mut sb = sample(128);
    sb.feature_map = FEATURE_RESHAPE_ACTIVE | FEATURE_NEW_OFFSET;
    sb.new_offset = (-2040i32) as u32;
    assert_eq!(
        Superblock::decode(&enc(&sb), Version::V1_2, 8),
        Err(SbError::DataOffset)
    );
    sb.new_offset = (-2039i32) as u32;
    assert!(Superblock::decode(&enc(&sb), Version::V1_2, 8).is_ok());
    // Without NEW_OFFSET, md ignores new_offset.
    sb.feature_map = FEATURE_RESHAPE_ACTIVE;
    sb.new_offset = (-4000i32) as u32;
    assert!(Superblock::decode(&enc(&sb), Version::V1_2, 8).is_ok());
}

#[test]
fn decode_checks_the_bad_block_log() {
    let dec = |sb: &Superblock| Superblock::decode(&enc(sb), Version::V1_2, 8);
    let mut sb = sample(128);
    sb.bblog_size = 9;
    assert_eq!(dec(&sb), Err(SbError::BadBlockLog));
    sb.bblog_offset = 0;
    assert!(dec(&sb).is_ok(), "no log: its size is not looked at");
    sb.feature_map = FEATURE_BAD_BLOCKS;
    sb.bblog_size = 8;
    assert_eq!(dec(&sb), Err(SbError::BadBlockLog));
    sb.bblog_offset = 16;
    assert!(dec(&sb).is_ok());
    sb.bblog_shift = 64;
    assert_eq!(dec(&sb), Err(SbError::BadBlockLog));
}

#[test]
fn fits_the_device() {
    let sb = sample(128);
    // 1.2: 2048 + 129024 = 131072.
    assert!(sb.fits(Version::V1_2, 131072));
    assert!(!sb.fits(Version::V1_2, 131071));
    // 1.0: the data ends at the superblock, (dev - 16) & !7.
    let mut sb = sample(128);
    sb.data_offset = 0;
    sb.data_size = 131040;
    assert!(sb.fits(Version::V1_0, 131072));
    sb.data_size = 131057;
    assert!(!sb.fits(Version::V1_0, 131072));
}

#[test]
fn unsupported_names_each_feature() {
    let names = [
        (FEATURE_RESHAPE_ACTIVE, "reshape"),
        (FEATURE_BAD_BLOCKS, "bad blocks"),
        (FEATURE_RESHAPE_BACKWARDS, "reshape backwards"),
        (FEATURE_NEW_OFFSET, "new offset"),
        (FEATURE_CLUSTERED, "clustered"),
        (FEATURE_JOURNAL, "journal"),
        (FEATURE_PPL, "ppl"),
        (FEATURE_MULTIPLE_PPLS, "multiple ppls"),
        (1 << 13, "unknown"),
    ];
    let mut sb = sample(128);
    assert_eq!(sb.unsupported(), None);
    for (bit, name) in names {
        sb.feature_map = bit | FEATURES_RRAID;
        assert_eq!(sb.unsupported(), Some((bit, name)));
    }
    // The lowest bit is named first.
    sb.feature_map = FEATURE_JOURNAL | FEATURE_RESHAPE_ACTIVE;
    assert_eq!(sb.unsupported(), Some((FEATURE_RESHAPE_ACTIVE, "reshape")));
    // A reserved, empty bad block log (offset and size, no feature bit) is fine.
    sb.feature_map = FEATURE_RECOVERY_OFFSET;
    sb.bblog_offset = 16;
    sb.bblog_size = 8;
    assert_eq!(sb.unsupported(), None);
    assert_eq!(FEATURES_RRAID, 1 | 2 | 16 | 128 | 4096);
    assert_eq!(FEATURE_ALL, (1 << 13) - 1);
}

#[test]
fn versions() {
    for (s, v) in [
        ("1.0", Version::V1_0),
        ("1.00", Version::V1_0),
        ("01.0", Version::V1_0),
        ("1.1", Version::V1_1),
        ("1.01", Version::V1_1),
        ("1.2", Version::V1_2),
        ("1.02", Version::V1_2),
        ("1", Version::V1_2),
        ("default", Version::V1_2),
    ] {
        assert_eq!(Version::parse(s), Some(v), "{s}");
    }
    for s in ["", "0.90", "1.3", "2", "1.2 ", "ddf"] {
        assert_eq!(Version::parse(s), None, "{s}");
    }
    for (v, m) in [(Version::V1_0, 0), (Version::V1_1, 1), (Version::V1_2, 2)] {
        assert_eq!(v.minor(), m);
        assert_eq!(Version::parse(v.name()), Some(v));
    }
    // 1.0: 8 to 12 KiB from the end, 4 KiB aligned.
    assert_eq!(Version::V1_0.sb_offset(131072), 131056);
    assert_eq!(Version::V1_0.sb_offset(131075), 131056);
    assert_eq!(Version::V1_0.sb_offset(131079), 131056);
    assert_eq!(Version::V1_0.sb_offset(131080), 131064);
    assert_eq!(Version::V1_0.sb_offset(10), 0);
    assert_eq!(Version::V1_1.sb_offset(131072), 0);
    assert_eq!(Version::V1_2.sb_offset(131072), 8);
}

#[test]
fn probe_090_finds_a_090_superblock() {
    // MD_NEW_SIZE_SECTORS: (dev & !127) - 128.
    assert_eq!(sb090_offset(131072), 130944);
    assert_eq!(sb090_offset(131199), 130944);
    assert_eq!(sb090_offset(100), 0);
    let mut b = vec![0u8; 4096];
    assert!(!probe_090(&b));
    b[0..4].copy_from_slice(&SB_MAGIC.to_le_bytes());
    b[8..12].copy_from_slice(&90u32.to_le_bytes());
    assert!(probe_090(&b));
    assert!(!probe_090(&b[..7]));
    b[4] = 1;
    assert!(!probe_090(&b), "major 1 is not 0.90");
    // A v1 superblock decoded where it has major 0 is refused as 0.90.
    b[4] = 0;
    assert_eq!(
        Superblock::decode(&b, Version::V1_2, 8),
        Err(SbError::Version090)
    );
}

#[test]
fn names() {
    let mut sb = Superblock::new(0);
    assert_eq!(sb.name(), "");
    sb.set_name_str("host:md0");
    assert_eq!(sb.name(), "host:md0");
    assert_eq!(&sb.set_name[..9], b"host:md0\0");
    let long = "a".repeat(40);
    sb.set_name_str(&long);
    assert_eq!(sb.name(), &long[..31]);
    assert_eq!(sb.set_name[31], 0);
    // Cut at a character boundary: 30 ASCII bytes, then a 2-byte character that would end at 32.
    let s = format!("{}é", "b".repeat(30));
    sb.set_name_str(&s);
    assert_eq!(sb.name(), &s[..30]);
    sb.set_name_str("short");
    assert_eq!(sb.name(), "short", "the rest is NUL padded");
    // mdadm may fill all 32 bytes; bytes that are not UTF-8 read as "".
    sb.set_name = [b'x'; 32];
    assert_eq!(sb.name(), "x".repeat(32));
    sb.set_name[3] = 0xff;
    assert_eq!(sb.name(), "");
}

#[test]
fn roles() {
    let mut sb = sample(4);
    sb.dev_roles[2] = ROLE_FAULTY;
    sb.dev_roles[5] = 7; // beyond max_dev: not on disk
    sb.dev_number = 2;
    assert_eq!(sb.own_role(), ROLE_FAULTY);
    assert_eq!(sb.role_of(1), 1);
    assert_eq!(sb.role_of(3), ROLE_SPARE);
    assert_eq!(sb.role_of(5), ROLE_SPARE);
    assert_eq!(sb.role_of(u32::MAX), ROLE_SPARE);
    sb.dev_number = 4;
    assert_eq!(sb.own_role(), ROLE_SPARE);
}

#[test]
fn mdadm_examine_oracle() {
    oracle::run();
}

#[test]
fn events_roll_back_clean_dirty_cycles() {
    let mut e = Events::new(10);
    // The first dirty mark after assembly goes forward and may be undone.
    assert!(e.step(true, false, false));
    assert_eq!(
        e,
        Events {
            count: 11,
            can_decrease: true
        }
    );
    // Clean again: back to 10, and the spares (left at 10) are current.
    assert!(e.step(true, false, true));
    assert_eq!(
        e,
        Events {
            count: 10,
            can_decrease: false
        }
    );
    assert!(!e.needs_write(10, true, true));
    assert!(e.needs_write(9, false, true));
    // Dirty again skips spares one behind.
    let nospares = e.step(true, false, false);
    assert_eq!(e.count, 11);
    assert!(!e.needs_write(10, true, nospares));
    assert!(e.needs_write(10, false, nospares));
    // A device change goes forward and cannot be undone.
    assert!(!e.step(false, false, true));
    assert_eq!(
        e,
        Events {
            count: 12,
            can_decrease: false
        }
    );
    assert!(e.needs_write(11, true, false));
    // Degraded: never skip spares, never roll back.
    let mut e = Events::new(10);
    assert!(!e.step(true, true, false));
    assert!(!e.step(true, true, true));
    assert_eq!(e.count, 12);
    // Not clean yet (resync pending): forward.
    let mut e = Events::new(10);
    e.step(true, false, false);
    e.step(true, false, false);
    assert_eq!(e.count, 12);
    // md never rolls back to 0.
    let mut e = Events {
        count: 1,
        can_decrease: true,
    };
    e.step(true, false, true);
    assert_eq!(e.count, 2);
    let mut e = Events {
        count: u64::MAX,
        can_decrease: false,
    };
    e.step(false, false, false);
    assert_eq!(e.count, u64::MAX);
    assert!(!e.needs_write(u64::MAX, true, true));
}
