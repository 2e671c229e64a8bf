//! md's write-intent bitmap on disk (md-bitmap.h's `bitmap_super_t`, mdadm 4.2's bitmap.c and
//! super1.c).
//!
//! An internal bitmap is a 256-byte superblock followed by one bit per chunk of the sync space,
//! little-endian bit order (md's `set_bit_le`): chunk `k`'s bit is bit `k % 8` of byte
//! `256 + k / 8`. It lies `bitmap_offset` sectors (signed) from the v1.x superblock.

use crate::meta::super1::{le32, le64, put, Version};

/// `BITMAP_MAGIC`: "bitm".
pub const BITMAP_MAGIC: u32 = 0x6d74_6962;
/// Oldest bitmap version md reads (host-endian bits).
pub const BITMAP_MAJOR_LO: u32 = 3;
/// The version md and mdadm write: little-endian bits.
pub const BITMAP_MAJOR_HI: u32 = 4;
/// md-cluster's bitmap.
pub const BITMAP_MAJOR_CLUSTERED: u32 = 5;
/// `sizeof(bitmap_super_t)`.
pub const SB_BYTES: usize = 256;
/// `state`: the bitmap is out of date; every chunk must be resynced.
pub const STATE_STALE: u32 = 1 << 1;
/// `state`: a bitmap write failed.
pub const STATE_WRITE_ERROR: u32 = 1 << 2;
/// mdadm's `DEFAULT_BITMAP_DELAY`: seconds between daemon passes.
pub const DEFAULT_DAEMON_SLEEP: u32 = 5;
/// md's `COUNTER_MAX`: the most write-behind a bitmap may ask for.
pub const COUNTER_MAX: u32 = 0x3fff;
/// The longest daemon sleep accepted from disk, in seconds (md accepts up to
/// `MAX_SCHEDULE_TIMEOUT / HZ`; anything over an hour is not a real array's).
pub const MAX_DAEMON_SLEEP: u32 = 60 * 60 * 24;

/// Why a bitmap superblock is refused (md's `md_bitmap_read_sb` reasons).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BitmapError {
    /// Fewer than 256 bytes.
    Short,
    /// No `BITMAP_MAGIC`.
    Magic,
    /// A version md does not know.
    Version(u32),
    /// Version 3: bits in host order, which rraid does not write.
    HostEndian,
    /// md-cluster's bitmap (version 5, or nodes set).
    Clustered,
    /// The chunk size is not a power of two of at least 512 bytes.
    ChunkSize,
    /// The daemon sleep is 0 or absurd.
    DaemonSleep,
    /// More write-behind than md's counters hold.
    WriteBehind,
    /// No room for the bitmap (mdadm: "No room for a bitmap").
    NoRoom,
    /// The chunk asked for is too small for the room, or not a power of two (mdadm: "Given
    /// bitmap chunk size not supported").
    ChunkTooSmall,
}

/// `bitmap_super_t`, with raw on-disk integers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct BitmapSuper {
    /// `BITMAP_MAGIC`.
    pub magic: u32,
    /// The bitmap version.
    pub version: u32,
    /// The array UUID.
    pub uuid: [u8; 16],
    /// The events of the superblocks when the bitmap was last written.
    pub events: u64,
    /// Events up to which writes reached every member.
    pub events_cleared: u64,
    /// Sectors of the sync space the bits cover.
    pub sync_size: u64,
    /// `STATE_*` bits.
    pub state: u32,
    /// Bytes per chunk.
    pub chunksize: u32,
    /// Seconds between daemon passes.
    pub daemon_sleep: u32,
    /// md's `write_behind`.
    pub write_behind: u32,
    /// Sectors reserved for the bitmap (md writes its `space`; 0 on 1.1/1.2).
    pub sectors_reserved: u32,
    /// md-cluster's nodes.
    pub nodes: u32,
    /// md-cluster's name.
    pub cluster_name: [u8; 64],
}

