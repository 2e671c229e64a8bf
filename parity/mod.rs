//! Parity mathematics for RAID 5 and RAID 6, shared by the kernel module and the host tests.
//!
//! The field and the syndromes are exactly md's (lib/raid6), so that rraid's stripes are
//! bit-identical to md's:
//!
//! - GF(2^8) with polynomial 0x11d and generator g = 2 ([`gf`]);
//! - P = D_0 ^ D_1 ^ ... ^ D_{n-1};
//! - Q = g^0 D_0 ^ g^1 D_1 ^ ... ^ g^{n-1} D_{n-1}.
//!
//! # Shape
//!
//! Each implementation is an [`Impl`] descriptor in the style of lib/raid6's `raid6_calls`: a
//! name, a priority, a [`valid`](Impl::valid) probe of [`CpuFeatures`], and private kernel
//! function pointers. [`IMPLS`] lists them all, best first. The SIMD kernels are written with
//! `core::arch::asm!` only: on the kernel's soft-float target, intrinsics compile to scalar code
//! or crash LLVM, while `asm!` emits exactly the instructions that the host tests run.
//!
//! The operations are methods of [`Engine`], a handle on one implementation that has passed its
//! [`valid`](Impl::valid) check. Every operation takes an [`Fpu`]: SIMD work only ever runs inside
//! [`Fpu::run`], in sections of at most [`SECTION_BYTES`] bytes touched. In the kernel, `run`
//! wraps `kernel_fpu_begin_mask`/`kernel_fpu_end`; in user space, [`UserFpu`] calls straight
//! through. The scalar implementation never enters a section.
//!
//! # Blocks
//!
//! All blocks of one call have the same length: a non-zero multiple of [`GRANULE`] (64 bytes).
//! Anything else is rejected with an [`Error`]; no path panics on bad input. A stripe has 1 to
//! [`MAX_DATA`] data blocks. No operation allocates; the stack use is a few hundred bytes.
//!
//! # Load-time selection
//!
//! [`self_test`] checks one implementation against the scalar reference and known-answer vectors
//! on caller-provided memory, [`bench`] measures one operation with a caller-provided clock, and
//! [`select`] walks [`IMPLS`] doing both, for one [`Op`].

pub mod gf;

#[macro_use]
mod x86;

mod avx2;
mod avx512;
mod gfni;
mod job;
mod scalar;
mod select;

use job::{FusedRecov, MulJob, PqJob, PqMode, Recov2Job, XorJob};

pub use select::{bench, select, self_test, Outcome, BENCH_BLOCK, BENCH_DATA, SCRATCH_BYTES};

/// Block lengths must be a non-zero multiple of this many bytes.
pub const GRANULE: usize = 64;

/// The largest number of data blocks in one stripe: Q's coefficients g^0..g^254 are distinct.
pub const MAX_DATA: usize = 255;

/// The most bytes (of all blocks together) touched in one [`Fpu::run`] section.
///
/// At tens of GB/s this is around ten microseconds with preemption off.
pub const SECTION_BYTES: usize = 256 * 1024;

/// Data blocks handed to one kernel call; larger stripes are processed in groups.
const GROUP: usize = 32;

/// Why an operation was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// A block length is zero or not a multiple of [`GRANULE`].
    BadLength(usize),
    /// The blocks of one call do not all have the same length.
    LengthMismatch,
    /// The call has no data block where it needs at least one.
    NoData,
    /// More than [`MAX_DATA`] data blocks (counting the `start` of an RMW update).
    TooManyData,
    /// A failed-block index is out of range, or the two indices are not ascending.
    BadIndex,
    /// The CPU lacks a feature the implementation needs.
    Unsupported,
    /// The implementation disagreed with the reference or a known answer.
    SelfTestFailed,
    /// The scratch memory given to [`self_test`] or [`bench`] is too small.
    ScratchTooSmall,
    /// The SIMD registers became unusable between [`Fpu::usable`] and [`Fpu::run`].
    NoFpu,
}

