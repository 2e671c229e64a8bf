//! Plumbing shared by the x86 `asm!` kernels (AVX2, AVX-512, GFNI): one driver for every
//! instruction set, in the manner of lib/raid6's unrolls generated from one template.
//!
//! # Shape
//!
//! - **Templates.** Each operation's loop is one template here (`xor_template!`,
//!   `pq_template!`, `recov2_template!`, `mul_template!`): the loads, the stores, the
//!   source and shift loops and their labels. What an instruction set does differently it supplies
//!   through its *ISA macro* (`avx2!`, `avx512!`, `gfni!` in its own file), which the templates
//!   call by name: its register width (an arm forwarding to `ymm!` or `zmm!`) and its
//!   arithmetic (`xor_sources`, `pq_setup`, `pq_step`, `pq_mul2`, `pq_recov`, `recov2_setup`,
//!   `recov2_mul`, `mul_setup`, `mul`, and the recovery constants `consts`). Arithmetic that two
//!   instruction sets share is here too: the end of a fused recovery (`pq_fused_recov!`) and the
//!   `vpshufb` multiplication by a constant (`nibble_mul!`).
//! - **Lanes.** A template takes a list of lanes, one per vector of a step:
//!   `(offset, registers...)`, where the first registers are the template's own (the
//!   accumulator; or P and Q; or P', Q' and the product) and the rest are the ISA macro's
//!   temporaries.
//! - **Kernels.** Every kernel is one safe function over a validated job (see the `*Job` types in
//!   the parent module), defined by `xor_kernel!`, `pq_kernel!`, `recov2_kernel!` or
//!   `mul_kernel!`. Through `main_then_tail!` it runs the template with all its lanes over the
//!   largest multiple of its stride, then with the first lane alone over the rest (job ranges are
//!   multiples of 64 bytes, which every one-vector stride divides). `unroll!` defines the x1,
//!   x2, x4 (and x8) kernels of one operation from one list of lanes, each a prefix of it.
//!
//! # Register conventions of the templates
//!
//! General registers: `r8` is the byte offset, advanced by `{stride}` until it reaches `{end}`;
//! `r10` counts sources and `r11` (and `r9` in XOR loops) hold the current source pointers.
//! Named operands hold the inputs. Vector registers are named literally in the templates; they
//! are declared clobbered with `clobber_abi("C")`, which covers every caller-saved vector and
//! mask register that the compiler itself may use under the enabled target features. On the
//! kernel's soft-float target the compiler uses none, and the caller's `kernel_fpu_begin` section
//! saved the task's registers.
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

// ---------------------------------------------------------------------------------------------
// Register widths: the words of the templates that depend on the vector length only.
// ---------------------------------------------------------------------------------------------

/// The 32-byte `ymm` vectors of AVX2 (VEX encodings).
macro_rules! ymm {
    (width) => {
        32
    };
    (load) => {
        "vmovdqu"
    };
    (copy) => {
        "vmovdqa"
    };
    (xor) => {
        "vpxor"
    };
    (and) => {
        "vpand"
    };
    (word) => {
        "ymmword"
    };
}

/// The 64-byte `zmm` vectors of AVX-512 (EVEX encodings).
macro_rules! zmm {
    (width) => {
        64
    };
    (load) => {
        "vmovdqu64"
    };
    (copy) => {
        "vmovdqa64"
    };
    (xor) => {
        "vpxorq"
    };
    (and) => {
        "vpandq"
    };
    (word) => {
        "zmmword"
    };
}

/// The memory operand `[base + r8 + o]`.
macro_rules! vmem {
    ($isa:ident, $base:literal, $o:literal) => {
        concat!($isa!(word), " ptr [", $base, " + r8 + ", $o, "]")
    };
}

/// `r = [base + r8 + o]`.
macro_rules! vload {
    ($isa:ident, $r:literal, $base:literal, $o:literal) => {
        concat!($isa!(load), " ", $r, ", ", vmem!($isa, $base, $o), "\n")
    };
}