impl BitmapSuper {
    /// The superblock mdadm's `add_internal_bitmap1` writes for a new array: version 4,
    /// daemon sleep 5 s, no write-behind, no cluster.
    pub fn new(uuid: [u8; 16], chunksize: u32, sync_size: u64) -> Self {
        Self {
            magic: BITMAP_MAGIC,
            version: BITMAP_MAJOR_HI,
            uuid,
            events: 0,
            events_cleared: 0,
            sync_size,
            state: 0,
            chunksize,
            daemon_sleep: DEFAULT_DAEMON_SLEEP,
            write_behind: 0,
            sectors_reserved: 0,
            nodes: 0,
            cluster_name: [0; 64],
        }
    }

    /// Decodes the first 256 bytes of `buf`, with md's checks that need no device.
    pub fn decode(buf: &[u8]) -> Result<Self, BitmapError> {
        if buf.len() < SB_BYTES {
            return Err(BitmapError::Short);
        }
        let mut sb = Self::new([0; 16], 0, 0);
        sb.magic = le32(buf, 0);
        sb.version = le32(buf, 4);
        if let Some(u) = buf.get(8..24) {
            sb.uuid.copy_from_slice(u);
        }
        sb.events = le64(buf, 24);
        sb.events_cleared = le64(buf, 32);
        sb.sync_size = le64(buf, 40);
        sb.state = le32(buf, 48);
        sb.chunksize = le32(buf, 52);
        sb.daemon_sleep = le32(buf, 56);
        sb.write_behind = le32(buf, 60);
        sb.sectors_reserved = le32(buf, 64);
        sb.nodes = le32(buf, 68);
        if let Some(n) = buf.get(72..136) {
            sb.cluster_name.copy_from_slice(n);
        }
        if sb.magic != BITMAP_MAGIC {
            return Err(BitmapError::Magic);
        }
        match sb.version {
            BITMAP_MAJOR_HI => {}
            BITMAP_MAJOR_LO => return Err(BitmapError::HostEndian),
            BITMAP_MAJOR_CLUSTERED => return Err(BitmapError::Clustered),
            v => return Err(BitmapError::Version(v)),
        }
        if sb.nodes != 0 {
            return Err(BitmapError::Clustered);
        }
        if sb.chunksize < 512 || !sb.chunksize.is_power_of_two() {
            return Err(BitmapError::ChunkSize);
        }
        if sb.daemon_sleep < 1 || sb.daemon_sleep > MAX_DAEMON_SLEEP {
            return Err(BitmapError::DaemonSleep);
        }
        if sb.write_behind > COUNTER_MAX {
            return Err(BitmapError::WriteBehind);
        }
        Ok(sb)
    }

    /// Writes the 256 bytes of the superblock at the start of `buf` (padding zeroed).
    pub fn encode(&self, buf: &mut [u8]) -> Result<(), BitmapError> {
        let b = buf.get_mut(..SB_BYTES).ok_or(BitmapError::Short)?;
        b.fill(0);
        put(b, 0, &self.magic.to_le_bytes());
        put(b, 4, &self.version.to_le_bytes());
        put(b, 8, &self.uuid);
        put(b, 24, &self.events.to_le_bytes());
        put(b, 32, &self.events_cleared.to_le_bytes());
        put(b, 40, &self.sync_size.to_le_bytes());
        put(b, 48, &self.state.to_le_bytes());
        put(b, 52, &self.chunksize.to_le_bytes());
        put(b, 56, &self.daemon_sleep.to_le_bytes());
        put(b, 60, &self.write_behind.to_le_bytes());
        put(b, 64, &self.sectors_reserved.to_le_bytes());
        put(b, 68, &self.nodes.to_le_bytes());
        put(b, 72, &self.cluster_name);
        Ok(())
    }

    /// md's rule for a bitmap that cannot be trusted (`md_bitmap_read_sb`): marked stale, or
    /// written before the superblocks' last event. Assembly then counts every chunk as set.
    pub fn is_stale(&self, sb_events: u64) -> bool {
        self.state & STATE_STALE != 0 || self.events < sb_events
    }
}

/// mdadm's `bitmap_bits`: chunks over `sync_size` sectors, rounded up.
pub fn chunks(sync_size: u64, chunksize: u32) -> u64 {
    if chunksize == 0 {
        return 0;
    }
    let bytes = sync_size.saturating_mul(512);
    bytes.div_ceil(u64::from(chunksize))
}

