//! mdadm 4.2 as an oracle: superblocks rraid encodes, written where md puts them on sparse
//! image files, must read back through `mdadm --examine` as the fields they were given, with
//! mdadm's checksum agreeing with ours.

use rraid_host_tests::meta::super1::*;
use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

const MIB: u64 = 2048;

fn find_mdadm() -> Option<String> {
    for p in ["/sbin/mdadm", "/usr/sbin/mdadm"] {
        if Path::new(p).exists() {
            return Some(p.into());
        }
    }
    let ok = Command::new("mdadm").arg("--version").output();
    ok.ok()
        .filter(|o| o.status.success())
        .map(|_| "mdadm".into())
}

/// One member's superblock, placed as mdadm 4.2 would for the array's shape.
struct Case {
    name: &'static str,
    v: Version,
    dev: u64,
    level: i32,
    layout: u32,
    chunk: u32,
    disks: u32,
    dev_number: u32,
    roles: &'static [u16],
    features: u32,
    recovery: u64,
    devflags: u8,
    clean: bool,
    events: u64,
    /// What mdadm prints: Device Role, Array State (up to its legend), Layout.
    role: &'static str,
    state: &'static str,
    layout_name: Option<&'static str>,
}

fn build(c: &Case) -> Superblock {
    let chunk = u64::from(c.chunk);
    let data_offset = default_data_offset(c.v, c.dev, chunk);
    let avail = avail_sectors(c.v, c.dev, data_offset).expect("device holds the metadata");
    let size = default_size(c.level, avail, chunk);
    let p = placement(c.v, c.dev, size, data_offset);
    // mdadm's max_dev for up to 128 devices: one 512-byte superblock.
    let mut sb = Superblock::new(128);
    sb.feature_map = c.features;
    for (i, b) in sb.set_uuid.iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(0x37) ^ (c.dev >> 11) as u8 ^ c.dev_number as u8;
    }
    sb.set_name_str(c.name);
    sb.ctime = 1_700_000_000;
    sb.utime = 1_700_000_500;
    sb.level = c.level;
    sb.layout = c.layout;
    sb.size = size;
    sb.chunksize = c.chunk;
    sb.raid_disks = c.disks;
    sb.data_offset = p.data_offset;
    sb.data_size = p.data_size;
    sb.super_offset = p.super_offset;
    sb.bblog_offset = p.bblog_offset;
    sb.bblog_size = p.bblog_size;
    sb.recovery_offset = c.recovery;
    sb.dev_number = c.dev_number;
    sb.device_uuid = [0xd0 | c.dev_number as u8; 16];
    sb.devflags = c.devflags;
    sb.events = c.events;
    sb.resync_offset = if c.clean { MAX_SECTOR } else { 0 };
    sb.dev_roles[..c.roles.len()].copy_from_slice(c.roles);
    sb
}

fn write_image(path: &Path, dev: u64, at: u64, buf: &[u8]) {
    let mut f = OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(path)
        .expect("create image");
    f.set_len(dev * 512).expect("size image");
    f.seek(SeekFrom::Start(at * 512)).unwrap();
    f.write_all(buf).unwrap();
}

