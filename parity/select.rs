//! Load-time selection: self-test, benchmark, and the walk over [`IMPLS`](super::IMPLS).
//!
//! Everything works on caller-provided scratch memory ([`SCRATCH_BYTES`]) and a caller-provided
//! clock, so the kernel module can run it at init with pages it allocated and `ktime_get_ns`.

use super::{CpuFeatures, Engine, Error, Fpu, Impl, Op, IMPLS};

/// Data blocks of the self-test stripe.
const TEST_DATA: usize = 12;
/// Block length of the self-test stripe: not a multiple of 256, so unrolled loops run their
/// tails too.
const TEST_BLOCK: usize = 1088;

/// Data blocks of the benchmark stripe.
pub const BENCH_DATA: usize = 8;
/// Block length of the benchmark stripe (a page).
pub const BENCH_BLOCK: usize = 4096;

/// Scratch memory that [`self_test`], [`bench`] and [`select`] need, in bytes.
pub const SCRATCH_BYTES: usize = max((TEST_DATA + 6) * TEST_BLOCK, (BENCH_DATA + 4) * BENCH_BLOCK);

const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

/// FNV-1a hashes of P and Q of the known-answer stripe, and their first eight bytes, computed
/// independently (a separate GF(2^8) implementation in Python).
const KAT_P_FNV: u64 = 0x7a49_a438_58a4_57ed;
const KAT_Q_FNV: u64 = 0xc63a_ede9_7974_4641;
const KAT_P_HEAD: [u8; 8] = [0x00, 0x28, 0xdc, 0x70, 0x12, 0x50, 0xbd, 0x2e];
const KAT_Q_HEAD: [u8; 8] = [0x20, 0x3d, 0xc8, 0xae, 0x95, 0x7d, 0x3a, 0xec];

/// Byte `j` of data block `i` of the known-answer stripe.
fn kat_byte(i: usize, j: usize) -> u8 {
    ((i * 29 + j * 7 + ((i * j) >> 3)) ^ 0xa5) as u8
}

