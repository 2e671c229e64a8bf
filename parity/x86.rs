//! Plumbing shared by the x86 `asm!` kernels (AVX2, AVX-512, GFNI).
//!
//! Every kernel is one safe function over a validated job (see the `*Job` types in the parent
//! module). It runs an unrolled `asm!` loop over the largest multiple of its stride, then the
//! single-vector variant of the same instruction set over the rest (job ranges are multiples of
//! 64 bytes, which every stride of a tail loop divides).
//!
//! # Register conventions of the templates
//!
//! General registers: `r8` is the byte offset, advanced by the stride until it reaches `{end}`;
//! `r10` counts sources and `r11` (and `r9` in XOR loops) hold the current source pointers. Named operands hold the
//! inputs. Vector registers are named literally in the templates; they are declared clobbered
//! with `clobber_abi("C")`, which covers every caller-saved vector and mask register that the
//! compiler itself may use under the enabled target features. On the kernel's soft-float target
//! the compiler uses none, and the caller's `kernel_fpu_begin` section saved the task's registers.
//!
//! # Pointer lists
//!
//! The XOR and Horner loops read their sources through an array of pointers, highest block
//! first for Horner's rule.

use super::{gf, PqJob, PqMode, XorJob, GROUP};

/// Constants of the Horner loops: the byte 0x1d (reduction of a doubled byte) at offset 0 and
/// the `vgf2p8affineqb` matrix of multiplication by 2 at offset 8.
pub(super) static PQ_CONSTS: [u64; 2] = [0x1d1d_1d1d_1d1d_1d1d, gf::affine_matrix(2)];

/// Flag of a Horner loop: start from P and Q in memory ([`PqMode::Carry`]).
pub(super) const PQ_LOAD: usize = 1;
/// Flag of a Horner loop: XOR the result into P and Q in memory ([`PqMode::Xor`]).
pub(super) const PQ_XOR: usize = 2;
/// Flag of a Horner loop: there is no P to store.
pub(super) const PQ_NO_P: usize = 4;
/// Flag of a Horner loop: finish a two-data recovery before storing ([`FusedRecov`]).
///
/// [`FusedRecov`]: super::FusedRecov
pub(super) const PQ_RECOV: usize = 8;

/// Splits `start..end` into an unrolled part `start..mid` (a multiple of `stride`) and a tail.
pub(super) fn split(start: usize, end: usize, stride: usize) -> (usize, usize, usize) {
    let mid = start + (end - start) / stride * stride;
    (start, mid, end)
}

/// Fills `ptrs` with the sources of a XOR loop, `dst = ptrs[0] ^ ... ^ ptrs[n - 1]`, and
/// returns `n` and `dst`. (Filled in place: returning the array by value costs a memcpy per call.)
///
/// The result satisfies: `1 <= n <= GROUP + 2`; each of `ptrs[..n]` and `dst` is valid for
/// reads of the job's `end` bytes, `dst` for writes too, for as long as the job is borrowed.
/// `dst` may be among the sources (accumulation); each loop iteration reads all sources before
/// it stores.
pub(super) fn xor_ptrs(
    job: &mut XorJob<'_, '_>,
    ptrs: &mut [*const u8; GROUP + 2],
) -> (usize, *mut u8) {
    let mut n = 0;
    let dst = job.dst.as_mut_ptr();
    let mut push = |p: *const u8| {
        if let Some(slot) = ptrs.get_mut(n) {
            *slot = p;
            n += 1;
        }
    };
    if job.acc {
        push(dst);
    }
    if let Some(f) = job.first {
        push(f.as_ptr());
    }
    for s in job.srcs.iter().rev() {
        push(s.as_ptr());
    }
    // `XorJob` holds at most GROUP sources plus `acc` and `first`, at least one of them, all at
    // least `end` long.
    (n, dst)
}

