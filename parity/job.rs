//! Kernel jobs: one call of one kernel over bytes `start..end` of every block.
//!
//! Each job is checked when it is made, so a kernel can trust its bounds; the kernels
//! ([`super::scalar`], [`super::x86`]) read the fields.

use super::{GRANULE, GROUP, MAX_DATA};

/// `dst = (acc ? dst : 0) ^ first ^ srcs[0] ^ ... ^ srcs[k-1]` over `start..end`.
///
/// # Invariants
///
/// - `srcs.len() <= GROUP`, and at least one of `acc`, `first`, `srcs` contributes a source;
/// - `start < end`, both multiples of [`GRANULE`], and every block is at least `end` long.
pub(super) struct XorJob<'s, 'd> {
    pub(super) srcs: &'s [&'s [u8]],
    pub(super) first: Option<&'s [u8]>,
    pub(super) dst: &'d mut [u8],
    pub(super) acc: bool,
    pub(super) start: usize,
    pub(super) end: usize,
}

impl<'s, 'd> XorJob<'s, 'd> {
    pub(super) fn new(
        srcs: &'s [&'s [u8]],
        first: Option<&'s [u8]>,
        dst: &'d mut [u8],
        acc: bool,
        start: usize,
        end: usize,
    ) -> Option<Self> {
        let ok = srcs.len() <= GROUP
            && (acc || first.is_some() || !srcs.is_empty())
            && range_ok(start, end)
            && dst.len() >= end
            && first.map_or(true, |f| f.len() >= end)
            && srcs.iter().all(|s| s.len() >= end);
        // INVARIANT: checked just above.
        ok.then_some(XorJob {
            srcs,
            first,
            dst,
            acc,
            start,
            end,
        })
    }
}

/// How a [`PqJob`] starts and ends.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum PqMode {
    /// Start from the highest source: `P = ^srcs`, `Q = Horner(srcs)`.
    Fresh,
    /// Continue Horner's rule from the P and Q in memory (the blocks above were done already).
    Carry,
    /// Fold in: `P ^= ^srcs`, `Q ^= g^shift * Horner(srcs)` (RMW).
    Xor,
}

/// The end of a fused two-data recovery: with the syndromes of the survivors in registers,
/// `P' = p ^ Pxy`, `Q' = q ^ Qxy`, `Dx = a*P' ^ b*Q'` and `Dy = P' ^ Dx` are stored in place of
/// Pxy and Qxy.
#[derive(Clone, Copy)]
pub(super) struct FusedRecov<'s> {
    pub(super) p: &'s [u8],
    pub(super) q: &'s [u8],
    pub(super) a: u8,
    pub(super) b: u8,
}

/// One Horner pass over `srcs` (ascending block indices, processed from the highest down):
/// for each source, `q = g*q ^ D`, `p ^= D`; then `q *= g^shift`; then, with `recov`, the
/// two-data recovery step of [`FusedRecov`].
///
/// # Invariants
///
/// - `1 <= srcs.len() <= GROUP`, `shift <= MAX_DATA`;
/// - `start < end`, both multiples of [`GRANULE`], and every block is at least `end` long;
/// - with `recov`, `p` is present and `mode` is not [`PqMode::Xor`].
pub(super) struct PqJob<'s, 'd> {
    pub(super) srcs: &'s [&'s [u8]],
    pub(super) p: Option<&'d mut [u8]>,
    pub(super) q: &'d mut [u8],
    pub(super) mode: PqMode,
    pub(super) shift: usize,
    pub(super) recov: Option<FusedRecov<'s>>,
    pub(super) start: usize,
    pub(super) end: usize,
}

impl<'s, 'd> PqJob<'s, 'd> {
    #[expect(clippy::too_many_arguments)]
    pub(super) fn new(
        srcs: &'s [&'s [u8]],
        p: Option<&'d mut [u8]>,
        q: &'d mut [u8],
        mode: PqMode,
        shift: usize,
        recov: Option<FusedRecov<'s>>,
        start: usize,
        end: usize,
    ) -> Option<Self> {
        let ok = !srcs.is_empty()
            && srcs.len() <= GROUP
            && shift <= MAX_DATA
            && range_ok(start, end)
            && q.len() >= end
            && p.as_ref().map_or(true, |p| p.len() >= end)
            && srcs.iter().all(|s| s.len() >= end)
            && recov.map_or(true, |r| {
                p.is_some() && mode != PqMode::Xor && r.p.len() >= end && r.q.len() >= end
            });
        // INVARIANT: checked just above.
        ok.then_some(PqJob {
            srcs,
            p,
            q,
            mode,
            shift,
            recov,
            start,
            end,
        })
    }
}

/// Two-data recovery: with `P' = p ^ dx` and `Q' = q ^ dy` (`dx`, `dy` hold Pxy and Qxy on
/// entry), `dx = a*P' ^ b*Q'` and `dy = P' ^ dx`.
///
/// # Invariants
///
/// `start < end`, both multiples of [`GRANULE`], and every block is at least `end` long.
pub(super) struct Recov2Job<'a> {
    pub(super) p: &'a [u8],
    pub(super) q: &'a [u8],
    pub(super) dx: &'a mut [u8],
    pub(super) dy: &'a mut [u8],
    pub(super) a: u8,
    pub(super) b: u8,
    pub(super) start: usize,
    pub(super) end: usize,
}

impl<'a> Recov2Job<'a> {
    #[expect(clippy::too_many_arguments)]
    pub(super) fn new(
        p: &'a [u8],
        q: &'a [u8],
        dx: &'a mut [u8],
        dy: &'a mut [u8],
        a: u8,
        b: u8,
        start: usize,
        end: usize,
    ) -> Option<Self> {
        let ok = range_ok(start, end)
            && p.len() >= end
            && q.len() >= end
            && dx.len() >= end
            && dy.len() >= end;
        // INVARIANT: checked just above.
        ok.then_some(Recov2Job {
            p,
            q,
            dx,
            dy,
            a,
            b,
            start,
            end,
        })
    }
}

/// Multiplication by a constant: `b = c * (a ^ b)`.
///
/// # Invariants
///
/// `start < end`, both multiples of [`GRANULE`], and both blocks are at least `end` long.
pub(super) struct MulJob<'a> {
    pub(super) a: &'a [u8],
    pub(super) b: &'a mut [u8],
    pub(super) c: u8,
    pub(super) start: usize,
    pub(super) end: usize,
}

impl<'a> MulJob<'a> {
    pub(super) fn new(
        a: &'a [u8],
        b: &'a mut [u8],
        c: u8,
        start: usize,
        end: usize,
    ) -> Option<Self> {
        let ok = range_ok(start, end) && a.len() >= end && b.len() >= end;
        // INVARIANT: checked just above.
        ok.then_some(MulJob {
            a,
            b,
            c,
            start,
            end,
        })
    }
}

fn range_ok(start: usize, end: usize) -> bool {
    start < end && start % GRANULE == 0 && end % GRANULE == 0
}