/// `[base + r8 + o] = r`.
macro_rules! vstore {
    ($isa:ident, $base:literal, $o:literal, $r:literal) => {
        concat!($isa!(load), " ", vmem!($isa, $base, $o), ", ", $r, "\n")
    };
}

/// `r ^= [base + r8 + o]`.
macro_rules! vxor_mem {
    ($isa:ident, $r:literal, $base:literal, $o:literal) => {
        vxor!($isa, $r, $r, vmem!($isa, $base, $o))
    };
}

/// `d = a ^ b`, `b` a register or a memory operand.
macro_rules! vxor {
    ($isa:ident, $d:literal, $a:literal, $b:expr) => {
        concat!($isa!(xor), " ", $d, ", ", $a, ", ", $b, "\n")
    };
}

/// `d = s`.
macro_rules! vcopy {
    ($isa:ident, $d:literal, $s:literal) => {
        concat!($isa!(copy), " ", $d, ", ", $s, "\n")
    };
}

// ---------------------------------------------------------------------------------------------
// Templates.
// ---------------------------------------------------------------------------------------------

/// The label of a loop's first instruction, aligned to 32 bytes, so that where a loop falls no
/// longer depends on the placement of its function (functions are 16-byte aligned, and any
/// change elsewhere in the crate moves them). Unaligned, the same kernel measured up to twice
/// as fast in one placement as in another (the one-vector XOR loop across a 32-byte fetch
/// boundary). The padding runs once per entry into the loop; aligning to 64 bytes, or jumping
/// over the padding to the loop's test, measured slower on short loops.
macro_rules! loop_head {
    ($label:literal) => {
        concat!(".p2align 5\n", $label, ":\n")
    };
}

/// The loop of every template: `setup` once, then `body` at each byte offset `r8`, advanced by
/// `{stride}` until it reaches `{end}`.
macro_rules! stride_loop {
    ($setup:expr; $($body:expr),* $(,)?) => {
        concat!(
            $setup,
            loop_head!("2"),
            $($body,)*
            "add r8, {stride}\n",
            "cmp r8, {end}\n",
            "jb 2b\n",
            "vzeroupper\n",
        )
    };
}

/// XOR: `dst = ptrs[0] ^ ... ^ ptrs[n - 1]`. Lanes: (offset, accumulator, ...).
///
/// The ISA's `xor_sources` folds in `ptrs[1..n]`, counting in `r10` from 1 (it may use `r9`,
/// `r11` and labels 4 and 6), and jumps to `5f` or falls through when done.
macro_rules! xor_template {
    ($isa:ident; $(($o:literal, $r:literal $(, $x:literal)*)),*) => {
        stride_loop!("";
            "mov r11, qword ptr [{ptrs}]\n",
            $(vload!($isa, $r, "r11", $o),)*
            "mov r10d, 1\n",
            $isa!(xor_sources; $(($o, $r $(, $x)*)),*),
            "5:\n",
            $(vstore!($isa, "{dst}", $o, $r),)*
        )
    };
}

