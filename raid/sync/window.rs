//! The page buffers of one sync window, which the level reads, compares and writes.

use crate::sys::pagebuf::PageBuf;
use kernel::prelude::*;

/// md's RAID 1 compare unit, and its `mismatch_cnt` step: 64 KiB.
pub(crate) const BLOCK_SECTORS: u64 = 128;
/// Most compare blocks in a window (1 MiB per member).
pub(crate) const MAX_BLOCKS: usize = 16;
/// Most copies of a block a window reads (RAID 1 members are limited to this for check).
pub(crate) const MAX_COPIES: usize = crate::layout::MAX_MEMBERS;
/// Memory the thread reads at once, over all members: 1 MiB.
pub(crate) const WINDOW_BYTES: usize = 1 << 20;

/// Page buffers of one window: `members` rows of `pages` pages (their bios come from the
/// array's sync bioset).
pub struct Window {
    pub(crate) rows: KVec<KVec<PageBuf>>,
    /// Sectors per compare block: md's `mismatch_cnt` unit (RAID 1: 64 KiB; RAID 10: the
    /// same, at most a chunk).
    pub(crate) block: u64,
    /// Per block of the last compare: the members that differ from row 0.
    pub(crate) bad: [u64; MAX_BLOCKS],
    /// Other I/O was in flight when the window started: the level syncs it on this thread
    /// alone, leaving the other CPUs to that I/O.
    pub(crate) solo: bool,
}

impl Window {
    /// `rows` rows of `pages` pages each, compared in blocks of `block` sectors.
    pub(crate) fn new(rows: usize, pages: usize, block: u64) -> Result<Self> {
        let mut v = KVec::with_capacity(rows, GFP_KERNEL)?;
        for _ in 0..rows {
            let mut row = KVec::with_capacity(pages, GFP_KERNEL)?;
            for _ in 0..pages {
                row.push(PageBuf::new(false)?, GFP_KERNEL)?;
            }
            v.push(row, GFP_KERNEL)?;
        }
        Ok(Self {
            rows: v,
            block,
            bad: [0; MAX_BLOCKS],
            solo: false,
        })
    }
}
