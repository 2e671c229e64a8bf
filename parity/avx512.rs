//! AVX-512 (F + BW) kernels: 64-byte `zmm` vectors, unrolled one, two and four times.
//!
//! Multiplication by 2 takes the top bits into a mask register (`vpmovb2m`), doubles with
//! `vpaddb`, and XORs 0x1d into the masked bytes together with the data through one
//! `vpternlogq`. Multiplication by other constants (recovery) looks the nibbles up with `vpshufb`.
//!
//! The loops are the shared templates of `x86`; this file holds what AVX-512 does in them.

use super::{CpuFeatures, Impl};

fn valid(f: &CpuFeatures) -> bool {
    f.avx && f.avx2 && f.avx512f && f.avx512bw && f.avx512vl
}

/// What AVX-512 does in the templates of `x86`.
macro_rules! avx512 {
    // XOR. Lanes: (offset, accumulator, temporary). Sources are taken two at a time (one load
    // and one three-way `vpternlogq` with a memory operand per pair and lane).
    (xor_sources; $(($o:literal, $r:literal, $t:literal)),*) => { concat!(
        "lea r9, [{n} - 1]\n",
        "cmp r10, r9\n",
        "jae 4f\n",
        loop_head!("6"),
        "mov r11, qword ptr [{ptrs} + r10*8]\n",
        "mov r9, qword ptr [{ptrs} + r10*8 + 8]\n",
        $(vload!(avx512, $t, "r11", $o),)*
        $("vpternlogq ", $r, ", ", $t, ", zmmword ptr [r9 + r8 + ", $o, "], 0x96\n",)*
        "add r10, 2\n",
        "lea r9, [{n} - 1]\n",
        "cmp r10, r9\n",
        "jb 6b\n",
        "4:\n",
        "cmp r10, {n}\n",
        "jae 5f\n",
        "mov r11, qword ptr [{ptrs} + r10*8]\n",
        $(vxor_mem!(avx512, $r, "r11", $o),)*
    )};

    // Horner. Lanes: (offset, P, Q, temporary, data, mask register). zmm31 holds 0x1d bytes;
    // zmm16..zmm20 the nibble tables and mask of a fused recovery.
    (pq_setup) => { concat!(
        "vpbroadcastb zmm31, byte ptr [{k}]\n",
        "mov r11, qword ptr [{x} + 16]\n",
        avx512!(nibble_tables "r11"),
    )};
    (pq_step; $(($o:literal, $p:literal, $q:literal, $t:literal, $d:literal, $k:literal)),*) => {
        concat!(
            $("vpmovb2m ", $k, ", ", $q, "\n",)*
            $(vload!(avx512, $d, "r11", $o),)*
            $("vpaddb ", $q, ", ", $q, ", ", $q, "\n",)*
            $("vmovdqu8 ", $t, " {{", $k, "}}{{z}}, zmm31\n",)*
            $("vpxorq ", $p, ", ", $p, ", ", $d, "\n",)*
            $("vpternlogq ", $q, ", ", $t, ", ", $d, ", 0x96\n",)*
        )
    };
    (pq_mul2; $(($o:literal, $p:literal, $q:literal, $t:literal, $d:literal, $k:literal)),*) => {
        concat!(
            $("vpmovb2m ", $k, ", ", $q, "\n",)*
            $("vpaddb ", $q, ", ", $q, ", ", $q, "\n",)*
            $("vmovdqu8 ", $t, " {{", $k, "}}{{z}}, zmm31\n",)*
            $("vpxorq ", $q, ", ", $q, ", ", $t, "\n",)*
        )
    };
    // The recovery's product goes to the data register, with the same tables as `recov2_mul`.
    (pq_recov; $(($o:literal, $p:literal, $q:literal, $t:literal, $d:literal, $k:literal)),*) => {
        pq_fused_recov!(avx512, avx512!(recov2_mul; $(($o, $p, $q, $d, $t)),*);
            $(($o, $p, $q, $d)),*)
    };

    // Two-data recovery. Lanes: (offset, P', Q', t1, t2). zmm16..zmm19 hold the nibble tables of
    // `a` and `b`, zmm20 the 0x0f mask.
    (recov2_setup) => {
        avx512!(nibble_tables "{k}")
    };
    (recov2_mul; $(($o:literal, $px:literal, $qx:literal, $t1:literal, $t2:literal)),*) => {
        concat!(
            nibble_mul!(avx512, "zmm16", "zmm17", "zmm20"; $(($t1, $px, $t2)),*),
            $(vxor!(avx512, $t1, $t1, $t2),)*
            nibble_mul!(avx512, "zmm18", "zmm19", "zmm20"; $(($qx, $qx, $t2)),*),
            $("vpternlogq ", $t1, ", ", $qx, ", ", $t2, ", 0x96\n",)*
        )
    };

    // Multiplication by a constant. Lanes: (offset, x, t). zmm16 and zmm17 hold the nibble
    // tables, zmm20 the 0x0f mask.
    (mul_setup) => { concat!(
        "vbroadcasti32x4 zmm16, xmmword ptr [{k}]\n",
        "vbroadcasti32x4 zmm17, xmmword ptr [{k} + 16]\n",
        "vpbroadcastb zmm20, byte ptr [{k} + 64]\n",
    )};
    (mul; $(($o:literal, $x:literal, $t:literal)),*) => { concat!(
        nibble_mul!(avx512, "zmm16", "zmm17", "zmm20"; $(($x, $x, $t)),*),
        $(vxor!(avx512, $x, $x, $t),)*
    )};

    // The nibble tables of `a` and `b` into zmm16..zmm19 and the 0x0f mask into zmm20, from the
    // `Consts` at `base`.
    (nibble_tables $base:literal) => { concat!(
        "vbroadcasti32x4 zmm16, xmmword ptr [", $base, "]\n",
        "vbroadcasti32x4 zmm17, xmmword ptr [", $base, " + 16]\n",
        "vbroadcasti32x4 zmm18, xmmword ptr [", $base, " + 32]\n",
        "vbroadcasti32x4 zmm19, xmmword ptr [", $base, " + 48]\n",
        "vpbroadcastb zmm20, byte ptr [", $base, " + 64]\n",
    )};
    (consts $a:expr, $b:expr) => {
        super::x86::Consts::nibbles($a, $b)
    };
    ($word:ident) => {
        zmm!($word)
    };
}