/// Horner (P and Q). Lanes: (offset, P, Q, ...).
///
/// The ISA supplies `pq_setup` (its constants: `{k}` is [`PQ_CONSTS`], `{x}` [`PqArgs::x`]),
/// `pq_step` (`Q = 2 Q ^ D`, `P ^= D` for the source `D` at `r11`), `pq_mul2` (`Q = 2 Q`), and
/// `pq_recov`: with [`PQ_RECOV`], the end of a fused recovery (`pq_fused_recov!`), or only a
/// comment that names `{x}` where the ISA has none.
macro_rules! pq_template {
    ($isa:ident; $(($o:literal, $p:literal, $q:literal $(, $x:literal)*)),*) => {
        stride_loop!($isa!(pq_setup);
            "test {flags}, 1\n",
            "jz 3f\n",
            $(vload!($isa, $p, "{p}", $o),)*
            $(vload!($isa, $q, "{q}", $o),)*
            "xor r10d, r10d\n",
            "jmp 4f\n",
            "3:\n",
            "mov r11, qword ptr [{ptrs}]\n",
            $(vload!($isa, $p, "r11", $o),)*
            $(vcopy!($isa, $q, $p),)*
            "mov r10d, 1\n",
            "4:\n",
            "cmp r10, {n}\n",
            "jae 5f\n",
            loop_head!("6"),
            "mov r11, qword ptr [{ptrs} + r10*8]\n",
            $isa!(pq_step; $(($o, $p, $q $(, $x)*)),*),
            "inc r10\n",
            "cmp r10, {n}\n",
            "jb 6b\n",
            "5:\n",
            "mov r10, {shift}\n",
            "test r10, r10\n",
            "jz 7f\n",
            loop_head!("8"),
            $isa!(pq_mul2; $(($o, $p, $q $(, $x)*)),*),
            "dec r10\n",
            "jnz 8b\n",
            "7:\n",
            "test {flags}, 2\n",
            "jz 9f\n",
            $(vxor_mem!($isa, $p, "{p}", $o),)*
            $(vxor_mem!($isa, $q, "{q}", $o),)*
            "9:\n",
            $isa!(pq_recov; $(($o, $p, $q $(, $x)*)),*),
            "test {flags}, 4\n",
            "jnz 12f\n",
            $(vstore!($isa, "{p}", $o, $p),)*
            "12:\n",
            $(vstore!($isa, "{q}", $o, $q),)*
        )
    };
}

/// The fused recovery at the end of a Horner loop, for an ISA's `pq_recov`: with [`PQ_RECOV`],
/// `P' = p ^ P` and `Q' = q ^ Q`; the ISA's `math` (from the constants at `[{x} + 16]`, loaded by
/// its `pq_setup`) puts `Dx = a P' ^ b Q'` in the product register (it may overwrite Q'); then
/// `Dx` goes to P's register and `Dy = P' ^ Dx` to Q's. Lanes: (offset, P, Q, product).
macro_rules! pq_fused_recov {
    ($isa:ident, $math:expr; $(($o:literal, $p:literal, $q:literal, $d:literal)),*) => {
        concat!(
            "test {flags}, 8\n",
            "jz 14f\n",
            "mov r11, qword ptr [{x}]\n",
            "mov r10, qword ptr [{x} + 8]\n",
            $(vxor_mem!($isa, $p, "r11", $o),)*
            $(vxor_mem!($isa, $q, "r10", $o),)*
            $math,
            $(vxor!($isa, $q, $p, $d),)*
            $(vcopy!($isa, $p, $d),)*
            "14:\n",
        )
    };
}

/// Multiplication by a constant `c` through two `vpshufb` lookups, for the ISAs without GFNI:
/// `lo` and `hi` hold the products of `c` by the low and by the high nibbles, `mask` 0x0f
/// bytes. Leaves `c s` as `d ^ t` (`d` may be `s`). Lanes: (d, s, t).
macro_rules! nibble_mul {
    ($isa:ident, $lo:literal, $hi:literal, $mask:literal;
        $(($d:literal, $s:literal, $t:literal)),*) => {
        concat!(
            $("vpsrlw ", $t, ", ", $s, ", 4\n",)*
            $($isa!(and), " ", $d, ", ", $s, ", ", $mask, "\n",)*
            $($isa!(and), " ", $t, ", ", $t, ", ", $mask, "\n",)*
            $("vpshufb ", $d, ", ", $lo, ", ", $d, "\n",)*
            $("vpshufb ", $t, ", ", $hi, ", ", $t, "\n",)*
        )
    };
}