/// CPU features, filled in by the caller.
///
/// On the host from `is_x86_feature_detected!`; in the kernel from `boot_cpu_has()`, where the
/// AVX and AVX-512 entries must also require that the OS enabled the register state (the kernel
/// clears the feature bits when XSAVE does not cover it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuFeatures {
    /// SSE2.
    pub sse2: bool,
    /// SSSE3 (`pshufb`).
    pub ssse3: bool,
    /// AVX.
    pub avx: bool,
    /// AVX2.
    pub avx2: bool,
    /// AVX-512 Foundation.
    pub avx512f: bool,
    /// AVX-512 Byte and Word instructions.
    pub avx512bw: bool,
    /// AVX-512 Vector Length extensions.
    pub avx512vl: bool,
    /// Galois Field New Instructions (`vgf2p8affineqb`).
    pub gfni: bool,
}

impl CpuFeatures {
    /// No feature at all: only the scalar implementation is valid.
    pub const NONE: CpuFeatures = CpuFeatures {
        sse2: false,
        ssse3: false,
        avx: false,
        avx2: false,
        avx512f: false,
        avx512bw: false,
        avx512vl: false,
        gfni: false,
    };
}

/// The vector unit, as the caller makes it usable.
///
/// In the kernel, `run` calls `kernel_fpu_begin_mask(KFPU_387 | KFPU_MXCSR)`, then `f`, then
/// `kernel_fpu_end()`: `f` then runs with preemption off, and the parity code keeps each call to
/// at most [`SECTION_BYTES`] bytes of work. `run` must call `f` exactly once.
pub trait Fpu {
    /// Whether SIMD registers can be used in the caller's context. In the kernel they cannot be
    /// in an interrupt that hit an FPU section, nor inside a section already open (no nesting).
    fn usable(&self) -> bool;

    /// Runs `f` with the SIMD registers usable, or returns `false` without running it when they
    /// are not usable here.
    fn run(&self, f: &mut dyn FnMut()) -> bool;
}

/// [`Fpu`] for user space, where the registers are always usable: calls `f` directly.
///
/// Never use it in the kernel: there, SIMD outside a `kernel_fpu_begin` section corrupts the
/// interrupted task's registers.
pub struct UserFpu;

impl Fpu for UserFpu {
    fn usable(&self) -> bool {
        true
    }

    fn run(&self, f: &mut dyn FnMut()) -> bool {
        f();
        true
    }
}

/// An operation that is selected separately (one sysfs file each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `xor_gen`: RAID-5 parity.
    Xor,
    /// `gen_syndrome`: P and Q.
    Gen,
    /// `xor_syndrome`: read-modify-write of P and Q.
    Rmw,
    /// Recovery of two data blocks from P and Q.
    Recov,
}

impl Op {
    /// Every operation, in sysfs order.
    pub const ALL: [Op; 4] = [Op::Xor, Op::Gen, Op::Rmw, Op::Recov];

    /// The operation's sysfs and log name.
    pub fn name(self) -> &'static str {
        match self {
            Op::Xor => "xor",
            Op::Gen => "gen",
            Op::Rmw => "rmw",
            Op::Recov => "recov",
        }
    }
}

/// One implementation, in the style of lib/raid6's `struct raid6_calls`.
pub struct Impl {
    /// Name shown in logs and sysfs, e.g. `avx2x4`.
    pub name: &'static str,
    /// Rank among valid implementations when no benchmark decides (higher is better).
    pub priority: u32,
    /// Whether the CPU can run it.
    pub valid: fn(&CpuFeatures) -> bool,
    /// Whether it uses vector registers, so must run inside [`Fpu::run`].
    pub simd: bool,
    /// Whether `pq` can finish a two-data recovery in the same pass ([`PqJob::recov`]).
    fused_recov: bool,
    xor: fn(&mut XorJob<'_, '_>),
    pq: fn(&mut PqJob<'_, '_>),
    recov2: fn(&mut Recov2Job<'_>),
    mulc: fn(&mut MulJob<'_>),
}

impl core::fmt::Debug for Impl {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name)
    }
}

