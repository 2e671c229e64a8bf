//! md's v1.x superblock, bit for bit, and mdadm 4.2's placement of a new array.
//!
//! The layout is `struct mdp_superblock_1` of include/uapi/linux/raid/md_p.h: 256 bytes of
//! fixed fields, then `max_dev` little-endian 16-bit roles indexed by device number.

mod mdadm;
pub use mdadm::{
    avail_sectors, choose_bm_space, default_data_offset, default_size, placement,
    placement_with_bitmap, Placement,
};

/// The superblock magic, little endian on disk.
pub const SB_MAGIC: u32 = 0xa92b_4efc;
/// The most device roles rraid reads or writes (md allows 1920; mdadm's 1K superblock 384).
pub const MAX_DEV: usize = 384;
/// Bytes of a superblock buffer the kernel reads/writes: 4096.
pub const SB_BYTES: usize = 4096;

/// Role of a spare (or of an unused device number).
pub const ROLE_SPARE: u16 = 0xffff;
/// Role of a device recorded faulty.
pub const ROLE_FAULTY: u16 = 0xfffe;
/// Role of a write journal device.
pub const ROLE_JOURNAL: u16 = 0xfffd;
/// Roles below this are slots in the array.
pub const ROLE_MAX: u16 = 0xff00;

/// md's MaxSector: as `resync_offset`, the whole array is in sync.
pub const MAX_SECTOR: u64 = u64::MAX;

/// `bitmap_offset` is meaningful: an internal write-intent bitmap.
pub const FEATURE_BITMAP_OFFSET: u32 = 1;
/// `recovery_offset` is meaningful: the device is in sync only below it.
pub const FEATURE_RECOVERY_OFFSET: u32 = 2;
/// A reshape is in progress.
pub const FEATURE_RESHAPE_ACTIVE: u32 = 4;
/// The bad block log is not empty.
pub const FEATURE_BAD_BLOCKS: u32 = 8;
/// The device is replacing the active device of the same role.
pub const FEATURE_REPLACEMENT: u32 = 16;
/// The reshape runs backwards although the number of devices does not shrink.
pub const FEATURE_RESHAPE_BACKWARDS: u32 = 32;
/// `new_offset` must be honoured.
pub const FEATURE_NEW_OFFSET: u32 = 64;
/// The recovery in progress is guided by the bitmap.
pub const FEATURE_RECOVERY_BITMAP: u32 = 128;
/// Clustered md.
pub const FEATURE_CLUSTERED: u32 = 256;
/// The array has a write journal.
pub const FEATURE_JOURNAL: u32 = 512;
/// Partial parity log.
pub const FEATURE_PPL: u32 = 1024;
/// One partial parity log per stripe head.
pub const FEATURE_MULTIPLE_PPLS: u32 = 2048;
/// `layout` is meaningful for RAID 0.
pub const FEATURE_RAID0_LAYOUT: u32 = 4096;
/// Every feature bit md knows (md's MD_FEATURE_ALL).
pub const FEATURE_ALL: u32 = 0x1fff;
/// Feature bits rraid implements: RECOVERY_OFFSET | REPLACEMENT | RAID0_LAYOUT.
pub const FEATURES_RRAID: u32 = FEATURE_BITMAP_OFFSET
    | FEATURE_RECOVERY_OFFSET
    | FEATURE_REPLACEMENT
    | FEATURE_RECOVERY_BITMAP
    | FEATURE_RAID0_LAYOUT;

/// `devflags`: prefer other mirrors for reads.
pub const WRITE_MOSTLY: u8 = 1;
/// `devflags`: fail requests fast instead of retrying.
pub const FAIL_FAST: u8 = 2;

/// Bytes before the role table.
const HEADER: usize = 256;