/// Two-data recovery: `P' = p ^ dx`, `Q' = q ^ dy`, `dx = a P' ^ b Q'`, `dy = P' ^ dx`. Lanes:
/// (offset, P', Q', product, ...).
///
/// The ISA supplies `recov2_setup` (its constants from `{k}`, a [`Consts`]) and `recov2_mul`
/// (`product = a P' ^ b Q'`; it may overwrite Q').
macro_rules! recov2_template {
    ($isa:ident; $(($o:literal, $px:literal, $qx:literal, $t:literal $(, $x:literal)*)),*) => {
        stride_loop!($isa!(recov2_setup);
            $(vload!($isa, $px, "{p}", $o),)*
            $(vload!($isa, $qx, "{q}", $o),)*
            $(vxor_mem!($isa, $px, "{dx}", $o),)*
            $(vxor_mem!($isa, $qx, "{dy}", $o),)*
            $isa!(recov2_mul; $(($o, $px, $qx, $t $(, $x)*)),*),
            $(vxor!($isa, $px, $px, $t),)*
            $(vstore!($isa, "{dx}", $o, $t),)*
            $(vstore!($isa, "{dy}", $o, $px),)*
        )
    };
}

/// Multiplication by a constant: `b = c * (a ^ b)`. Lanes: (offset, x, ...).
///
/// The ISA supplies `mul_setup` (its constants from `{k}`, a [`Consts`] of `c` and 0) and `mul`
/// (`x = c x`).
macro_rules! mul_template {
    ($isa:ident; $(($o:literal, $r:literal $(, $x:literal)*)),*) => {
        stride_loop!($isa!(mul_setup);
            $(vload!($isa, $r, "{a}", $o),)*
            $(vxor_mem!($isa, $r, "{b}", $o),)*
            $isa!(mul; $(($o, $r $(, $x)*)),*),
            $(vstore!($isa, "{b}", $o, $r),)*
        )
    };
}

// ---------------------------------------------------------------------------------------------
// Kernels.
// ---------------------------------------------------------------------------------------------

/// The `asm!` of one template loop over bytes `s..e` with `n` lanes of `$isa`: the loop's
/// operands `{end}`, `{stride}` and `r8` (from `s`) around the template's own. Every vector and
/// mask register is clobbered (`clobber_abi("C")`) and the stack is not used. The caller's
/// `unsafe` block says why its operands are valid.
macro_rules! loop_asm {
    ($isa:ident, $n:expr, $template:expr, $s:expr, $e:expr; $($operand:tt)*) => {
        core::arch::asm!(
            $template,
            end = in(reg) $e,
            stride = const $isa!(width) * $n,
            $($operand)*
            inout("r8") $s => _,
            clobber_abi("C"),
            options(nostack),
        )
    };
}

/// Runs `$kernel!(@loop ...)` (one `asm!` loop) with all `n` lanes over the largest multiple of
/// their stride in `start..end`, then with the first lane alone over the rest.
macro_rules! main_then_tail {
    ($kernel:ident, $isa:ident, $n:literal, [$l0:tt $(, $lane:tt)*],
        $start:expr, $end:expr, $args:tt) => {
        let (s, m, e) = super::x86::split($start, $end, $isa!(width) * $n);
        if s < m {
            $kernel!(@loop $isa, $n, [$l0 $(, $lane)*], $args, s, m);
        }
        if m < e {
            $kernel!(@loop $isa, 1, [$l0], $args, m, e);
        }
    };
}

