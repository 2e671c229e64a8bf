//! Parsing of what users write to the control files.

use super::ArrayName;
use crate::layout::check_chunk;
use kernel::prelude::*;

/// A refused control write: the error code and one line for dmesg.
pub struct CtlError<'a> {
    /// What write() returns.
    pub code: Error,
    /// Why, for the dmesg line.
    pub why: &'static str,
    /// The offending piece of input, or a member name.
    pub what: &'a str,
}

impl<'a> CtlError<'a> {
    /// An error with code `code`.
    pub fn new(code: Error, why: &'static str, what: &'a str) -> Self {
        // Echo at most 64 bytes: printk cuts long lines and loses their newline.
        let what = what.get(..64).unwrap_or(what);
        Self { code, why, what }
    }
}

impl From<Error> for CtlError<'_> {
    fn from(code: Error) -> Self {
        Self::new(code, "failed", "")
    }
}

impl From<kernel::alloc::AllocError> for CtlError<'_> {
    fn from(_: kernel::alloc::AllocError) -> Self {
        Self::new(ENOMEM, "out of memory", "")
    }
}

/// Levels rraid can create.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum LevelKind {
    /// RAID 0.
    Raid0,
    /// RAID 1.
    Raid1,
}

/// md's default chunk: 512 KiB.
const DEFAULT_CHUNK_SECTORS: u64 = 1024;
/// Longest member path accepted.
const MAX_PATH: usize = 255;

/// A parsed `create` line.
pub struct CreateSpec<'a> {
    /// Array name.
    pub name: ArrayName,
    /// The name as written.
    pub name_text: &'a str,
    /// Level.
    pub level: LevelKind,
    /// Chunk in sectors (ignored for RAID1).
    pub chunk_sectors: u64,
    /// Members declared identical.
    pub assume_clean: bool,
    /// Member device paths, in slot order.
    pub paths: KVec<&'a str>,
}

/// The input as text: printable ASCII and whitespace only, with surrounding space removed.
pub fn text(input: &[u8]) -> Result<&str, CtlError<'_>> {
    if !input
        .iter()
        .all(|&b| b.is_ascii_graphic() || b == b' ' || b == b'\t' || b == b'\n')
    {
        return Err(CtlError::new(EINVAL, "input holds non-printable bytes", ""));
    }
    // Checked above: ASCII only.
    let s = core::str::from_utf8(input).map_err(|_| CtlError::new(EINVAL, "bad input", ""))?;
    Ok(s.trim())
}

/// Parses a chunk size: a power of two from 4K to 16M, with suffix `K` or `M`.
fn parse_chunk(v: &str) -> Option<u64> {
    let (num, unit) = match v.as_bytes().last()? {
        b'K' | b'k' => (&v[..v.len() - 1], 1024u64),
        b'M' | b'm' => (&v[..v.len() - 1], 1024 * 1024),
        _ => return None,
    };
    if num.is_empty() || num.len() > 8 || !num.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let bytes = num.parse::<u64>().ok()?.checked_mul(unit)?;
    let sectors = bytes / 512;
    check_chunk(sectors).ok()?;
    Some(sectors)
}

/// Parses `NAME [level=L] [chunk=C] [assume-clean] DEVICE...`.
pub fn parse_create(input: &[u8]) -> Result<CreateSpec<'_>, CtlError<'_>> {
    let s = text(input)?;
    let mut words = s.split_ascii_whitespace();
    let first = words
        .next()
        .ok_or(CtlError::new(EINVAL, "create: empty line", ""))?;
    let name = ArrayName::parse(first.as_bytes()).ok_or(CtlError::new(
        EINVAL,
        "create: name must be rraid followed by 1 to 3 digits",
        first,
    ))?;
    let mut level = None;
    let mut chunk = None;
    let mut assume_clean = false;
    let mut paths = KVec::new();
    for w in words {
        if let Some(v) = w.strip_prefix("level=") {
            if level.is_some() {
                return Err(CtlError::new(EINVAL, "create: level given twice", w));
            }
            level = Some(match v {
                "0" | "raid0" => LevelKind::Raid0,
                "1" | "raid1" => LevelKind::Raid1,
                _ => return Err(CtlError::new(EINVAL, "create: unknown level", v)),
            });
        } else if let Some(v) = w.strip_prefix("chunk=") {
            if chunk.is_some() {
                return Err(CtlError::new(EINVAL, "create: chunk given twice", w));
            }
            chunk = Some(parse_chunk(v).ok_or(CtlError::new(
                EINVAL,
                "create: chunk must be a power of two from 4K to 16M, with suffix K or M",
                v,
            ))?);
        } else if w == "assume-clean" {
            assume_clean = true;
        } else if w.starts_with('/') {
            if w.len() > MAX_PATH {
                return Err(CtlError::new(EINVAL, "create: member path too long", ""));
            }
            if paths.len() >= crate::layout::MAX_MEMBERS {
                return Err(CtlError::new(EINVAL, "create: too many members", w));
            }
            paths.push(w, GFP_KERNEL)?;
        } else {
            return Err(CtlError::new(EINVAL, "create: unknown word", w));
        }
    }
    let level = level.ok_or(CtlError::new(EINVAL, "create: no level= given", first))?;
    if paths.len() < 2 {
        return Err(CtlError::new(
            EINVAL,
            "create: at least 2 members needed",
            first,
        ));
    }
    Ok(CreateSpec {
        name,
        name_text: first,
        level,
        chunk_sectors: chunk.unwrap_or(DEFAULT_CHUNK_SECTORS),
        assume_clean,
        paths,
    })
}
