//! rraid: software RAID for Linux, in Rust.
//!
//! Arrays are blk-mq disks `/dev/rraidN` created through `/sys/kernel/rraid/create`. Their
//! requests are mapped through the layout engines in `layout/` onto member block devices.
//! All contact with C is in `sys/`; `raid/` holds the arrays, `layout/` the pure arithmetic.

// `try_pin_init!` of `Array` expands one level per field.
#![recursion_limit = "256"]

use kernel::{c_str, prelude::*};

pub mod layout;
pub mod meta;
pub mod parity;
pub mod plan;
pub mod raid;
pub mod sys;

module! {
    type: Rraid,
    name: "rraid",
    author: "rraid developers",
    description: "Software RAID 0/1/4/5/6/10 with md-compatible layouts",
    license: "GPL",
}

struct Rraid {
    // First to go: it reaches the arrays through the registry.
    _reboot: Pin<KBox<sys::reboot::RebootNotifier<raid::control::stat::Registry>>>,
    // `/proc/rraidstat`, gone before the arrays' list it shows.
    _stat: sys::procfs::ProcFile<raid::control::stat::Registry>,
    _parity: sys::sysfs::SysfsDir<raid::engines::Engines>,
    // Dropped after `parity`, its subdirectory. No array exists at exit, since each holds a
    // module reference.
    _control: sys::sysfs::SysfsDir<raid::control::Control>,
    // Dropped last: wait for queued work to leave module text.
    _wq: sys::workqueue::ModuleQueue,
    _stripe_wq: sys::workqueue::ModuleQueue,
}

impl kernel::Module for Rraid {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let wq = sys::workqueue::ModuleQueue::new(c_str!("rraid"))?;
        let stripe_wq = sys::workqueue::ModuleQueue::new(c_str!("rraid_stripe"))?;
        let engines = KBox::pin(raid::engines::Engines::select()?, GFP_KERNEL)?;
        let control = raid::control::register(module, wq.handle(), stripe_wq.handle())?;
        let parity = sys::sysfs::SysfsDir::new(&control.as_parent(), c_str!("parity"), engines)?;
        let stat =
            sys::procfs::ProcFile::new(c_str!("rraidstat"), control.data().registry().clone())?;
        let reboot = sys::reboot::RebootNotifier::new(control.data().registry().clone())?;
        pr_info!("loaded\n");
        Ok(Self {
            _reboot: reboot,
            _stat: stat,
            _parity: parity,
            _control: control,
            _wq: wq,
            _stripe_wq: stripe_wq,
        })
    }
}
