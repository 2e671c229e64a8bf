//! Host build of rraid's shared `no_std` code.
//!
//! `#![no_std]` here proves that `layout/`, `parity/`, `plan/` and `meta/` depend on `core` only:
//! the same files are compiled into `rraid.ko`.
#![no_std]

#[path = "../layout/mod.rs"]
pub mod layout;

#[path = "../parity/mod.rs"]
pub mod parity;

#[path = "../plan/mod.rs"]
pub mod plan;

#[path = "../meta/mod.rs"]
pub mod meta;