unroll!(xor_kernel, avx512; xor_x1, xor_x2, xor_x4, xor_x8;
    (0, "zmm0", "zmm8"),
    (64, "zmm1", "zmm9"),
    (128, "zmm2", "zmm10"),
    (192, "zmm3", "zmm11"),
    (256, "zmm4", "zmm12"),
    (320, "zmm5", "zmm13"),
    (384, "zmm6", "zmm14"),
    (448, "zmm7", "zmm15"),
);

/// XOR with the unroll that pays for the stripe: eight vectors per step while the sources fit in
/// L1 with room to spare, four beyond (fewer lines in flight per source when they come from L2).
pub(super) fn xor_auto(job: &mut super::XorJob<'_, '_>) {
    if job.srcs.len() <= 8 {
        xor_x8(job)
    } else {
        xor_x4(job)
    }
}

unroll!(pq_kernel, avx512; pq_x1, pq_x2, pq_x4;
    (0, "zmm0", "zmm4", "zmm8", "zmm12", "k1"),
    (64, "zmm1", "zmm5", "zmm9", "zmm13", "k2"),
    (128, "zmm2", "zmm6", "zmm10", "zmm14", "k3"),
    (192, "zmm3", "zmm7", "zmm11", "zmm15", "k4"),
);

unroll!(recov2_kernel, avx512; recov2_x1, recov2_x2, recov2_x4;
    (0, "zmm0", "zmm1", "zmm2", "zmm3"),
    (64, "zmm4", "zmm5", "zmm6", "zmm7"),
    (128, "zmm8", "zmm9", "zmm10", "zmm11"),
    (192, "zmm12", "zmm13", "zmm14", "zmm15"),
);

unroll!(mul_kernel, avx512; mul_x1; (0, "zmm0", "zmm1"));

/// AVX-512, one vector per step.
pub(super) static AVX512X1: Impl = Impl {
    name: "avx512x1",
    priority: 30,
    valid,
    simd: true,
    fused_recov: true,
    xor: xor_x1,
    pq: pq_x1,
    recov2: recov2_x1,
    mulc: mul_x1,
};

/// AVX-512, two vectors per step.
pub(super) static AVX512X2: Impl = Impl {
    name: "avx512x2",
    priority: 31,
    valid,
    simd: true,
    fused_recov: true,
    xor: xor_x2,
    pq: pq_x2,
    recov2: recov2_x2,
    mulc: mul_x1,
};

/// AVX-512, four vectors per step.
pub(super) static AVX512X4: Impl = Impl {
    name: "avx512x4",
    priority: 32,
    valid,
    simd: true,
    fused_recov: true,
    xor: xor_auto,
    pq: pq_x4,
    recov2: recov2_x4,
    mulc: mul_x1,
};