/// Defines one operation's kernels, unrolled once, twice, four and eight times: as many as
/// there are names, the `k`-times unroll with the first `k` lanes.
macro_rules! unroll {
    ($kernel:ident, $isa:ident; $x1:ident; $l0:tt $(,)?) => {
        $kernel!($isa, $x1, 1, [$l0]);
    };
    ($kernel:ident, $isa:ident; $x1:ident, $x2:ident; $l0:tt, $l1:tt $(,)?) => {
        unroll!($kernel, $isa; $x1; $l0);
        $kernel!($isa, $x2, 2, [$l0, $l1]);
    };
    ($kernel:ident, $isa:ident; $x1:ident, $x2:ident, $x4:ident;
        $l0:tt, $l1:tt, $l2:tt, $l3:tt $(,)?) => {
        unroll!($kernel, $isa; $x1, $x2; $l0, $l1);
        $kernel!($isa, $x4, 4, [$l0, $l1, $l2, $l3]);
    };
    ($kernel:ident, $isa:ident; $x1:ident, $x2:ident, $x4:ident, $x8:ident;
        $l0:tt, $l1:tt, $l2:tt, $l3:tt, $l4:tt, $l5:tt, $l6:tt, $l7:tt $(,)?) => {
        unroll!($kernel, $isa; $x1, $x2, $x4; $l0, $l1, $l2, $l3);
        $kernel!($isa, $x8, 8, [$l0, $l1, $l2, $l3, $l4, $l5, $l6, $l7]);
    };
}

/// Defines a XOR kernel of `$isa` with `n` lanes (`xor_template!`).
macro_rules! xor_kernel {
    ($isa:ident, $name:ident, $n:literal, $lanes:tt) => {
        pub(super) fn $name(job: &mut super::XorJob<'_, '_>) {
            let mut ptrs = [core::ptr::null(); super::GROUP + 2];
            let (n, dst) = super::x86::xor_ptrs(job, &mut ptrs);
            main_then_tail!(xor_kernel, $isa, $n, $lanes, job.start, job.end, (ptrs, n, dst));
        }
    };
    (@loop $isa:ident, $n:literal, [$($lane:tt),*], ($ptrs:expr, $cnt:expr, $dst:expr),
        $s:expr, $e:expr) => {
        // SAFETY: by the invariant of `XorJob` and what `xor_ptrs` returns, every pointer in
        // `ptrs[..n]` and `dst` is valid for bytes `s..e` (within the job's range, as
        // `main_then_tail!` splits it), `dst` for writes; the template only touches those bytes.
        // The registers it writes are declared (`r8` to `r11`, and the vector registers through
        // `clobber_abi`); it does not use the stack. The engine only calls this kernel after the
        // implementation's `valid()` accepted the CPU, and inside an FPU section.
        unsafe {
            loop_asm!($isa, $n, xor_template!($isa; $($lane),*), $s, $e;
                ptrs = in(reg) $ptrs.as_ptr(),
                n = in(reg) $cnt,
                dst = in(reg) $dst,
                out("r9") _,
                out("r10") _,
                out("r11") _,
            );
        }
    };
}

/// Defines a Horner (P+Q) kernel of `$isa` with `n` lanes (`pq_template!`).
macro_rules! pq_kernel {
    ($isa:ident, $name:ident, $n:literal, $lanes:tt) => {
        pub(super) fn $name(job: &mut super::PqJob<'_, '_>) {
            let mut ptrs = [core::ptr::null(); super::GROUP];
            let mut a = super::x86::pq_ptrs(job, &mut ptrs);
            let local;
            a.x[2] = match a.coef {
                Some((ca, cb)) => {
                    local = $isa!(consts ca, cb);
                    local.0.as_ptr() as usize
                }
                None => super::x86::NO_RECOV.0.as_ptr() as usize,
            };
            let k = super::x86::PQ_CONSTS.as_ptr();
            main_then_tail!(pq_kernel, $isa, $n, $lanes, job.start, job.end, (ptrs, a, k));
        }
    };
    (@loop $isa:ident, $n:literal, [$($lane:tt),*], ($ptrs:expr, $a:expr, $k:expr),
        $s:expr, $e:expr) => {
        // SAFETY: by the invariants of `PqJob` and `PqArgs`, every pointer in `ptrs[..n]`, `p`
        // and `q` is valid for bytes `s..e` (within the job's range, as `main_then_tail!` splits
        // it), `p` and `q` for writes; `k` points to the 16 bytes of `PQ_CONSTS`, `x` to three
        // words: the recovery's P and Q (valid for the same bytes, read only with `PQ_RECOV`)
        // and 128 bytes of constants. The template only touches those bytes, and stores P only
        // without `PQ_NO_P`. The registers it writes are declared (`r8`, `r10`, `r11`, and the
        // vector and mask registers through `clobber_abi`); it does not use the stack. The engine
        // only calls this kernel after the implementation's `valid()` accepted the CPU, and
        // inside an FPU section.
        unsafe {
            loop_asm!($isa, $n, pq_template!($isa; $($lane),*), $s, $e;
                ptrs = in(reg) $ptrs.as_ptr(),
                n = in(reg) $a.n,
                p = in(reg) $a.p,
                q = in(reg) $a.q,
                flags = in(reg) $a.flags,
                shift = in(reg) $a.shift,
                k = in(reg) $k,
                x = in(reg) $a.x.as_ptr(),
                out("r10") _,
                out("r11") _,
            );
        }
    };
}