fn fnv1a(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &x in b {
        h ^= x as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A small xorshift generator for the random stripes.
struct Rng(u64);

impl Rng {
    fn fill(&mut self, b: &mut [u8]) {
        for chunk in b.chunks_mut(8) {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            for (d, s) in chunk.iter_mut().zip(self.0.to_le_bytes()) {
                *d = s;
            }
        }
    }
}

fn check(ok: bool) -> Result<(), Error> {
    if ok {
        Ok(())
    } else {
        Err(Error::SelfTestFailed)
    }
}

/// Fills `out` with the blocks of `data` whose index is not in `skip`; returns how many.
fn survivors<'a>(data: &[&'a [u8]], skip: &[usize], out: &mut [&'a [u8]]) -> usize {
    let mut k = 0;
    for (i, d) in data.iter().enumerate() {
        if !skip.contains(&i) {
            if let Some(slot) = out.get_mut(k) {
                *slot = d;
                k += 1;
            }
        }
    }
    k
}

/// Self-tests `imp` against the scalar reference and the known-answer vectors.
///
/// Uses the first [`SCRATCH_BYTES`] of `scratch`; `seed` varies the random data (any non-zero
/// value). Returns [`Error::Unsupported`] when the CPU lacks the implementation's features and
/// [`Error::SelfTestFailed`] on any mismatch.
pub fn self_test(
    imp: &'static Impl,
    cpu: &CpuFeatures,
    fpu: &dyn Fpu,
    scratch: &mut [u8],
    seed: u64,
) -> Result<(), Error> {
    const N: usize = TEST_DATA;
    const B: usize = TEST_BLOCK;
    let e = Engine::new(imp, cpu)?;
    let r = Engine::scalar();
    if scratch.len() < SCRATCH_BYTES {
        return Err(Error::ScratchTooSmall);
    }
    let (data_area, rest) = scratch.split_at_mut(N * B);
    let mut it = rest.chunks_exact_mut(B);
    let mut next = || it.next().ok_or(Error::ScratchTooSmall);
    let (rp, rq, p, q, dx, dy) = (next()?, next()?, next()?, next()?, next()?, next()?);

    // Known answers: the fixed stripe, and 2 * 0x80, which is 0x1d in md's field but 0x1b in
    // AES's (the field of `vgf2p8mulb`).
    for (i, blk) in data_area.chunks_exact_mut(B).enumerate() {
        for (j, b) in blk.iter_mut().enumerate() {
            *b = kat_byte(i, j);
        }
    }
    {
        let mut di = data_area.chunks_exact(B);
        let data: [&[u8]; N] = core::array::from_fn(|_| di.next().unwrap_or(&[]));
        e.gen_syndrome(fpu, &data, p, q)?;
        check(fnv1a(p) == KAT_P_FNV && fnv1a(q) == KAT_Q_FNV)?;
        check(p.get(..8) == Some(&KAT_P_HEAD[..]) && q.get(..8) == Some(&KAT_Q_HEAD[..]))?;
    }
    {
        let (d0, d1) = data_area.split_at_mut(B);
        d0.get_mut(..B).ok_or(Error::ScratchTooSmall)?.fill(0);
        d1.get_mut(..B).ok_or(Error::ScratchTooSmall)?.fill(0x80);
        let data: [&[u8]; 2] = [d0, d1.get(..B).unwrap_or(&[])];
        e.gen_syndrome(fpu, &data, p, q)?;
        check(p.iter().all(|&b| b == 0x80) && q.iter().all(|&b| b == 0x1d))?;
    }

    // Random data against the scalar reference.
    Rng(seed | 1).fill(data_area);
    let mut di = data_area.chunks_exact(B);
    let data: [&[u8]; N] = core::array::from_fn(|_| di.next().unwrap_or(&[]));

    e.xor_gen(fpu, p, &data)?;
    r.xor_gen(fpu, rp, &data)?;
    check(p == rp)?;

    r.gen_syndrome(fpu, &data, rp, rq)?;
    e.gen_syndrome(fpu, &data, p, q)?;
    check(p == rp && q == rq)?;

    e.regen_q(fpu, &data, dy)?;
    check(dy == rq)?;

    for (start, stop) in [(0, 0), (3, 5), (N - 1, N - 1), (0, N - 1)] {
        let part = data.get(start..=stop).ok_or(Error::BadIndex)?;
        e.xor_syndrome(fpu, start, part, p, q)?;
        r.xor_syndrome(fpu, start, part, rp, rq)?;
        check(p == rp && q == rq)?;
    }
    // Both are now the syndromes of the data with the four ranges folded out; regenerate.
    e.gen_syndrome(fpu, &data, p, q)?;

    let mut surv: [&[u8]; N] = [&[]; N];
    for (x, y) in [(0, 1), (3, 7), (0, N - 1), (N - 2, N - 1)] {
        let k = survivors(&data, &[x, y], &mut surv);
        e.recover_2data(fpu, x, y, surv.get(..k).unwrap_or(&[]), p, q, dx, dy)?;
        check(Some(&*dx) == data.get(x).copied() && Some(&*dy) == data.get(y).copied())?;
    }
    for x in [0, 5, N - 1] {
        let k = survivors(&data, &[x], &mut surv);
        e.recover_data_q(fpu, x, surv.get(..k).unwrap_or(&[]), q, dx, dy)?;
        check(Some(&*dx) == data.get(x).copied() && *dy == *p)?;
        e.recover_data_p(fpu, surv.get(..k).unwrap_or(&[]), p, dx)?;
        check(Some(&*dx) == data.get(x).copied())?;
    }
    Ok(())
}

/// Measures `op` of `imp` on a stripe of [`BENCH_DATA`] blocks of [`BENCH_BLOCK`] bytes, and
/// returns the throughput in data-block bytes per second.
///
/// Runs the operation until `budget_ns` nanoseconds have passed on `clock` or `max_iters`
/// iterations are done, whichever comes first; each iteration is one stripe (at most
/// `(BENCH_DATA + 2) * BENCH_BLOCK` bytes, one FPU section). RMW folds one changed block;
/// recovery rebuilds two data blocks; all count the whole stripe's data bytes, as lib/raid6's
/// benchmark does.
#[expect(clippy::too_many_arguments)]
pub fn bench(
    imp: &'static Impl,
    op: Op,
    cpu: &CpuFeatures,
    fpu: &dyn Fpu,
    clock: &dyn Fn() -> u64,
    scratch: &mut [u8],
    budget_ns: u64,
    max_iters: u64,
) -> Result<u64, Error> {
    const N: usize = BENCH_DATA;
    const B: usize = BENCH_BLOCK;
    let e = Engine::new(imp, cpu)?;
    if scratch.len() < SCRATCH_BYTES {
        return Err(Error::ScratchTooSmall);
    }
    let (data_area, rest) = scratch.split_at_mut(N * B);
    Rng(0x9e37_79b9_7f4a_7c15).fill(data_area);
    let mut it = rest.chunks_exact_mut(B);
    let mut next = || it.next().ok_or(Error::ScratchTooSmall);
    let (p, q, dx, dy) = (next()?, next()?, next()?, next()?);
    let mut di = data_area.chunks_exact(B);
    let data: [&[u8]; N] = core::array::from_fn(|_| di.next().unwrap_or(&[]));
    e.gen_syndrome(fpu, &data, p, q)?;
    let mut surv: [&[u8]; N] = [&[]; N];
    let k = survivors(&data, &[1, 5], &mut surv);
    let surv = surv.get(..k).unwrap_or(&[]);
    let changed = data.get(3..4).unwrap_or(&[]);

    let t0 = clock();
    let mut iters = 0u64;
    let mut elapsed;
    loop {
        match op {
            Op::Xor => e.xor_gen(fpu, p, &data)?,
            Op::Gen => e.gen_syndrome(fpu, &data, p, q)?,
            Op::Rmw => e.xor_syndrome(fpu, 3, changed, p, q)?,
            Op::Recov => e.recover_2data(fpu, 1, 5, surv, p, q, dx, dy)?,
        }
        iters += 1;
        elapsed = clock().saturating_sub(t0);
        if iters >= max_iters || elapsed >= budget_ns {
            break;
        }
    }
    // u64 only: the kernel has no 128-bit division (`__udivti3`).
    let bytes = iters.saturating_mul((N * B) as u64);
    let ns = elapsed.max(1);
    Ok(match bytes.checked_mul(1_000_000_000) {
        Some(scaled) => scaled / ns,
        None => bytes / (ns / 1_000_000_000).max(1),
    })
}

/// What [`select`] found out about one implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The CPU lacks a feature it needs.
    Unsupported,
    /// It failed its self-test and is never used.
    Failed(Error),
    /// It passed; throughput in data-block bytes per second.
    Speed(u64),
}

