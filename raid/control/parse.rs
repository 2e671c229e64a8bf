//! Parsing of what users write to the control files.

use super::ArrayName;
use crate::layout::check_chunk;
use crate::layout::raid0::Raid0Layout;
use crate::layout::raid10::Raid10Layout;
use crate::layout::raid5::Algorithm;
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
    /// RAID 4, 5 or 6.
    Parity(u8),
    /// RAID 10.
    Raid10,
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
    /// Members declared identical (RAID 1/10) or parity declared right (RAID 4/5/6).
    pub assume_clean: bool,
    /// md's layout (RAID 4/5/6).
    pub layout: Option<Algorithm>,
    /// md's layout (RAID 10).
    pub layout10: Option<Raid10Layout>,
    /// md's RAID 0 layout of the zones past the first (RAID 0).
    pub raid0_layout: Raid0Layout,
    /// KiB used on each member (md's `component_size`).
    pub size_kib: Option<u64>,
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

/// Parses a size in KiB, with an optional suffix `K`, `M` or `G` (as mdadm's `--size`).
fn parse_size(v: &str) -> Option<u64> {
    let (num, mult) = match v.as_bytes().last()? {
        b'K' | b'k' => (&v[..v.len() - 1], 1u64),
        b'M' | b'm' => (&v[..v.len() - 1], 1024),
        b'G' | b'g' => (&v[..v.len() - 1], 1024 * 1024),
        _ => (v, 1),
    };
    if num.is_empty() || num.len() > 12 || !num.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let kib = num.parse::<u64>().ok()?.checked_mul(mult)?;
    (kib > 0).then_some(kib)
}

/// Parses `layout=`: mdadm's names and short aliases, or md's number, of layouts 0-5.
fn parse_layout(v: &str) -> Result<Algorithm, &'static str> {
    if let Some(a) = Algorithm::parse(v) {
        return Ok(a);
    }
    if let Ok(n) = v.parse::<u32>() {
        return Algorithm::from_number(n).ok_or(
            "create: layout not supported: only md's layouts 0-5 (no DDF, no RAID 6 '-6' layouts)",
        );
    }
    if v.starts_with("ddf") || v.ends_with("-6") {
        return Err("create: layout not supported: md's DDF and RAID 6 '-6' layouts are not");
    }
    Err("create: unknown layout")
}

/// The RAID 0 layout when `layout=` is not given: md's original layout, as mdadm chooses for
/// the arrays it creates (`RAID0_ORIG_LAYOUT`).
const DEFAULT_RAID0_LAYOUT: Raid0Layout = Raid0Layout::Original;

/// Parses `NAME [level=L] [layout=A] [chunk=C] [size=S] [assume-clean] DEVICE...`.
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
    let mut layout_text = None;
    let mut size_kib = None;
    let mut paths = KVec::new();
    for w in words {
        if let Some(v) = w.strip_prefix("level=") {
            if level.is_some() {
                return Err(CtlError::new(EINVAL, "create: level given twice", w));
            }
            level = Some(match v {
                "0" | "raid0" => LevelKind::Raid0,
                "1" | "raid1" => LevelKind::Raid1,
                "4" | "raid4" => LevelKind::Parity(4),
                "5" | "raid5" => LevelKind::Parity(5),
                "6" | "raid6" => LevelKind::Parity(6),
                "10" | "raid10" => LevelKind::Raid10,
                _ => return Err(CtlError::new(EINVAL, "create: unknown level", v)),
            });
        } else if let Some(v) = w.strip_prefix("layout=") {
            if layout_text.is_some() {
                return Err(CtlError::new(EINVAL, "create: layout given twice", w));
            }
            layout_text = Some(v);
        } else if let Some(v) = w.strip_prefix("size=") {
            if size_kib.is_some() {
                return Err(CtlError::new(EINVAL, "create: size given twice", w));
            }
            size_kib = Some(parse_size(v).ok_or(CtlError::new(
                EINVAL,
                "create: size must be a positive number of KiB, with optional suffix K, M or G",
                v,
            ))?);
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
    // The layout's spelling depends on the level, which may come after it.
    let (mut layout, mut layout10) = (None, None);
    let mut raid0_layout = DEFAULT_RAID0_LAYOUT;
    match (level, layout_text) {
        (_, None) => {}
        (LevelKind::Parity(_), Some(v)) => {
            layout = Some(parse_layout(v).map_err(|why| CtlError::new(EINVAL, why, v))?);
        }
        (LevelKind::Raid10, Some(v)) => {
            layout10 = Some(Raid10Layout::parse(v).ok_or(CtlError::new(
                EINVAL,
                "create: unknown RAID 10 layout (n2, n3, f2, o2, ..., or md's number)",
                v,
            ))?);
        }
        (LevelKind::Raid0, Some(v)) => {
            raid0_layout = Raid0Layout::parse(v).ok_or(CtlError::new(
                EINVAL,
                "create: unknown RAID 0 layout (original, alternate, 1 or 2)",
                v,
            ))?;
        }
        (LevelKind::Raid1, Some(v)) => {
            return Err(CtlError::new(
                EINVAL,
                "create: layout= is for RAID 0/4/5/6/10",
                v,
            ));
        }
    }
    match (level, layout) {
        (LevelKind::Parity(4), Some(a)) if a != Algorithm::ParityLast => {
            return Err(CtlError::new(
                EINVAL,
                "create: raid4 keeps parity on the last member (layout=parity-last)",
                a.name(),
            ));
        }
        _ => {}
    }
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
        layout,
        layout10,
        raid0_layout,
        size_kib,
        paths,
    })
}
