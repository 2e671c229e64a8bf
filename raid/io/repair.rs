//! Member read errors, handled as md handles them.
//!
//! A read that fails with a media error is retried elsewhere, and the failing member is
//! repaired first: the good data is written over the bad blocks and read back (md's
//! `fix_read_error`, "read error corrected"). A member whose rewrite or re-read fails is failed.
//! So a member with a few bad blocks heals, and a dead one stops serving reads.
//!
//! [`Array::fix_read_error`] is the level-independent part: it takes where the good data comes
//! from as a closure, so that RAID 10 (another copy) and RAID 5/6 (reconstruction from the
//! stripe) reuse it. It runs on rraid's workers, in task context, one repair at a time per array.

use crate::raid::Array;
use kernel::page::{Page, PAGE_SIZE};
use kernel::prelude::*;

/// Sectors repaired per step: one page.
const STEP: u64 = (PAGE_SIZE >> 9) as u64;

impl Array {
    /// Rewrites `[sector, sector + len)` of member `bad` with good data and reads it back.
    ///
    /// `read_good(page, sector, bytes)` fills `page` with the good data of `bytes` bytes at
    /// member sector `sector`, or returns `false` when no good copy could be read. Returns
    /// whether the member now holds the data; if not, the member has been failed (unless it is
    /// the last in sync, which md keeps too).
    pub(crate) fn fix_read_error(
        &self,
        bad: usize,
        sector: u64,
        len: u64,
        mut read_good: impl FnMut(&Page, u64, usize) -> bool,
    ) -> bool {
        let Some(member) = self.dev(bad) else {
            return false;
        };
        let page = self.repair_page.lock();
        let mut s = sector;
        while s < sector + len {
            let n = STEP.min(sector + len - s);
            let bytes = (n << 9) as usize;
            let why = if !read_good(&page, s, bytes) {
                Some("no other copy could be read")
            } else if member.sync_io(s, &page, bytes, true).is_err() {
                Some("rewrite failed")
            } else if member.sync_io(s, &page, bytes, false).is_err() {
                Some("re-read failed")
            } else {
                None
            };
            if let Some(why) = why {
                pr_err!(
                    "{}: unrecoverable read error at sector {} on {}: {}\n",
                    self.name(),
                    s,
                    member.name(),
                    why
                );
                // Refused only for the last in-sync member, which stays (md keeps it too).
                let _ = self.fail_member(bad);
                return false;
            }
            s += n;
        }
        pr_info!(
            "{}: read error corrected ({} sectors at {} on {})\n",
            self.name(),
            len,
            sector,
            member.name()
        );
        true
    }
}