/// Picks the fastest implementation of `op` that passes its self-test.
///
/// Walks [`IMPLS`], calls `report` for every implementation, and returns the winner with its
/// throughput (the scalar reference if nothing else passed). The work is bounded by
/// `budget_ns` of benchmark per valid implementation plus its self-test.
pub fn select(
    op: Op,
    cpu: &CpuFeatures,
    fpu: &dyn Fpu,
    clock: &dyn Fn() -> u64,
    scratch: &mut [u8],
    budget_ns: u64,
    report: &mut dyn FnMut(&'static Impl, Outcome),
) -> Result<(&'static Impl, u64), Error> {
    let mut best: Option<(&'static Impl, u64)> = None;
    for &imp in IMPLS {
        if !(imp.valid)(cpu) {
            report(imp, Outcome::Unsupported);
            continue;
        }
        if let Err(err) = self_test(imp, cpu, fpu, scratch, clock() | 1) {
            report(imp, Outcome::Failed(err));
            continue;
        }
        let speed = bench(imp, op, cpu, fpu, clock, scratch, budget_ns, u64::MAX)?;
        report(imp, Outcome::Speed(speed));
        let better = match best {
            None => true,
            Some((b, s)) => speed > s || (speed == s && imp.priority > b.priority),
        };
        if better {
            best = Some((imp, speed));
        }
    }
    best.ok_or(Error::SelfTestFailed)
}
