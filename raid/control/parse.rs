//! Parsing of what users write to the control files.

use super::ArrayName;
use crate::layout::check_chunk;
use crate::layout::raid0::Raid0Layout;
use crate::layout::raid10::Raid10Layout;
use crate::layout::raid5::Algorithm;
use crate::meta::super1::Version;
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
    /// md's superblock version (`metadata=`, default 1.2 as mdadm's); `None` for
    /// `metadata=none`: no superblock, data from sector 0.
    pub metadata: Option<Version>,
    /// `data_offset=`: sectors before the data on each member (1.1/1.2).
    pub data_offset: Option<u64>,
    /// `uuid=`: the array UUID (random without it).
    pub uuid: Option<[u8; 16]>,
    /// `name=`: the superblock's name (default the array's name).
    pub sb_name: Option<&'a str>,
    /// `bitmap=internal`: md's write-intent bitmap beside the superblock.
    pub bitmap: bool,
    /// `bitmap_chunk=`: its chunk in bytes (mdadm's `--bitmap-chunk`, KiB); mdadm's choice
    /// (at least 64 MiB) without it.
    pub bitmap_chunk: Option<u64>,
    /// Member device paths, in slot order.
    pub paths: KVec<&'a str>,
}

/// Parses `data_offset=`: KiB (mdadm's unit) with optional suffix `K`, `M`, `G`, or sectors
/// with suffix `s`.
fn parse_offset(v: &str) -> Option<u64> {
    if let Some(n) = v.strip_suffix('s') {
        if n.is_empty() || n.len() > 15 || !n.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        return n.parse().ok();
    }
    parse_size(v)?.checked_mul(2)
}

/// Parses an md UUID: 32 hex digits, optionally grouped by `:`, `-`, `.` or spaces (mdadm
/// prints `8:8:8:8`).
pub fn parse_uuid(v: &str) -> Option<[u8; 16]> {
    let mut out = [0u8; 16];
    let mut n = 0usize;
    for c in v.bytes() {
        if matches!(c, b':' | b'-' | b'.') {
            continue;
        }
        let d = (c as char).to_digit(16)? as u8;
        let byte = out.get_mut(n / 2)?;
        *byte = (*byte << 4) | d;
        n += 1;
    }
    (n == 32).then_some(out)
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

/// Parses `NAME [level=L] [layout=A] [chunk=C] [size=S] [metadata=V] [data_offset=O]
/// [uuid=U] [name=N] [bitmap=internal|none] [bitmap_chunk=B] [assume-clean] DEVICE...`.
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
    let mut metadata = Some(Version::V1_2);
    let mut metadata_given = false;
    let mut data_offset = None;
    let mut uuid = None;
    let mut sb_name = None;
    let mut bitmap = None;
    let mut bitmap_chunk = None;
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
        } else if let Some(v) = w.strip_prefix("metadata=") {
            if metadata_given {
                return Err(CtlError::new(EINVAL, "create: metadata given twice", w));
            }
            metadata_given = true;
            metadata = match v {
                "none" => None,
                "0.90" | "0.9" | "0" => {
                    return Err(CtlError::new(
                        EINVAL,
                        "create: metadata 0.90 is not supported (1.0, 1.1, 1.2 or none)",
                        v,
                    ))
                }
                _ => Some(Version::parse(v).ok_or(CtlError::new(
                    EINVAL,
                    "create: unknown metadata (1.0, 1.1, 1.2 or none)",
                    v,
                ))?),
            };
        } else if let Some(v) = w.strip_prefix("data_offset=") {
            data_offset = Some(parse_offset(v).ok_or(CtlError::new(
                EINVAL,
                "create: data_offset must be KiB (suffix K, M, G) or sectors (suffix s)",
                v,
            ))?);
        } else if let Some(v) = w.strip_prefix("uuid=") {
            uuid = Some(parse_uuid(v).ok_or(CtlError::new(
                EINVAL,
                "create: uuid must be 32 hex digits (8:8:8:8)",
                v,
            ))?);
        } else if let Some(v) = w.strip_prefix("name=") {
            if v.is_empty() || v.len() > 31 {
                return Err(CtlError::new(
                    EINVAL,
                    "create: name must be 1 to 31 bytes",
                    v,
                ));
            }
            sb_name = Some(v);
        } else if let Some(v) = w.strip_prefix("bitmap=") {
            if bitmap.is_some() {
                return Err(CtlError::new(EINVAL, "create: bitmap given twice", w));
            }
            bitmap = Some(match v {
                "internal" => true,
                "none" => false,
                _ => {
                    return Err(CtlError::new(
                        EINVAL,
                        "create: bitmap must be internal or none",
                        v,
                    ))
                }
            });
        } else if let Some(v) = w.strip_prefix("bitmap_chunk=") {
            if bitmap_chunk.is_some() {
                return Err(CtlError::new(EINVAL, "create: bitmap_chunk given twice", w));
            }
            let kib = parse_size(v)
                .filter(|k| k.is_power_of_two() && *k >= 4 && *k <= 1 << 30)
                .ok_or(CtlError::new(
                    EINVAL,
                    "create: bitmap_chunk must be a power of two from 4K, KiB or suffix K, M, G",
                    v,
                ))?;
            bitmap_chunk = Some(kib * 1024);
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
    match (metadata, data_offset) {
        (None, Some(_)) => {
            return Err(CtlError::new(
                EINVAL,
                "create: data_offset needs metadata 1.1 or 1.2",
                first,
            ))
        }
        (Some(Version::V1_0), Some(o)) if o != 0 => {
            return Err(CtlError::new(
                EINVAL,
                "create: metadata 1.0 keeps its data at sector 0",
                first,
            ))
        }
        _ => {}
    }
    let bitmap = bitmap.unwrap_or(false);
    if bitmap_chunk.is_some() && !bitmap {
        return Err(CtlError::new(
            EINVAL,
            "create: bitmap_chunk needs bitmap=internal",
            first,
        ));
    }
    if bitmap && metadata.is_none() {
        return Err(CtlError::new(
            EINVAL,
            "create: bitmap=internal needs metadata 1.0, 1.1 or 1.2",
            first,
        ));
    }
    if bitmap && level == LevelKind::Raid0 {
        return Err(CtlError::new(
            EINVAL,
            "create: RAID 0 has no bitmap: nothing to resync",
            first,
        ));
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
        metadata,
        data_offset,
        uuid,
        sb_name,
        bitmap,
        bitmap_chunk,
        paths,
    })
}