/// mdadm's `calc_bitmap_size`: bytes of superblock and bits, rounded up to `boundary`.
pub fn bytes(sync_size: u64, chunksize: u32, boundary: u64) -> u64 {
    let raw = chunks(sync_size, chunksize)
        .div_ceil(8)
        .saturating_add(SB_BYTES as u64);
    if boundary == 0 {
        raw
    } else {
        raw.div_ceil(boundary).saturating_mul(boundary)
    }
}

/// Where chunk `chunk`'s bit lies in the bitmap: its byte from the bitmap's start (the
/// superblock's first byte) and its mask.
pub fn bit_pos(chunk: u64) -> (u64, u8) {
    (SB_BYTES as u64 + chunk / 8, 1u8 << (chunk % 8))
}

/// Whether chunk `chunk`'s bit is set in `region` (the bitmap from its start); false when
/// outside it.
pub fn test_bit(region: &[u8], chunk: u64) -> bool {
    let (at, mask) = bit_pos(chunk);
    usize::try_from(at)
        .ok()
        .and_then(|i| region.get(i))
        .is_some_and(|b| b & mask != 0)
}

/// Sets or clears chunk `chunk`'s bit in `region`; nothing when outside it.
pub fn set_bit(region: &mut [u8], chunk: u64, on: bool) {
    let (at, mask) = bit_pos(chunk);
    if let Some(b) = usize::try_from(at).ok().and_then(|i| region.get_mut(i)) {
        if on {
            *b |= mask;
        } else {
            *b &= !mask;
        }
    }
}

/// The dirty bits of the first `nchunks` chunks in `region`: what `mdadm -X` counts.
pub fn count_set(region: &[u8], nchunks: u64) -> u64 {
    (0..nchunks).filter(|&c| test_bit(region, c)).count() as u64
}

/// mdadm 4.2's `add_internal_bitmap1` when creating: the chunk size (bytes) and the bitmap's
/// offset from the superblock (sectors, signed) for a bitmap over `bits_size` sectors (the
/// component size on RAID 1/4/5/6, the array size on RAID 10) of an array whose component size
/// is `size`, with the chunk `chunk` asked for (bytes), or mdadm's default.
///
/// The room is what mdadm leaves: `choose_bm_space(size)` (1.0 before the superblock and its
/// bad-block log; 1.1/1.2 4 KiB after the superblock), 128 KiB at most without a chunk asked
/// for. The default chunk is the smallest that fits, at least 64 MiB.
pub fn add_internal(
    v: Version,
    bits_size: u64,
    size: u64,
    chunk: Option<u64>,
) -> Result<(u32, i32), BitmapError> {
    let bbl_size = 8u64;
    let mut room = crate::meta::super1::choose_bm_space(size) + bbl_size;
    let offset_fixed: Option<i64> = match v {
        Version::V1_0 => None,
        Version::V1_1 | Version::V1_2 => Some(8),
    };
    room -= bbl_size;
    if chunk.is_none() && room > 128 * 2 {
        room = 128 * 2;
    }
    if room <= 1 {
        return Err(BitmapError::NoRoom);
    }
    let max_bits = (room * 512 - SB_BYTES as u64) * 8;
    let mut min_chunk: u64 = 4096;
    let mut bits = bits_size.saturating_mul(512) / min_chunk + 1;
    while bits > max_bits {
        min_chunk *= 2;
        bits = bits.div_ceil(2);
    }
    let chunk = match chunk {
        None => min_chunk.max(64 * 1024 * 1024),
        Some(c) if c < min_chunk || !c.is_power_of_two() => return Err(BitmapError::ChunkTooSmall),
        Some(c) => c,
    };
    let chunk32 = u32::try_from(chunk).map_err(|_| BitmapError::ChunkTooSmall)?;
    let offset = match offset_fixed {
        Some(o) => o,
        None => {
            // Start on a 4 KiB boundary with room for the bits, before the bad-block log.
            let bits = bits_size.saturating_mul(512) / chunk + 1;
            let room4k = (bits.div_ceil(8) + SB_BYTES as u64).div_ceil(4096) * 8;
            -(room4k as i64) - bbl_size as i64
        }
    };
    let offset = i32::try_from(offset).map_err(|_| BitmapError::NoRoom)?;
    Ok((chunk32, offset))
}