// Byte offsets of the fields in `struct mdp_superblock_1`.
const MAGIC: usize = 0;
const MAJOR: usize = 4;
const FEATURE_MAP: usize = 8;
const PAD0: usize = 12;
const SET_UUID: usize = 16;
const SET_NAME: usize = 32;
const CTIME: usize = 64;
const LEVEL: usize = 72;
const LAYOUT: usize = 76;
const SIZE: usize = 80;
const CHUNKSIZE: usize = 88;
const RAID_DISKS: usize = 92;
const BITMAP_OFFSET: usize = 96;
const NEW_LEVEL: usize = 100;
const RESHAPE_POSITION: usize = 104;
const DELTA_DISKS: usize = 112;
const NEW_LAYOUT: usize = 116;
const NEW_CHUNK: usize = 120;
const NEW_OFFSET: usize = 124;
const DATA_OFFSET: usize = 128;
const DATA_SIZE: usize = 136;
const SUPER_OFFSET: usize = 144;
const RECOVERY_OFFSET: usize = 152;
const DEV_NUMBER: usize = 160;
const CNT_CORRECTED_READ: usize = 164;
const DEVICE_UUID: usize = 168;
const DEVFLAGS: usize = 184;
const BBLOG_SHIFT: usize = 185;
const BBLOG_SIZE: usize = 186;
const BBLOG_OFFSET: usize = 188;
const UTIME: usize = 192;
const EVENTS: usize = 200;
const RESYNC_OFFSET: usize = 208;
const SB_CSUM: usize = 216;
const MAX_DEV_FIELD: usize = 220;
const PAD3: usize = 224;

/// The bad block log md loads is at most one page.
const BBLOG_MAX_SECTORS: u16 = 8;

/// A superblock format of the v1 family: where on the device it lies.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Version {
    /// At the end of the device, data from sector 0.
    V1_0,
    /// At sector 0.
    V1_1,
    /// At 4 KiB from the start (mdadm's default).
    V1_2,
}

impl Version {
    /// The minor version number: 0, 1 or 2.
    pub fn minor(self) -> u32 {
        match self {
            Version::V1_0 => 0,
            Version::V1_1 => 1,
            Version::V1_2 => 2,
        }
    }

    /// Parses a name as mdadm's `--metadata` does.
    ///
    /// Leading zeros are ignored; "1.0"/"1.00", "1.1"/"1.01", "1.2"/"1.02", and "1" and
    /// "default" (mdadm's default minor, 2) are accepted.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim_start_matches('0') {
            "1.0" | "1.00" => Some(Version::V1_0),
            "1.1" | "1.01" => Some(Version::V1_1),
            "1.2" | "1.02" | "1" | "default" => Some(Version::V1_2),
            _ => None,
        }
    }

    /// The name mdadm prints: "1.0", "1.1" or "1.2".
    pub fn name(self) -> &'static str {
        match self {
            Version::V1_0 => "1.0",
            Version::V1_1 => "1.1",
            Version::V1_2 => "1.2",
        }
    }

    /// Where the superblock lies on a device of `dev_sectors` (md's super_1_load): 1.0
    /// (dev-16)&!7, 1.1 0, 1.2 8.
    ///
    /// 1.0's is 8 to 12 KiB before the end, 4 KiB aligned (0 on a device under 8 KiB).
    pub fn sb_offset(self, dev_sectors: u64) -> u64 {
        match self {
            Version::V1_0 => dev_sectors.saturating_sub(16) & !7,
            Version::V1_1 => 0,
            Version::V1_2 => 8,
        }
    }
}