/// The raw operands of a Horner loop, besides the source pointers.
///
/// # Invariants
///
/// Built by [`pq_ptrs`] from a [`PqJob`]: `1 <= n <= GROUP`; the first `n` source pointers are
/// the job's sources, highest block first, valid for reads of the job's `end` bytes; `p` and `q`
/// are valid for reads and writes of `end` bytes (`p` is `q` and never stored when the job has
/// no P, which `flags` then says). `x` holds the recovery's P and Q pointers, valid for reads
/// of `end` bytes when `flags` has [`PQ_RECOV`] (else `q`, never read), and the address of its
/// constants (filled in by the kernel).
pub(super) struct PqArgs {
    pub(super) n: usize,
    pub(super) p: *mut u8,
    pub(super) q: *mut u8,
    pub(super) flags: usize,
    pub(super) shift: usize,
    pub(super) x: [usize; 3],
    pub(super) coef: Option<(u8, u8)>,
}

/// Recovery constants for Horner loops without a recovery: never read, but a valid address.
pub(super) static NO_RECOV: Consts = Consts([0; 128]);

/// Fills `ptrs` with the sources of a Horner loop, highest block first, and returns the other
/// operands.
pub(super) fn pq_ptrs(job: &mut PqJob<'_, '_>, ptrs: &mut [*const u8; GROUP]) -> PqArgs {
    let mut n = 0;
    for (slot, s) in ptrs.iter_mut().zip(job.srcs.iter().rev()) {
        *slot = s.as_ptr();
        n += 1;
    }
    let q = job.q.as_mut_ptr();
    let mut flags = match job.mode {
        PqMode::Fresh => 0,
        PqMode::Carry => PQ_LOAD,
        PqMode::Xor => PQ_XOR,
    };
    let p = match job.p.as_deref_mut() {
        Some(p) => p.as_mut_ptr(),
        None => {
            flags |= PQ_NO_P;
            q
        }
    };
    let (x, coef) = match job.recov {
        Some(r) => {
            flags |= PQ_RECOV;
            (
                [r.p.as_ptr() as usize, r.q.as_ptr() as usize, 0],
                Some((r.a, r.b)),
            )
        }
        None => ([q as usize, q as usize, 0], None),
    };
    // INVARIANT: `PqJob` holds 1..=GROUP sources and blocks at least `end` long, and recovery
    // blocks at least `end` long.
    PqArgs {
        n,
        p,
        q,
        flags,
        shift: job.shift,
        x,
        coef,
    }
}

/// Constants of the recovery loops, 64-byte aligned for the broadcasts.
///
/// Nibble kernels: `pshufb` tables of the products by `a` (low nibbles, high nibbles), then by
/// `b`, at offsets 0, 16, 32 and 48, and the mask 0x0f at 64. GFNI kernels: the matrices of `a`
/// and `b` at offsets 0 and 8.
#[repr(C, align(64))]
pub(super) struct Consts(pub(super) [u8; 128]);

impl Consts {
    pub(super) fn nibbles(a: u8, b: u8) -> Consts {
        let mut c = [0u8; 128];
        let (alo, ahi) = gf::nibble_tables(a);
        let (blo, bhi) = gf::nibble_tables(b);
        // Constant in-bounds ranges of a fixed-size array: these cannot panic.
        c[0..16].copy_from_slice(&alo);
        c[16..32].copy_from_slice(&ahi);
        c[32..48].copy_from_slice(&blo);
        c[48..64].copy_from_slice(&bhi);
        c[64] = 0x0f;
        Consts(c)
    }

    pub(super) fn matrices(a: u8, b: u8) -> Consts {
        let mut c = [0u8; 128];
        let ma = gf::affine_matrix(a).to_le_bytes();
        let mb = gf::affine_matrix(b).to_le_bytes();
        // Constant in-bounds ranges of a fixed-size array: these cannot panic.
        c[0..8].copy_from_slice(&ma);
        c[8..16].copy_from_slice(&mb);
        Consts(c)
    }
}

