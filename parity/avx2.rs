//! AVX2 kernels: 32-byte `ymm` vectors, unrolled one, two and four times.
//!
//! Multiplication by 2 is lib/raid6's: the bytes with the top bit set become 0xff by a signed
//! compare with zero, are masked to 0x1d and XORed into the doubled bytes. Multiplication by
//! other constants (recovery) looks the two nibbles up with `vpshufb`.
//!
//! The loops are the shared templates of `x86`; this file holds what AVX2 does in them.

use super::{CpuFeatures, Impl};

fn valid(f: &CpuFeatures) -> bool {
    f.avx && f.avx2
}

/// What AVX2 does in the templates of `x86`.
macro_rules! avx2 {
    // XOR. Lanes: (offset, accumulator).
    (xor_sources; $(($o:literal, $r:literal)),*) => { concat!(
        "cmp r10, {n}\n",
        "jae 5f\n",
        loop_head!("6"),
        "mov r11, qword ptr [{ptrs} + r10*8]\n",
        $(vxor_mem!(avx2, $r, "r11", $o),)*
        "inc r10\n",
        "cmp r10, {n}\n",
        "jb 6b\n",
    )};

    // Horner. Lanes: (offset, P, Q, temporary). ymm14 holds 0x1d bytes, ymm15 zero.
    (pq_setup) => { concat!(
        "vpbroadcastb ymm14, byte ptr [{k}]\n",
        "vpxor xmm15, xmm15, xmm15\n",
    )};
    (pq_mul2; $(($o:literal, $p:literal, $q:literal, $t:literal)),*) => { concat!(
        $("vpcmpgtb ", $t, ", ymm15, ", $q, "\n",)*
        $("vpaddb ", $q, ", ", $q, ", ", $q, "\n",)*
        $("vpand ", $t, ", ", $t, ", ymm14\n",)*
        $("vpxor ", $q, ", ", $q, ", ", $t, "\n",)*
    )};
    (pq_step; $(($o:literal, $p:literal, $q:literal, $t:literal)),*) => { concat!(
        avx2!(pq_mul2; $(($o, $p, $q, $t)),*),
        $(vload!(avx2, $t, "r11", $o),)*
        $("vpxor ", $q, ", ", $q, ", ", $t, "\n",)*
        $("vpxor ", $p, ", ", $p, ", ", $t, "\n",)*
    )};
    (pq_recov; $($lane:tt),*) => {
        "# no fused recovery here ({x} unused)\n"
    };

    // Two-data recovery. Lanes: (offset, P', Q', t1, t2). ymm8..ymm11 hold the nibble tables of
    // `a` and `b`, ymm15 the 0x0f mask.
    (recov2_setup) => { concat!(
        "vbroadcasti128 ymm8, xmmword ptr [{k}]\n",
        "vbroadcasti128 ymm9, xmmword ptr [{k} + 16]\n",
        "vbroadcasti128 ymm10, xmmword ptr [{k} + 32]\n",
        "vbroadcasti128 ymm11, xmmword ptr [{k} + 48]\n",
        "vpbroadcastb ymm15, byte ptr [{k} + 64]\n",
    )};
    (recov2_mul; $(($o:literal, $px:literal, $qx:literal, $t1:literal, $t2:literal)),*) => {
        concat!(
            nibble_mul!(avx2, "ymm8", "ymm9", "ymm15"; $(($t1, $px, $t2)),*),
            $(vxor!(avx2, $t1, $t1, $t2),)*
            nibble_mul!(avx2, "ymm10", "ymm11", "ymm15"; $(($qx, $qx, $t2)),*),
            $(vxor!(avx2, $t1, $t1, $qx),)*
            $(vxor!(avx2, $t1, $t1, $t2),)*
        )
    };

    // Multiplication by a constant. Lanes: (offset, x, t). ymm8 and ymm9 hold the nibble tables,
    // ymm15 the 0x0f mask.
    (mul_setup) => { concat!(
        "vbroadcasti128 ymm8, xmmword ptr [{k}]\n",
        "vbroadcasti128 ymm9, xmmword ptr [{k} + 16]\n",
        "vpbroadcastb ymm15, byte ptr [{k} + 64]\n",
    )};
    (mul; $(($o:literal, $x:literal, $t:literal)),*) => { concat!(
        nibble_mul!(avx2, "ymm8", "ymm9", "ymm15"; $(($x, $x, $t)),*),
        $(vxor!(avx2, $x, $x, $t),)*
    )};

    (consts $a:expr, $b:expr) => {
        super::x86::Consts::nibbles($a, $b)
    };
    ($word:ident) => {
        ymm!($word)
    };
}

unroll!(xor_kernel, avx2; xor_x1, xor_x2, xor_x4;
    (0, "ymm0"),
    (32, "ymm1"),
    (64, "ymm2"),
    (96, "ymm3"),
);

unroll!(pq_kernel, avx2; pq_x1, pq_x2, pq_x4;
    (0, "ymm0", "ymm4", "ymm8"),
    (32, "ymm1", "ymm5", "ymm9"),
    (64, "ymm2", "ymm6", "ymm10"),
    (96, "ymm3", "ymm7", "ymm11"),
);

// Two lanes at most: each takes four of the sixteen registers, and the tables five more.
unroll!(recov2_kernel, avx2; recov2_x1, recov2_x2;
    (0, "ymm0", "ymm1", "ymm2", "ymm3"),
    (32, "ymm4", "ymm5", "ymm6", "ymm7"),
);

unroll!(mul_kernel, avx2; mul_x1; (0, "ymm0", "ymm1"));

/// AVX2, one vector per step.
pub(super) static AVX2X1: Impl = Impl {
    name: "avx2x1",
    priority: 20,
    valid,
    simd: true,
    fused_recov: false,
    xor: xor_x1,
    pq: pq_x1,
    recov2: recov2_x1,
    mulc: mul_x1,
};

/// AVX2, two vectors per step.
pub(super) static AVX2X2: Impl = Impl {
    name: "avx2x2",
    priority: 21,
    valid,
    simd: true,
    fused_recov: false,
    xor: xor_x2,
    pq: pq_x2,
    recov2: recov2_x2,
    mulc: mul_x1,
};

/// AVX2, four vectors per step.
pub(super) static AVX2X4: Impl = Impl {
    name: "avx2x4",
    priority: 22,
    valid,
    simd: true,
    fused_recov: false,
    xor: xor_x4,
    pq: pq_x4,
    recov2: recov2_x2,
    mulc: mul_x1,
};
