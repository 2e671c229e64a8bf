//! The portable reference implementation: 64-bit words, no vector registers.
//!
//! Multiplication by 2 works on eight bytes at once (lib/raid6's `int.uc` idea): the doubled
//! bytes, with 0x1d XORed into those whose top bit was set. Multiplication by other constants
//! goes through a 256-entry product table built per call.

use super::{gf, CpuFeatures, Impl, MulJob, PqJob, PqMode, Recov2Job, XorJob};

const HIGH: u64 = 0x8080_8080_8080_8080;

/// Multiplies each of the eight bytes of `v` by 2.
#[inline]
fn mul2_word(v: u64) -> u64 {
    let top = (v & HIGH) >> 7;
    ((v << 1) & !0x0101_0101_0101_0101) ^ top.wrapping_mul(0x1d)
}

/// Reads the word at byte `off`, or 0 past the end (which job invariants rule out).
#[inline]
fn rd(b: &[u8], off: usize) -> u64 {
    match b.get(off..off + 8) {
        Some(&[a0, a1, a2, a3, a4, a5, a6, a7]) => {
            u64::from_ne_bytes([a0, a1, a2, a3, a4, a5, a6, a7])
        }
        _ => 0,
    }
}

/// Writes the word at byte `off`; nothing past the end (which job invariants rule out).
#[inline]
fn wr(b: &mut [u8], off: usize, v: u64) {
    if let Some(s) = b.get_mut(off..off + 8) {
        s.copy_from_slice(&v.to_ne_bytes());
    }
}

fn valid(_: &CpuFeatures) -> bool {
    true
}

fn xor(job: &mut XorJob<'_, '_>) {
    for off in (job.start..job.end).step_by(8) {
        let mut w = if job.acc { rd(job.dst, off) } else { 0 };
        if let Some(f) = job.first {
            w ^= rd(f, off);
        }
        for s in job.srcs {
            w ^= rd(s, off);
        }
        wr(job.dst, off, w);
    }
}

fn pq(job: &mut PqJob<'_, '_>) {
    let tables = job.recov.map(|r| (table(r.a), table(r.b), r.p, r.q));
    for off in (job.start..job.end).step_by(8) {
        let (mut p, mut q) = match job.mode {
            PqMode::Carry => (job.p.as_deref().map_or(0, |p| rd(p, off)), rd(job.q, off)),
            PqMode::Fresh | PqMode::Xor => (0, 0),
        };
        for s in job.srcs.iter().rev() {
            let d = rd(s, off);
            q = mul2_word(q) ^ d;
            p ^= d;
        }
        for _ in 0..job.shift {
            q = mul2_word(q);
        }
        if job.mode == PqMode::Xor {
            p ^= job.p.as_deref().map_or(0, |p| rd(p, off));
            q ^= rd(job.q, off);
        }
        if let Some((ta, tb, rp, rq)) = &tables {
            // Two-data recovery: p and q become Dx and Dy.
            let px = (p ^ rd(rp, off)).to_ne_bytes();
            let qx = (q ^ rd(rq, off)).to_ne_bytes();
            let mut dx = [0u8; 8];
            let mut dy = [0u8; 8];
            for i in 0..8 {
                dx[i] = ta[px[i] as usize] ^ tb[qx[i] as usize];
                dy[i] = px[i] ^ dx[i];
            }
            p = u64::from_ne_bytes(dx);
            q = u64::from_ne_bytes(dy);
        }
        if let Some(pb) = job.p.as_deref_mut() {
            wr(pb, off, p);
        }
        wr(job.q, off, q);
    }
}

/// The products of every byte by `c`.
fn table(c: u8) -> [u8; 256] {
    let mut t = [0u8; 256];
    for (x, v) in t.iter_mut().enumerate() {
        *v = gf::mul(c, x as u8);
    }
    t
}

fn recov2(job: &mut Recov2Job<'_>) {
    let ta = table(job.a);
    let tb = table(job.b);
    let range = job.start..job.end;
    let (Some(p), Some(q), Some(dx), Some(dy)) = (
        job.p.get(range.clone()),
        job.q.get(range.clone()),
        job.dx.get_mut(range.clone()),
        job.dy.get_mut(range),
    ) else {
        return;
    };
    for (((p, q), dx), dy) in p.iter().zip(q).zip(dx.iter_mut()).zip(dy.iter_mut()) {
        let px = p ^ *dx;
        let qx = q ^ *dy;
        let x = ta[px as usize] ^ tb[qx as usize];
        *dx = x;
        *dy = px ^ x;
    }
}

fn mulc(job: &mut MulJob<'_>) {
    let t = table(job.c);
    let range = job.start..job.end;
    let (Some(a), Some(b)) = (job.a.get(range.clone()), job.b.get_mut(range)) else {
        return;
    };
    for (a, b) in a.iter().zip(b.iter_mut()) {
        *b = t[(a ^ *b) as usize];
    }
}

pub(super) const SCALAR: Impl = Impl {
    name: "scalar",
    priority: 0,
    valid,
    simd: false,
    fused_recov: true,
    xor,
    pq,
    recov2,
    mulc,
};