/// The portable reference implementation.
pub static SCALAR: Impl = scalar::SCALAR;

/// Every implementation, best first; [`SCALAR`] is last and always valid.
pub static IMPLS: &[&Impl] = &[
    &gfni::GFNI512X4,
    &gfni::GFNI512X2,
    &gfni::GFNI512X1,
    &avx512::AVX512X4,
    &avx512::AVX512X2,
    &avx512::AVX512X1,
    &avx2::AVX2X4,
    &avx2::AVX2X2,
    &avx2::AVX2X1,
    &SCALAR,
];

/// Finds an implementation by name.
pub fn find(name: &str) -> Option<&'static Impl> {
    IMPLS.iter().copied().find(|i| i.name == name)
}

// ---------------------------------------------------------------------------------------------
// Argument checks.
// ---------------------------------------------------------------------------------------------

/// Checks one block length.
pub fn check_len(len: usize) -> Result<(), Error> {
    if len == 0 || len % GRANULE != 0 {
        Err(Error::BadLength(len))
    } else {
        Ok(())
    }
}

fn same_len(len: usize, blocks: &[&[u8]]) -> Result<(), Error> {
    if blocks.iter().all(|b| b.len() == len) {
        Ok(())
    } else {
        Err(Error::LengthMismatch)
    }
}

fn eq_len(len: usize, other: usize) -> Result<(), Error> {
    if len == other {
        Ok(())
    } else {
        Err(Error::LengthMismatch)
    }
}

/// The byte length of one FPU section for blocks of `len` bytes, `blocks` of them touched.
fn segment_len(len: usize, blocks: usize) -> usize {
    if len.saturating_mul(blocks) <= SECTION_BYTES {
        return len;
    }
    let per = SECTION_BYTES / blocks.max(1);
    let per = (per / GRANULE * GRANULE).max(GRANULE);
    per.min(len)
}