/// md's superblock fields, decoded. Raw integers as on disk (level as i32).
///
/// The magic, major version, checksum and padding are not kept: [`Superblock::encode`]
/// writes them. Roles at and beyond `max_dev` are [`ROLE_SPARE`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Superblock {
    /// Feature bits (`FEATURE_*`).
    pub feature_map: u32,
    /// The array's UUID, bytes as on disk.
    pub set_uuid: [u8; 16],
    /// The array's name, NUL padded (mdadm writes "host:name").
    pub set_name: [u8; 32],
    /// Creation time: low 40 bits seconds, top 24 bits microseconds.
    pub ctime: u64,
    /// RAID level: 0, 1, 4, 5, 6, 10, -1 (linear).
    pub level: i32,
    /// The level's layout (RAID 5/6 algorithm, RAID 10 copies, RAID 0 zone layout).
    pub layout: u32,
    /// Sectors of each device used by the array (0 for RAID 0: all of `data_size`).
    pub size: u64,
    /// Chunk in sectors.
    pub chunksize: u32,
    /// Slots in the array.
    pub raid_disks: u32,
    /// Sectors from the superblock to the bitmap, signed (also `ppl.offset`/`ppl.size`).
    pub bitmap_offset: u32,
    /// Reshape: the level being reshaped to.
    pub new_level: u32,
    /// Reshape: next array sector to reshape.
    pub reshape_position: u64,
    /// Reshape: change in `raid_disks`, signed.
    pub delta_disks: u32,
    /// Reshape: the new layout.
    pub new_layout: u32,
    /// Reshape: the new chunk in sectors.
    pub new_chunk: u32,
    /// Reshape: signed change of `data_offset` in the new layout.
    pub new_offset: u32,
    /// First sector of data on this device.
    pub data_offset: u64,
    /// Sectors of this device usable for data.
    pub data_size: u64,
    /// Sector of this superblock on the device.
    pub super_offset: u64,
    /// Sectors (from `data_offset`) already recovered; also a journal's tail.
    pub recovery_offset: u64,
    /// Permanent number of this device: its index in `dev_roles`.
    pub dev_number: u32,
    /// Read errors corrected by rewriting.
    pub cnt_corrected_read: u32,
    /// This device's UUID (user space sets it; md ignores it).
    pub device_uuid: [u8; 16],
    /// Per-device flags: [`WRITE_MOSTLY`], [`FAIL_FAST`].
    pub devflags: u8,
    /// Bad block log: shift from sectors to its block size.
    pub bblog_shift: u8,
    /// Bad block log: sectors reserved for it.
    pub bblog_size: u16,
    /// Bad block log: signed sectors from the superblock.
    pub bblog_offset: u32,
    /// Last update time, as `ctime`.
    pub utime: u64,
    /// Event counter, bumped by each update.
    pub events: u64,
    /// Sectors (from `data_offset`) known in sync; [`MAX_SECTOR`] when clean.
    pub resync_offset: u64,
    /// Entries of `dev_roles` on disk.
    pub max_dev: u32,
    /// Role of each device number: a slot, or a `ROLE_*`.
    pub dev_roles: [u16; MAX_DEV],
}

/// Why a buffer is not a superblock rraid may use.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SbError {
    /// The buffer is smaller than 256 + 2*max_dev bytes.
    Short,
    /// No v1 magic.
    NoMagic,
    /// A 0.90 superblock's magic and major version (see [`probe_090`]).
    Version090,
    /// major_version is not 1.
    Major(u32),
    /// max_dev is above [`MAX_DEV`].
    MaxDev(u32),
    /// sb_csum does not match the contents.
    Checksum {
        /// The checksum in the buffer.
        stored: u32,
        /// md's checksum of the buffer.
        computed: u32,
    },
    /// pad0 or pad3 is not zero (md refuses: might be a new feature).
    Padding,
    /// data_size is below 10 sectors.
    DataSize,
    /// Feature bits outside [`FEATURE_ALL`] (the bits).
    UnknownFeature(u32),
    /// super_offset is not where the superblock was read.
    Offset {
        /// super_offset in the buffer.
        stored: u64,
        /// The sector the buffer was read at.
        expected: u64,
    },
    /// 1.1/1.2: data (or the reshape's new data) starts inside the superblock.
    DataOffset,
    /// RAID0_LAYOUT on a level other than 0.
    Raid0Layout,
    /// The bad block log is bigger than md loads (a page), or the BAD_BLOCKS feature has no
    /// log or a shift of 64 or more.
    BadBlockLog,
}

/// `N` bytes of `b` at `at`, or zeros when out of range (callers check the length first).
fn bytes<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    at.checked_add(N)
        .and_then(|end| b.get(at..end))
        .and_then(|s| s.try_into().ok())
        .unwrap_or([0; N])
}

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(bytes(b, at))
}

/// The little-endian `u32` at `at` of `b` (0 out of range); shared with the bitmap.
pub(super) fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes(b, at))
}

/// The little-endian `u64` at `at` of `b` (0 out of range).
pub(super) fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes(b, at))
}

