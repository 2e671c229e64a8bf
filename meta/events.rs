//! md's event counter across superblock updates, with its clean/dirty rollback (md_update_sb).
//!
//! Every update bumps the count, except that an array marked clean again straight after a
//! dirty mark, with nothing else changed, rolls the count back: the spares, left unwritten
//! for the dirty mark, are then current again, so idle spares are not written on every
//! clean/dirty cycle.

/// An array's event counter, and whether its last step may be undone.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Events {
    /// The count the next superblocks carry.
    pub count: u64,
    /// md's can_decrease_events: the last step was a dirty mark that a clean mark may undo.
    pub can_decrease: bool,
}

impl Events {
    /// The counter of an array assembled or created at `count`, with no step to undo.
    pub fn new(count: u64) -> Self {
        Events {
            count,
            can_decrease: false,
        }
    }

    /// Steps the counter for one superblock update and returns md's `nospares`: whether
    /// spares one event behind may be left unwritten (see [`Events::needs_write`]).
    ///
    /// `clean_only`: the update is only a clean/dirty transition (md's MD_SB_CHANGE_CLEAN
    /// without MD_SB_CHANGE_DEVS). `degraded`: the array is degraded, when skipping spares is
    /// never allowed (a removed device could look current). `clean`: the update marks the
    /// array clean and fully in sync (md's in_sync with resync_offset MaxSector).
    pub fn step(&mut self, clean_only: bool, degraded: bool, clean: bool) -> bool {
        let nospares = clean_only && !degraded;
        if nospares && clean && self.can_decrease && self.count > 1 {
            self.count -= 1;
            self.can_decrease = false;
        } else {
            // md warns on a wrap that 64 bits never reach.
            self.count = self.count.saturating_add(1);
            self.can_decrease = nospares;
        }
        nospares
    }

    /// Whether a device whose superblock was last written at `sb_events` must be written in
    /// this update (md's sync_sbs): not when it is current, nor, with `nospares`, when it is
    /// a spare (in no slot) one event behind.
    pub fn needs_write(&self, sb_events: u64, spare: bool, nospares: bool) -> bool {
        let behind_one = sb_events.checked_add(1) == Some(self.count);
        !(sb_events == self.count || (nospares && spare && behind_one))
    }
}