fn examine(mdadm: &str, path: &Path) -> HashMap<String, String> {
    let out = Command::new(mdadm)
        .arg("--examine")
        .arg(path)
        .output()
        .expect("run mdadm");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "mdadm --examine {}: {}{}",
        path.display(),
        text,
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .filter_map(|l| l.split_once(" : "))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// mdadm's UUID format: 4 groups of 8 hex digits joined by ':'.
fn uuid(b: &[u8; 16]) -> String {
    let hex: Vec<String> = b
        .chunks(4)
        .map(|g| g.iter().map(|x| format!("{x:02x}")).collect())
        .collect();
    hex.join(":")
}

fn check(mdadm: &str, dir: &Path, c: &Case) {
    let sb = build(c);
    let mut buf = vec![0u8; SB_BYTES];
    sb.encode(&mut buf).unwrap();
    assert_eq!(
        Superblock::decode(&buf, c.v, sb.super_offset),
        Ok(sb),
        "{}",
        c.name
    );
    let path = dir.join(format!("{}.img", c.name));
    write_image(&path, c.dev, c.v.sb_offset(c.dev), &buf);
    let m = examine(mdadm, &path);
    let get = |k: &str| -> &str {
        m.get(k)
            .unwrap_or_else(|| panic!("{}: mdadm printed no {k:?}: {m:#?}", c.name))
    };
    let ctx = c.name;
    let sum = u32::from_le_bytes(buf[216..220].try_into().unwrap());
    assert_eq!(get("Checksum"), format!("{sum:x} - correct"), "{ctx}");
    assert_eq!(get("Magic"), "a92b4efc", "{ctx}");
    assert_eq!(get("Version"), c.v.name(), "{ctx}");
    assert_eq!(get("Feature Map"), format!("{:#x}", c.features), "{ctx}");
    assert_eq!(get("Array UUID"), uuid(&sb.set_uuid), "{ctx}");
    assert_eq!(get("Device UUID"), uuid(&sb.device_uuid), "{ctx}");
    assert!(get("Name").starts_with(c.name), "{ctx}");
    let level = match c.level {
        0 => "raid0",
        1 => "raid1",
        5 => "raid5",
        10 => "raid10",
        _ => unreachable!(),
    };
    assert_eq!(get("Raid Level"), level, "{ctx}");
    assert_eq!(get("Raid Devices"), c.disks.to_string(), "{ctx}");
    let avail = format!("{} sectors ", sb.data_size);
    assert!(get("Avail Dev Size").starts_with(&avail), "{ctx}");
    if c.level > 0 && sb.size != sb.data_size {
        let used = format!("{} sectors ", sb.size);
        assert!(get("Used Dev Size").starts_with(&used), "{ctx}");
    } else {
        assert!(!m.contains_key("Used Dev Size"), "{ctx}");
    }
    if sb.data_offset != 0 {
        assert_eq!(
            get("Data Offset"),
            format!("{} sectors", sb.data_offset),
            "{ctx}"
        );
    } else {
        assert!(!m.contains_key("Data Offset"), "{ctx}");
    }
    assert_eq!(
        get("Super Offset"),
        format!("{} sectors", sb.super_offset),
        "{ctx}"
    );
    if c.features & FEATURE_RECOVERY_OFFSET != 0 {
        assert_eq!(
            get("Recovery Offset"),
            format!("{} sectors", c.recovery),
            "{ctx}"
        );
    } else {
        assert!(!m.contains_key("Recovery Offset"), "{ctx}");
    }
    assert_eq!(
        get("State"),
        if c.clean { "clean" } else { "active" },
        "{ctx}"
    );
    if c.devflags & WRITE_MOSTLY != 0 {
        assert_eq!(get("Flags"), "write-mostly", "{ctx}");
    }
    let bblog = format!(
        "512 entries available at offset {} sectors",
        sb.bblog_offset as i32
    );
    assert_eq!(get("Bad Block Log"), bblog, "{ctx}");
    assert_eq!(get("Events"), c.events.to_string(), "{ctx}");
    assert_eq!(m.get("Layout").map(|s| s.as_str()), c.layout_name, "{ctx}");
    if c.level != 1 {
        assert_eq!(get("Chunk Size"), format!("{}K", c.chunk / 2), "{ctx}");
    } else {
        assert!(!m.contains_key("Chunk Size"), "{ctx}");
    }
    assert_eq!(get("Device Role"), c.role, "{ctx}");
    assert!(
        get("Array State").starts_with(&format!("{} (", c.state)),
        "{ctx}"
    );

    // A wrong sb_csum: mdadm names the one we compute.
    buf[216] ^= 0x01;
    write_image(&path, c.dev, c.v.sb_offset(c.dev), &buf);
    let m = examine(mdadm, &path);
    let wrong = format!("{:x} - expected {sum:x}", sum ^ 1);
    assert_eq!(m.get("Checksum"), Some(&wrong), "{ctx}");
    std::fs::remove_file(&path).unwrap();
}

fn cases() -> Vec<Case> {
    let base = Case {
        name: "",
        v: Version::V1_2,
        dev: 64 * MIB,
        level: 1,
        layout: 0,
        chunk: 0,
        disks: 2,
        dev_number: 0,
        roles: &[0, 1],
        features: 0,
        recovery: 0,
        devflags: 0,
        clean: true,
        events: 17,
        role: "Active device 0",
        state: "AA",
        layout_name: None,
    };
    vec![
        Case {
            name: "raid1-1.2-64M",
            ..base
        },
        Case {
            name: "raid5-1.1-256M-recovering",
            v: Version::V1_1,
            dev: 256 * MIB,
            level: 5,
            layout: 2,
            chunk: 1024,
            disks: 3,
            dev_number: 2,
            roles: &[0, 1, 2],
            features: FEATURE_RECOVERY_OFFSET,
            recovery: 12345,
            clean: false,
            events: 99,
            role: "Active device 2",
            state: "AAA",
            layout_name: Some("left-symmetric"),
            ..base
        },
        Case {
            name: "raid10-1.0-1G-write-mostly",
            v: Version::V1_0,
            dev: 1024 * MIB,
            level: 10,
            layout: 258,
            chunk: 1024,
            disks: 4,
            dev_number: 1,
            roles: &[0, 1, 2, 3],
            devflags: WRITE_MOSTLY,
            role: "Active device 1",
            state: "AAAA",
            layout_name: Some("near=2"),
            ..base
        },
        Case {
            name: "raid0-1.2-1G-alternate",
            dev: 1024 * MIB,
            level: 0,
            layout: 2,
            chunk: 1024,
            disks: 3,
            dev_number: 1,
            roles: &[0, 1, 2],
            features: FEATURE_RAID0_LAYOUT,
            role: "Active device 1",
            state: "AAA",
            layout_name: Some("alternate"),
            ..base
        },
        Case {
            name: "raid1-1.2-20G-replacement",
            dev: 20 * 1024 * MIB,
            dev_number: 2,
            roles: &[0, 1, 0],
            features: FEATURE_REPLACEMENT | FEATURE_RECOVERY_OFFSET,
            recovery: 4096,
            role: "Replacement device 0",
            state: "RA",
            ..base
        },
        Case {
            name: "raid1-1.0-64M-spare",
            v: Version::V1_0,
            dev_number: 2,
            roles: &[0, 1, ROLE_SPARE],
            role: "spare",
            ..base
        },
        Case {
            name: "raid5-1.2-1G-64K-one-failed",
            dev: 1024 * MIB,
            level: 5,
            layout: 0,
            chunk: 128,
            disks: 3,
            roles: &[0, ROLE_FAULTY, 2],
            events: 1_234_567_890_123,
            state: "A.A",
            layout_name: Some("left-asymmetric"),
            ..base
        },
    ]
}

pub fn run() {
    let Some(mdadm) = find_mdadm() else {
        if std::env::var_os("RRAID_REQUIRE_MDADM").is_some() {
            panic!("mdadm is not installed and RRAID_REQUIRE_MDADM is set");
        }
        eprintln!("!!! SKIPPED mdadm_examine_oracle: mdadm is not installed !!!");
        return;
    };
    let dir: PathBuf = std::env::temp_dir().join(format!("rraid-meta-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for c in cases() {
        check(&mdadm, &dir, &c);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