/// A run of present data blocks: the index of its first block, and the blocks.
type Run<'s> = (usize, &'s [&'s [u8]]);

// ---------------------------------------------------------------------------------------------
// The engine.
// ---------------------------------------------------------------------------------------------

/// One implementation that passed its CPU feature check.
///
/// # Invariants
///
/// `(imp.valid)(cpu)` held for the features the constructor was given.
#[derive(Clone, Copy, Debug)]
pub struct Engine {
    imp: &'static Impl,
}

impl Engine {
    /// Checks `imp` against the CPU's features.
    pub fn new(imp: &'static Impl, cpu: &CpuFeatures) -> Result<Engine, Error> {
        if (imp.valid)(cpu) {
            // INVARIANT: checked just above.
            Ok(Engine { imp })
        } else {
            Err(Error::Unsupported)
        }
    }

    /// The scalar reference, valid everywhere.
    pub fn scalar() -> Engine {
        Engine { imp: &SCALAR }
    }

    /// The implementation behind this engine.
    pub fn imp(&self) -> &'static Impl {
        self.imp
    }

    /// This engine, or the scalar reference where the caller's context cannot use the SIMD
    /// registers (see [`Fpu::usable`]): every operation starts with it, so a call from any
    /// context computes the right answer.
    fn here(&self, fpu: &dyn Fpu) -> Engine {
        if self.imp.simd && !fpu.usable() {
            Engine::scalar()
        } else {
            *self
        }
    }

    /// Runs `f` once per segment `start..end` of a `len`-byte block, inside an FPU section when
    /// the implementation needs one. Stops at the first error.
    #[inline]
    fn sections<F: FnMut(usize, usize) -> Result<(), Error>>(
        &self,
        fpu: &dyn Fpu,
        len: usize,
        blocks: usize,
        mut f: F,
    ) -> Result<(), Error> {
        let seg = segment_len(len, blocks);
        let mut start = 0;
        while start < len {
            let end = (start + seg).min(len);
            let mut res = Ok(());
            let mut body = || res = f(start, end);
            if self.imp.simd {
                if !fpu.run(&mut body) {
                    return Err(Error::NoFpu);
                }
            } else {
                body();
            }
            res?;
            start = end;
        }
        Ok(())
    }

    /// XOR over `srcs` in groups into `dst`; `acc` keeps dst's contents, `first` adds one more
    /// source.
    fn xor_groups(
        &self,
        srcs: &[&[u8]],
        first: Option<&[u8]>,
        dst: &mut [u8],
        acc: bool,
        start: usize,
        end: usize,
    ) -> Result<(), Error> {
        let mut chunks = srcs.chunks(GROUP);
        let head = chunks.next().unwrap_or(&[]);
        let mut job = XorJob::new(head, first, &mut *dst, acc, start, end).ok_or(Error::NoData)?;
        (self.imp.xor)(&mut job);
        for chunk in chunks {
            let mut job =
                XorJob::new(chunk, None, &mut *dst, true, start, end).ok_or(Error::NoData)?;
            (self.imp.xor)(&mut job);
        }
        Ok(())
    }

    /// Horner's rule over runs of present blocks (ascending), from the highest block down, with
    /// the missing indices between and below the runs multiplied in as zero blocks. `Q` gets the
    /// syndrome of the present blocks, `P` their XOR; both are zero when no block is present.
    ///
    /// With `recov`, the last pass also finishes a two-data recovery ([`FusedRecov`]); there
    /// must be at least one present block then.
    fn pq_runs(
        &self,
        runs: &[Run<'_>],
        mut p: Option<&mut [u8]>,
        q: &mut [u8],
        recov: Option<FusedRecov<'_>>,
        start: usize,
        end: usize,
    ) -> Result<(), Error> {
        // The lowest index of every chunk, in processing order, decides the shift after it.
        let mut mode = PqMode::Fresh;
        let mut pending: Option<(usize, &[&[u8]])> = None;
        for &(base, blocks) in runs.iter().rev() {
            let count = blocks.len();
            let mut hi = count;
            while hi > 0 {
                let lo = hi.saturating_sub(GROUP);
                let chunk = blocks.get(lo..hi).ok_or(Error::BadIndex)?;
                if let Some((prev_lo, prev)) = pending.take() {
                    let shift = prev_lo - (base + hi);
                    self.pq_one(prev, p.as_deref_mut(), q, mode, shift, None, start, end)?;
                    mode = PqMode::Carry;
                }
                pending = Some((base + lo, chunk));
                hi = lo;
            }
        }
        match pending {
            Some((lo, chunk)) => self.pq_one(chunk, p, q, mode, lo, recov, start, end),
            None if recov.is_some() => Err(Error::NoData),
            None => {
                if let Some(p) = p {
                    p.get_mut(start..end).ok_or(Error::BadIndex)?.fill(0);
                }
                q.get_mut(start..end).ok_or(Error::BadIndex)?.fill(0);
                Ok(())
            }
        }
    }

    #[expect(clippy::too_many_arguments)]
    fn pq_one(
        &self,
        srcs: &[&[u8]],
        p: Option<&mut [u8]>,
        q: &mut [u8],
        mode: PqMode,
        shift: usize,
        recov: Option<FusedRecov<'_>>,
        start: usize,
        end: usize,
    ) -> Result<(), Error> {
        let mut job =
            PqJob::new(srcs, p, q, mode, shift, recov, start, end).ok_or(Error::BadIndex)?;
        (self.imp.pq)(&mut job);
        Ok(())
    }

    /// RAID-5 parity: `dst = srcs[0] ^ srcs[1] ^ ...`.
    pub fn xor_gen(&self, fpu: &dyn Fpu, dst: &mut [u8], srcs: &[&[u8]]) -> Result<(), Error> {
        let this = self.here(fpu);
        let len = dst.len();
        check_len(len)?;
        same_len(len, srcs)?;
        if srcs.is_empty() {
            return Err(Error::NoData);
        }
        this.sections(fpu, len, srcs.len() + 1, |s, e| {
            this.xor_groups(srcs, None, dst, false, s, e)
        })
    }

    /// Accumulating XOR: `dst ^= srcs[0] ^ srcs[1] ^ ...` (an empty `srcs` changes nothing).
    pub fn xor_acc(&self, fpu: &dyn Fpu, dst: &mut [u8], srcs: &[&[u8]]) -> Result<(), Error> {
        let this = self.here(fpu);
        let len = dst.len();
        check_len(len)?;
        same_len(len, srcs)?;
        if srcs.is_empty() {
            return Ok(());
        }
        this.sections(fpu, len, srcs.len() + 1, |s, e| {
            this.xor_groups(srcs, None, dst, true, s, e)
        })
    }

    /// Full syndrome: P and Q of data blocks `data[0..n]`.
    pub fn gen_syndrome(
        &self,
        fpu: &dyn Fpu,
        data: &[&[u8]],
        p: &mut [u8],
        q: &mut [u8],
    ) -> Result<(), Error> {
        let this = self.here(fpu);
        let len = p.len();
        check_len(len)?;
        eq_len(len, q.len())?;
        same_len(len, data)?;
        check_count(0, data.len())?;
        let runs = [(0, data)];
        this.sections(fpu, len, data.len() + 2, |s, e| {
            this.pq_runs(&runs, Some(&mut *p), q, None, s, e)
        })
    }

    /// Regenerates Q alone from all data blocks (P is left alone).
    pub fn regen_q(&self, fpu: &dyn Fpu, data: &[&[u8]], q: &mut [u8]) -> Result<(), Error> {
        let this = self.here(fpu);
        let len = q.len();
        check_len(len)?;
        same_len(len, data)?;
        check_count(0, data.len())?;
        let runs = [(0, data)];
        this.sections(fpu, len, data.len() + 1, |s, e| {
            this.pq_runs(&runs, None, q, None, s, e)
        })
    }

    /// Regenerates P alone: the same as [`Engine::xor_gen`].
    pub fn regen_p(&self, fpu: &dyn Fpu, data: &[&[u8]], p: &mut [u8]) -> Result<(), Error> {
        let this = self.here(fpu);
        this.xor_gen(fpu, p, data)
    }

    /// Read-modify-write update, lib/raid6's `xor_syndrome`: folds data blocks
    /// `start..start + data.len()` into existing P and Q without the other blocks:
    /// `P ^= ^data[k]` and `Q ^= ^ g^(start+k) data[k]`.
    ///
    /// Call it with the old contents of the changed blocks, then with the new ones (or once
    /// with `old ^ new`).
    pub fn xor_syndrome(
        &self,
        fpu: &dyn Fpu,
        start: usize,
        data: &[&[u8]],
        p: &mut [u8],
        q: &mut [u8],
    ) -> Result<(), Error> {
        let this = self.here(fpu);
        let len = p.len();
        check_len(len)?;
        eq_len(len, q.len())?;
        same_len(len, data)?;
        check_count(start, data.len())?;
        this.sections(fpu, len, data.len() + 2, |s, e| {
            for (k, chunk) in data.chunks(GROUP).enumerate() {
                let base = start + k * GROUP;
                let mut job = PqJob::new(chunk, Some(&mut *p), q, PqMode::Xor, base, None, s, e)
                    .ok_or(Error::BadIndex)?;
                (this.imp.pq)(&mut job);
            }
            Ok(())
        })
    }

    /// Recovers one data block from P: `dx = p ^ survivors[0] ^ ...`, where `survivors` are the
    /// other data blocks (in any order).
    pub fn recover_data_p(
        &self,
        fpu: &dyn Fpu,
        survivors: &[&[u8]],
        p: &[u8],
        dx: &mut [u8],
    ) -> Result<(), Error> {
        let this = self.here(fpu);
        let len = dx.len();
        check_len(len)?;
        eq_len(len, p.len())?;
        same_len(len, survivors)?;
        check_count(0, survivors.len() + 1)?;
        this.sections(fpu, len, survivors.len() + 2, |s, e| {
            this.xor_groups(survivors, Some(p), dx, false, s, e)
        })
    }

    /// Recovers data block `x` from Q when P is lost too, and regenerates P.
    ///
    /// `survivors` are the other data blocks in index order (block `x` left out), so the stripe
    /// has `survivors.len() + 1` data blocks and `x` must be below that.
    pub fn recover_data_q(
        &self,
        fpu: &dyn Fpu,
        x: usize,
        survivors: &[&[u8]],
        q: &[u8],
        dx: &mut [u8],
        p: &mut [u8],
    ) -> Result<(), Error> {
        let this = self.here(fpu);
        let len = dx.len();
        check_len(len)?;
        eq_len(len, q.len())?;
        eq_len(len, p.len())?;
        same_len(len, survivors)?;
        let n = survivors.len() + 1;
        check_count(0, n)?;
        if x >= n {
            return Err(Error::BadIndex);
        }
        let (below, above) = survivors.split_at(x);
        let runs = [(0, below), (x + 1, above)];
        let c = gf::inv(gf::exp(x));
        this.sections(fpu, len, n + 2, |s, e| {
            // dx = Qx (Q without block x), p = P without block x.
            this.pq_runs(&runs, Some(&mut *p), dx, None, s, e)?;
            let mut job = MulJob::new(q, dx, c, s, e).ok_or(Error::BadIndex)?;
            (this.imp.mulc)(&mut job);
            let d: &[u8] = dx;
            this.xor_groups(core::slice::from_ref(&d), None, p, true, s, e)
        })
    }

    /// Recovers data blocks `x < y` from P and Q.
    ///
    /// `survivors` are the other data blocks in index order (`x` and `y` left out), so the
    /// stripe has `survivors.len() + 2` data blocks.
    #[expect(clippy::too_many_arguments)]
    pub fn recover_2data(
        &self,
        fpu: &dyn Fpu,
        x: usize,
        y: usize,
        survivors: &[&[u8]],
        p: &[u8],
        q: &[u8],
        dx: &mut [u8],
        dy: &mut [u8],
    ) -> Result<(), Error> {
        let this = self.here(fpu);
        let len = dx.len();
        check_len(len)?;
        eq_len(len, dy.len())?;
        eq_len(len, p.len())?;
        eq_len(len, q.len())?;
        same_len(len, survivors)?;
        let n = survivors.len() + 2;
        check_count(0, n)?;
        if x >= y || y >= n {
            return Err(Error::BadIndex);
        }
        let (below, rest) = survivors.split_at(x);
        let (between, above) = rest.split_at(y - x - 1);
        let runs = [(0, below), (x + 1, between), (y + 1, above)];
        let (a, b) = gf::recov2_coefficients(x, y);
        if this.imp.fused_recov && !survivors.is_empty() {
            // One pass: the syndromes of the survivors stay in registers for the last step.
            let recov = Some(FusedRecov { p, q, a, b });
            return this.sections(fpu, len, n + 2, |s, e| {
                this.pq_runs(&runs, Some(&mut *dx), dy, recov, s, e)
            });
        }
        this.sections(fpu, len, n + 2, |s, e| {
            // dx = Pxy, dy = Qxy: the syndromes without blocks x and y.
            this.pq_runs(&runs, Some(&mut *dx), dy, None, s, e)?;
            let mut job = Recov2Job::new(p, q, dx, dy, a, b, s, e).ok_or(Error::BadIndex)?;
            (this.imp.recov2)(&mut job);
            Ok(())
        })
    }
}

fn check_count(start: usize, n: usize) -> Result<(), Error> {
    if n == 0 {
        Err(Error::NoData)
    } else if start.saturating_add(n) > MAX_DATA {
        Err(Error::TooManyData)
    } else {
        Ok(())
    }
}