/// Defines a XOR kernel from a template macro, its main and tail strides and lanes.
macro_rules! xor_kernel {
    ($name:ident, $tmpl:ident, $stride:literal, [$($lane:tt),*], $tstride:literal, [$($tlane:tt),*]) => {
        pub(super) fn $name(job: &mut super::XorJob<'_, '_>) {
            let mut ptrs = [core::ptr::null(); super::GROUP + 2];
            let (n, dst) = super::x86::xor_ptrs(job, &mut ptrs);
            let (s, m, e) = super::x86::split(job.start, job.end, $stride);
            if s < m {
                // SAFETY: by the invariant of `XorJob` and what `xor_ptrs` returns, every pointer in
                // `ptrs[..n]` and `dst` is valid for bytes `s..m` (within the job's range), `dst`
                // for writes; the template only touches those bytes. The registers it writes are
                // declared (`r8`, `r10`, `r11`, and the vector registers through
                // `clobber_abi`); it does not use the stack. The engine only calls this kernel
                // after the implementation's `valid()` accepted the CPU, and inside an FPU
                // section.
                unsafe {
                    core::arch::asm!(
                        $tmpl!($stride; $($lane),*),
                        ptrs = in(reg) ptrs.as_ptr(),
                        n = in(reg) n,
                        dst = in(reg) dst,
                        end = in(reg) m,
                        inout("r8") s => _,
                        out("r9") _,
                        out("r10") _,
                        out("r11") _,
                        clobber_abi("C"),
                        options(nostack),
                    );
                }
            }
            if m < e {
                // SAFETY: as above, for bytes `m..e`.
                unsafe {
                    core::arch::asm!(
                        $tmpl!($tstride; $($tlane),*),
                        ptrs = in(reg) ptrs.as_ptr(),
                        n = in(reg) n,
                        dst = in(reg) dst,
                        end = in(reg) e,
                        inout("r8") m => _,
                        out("r9") _,
                        out("r10") _,
                        out("r11") _,
                        clobber_abi("C"),
                        options(nostack),
                    );
                }
            }
        }
    };
}

/// Defines a Horner (P+Q) kernel from a template macro, its main and tail strides and lanes.
macro_rules! pq_kernel {
    ($name:ident, $tmpl:ident, $consts:ident, $stride:literal, [$($lane:tt),*], $tstride:literal, [$($tlane:tt),*]) => {
        pub(super) fn $name(job: &mut super::PqJob<'_, '_>) {
            let mut ptrs = [core::ptr::null(); super::GROUP];
            let mut a = super::x86::pq_ptrs(job, &mut ptrs);
            let local;
            a.x[2] = match a.coef {
                Some((ca, cb)) => {
                    local = super::x86::Consts::$consts(ca, cb);
                    local.0.as_ptr() as usize
                }
                None => super::x86::NO_RECOV.0.as_ptr() as usize,
            };
            let (s, m, e) = super::x86::split(job.start, job.end, $stride);
            let k = super::x86::PQ_CONSTS.as_ptr();
            if s < m {
                // SAFETY: by the invariants of `PqJob` and `PqArgs`, every pointer in
                // `ptrs[..n]`, `p` and `q` is valid for bytes `s..m` (within the job's range),
                // `p` and `q` for writes; `k` points to the 16 bytes of `PQ_CONSTS`, `x` to three
                // words: the recovery's P and Q (valid for the same bytes, read only with
                // `PQ_RECOV`) and 128 bytes of constants. The template only touches those bytes,
                // and stores P only without `PQ_NO_P`. The registers it
                // writes are declared (`r8`, `r10`, `r11`, and the vector and mask registers
                // through `clobber_abi`); it does not use the stack. The engine only calls this
                // kernel after the implementation's `valid()` accepted the CPU, and inside an FPU
                // section.
                unsafe {
                    core::arch::asm!(
                        $tmpl!($stride; $($lane),*),
                        ptrs = in(reg) ptrs.as_ptr(),
                        n = in(reg) a.n,
                        p = in(reg) a.p,
                        q = in(reg) a.q,
                        flags = in(reg) a.flags,
                        shift = in(reg) a.shift,
                        k = in(reg) k,
                        x = in(reg) a.x.as_ptr(),
                        end = in(reg) m,
                        inout("r8") s => _,
                        out("r10") _,
                        out("r11") _,
                        clobber_abi("C"),
                        options(nostack),
                    );
                }
            }
            if m < e {
                // SAFETY: as above, for bytes `m..e`.
                unsafe {
                    core::arch::asm!(
                        $tmpl!($tstride; $($tlane),*),
                        ptrs = in(reg) ptrs.as_ptr(),
                        n = in(reg) a.n,
                        p = in(reg) a.p,
                        q = in(reg) a.q,
                        flags = in(reg) a.flags,
                        shift = in(reg) a.shift,
                        k = in(reg) k,
                        x = in(reg) a.x.as_ptr(),
                        end = in(reg) e,
                        inout("r8") m => _,
                        out("r10") _,
                        out("r11") _,
                        clobber_abi("C"),
                        options(nostack),
                    );
                }
            }
        }
    };
}

