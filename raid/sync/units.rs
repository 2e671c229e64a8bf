//! The physical units that running sync jobs hold, module-wide.

use crate::raid::slots::Slots;
use crate::raid::ArrayName;
use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

/// The physical units (disks) that running jobs hold, so that arrays sharing a disk through
/// its partitions sync one at a time, as md's `md_do_sync` serialises them
/// (`match_mddev_units`): syncing two of them at once would only make the disk seek between
/// them. One for the module, shared by its arrays.
#[pin_data]
pub struct Units {
    /// Holes are jobs that ended.
    #[pin]
    claims: Mutex<Slots<Claim>>,
}

/// The units of one running job.
struct Claim {
    owner: usize,
    name: ArrayName,
    units: KVec<usize>,
}

impl Units {
    /// No job holds anything.
    pub fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                claims <- new_mutex!(Slots::new(), "rraid::sync_units"),
            }),
            GFP_KERNEL,
        )
    }

    /// Claims `units` for `owner`'s job, unless another array's job holds one of them: then
    /// returns that array's name.
    pub(super) fn claim(
        &self,
        owner: usize,
        name: ArrayName,
        units: KVec<usize>,
    ) -> Result<Option<ArrayName>> {
        let mut claims = self.claims.lock();
        let held = claims
            .iter()
            .find(|c| c.owner != owner && c.units.iter().any(|u| units.as_slice().contains(u)));
        if let Some(c) = held {
            return Ok(Some(c.name));
        }
        claims.put(Claim { owner, name, units })?;
        Ok(None)
    }

    /// Gives back what `owner`'s job held.
    pub(super) fn release(&self, owner: usize) {
        let gone = self.claims.lock().take(|c| c.owner == owner);
        drop(gone);
    }
}