/// Copies `v` into `b` at `at`, as far as `b` reaches.
pub(super) fn put(b: &mut [u8], at: usize, v: &[u8]) {
    if let Some(dst) = b.get_mut(at..) {
        for (d, s) in dst.iter_mut().zip(v) {
            *d = *s;
        }
    }
}

/// Bytes md's checksum covers for `max_dev` roles, or `None` on overflow.
fn covered(max_dev: u32) -> Option<usize> {
    usize::try_from(max_dev)
        .ok()?
        .checked_mul(2)?
        .checked_add(HEADER)
}

/// md's calc_sb_1_csum over `buf` (the field sb_csum counted as zero), for a superblock with
/// `max_dev` roles.
///
/// The sum of the little-endian 32-bit words of the first 256 + 2*max_dev bytes (a final
/// half word added as 16 bits), folded once from 64 to 32 bits. `None` when `buf` is shorter.
pub fn csum(buf: &[u8], max_dev: u32) -> Option<u32> {
    let sb = buf.get(..covered(max_dev)?)?;
    let words = sb.chunks_exact(4);
    let tail = words.remainder();
    let mut sum: u64 = 0;
    for (i, w) in words.enumerate() {
        if i * 4 != SB_CSUM {
            sum = sum.wrapping_add(u64::from(le32(w, 0)));
        }
    }
    if tail.len() == 2 {
        sum = sum.wrapping_add(u64::from(le16(tail, 0)));
    }
    // md truncates the folded sum to 32 bits.
    Some(((sum & 0xffff_ffff).wrapping_add(sum >> 32)) as u32)
}

/// Sectors the superblock takes with 512-byte blocks, the least md demands before data.
fn sb_sectors(max_dev: u32) -> u64 {
    covered(max_dev).map_or(u64::MAX, |n| n.div_ceil(512) as u64)
}

impl Superblock {
    /// A zeroed superblock with magic, major 1, max_dev and all dev_roles ROLE_SPARE.
    pub fn new(max_dev: u32) -> Self {
        Superblock {
            feature_map: 0,
            set_uuid: [0; 16],
            set_name: [0; 32],
            ctime: 0,
            level: 0,
            layout: 0,
            size: 0,
            chunksize: 0,
            raid_disks: 0,
            bitmap_offset: 0,
            new_level: 0,
            reshape_position: 0,
            delta_disks: 0,
            new_layout: 0,
            new_chunk: 0,
            new_offset: 0,
            data_offset: 0,
            data_size: 0,
            super_offset: 0,
            recovery_offset: 0,
            dev_number: 0,
            cnt_corrected_read: 0,
            device_uuid: [0; 16],
            devflags: 0,
            bblog_shift: 0,
            bblog_size: 0,
            bblog_offset: 0,
            utime: 0,
            events: 0,
            resync_offset: 0,
            max_dev,
            dev_roles: [ROLE_SPARE; MAX_DEV],
        }
    }

