//! rraid: software RAID for Linux, in Rust.
//!
//! Arrays are blk-mq disks `/dev/rraidN` created through `/sys/kernel/rraid/create`. Their
//! requests are mapped through the layout engines in `layout/` onto member block devices.
//! All contact with C is in `sys/`; `raid/` holds the arrays, `layout/` the pure arithmetic.

use kernel::prelude::*;

pub mod layout;
pub mod raid;
pub mod sys;

module! {
    type: Rraid,
    name: "rraid",
    author: "rraid developers",
    description: "Software RAID 0/1 with md-compatible layouts",
    license: "GPL",
}

struct Rraid {
    // Dropped first: no array exists at exit, since each holds a module reference.
    _control: sys::sysfs::SysfsDir<raid::control::Control>,
    // Dropped last: waits for queued work to leave module text.
    _wq: sys::workqueue::ModuleQueue,
}

impl kernel::Module for Rraid {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let wq = sys::workqueue::ModuleQueue::new()?;
        let control = raid::control::register(module, wq.handle())?;
        pr_info!("loaded\n");
        Ok(Self {
            _control: control,
            _wq: wq,
        })
    }
}
