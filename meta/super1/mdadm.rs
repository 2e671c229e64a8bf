//! mdadm 4.2's placement of a new array on its devices (super1.c and Create.c).
//!
//! These are the defaults `mdadm --create` picks when given no data offset, size or bitmap,
//! so that an array rraid creates looks like one mdadm would have made.

use super::{Version, BBLOG_MAX_SECTORS};

/// mdadm 4.2's choose_bm_space(devsize): sectors set aside for a bitmap.
///
/// 0 under 64 KiB; 8 (4 KiB) up to 8 GiB (+4 KiB); 128 (64 KiB) beyond; 256 (128 KiB) from
/// 200 GiB (+64 KiB).
pub fn choose_bm_space(dev_sectors: u64) -> u64 {
    if dev_sectors < 64 * 2 {
        0
    } else if dev_sectors - 64 * 2 >= 200 * 1024 * 1024 * 2 {
        128 * 2
    } else if dev_sectors - 4 * 2 > 8 * 1024 * 1024 * 2 {
        64 * 2
    } else {
        4 * 2
    }
}

/// mdadm 4.2's default data offset (validate_geometry1) for the first device of an array,
/// used for all.
///
/// 1.0: 0. 1.1/1.2: 24 + choose_bm_space(dev) + headroom, rounded up to 1 MiB, where the
/// headroom for a reshape starts at 128 MiB and halves while it is more than 1/1024 of the
/// device and (`chunk_sectors` == 0 || headroom/2 >= 2*chunk_sectors). `chunk_sectors` is 0
/// for RAID 1 (mdadm passes chunk 0 for level 1) and the chunk for striped levels (mdadm's
/// default 512K when none is given).
pub fn default_data_offset(v: Version, dev_sectors: u64, chunk_sectors: u64) -> u64 {
    if v == Version::V1_0 {
        return 0;
    }
    let mut headroom: u64 = 128 * 1024 * 2;
    while headroom.saturating_mul(1024) > dev_sectors
        && (chunk_sectors == 0 || headroom / 2 >= chunk_sectors.saturating_mul(2))
    {
        headroom >>= 1;
    }
    let raw = 12 * 2 + choose_bm_space(dev_sectors) + headroom;
    raw.div_ceil(2048) * 2048
}

/// Sectors of a device usable for data at `data_offset` (mdadm's freesize from
/// validate_geometry1 when creating); `None` if the overhead does not fit.
///
/// 1.0: (dev & !7) - (16 + 8 + choose_bm_space(dev)): superblock, bad block log and bitmap
/// space at the end (`data_offset` is not used). 1.1/1.2: dev - data_offset.
pub fn avail_sectors(v: Version, dev_sectors: u64, data_offset: u64) -> Option<u64> {
    match v {
        Version::V1_0 => (dev_sectors & !7).checked_sub(16 + 8 + choose_bm_space(dev_sectors)),
        _ => dev_sectors.checked_sub(data_offset),
    }
}

/// mdadm 4.2's component size (`sb->size`) for an array whose smallest device has
/// `min_avail` sectors from [`avail_sectors`] (Create.c).
///
/// RAID 0 and linear: 0 (md uses each device's whole data_size). RAID 1: rounded down to
/// 64 KiB, for a later reshape to RAID 5. Others: rounded down to the chunk.
pub fn default_size(level: i32, min_avail: u64, chunk_sectors: u64) -> u64 {
    match level {
        i32::MIN..=0 => 0,
        1 => min_avail & !127,
        _ if chunk_sectors == 0 => min_avail,
        _ => min_avail / chunk_sectors * chunk_sectors,
    }
}

/// Per-device placement mdadm's write_init_super1 writes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Placement {
    /// Sector of the superblock.
    pub super_offset: u64,
    /// First sector of data.
    pub data_offset: u64,
    /// Sectors usable for data.
    pub data_size: u64,
    /// Bad block log, signed sectors from the superblock (0: none).
    pub bblog_offset: u32,
    /// Sectors reserved for the bad block log (0: none).
    pub bblog_size: u16,
}

/// Per-device placement mdadm's write_init_super1 writes, given the device size, the array's
/// component size `size` (sb->size, sectors; 0 for RAID 0) and the data offset.
///
/// Without a bitmap, mdadm still keeps choose_bm_space(size) free after the superblock, and
/// reserves 8 sectors of bad block log (bblog_shift 0) when there is room:
///
/// - 1.0: the log and that space lie just before the superblock (log at -8); data_size is
///   everything before them, the space shrunk if the component would not fit;
/// - 1.1/1.2: data_size is dev - data_offset; the log follows the bitmap space at
///   8 + bm_space, or, when data starts too early, takes the 8 sectors before the data
///   (when those are at least 16 sectors past the superblock), else there is none.
///
/// Sizes that cannot hold the metadata saturate rather than fail; [`avail_sectors`] refuses
/// those first.
pub fn placement(v: Version, dev_sectors: u64, size: u64, data_offset: u64) -> Placement {
    place(v, dev_sectors, size, data_offset, choose_bm_space(size))
}

/// write_init_super1's placement with `bm_space` sectors kept for a bitmap.
fn place(v: Version, dev_sectors: u64, size: u64, data_offset: u64, bm_space: u64) -> Placement {
    let super_offset = v.sb_offset(dev_sectors);
    let mut p = Placement {
        super_offset,
        data_offset,
        data_size: 0,
        bblog_offset: 0,
        bblog_size: 0,
    };
    match v {
        Version::V1_0 => {
            // 8 more sectors for the bad block log.
            let mut space = bm_space + 8;
            if super_offset < size.saturating_add(space) {
                space = super_offset.saturating_sub(size);
            }
            p.data_size = super_offset.saturating_sub(space);
            if space >= 8 {
                p.bblog_size = BBLOG_MAX_SECTORS;
                p.bblog_offset = (-8i32) as u32;
            }
        }
        Version::V1_1 | Version::V1_2 => {
            // The bitmap (or its space) starts 4 KiB after the superblock.
            let bm_offset = 8;
            p.data_size = dev_sectors.saturating_sub(data_offset);
            if data_offset >= super_offset + bm_offset + bm_space + 8 {
                p.bblog_size = BBLOG_MAX_SECTORS;
                p.bblog_offset = (bm_offset + bm_space) as u32;
            } else if data_offset >= super_offset + 16 {
                p.bblog_size = BBLOG_MAX_SECTORS;
                p.bblog_offset = (data_offset - 8 - super_offset) as u32;
            }
        }
    }
    p
}

/// [`placement`] for an array with an internal bitmap of `bitmap_bytes` (mdadm's
/// `calc_bitmap_size(bms, 4096)`): write_init_super1 then counts the bitmap's own size where it
/// counts choose_bm_space without one (1.0: bitmap and bad block log before the superblock;
/// 1.1/1.2: the log after the bitmap, 4 KiB past the superblock).
pub fn placement_with_bitmap(
    v: Version,
    dev_sectors: u64,
    size: u64,
    data_offset: u64,
    bitmap_bytes: u64,
) -> Placement {
    place(
        v,
        dev_sectors,
        size,
        data_offset,
        bitmap_bytes.div_ceil(512),
    )
}