    /// Decodes `buf` read at sector `at` of a device.
    ///
    /// Makes every check md's super_1_load makes that does not need the device: magic, major,
    /// max_dev (here at most [`MAX_DEV`]), checksum, padding, data_size >= 10, unknown
    /// features, super_offset == `at`, for 1.1/1.2 data_offset (and a reshape's new one) past
    /// the superblock, the bad block log's bounds, and RAID0_LAYOUT only on level 0. It does
    /// NOT refuse known features rraid does not implement: [`Superblock::unsupported`] tells
    /// those; nor does it check that the data fits the device: [`Superblock::fits`] does.
    ///
    /// The superblock's own size is counted in 512-byte blocks; md counts the device's
    /// logical block, so on a 4K device the caller also checks `data_offset` against
    /// `super_offset + sb_bytes(lbs) / 512`.
    pub fn decode(buf: &[u8], version: Version, at: u64) -> Result<Self, SbError> {
        if buf.len() < HEADER {
            return Err(SbError::Short);
        }
        if le32(buf, MAGIC) != SB_MAGIC {
            return Err(SbError::NoMagic);
        }
        match le32(buf, MAJOR) {
            1 => {}
            0 => return Err(SbError::Version090),
            m => return Err(SbError::Major(m)),
        }
        let max_dev = le32(buf, MAX_DEV_FIELD);
        if max_dev as usize > MAX_DEV {
            return Err(SbError::MaxDev(max_dev));
        }
        let stored = le32(buf, SB_CSUM);
        let computed = csum(buf, max_dev).ok_or(SbError::Short)?;
        if stored != computed {
            return Err(SbError::Checksum { stored, computed });
        }
        let pad3 = buf.get(PAD3..HEADER).unwrap_or(&[]);
        if le32(buf, PAD0) != 0 || pad3.iter().any(|&b| b != 0) {
            return Err(SbError::Padding);
        }

        let mut sb = Superblock::new(max_dev);
        sb.feature_map = le32(buf, FEATURE_MAP);
        sb.set_uuid = bytes(buf, SET_UUID);
        sb.set_name = bytes(buf, SET_NAME);
        sb.ctime = le64(buf, CTIME);
        sb.level = le32(buf, LEVEL) as i32;
        sb.layout = le32(buf, LAYOUT);
        sb.size = le64(buf, SIZE);
        sb.chunksize = le32(buf, CHUNKSIZE);
        sb.raid_disks = le32(buf, RAID_DISKS);
        sb.bitmap_offset = le32(buf, BITMAP_OFFSET);
        sb.new_level = le32(buf, NEW_LEVEL);
        sb.reshape_position = le64(buf, RESHAPE_POSITION);
        sb.delta_disks = le32(buf, DELTA_DISKS);
        sb.new_layout = le32(buf, NEW_LAYOUT);
        sb.new_chunk = le32(buf, NEW_CHUNK);
        sb.new_offset = le32(buf, NEW_OFFSET);
        sb.data_offset = le64(buf, DATA_OFFSET);
        sb.data_size = le64(buf, DATA_SIZE);
        sb.super_offset = le64(buf, SUPER_OFFSET);
        sb.recovery_offset = le64(buf, RECOVERY_OFFSET);
        sb.dev_number = le32(buf, DEV_NUMBER);
        sb.cnt_corrected_read = le32(buf, CNT_CORRECTED_READ);
        sb.device_uuid = bytes(buf, DEVICE_UUID);
        sb.devflags = bytes::<1>(buf, DEVFLAGS)[0];
        sb.bblog_shift = bytes::<1>(buf, BBLOG_SHIFT)[0];
        sb.bblog_size = le16(buf, BBLOG_SIZE);
        sb.bblog_offset = le32(buf, BBLOG_OFFSET);
        sb.utime = le64(buf, UTIME);
        sb.events = le64(buf, EVENTS);
        sb.resync_offset = le64(buf, RESYNC_OFFSET);
        for (i, r) in sb.dev_roles.iter_mut().take(max_dev as usize).enumerate() {
            *r = le16(buf, HEADER + 2 * i);
        }

        if sb.data_size < 10 {
            return Err(SbError::DataSize);
        }
        if sb.feature_map & !FEATURE_ALL != 0 {
            return Err(SbError::UnknownFeature(sb.feature_map & !FEATURE_ALL));
        }
        if sb.super_offset != at {
            return Err(SbError::Offset {
                stored: sb.super_offset,
                expected: at,
            });
        }
        if version != Version::V1_0 {
            let first = at.saturating_add(sb_sectors(max_dev));
            if sb.data_offset < first || sb.new_data_offset().is_some_and(|o| o < first) {
                return Err(SbError::DataOffset);
            }
        }
        if sb.feature_map & FEATURE_BAD_BLOCKS != 0 {
            if sb.bblog_size > BBLOG_MAX_SECTORS || sb.bblog_offset == 0 || sb.bblog_shift >= 64 {
                return Err(SbError::BadBlockLog);
            }
        } else if sb.bblog_offset != 0 && sb.bblog_size > BBLOG_MAX_SECTORS {
            return Err(SbError::BadBlockLog);
        }
        if sb.feature_map & FEATURE_RAID0_LAYOUT != 0 && sb.level != 0 {
            return Err(SbError::Raid0Layout);
        }
        Ok(sb)
    }

