//! md's version 1 metadata, shared by the kernel module and the host tests.
//!
//! rraid keeps its arrays' state in md's own on-disk format, so that `mdadm --examine` reads
//! rraid's members and rraid assembles arrays that mdadm created:
//!
//! - [`super1`] encodes and decodes the v1.0, v1.1 and v1.2 superblock (`struct
//!   mdp_superblock_1` of md_p.h) bit for bit, with md's checksum and every check md's
//!   `super_1_load` makes on the buffer alone; it also holds mdadm 4.2's defaults for placing
//!   a new array on its devices (data offset, usable size, bad block log);
//! - [`assemble`] decides, as md's `analyze_sbs` and `super_1_validate` do, what each device of
//!   a set of decoded superblocks is in the array: a member in sync, a member being rebuilt, a
//!   replacement, a spare, or left out;
//! - [`bitmap`] encodes and decodes md's write-intent bitmap (`bitmap_super_t` and its bits)
//!   and places it as mdadm 4.2's `add_internal_bitmap1` does;
//! - [`events`] steps the event counter across updates as md_update_sb does, rolling a
//!   dirty mark back on the next clean one so that idle spares need no writes.
//!
//! # Shape
//!
//! A [`super1::Superblock`] is the decoded structure with raw on-disk integers; the byte
//! buffers are the caller's (the kernel reads [`super1::SB_BYTES`] at the superblock's sector).
//! Little-endian fields are read and written by hand, so the code is the same on any host.
//! The I/O, the clock, random UUIDs and the choice of what to write are the caller's: this
//! module only computes.
//!
//! # Contract
//!
//! Buffers come from devices and are untrusted: every function returns an error or a
//! neutral value on bad input and no path panics (no indexing that can fail, no unwrapping,
//! checked arithmetic where a sum could overflow). Nothing allocates; the largest value is a
//! [`super1::Superblock`], about 1 KiB. Only `core` is used.
//!
//! Units are 512-byte sectors, as in md's superblock.

// Safe code only: `unsafe` lives in `sys/` (and `parity/`'s SIMD).
#![deny(unsafe_code)]

pub mod assemble;
pub mod bitmap;
pub mod events;
pub mod super1;