/// Defines a two-data recovery kernel of `$isa` with `n` lanes (`recov2_template!`).
macro_rules! recov2_kernel {
    ($isa:ident, $name:ident, $n:literal, $lanes:tt) => {
        pub(super) fn $name(job: &mut super::Recov2Job<'_>) {
            let c = $isa!(consts job.a, job.b);
            let k = c.0.as_ptr();
            let p = job.p.as_ptr();
            let q = job.q.as_ptr();
            let dx = job.dx.as_mut_ptr();
            let dy = job.dy.as_mut_ptr();
            main_then_tail!(recov2_kernel, $isa, $n, $lanes, job.start, job.end, (p, q, dx, dy, k));
        }
    };
    (@loop $isa:ident, $n:literal, [$($lane:tt),*],
        ($p:expr, $q:expr, $dx:expr, $dy:expr, $k:expr), $s:expr, $e:expr) => {
        // SAFETY: by the invariant of `Recov2Job`, `p`, `q`, `dx` and `dy` are valid for bytes
        // `s..e` (within the job's range, as `main_then_tail!` splits it), `dx` and `dy` for
        // writes, and `k` points to the 128 bytes of `c`. The registers the template writes are
        // declared (`r8`, and the vector registers through `clobber_abi`); it does not use the
        // stack. The engine only calls this kernel after the implementation's `valid()` accepted
        // the CPU, and inside an FPU section.
        unsafe {
            loop_asm!($isa, $n, recov2_template!($isa; $($lane),*), $s, $e;
                p = in(reg) $p,
                q = in(reg) $q,
                dx = in(reg) $dx,
                dy = in(reg) $dy,
                k = in(reg) $k,
            );
        }
    };
}

/// Defines a multiplication kernel of `$isa` with one lane (`mul_template!`): `e - s` is a
/// multiple of 64 bytes and so of its stride, and it needs no tail.
macro_rules! mul_kernel {
    ($isa:ident, $name:ident, 1, [$($lane:tt),*]) => {
        pub(super) fn $name(job: &mut super::MulJob<'_>) {
            let c = $isa!(consts job.c, 0);
            let k = c.0.as_ptr();
            let a = job.a.as_ptr();
            let b = job.b.as_mut_ptr();
            let (s, e) = (job.start, job.end);
            // SAFETY: by the invariant of `MulJob`, `a` and `b` are valid for bytes `s..e`, `b`
            // for writes, `e - s` is a multiple of 64 and so of the stride, and `k` points to
            // the 128 bytes of `c`. The registers the template writes are declared (`r8`, and
            // the vector registers through `clobber_abi`); it does not use the stack. The engine
            // only calls this kernel after the implementation's `valid()` accepted the CPU, and
            // inside an FPU section.
            unsafe {
                loop_asm!($isa, 1, mul_template!($isa; $($lane),*), s, e;
                    a = in(reg) a,
                    b = in(reg) b,
                    k = in(reg) k,
                );
            }
        }
    };
}