    /// The data offset after the reshape (md's new_data_offset) when it differs, as md
    /// computes it: only with both RESHAPE_ACTIVE and NEW_OFFSET.
    fn new_data_offset(&self) -> Option<u64> {
        let both = FEATURE_RESHAPE_ACTIVE | FEATURE_NEW_OFFSET;
        if self.feature_map & both != both {
            return None;
        }
        let delta = i64::from(self.new_offset as i32);
        Some(self.data_offset.wrapping_add_signed(delta))
    }

    /// Whether `data_size` fits a device of `dev_sectors`: md's last check in super_1_load.
    ///
    /// 1.1/1.2: the data must end by the end of the device; 1.0: before the superblock.
    pub fn fits(&self, version: Version, dev_sectors: u64) -> bool {
        let room = match version {
            Version::V1_0 => version.sb_offset(dev_sectors),
            _ => dev_sectors.saturating_sub(self.data_offset),
        };
        self.data_size <= room
    }

    /// The first feature bit set that rraid does not implement, with md's name for it.
    ///
    /// Names: "bad blocks", "reshape", "reshape backwards", "new offset", "clustered",
    /// "journal", "ppl", "multiple ppls"; "unknown" for bits outside
    /// [`FEATURE_ALL`]. BAD_BLOCKS counts only when set: md sets it only for a non-empty log,
    /// and a reserved, empty log is fine.
    pub fn unsupported(&self) -> Option<(u32, &'static str)> {
        let bits = self.feature_map & !FEATURES_RRAID;
        if bits == 0 {
            return None;
        }
        let bit = 1u32 << bits.trailing_zeros();
        let name = match bit {
            FEATURE_RESHAPE_ACTIVE => "reshape",
            FEATURE_BAD_BLOCKS => "bad blocks",
            FEATURE_RESHAPE_BACKWARDS => "reshape backwards",
            FEATURE_NEW_OFFSET => "new offset",
            FEATURE_CLUSTERED => "clustered",
            FEATURE_JOURNAL => "journal",
            FEATURE_PPL => "ppl",
            FEATURE_MULTIPLE_PPLS => "multiple ppls",
            _ => "unknown",
        };
        Some((bit, name))
    }

    /// Bytes md writes: 256 + 2*max_dev rounded up to max(512, `lbs`), the device's logical
    /// block size.
    ///
    /// Saturates at `usize::MAX` for absurd values, which no buffer holds.
    pub fn sb_bytes(&self, lbs: u32) -> usize {
        let block = (lbs as usize).max(512);
        covered(self.max_dev)
            .and_then(|n| n.div_ceil(block).checked_mul(block))
            .unwrap_or(usize::MAX)
    }