/// Defines a two-data recovery kernel from a template macro, its constants, strides and lanes.
macro_rules! recov2_kernel {
    ($name:ident, $tmpl:ident, $consts:ident, $stride:literal, [$($lane:tt),*], $tstride:literal, [$($tlane:tt),*]) => {
        pub(super) fn $name(job: &mut super::Recov2Job<'_>) {
            let c = super::x86::Consts::$consts(job.a, job.b);
            let k = c.0.as_ptr();
            let p = job.p.as_ptr();
            let q = job.q.as_ptr();
            let dx = job.dx.as_mut_ptr();
            let dy = job.dy.as_mut_ptr();
            let (s, m, e) = super::x86::split(job.start, job.end, $stride);
            if s < m {
                // SAFETY: by the invariant of `Recov2Job`, `p`, `q`, `dx` and `dy` are valid
                // for bytes `s..m` (within the job's range), `dx` and `dy` for writes, and `k`
                // points to the 128 bytes of `c`. The registers the template writes are declared
                // (`r8`, and the vector registers through `clobber_abi`); it does not use the
                // stack. The engine only calls this kernel after the implementation's `valid()`
                // accepted the CPU, and inside an FPU section.
                unsafe {
                    core::arch::asm!(
                        $tmpl!($stride; $($lane),*),
                        p = in(reg) p,
                        q = in(reg) q,
                        dx = in(reg) dx,
                        dy = in(reg) dy,
                        k = in(reg) k,
                        end = in(reg) m,
                        inout("r8") s => _,
                        clobber_abi("C"),
                        options(nostack),
                    );
                }
            }
            if m < e {
                // SAFETY: as above, for bytes `m..e`.
                unsafe {
                    core::arch::asm!(
                        $tmpl!($tstride; $($tlane),*),
                        p = in(reg) p,
                        q = in(reg) q,
                        dx = in(reg) dx,
                        dy = in(reg) dy,
                        k = in(reg) k,
                        end = in(reg) e,
                        inout("r8") m => _,
                        clobber_abi("C"),
                        options(nostack),
                    );
                }
            }
        }
    };
}

/// Defines a multiplication kernel (`b = c * (a ^ b)`) from a template macro and its constants.
macro_rules! mul_kernel {
    ($name:ident, $tmpl:ident, $consts:ident, $stride:literal, [$($lane:tt),*]) => {
        pub(super) fn $name(job: &mut super::MulJob<'_>) {
            let c = super::x86::Consts::$consts(job.c, 0);
            let k = c.0.as_ptr();
            let a = job.a.as_ptr();
            let b = job.b.as_mut_ptr();
            let (s, e) = (job.start, job.end);
            // SAFETY: by the invariant of `MulJob`, `a` and `b` are valid for bytes `s..e`, `b`
            // for writes, `e - s` is a multiple of 64 and so of the stride, and `k` points to the
            // 128 bytes of `c`. The registers the template writes are declared (`r8`, and the
            // vector registers through `clobber_abi`); it does not use the stack. The engine only
            // calls this kernel after the implementation's `valid()` accepted the CPU, and inside
            // an FPU section.
            unsafe {
                core::arch::asm!(
                    $tmpl!($stride; $($lane),*),
                    a = in(reg) a,
                    b = in(reg) b,
                    k = in(reg) k,
                    end = in(reg) e,
                    inout("r8") s => _,
                    clobber_abi("C"),
                    options(nostack),
                );
            }
        }
    };
}