    /// Encodes into `buf`, zeroing the whole buffer first and computing sb_csum.
    ///
    /// `buf` must hold at least `sb_bytes(512)` bytes, else [`SbError::Short`]; a `max_dev`
    /// above [`MAX_DEV`] is [`SbError::MaxDev`].
    pub fn encode(&self, buf: &mut [u8]) -> Result<(), SbError> {
        if self.max_dev as usize > MAX_DEV {
            return Err(SbError::MaxDev(self.max_dev));
        }
        if buf.len() < self.sb_bytes(512) {
            return Err(SbError::Short);
        }
        buf.fill(0);
        put(buf, MAGIC, &SB_MAGIC.to_le_bytes());
        put(buf, MAJOR, &1u32.to_le_bytes());
        put(buf, FEATURE_MAP, &self.feature_map.to_le_bytes());
        put(buf, SET_UUID, &self.set_uuid);
        put(buf, SET_NAME, &self.set_name);
        put(buf, CTIME, &self.ctime.to_le_bytes());
        put(buf, LEVEL, &self.level.to_le_bytes());
        put(buf, LAYOUT, &self.layout.to_le_bytes());
        put(buf, SIZE, &self.size.to_le_bytes());
        put(buf, CHUNKSIZE, &self.chunksize.to_le_bytes());
        put(buf, RAID_DISKS, &self.raid_disks.to_le_bytes());
        put(buf, BITMAP_OFFSET, &self.bitmap_offset.to_le_bytes());
        put(buf, NEW_LEVEL, &self.new_level.to_le_bytes());
        put(buf, RESHAPE_POSITION, &self.reshape_position.to_le_bytes());
        put(buf, DELTA_DISKS, &self.delta_disks.to_le_bytes());
        put(buf, NEW_LAYOUT, &self.new_layout.to_le_bytes());
        put(buf, NEW_CHUNK, &self.new_chunk.to_le_bytes());
        put(buf, NEW_OFFSET, &self.new_offset.to_le_bytes());
        put(buf, DATA_OFFSET, &self.data_offset.to_le_bytes());
        put(buf, DATA_SIZE, &self.data_size.to_le_bytes());
        put(buf, SUPER_OFFSET, &self.super_offset.to_le_bytes());
        put(buf, RECOVERY_OFFSET, &self.recovery_offset.to_le_bytes());
        put(buf, DEV_NUMBER, &self.dev_number.to_le_bytes());
        put(
            buf,
            CNT_CORRECTED_READ,
            &self.cnt_corrected_read.to_le_bytes(),
        );
        put(buf, DEVICE_UUID, &self.device_uuid);
        put(buf, DEVFLAGS, &[self.devflags, self.bblog_shift]);
        put(buf, BBLOG_SIZE, &self.bblog_size.to_le_bytes());
        put(buf, BBLOG_OFFSET, &self.bblog_offset.to_le_bytes());
        put(buf, UTIME, &self.utime.to_le_bytes());
        put(buf, EVENTS, &self.events.to_le_bytes());
        put(buf, RESYNC_OFFSET, &self.resync_offset.to_le_bytes());
        put(buf, MAX_DEV_FIELD, &self.max_dev.to_le_bytes());
        for (i, r) in self
            .dev_roles
            .iter()
            .take(self.max_dev as usize)
            .enumerate()
        {
            put(buf, HEADER + 2 * i, &r.to_le_bytes());
        }
        let sum = csum(buf, self.max_dev).ok_or(SbError::Short)?;
        put(buf, SB_CSUM, &sum.to_le_bytes());
        Ok(())
    }

    /// Role of this device by its own dev_roles[dev_number] (ROLE_SPARE when dev_number >=
    /// max_dev).
    pub fn own_role(&self) -> u16 {
        self.role_of(self.dev_number)
    }

    /// Role of device number `n` per this superblock ([`ROLE_SPARE`] beyond `max_dev`).
    pub fn role_of(&self, n: u32) -> u16 {
        if n >= self.max_dev {
            return ROLE_SPARE;
        }
        self.dev_roles
            .get(n as usize)
            .copied()
            .unwrap_or(ROLE_SPARE)
    }

    /// set_name up to its first NUL, as a str ("" if that is not UTF-8).
    pub fn name(&self) -> &str {
        let end = self
            .set_name
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.set_name.len());
        self.set_name
            .get(..end)
            .and_then(|s| core::str::from_utf8(s).ok())
            .unwrap_or("")
    }

    /// Sets set_name to at most 31 bytes of `s`, cut at a character boundary, NUL padded.
    pub fn set_name_str(&mut self, s: &str) {
        let mut n = s.len().min(self.set_name.len() - 1);
        // Index 0 is always a boundary, so this stops.
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        self.set_name = [0; 32];
        put(&mut self.set_name, 0, s.as_bytes().get(..n).unwrap_or(&[]));
    }
}

/// Where a 0.90 superblock lies on a device of `dev_sectors` (md's MD_NEW_SIZE_SECTORS):
/// (dev & !127) - 128, the last 64 KiB-aligned 64 KiB.
pub fn sb090_offset(dev_sectors: u64) -> u64 {
    (dev_sectors & !127).saturating_sub(128)
}

/// Whether `buf`, read at [`sb090_offset`], holds a 0.90 superblock.
///
/// 0.90 is in host order; rraid runs little-endian, so: the magic at byte 0 and major version
/// 0 at byte 4, both little endian.
pub fn probe_090(buf: &[u8]) -> bool {
    buf.len() >= 8 && le32(buf, 0) == SB_MAGIC && le32(buf, 4) == 0
}
