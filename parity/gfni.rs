//! GFNI kernels on AVX-512 registers: multiplication by a constant is one `vgf2p8affineqb` with
//! that constant's 8x8 bit matrix in md's field (0x11d).
//!
//! `vgf2p8mulb` is not used: it multiplies in AES's field (0x11b), which gives different
//! products (2 * 0x80 is 0x1b there and 0x1d in md's field).

use super::{avx512, CpuFeatures, Impl};

fn valid(f: &CpuFeatures) -> bool {
    f.avx && f.avx2 && f.avx512f && f.avx512bw && f.avx512vl && f.gfni
}

/// Horner template. Lanes: (P, Q, data, byte offset). zmm31 holds the matrix of 2; zmm29 and
/// zmm30 the matrices of a fused recovery's `a` and `b`.
macro_rules! gfni_pq {
    ($stride:literal; $(($p:literal, $q:literal, $d:literal, $o:literal)),*) => { concat!(
        "vpbroadcastq zmm31, qword ptr [{k} + 8]\n",
        "mov r11, qword ptr [{x} + 16]\n",
        "vpbroadcastq zmm29, qword ptr [r11]\n",
        "vpbroadcastq zmm30, qword ptr [r11 + 8]\n",
        "2:\n",
        "test {flags}, 1\n",
        "jz 3f\n",
        $("vmovdqu64 ", $p, ", zmmword ptr [{p} + r8 + ", $o, "]\n",)*
        $("vmovdqu64 ", $q, ", zmmword ptr [{q} + r8 + ", $o, "]\n",)*
        "xor r10d, r10d\n",
        "jmp 4f\n",
        "3:\n",
        "mov r11, qword ptr [{ptrs}]\n",
        $("vmovdqu64 ", $p, ", zmmword ptr [r11 + r8 + ", $o, "]\n",)*
        $("vmovdqa64 ", $q, ", ", $p, "\n",)*
        "mov r10d, 1\n",
        "4:\n",
        "cmp r10, {n}\n",
        "jae 5f\n",
        "6:\n",
        "mov r11, qword ptr [{ptrs} + r10*8]\n",
        $("vgf2p8affineqb ", $q, ", ", $q, ", zmm31, 0\n",)*
        $("vmovdqu64 ", $d, ", zmmword ptr [r11 + r8 + ", $o, "]\n",)*
        $("vpxorq ", $q, ", ", $q, ", ", $d, "\n",)*
        $("vpxorq ", $p, ", ", $p, ", ", $d, "\n",)*
        "inc r10\n",
        "cmp r10, {n}\n",
        "jb 6b\n",
        "5:\n",
        "mov r10, {shift}\n",
        "test r10, r10\n",
        "jz 7f\n",
        "8:\n",
        $("vgf2p8affineqb ", $q, ", ", $q, ", zmm31, 0\n",)*
        "dec r10\n",
        "jnz 8b\n",
        "7:\n",
        "test {flags}, 2\n",
        "jz 9f\n",
        $("vpxorq ", $p, ", ", $p, ", zmmword ptr [{p} + r8 + ", $o, "]\n",)*
        $("vpxorq ", $q, ", ", $q, ", zmmword ptr [{q} + r8 + ", $o, "]\n",)*
        "9:\n",
        "test {flags}, 8\n",
        "jz 14f\n",
        "mov r11, qword ptr [{x}]\n",
        "mov r10, qword ptr [{x} + 8]\n",
        $("vpxorq ", $p, ", ", $p, ", zmmword ptr [r11 + r8 + ", $o, "]\n",)*
        $("vpxorq ", $q, ", ", $q, ", zmmword ptr [r10 + r8 + ", $o, "]\n",)*
        $("vgf2p8affineqb ", $d, ", ", $p, ", zmm29, 0\n",)*
        $("vgf2p8affineqb ", $q, ", ", $q, ", zmm30, 0\n",)*
        $("vpxorq ", $d, ", ", $d, ", ", $q, "\n",)*
        $("vpxorq ", $q, ", ", $p, ", ", $d, "\n",)*
        $("vmovdqa64 ", $p, ", ", $d, "\n",)*
        "14:\n",
        "test {flags}, 4\n",
        "jnz 12f\n",
        $("vmovdqu64 zmmword ptr [{p} + r8 + ", $o, "], ", $p, "\n",)*
        "12:\n",
        $("vmovdqu64 zmmword ptr [{q} + r8 + ", $o, "], ", $q, "\n",)*
        "add r8, ", $stride, "\n",
        "cmp r8, {end}\n",
        "jb 2b\n",
        "vzeroupper\n",
    )};
}

/// Two-data recovery template. Lanes: (P', Q', t, byte offset). zmm30 and zmm31 hold the
/// matrices of `a` and `b`.
macro_rules! gfni_recov2 {
    ($stride:literal; $(($px:literal, $qx:literal, $t:literal, $o:literal)),*) => { concat!(
        "vpbroadcastq zmm30, qword ptr [{k}]\n",
        "vpbroadcastq zmm31, qword ptr [{k} + 8]\n",
        "2:\n",
        $("vmovdqu64 ", $px, ", zmmword ptr [{p} + r8 + ", $o, "]\n",)*
        $("vmovdqu64 ", $qx, ", zmmword ptr [{q} + r8 + ", $o, "]\n",)*
        $("vpxorq ", $px, ", ", $px, ", zmmword ptr [{dx} + r8 + ", $o, "]\n",)*
        $("vpxorq ", $qx, ", ", $qx, ", zmmword ptr [{dy} + r8 + ", $o, "]\n",)*
        $("vgf2p8affineqb ", $t, ", ", $px, ", zmm30, 0\n",)*
        $("vgf2p8affineqb ", $qx, ", ", $qx, ", zmm31, 0\n",)*
        $("vpxorq ", $t, ", ", $t, ", ", $qx, "\n",)*
        $("vpxorq ", $px, ", ", $px, ", ", $t, "\n",)*
        $("vmovdqu64 zmmword ptr [{dx} + r8 + ", $o, "], ", $t, "\n",)*
        $("vmovdqu64 zmmword ptr [{dy} + r8 + ", $o, "], ", $px, "\n",)*
        "add r8, ", $stride, "\n",
        "cmp r8, {end}\n",
        "jb 2b\n",
        "vzeroupper\n",
    )};
}

/// Multiplication template, `b = c * (a ^ b)`. Lanes: (x, byte offset). zmm30 holds the matrix.
macro_rules! gfni_mul {
    ($stride:literal; $(($x:literal, $o:literal)),*) => { concat!(
        "vpbroadcastq zmm30, qword ptr [{k}]\n",
        "2:\n",
        $("vmovdqu64 ", $x, ", zmmword ptr [{a} + r8 + ", $o, "]\n",)*
        $("vpxorq ", $x, ", ", $x, ", zmmword ptr [{b} + r8 + ", $o, "]\n",)*
        $("vgf2p8affineqb ", $x, ", ", $x, ", zmm30, 0\n",)*
        $("vmovdqu64 zmmword ptr [{b} + r8 + ", $o, "], ", $x, "\n",)*
        "add r8, ", $stride, "\n",
        "cmp r8, {end}\n",
        "jb 2b\n",
        "vzeroupper\n",
    )};
}

pq_kernel!(
    pq_x1,
    gfni_pq,
    matrices,
    64,
    [("zmm0", "zmm4", "zmm8", "0")],
    64,
    [("zmm0", "zmm4", "zmm8", "0")]
);
pq_kernel!(
    pq_x2,
    gfni_pq,
    matrices,
    128,
    [
        ("zmm0", "zmm4", "zmm8", "0"),
        ("zmm1", "zmm5", "zmm9", "64")
    ],
    64,
    [("zmm0", "zmm4", "zmm8", "0")]
);
pq_kernel!(
    pq_x4,
    gfni_pq,
    matrices,
    256,
    [
        ("zmm0", "zmm4", "zmm8", "0"),
        ("zmm1", "zmm5", "zmm9", "64"),
        ("zmm2", "zmm6", "zmm10", "128"),
        ("zmm3", "zmm7", "zmm11", "192")
    ],
    64,
    [("zmm0", "zmm4", "zmm8", "0")]
);

recov2_kernel!(
    recov2_x1,
    gfni_recov2,
    matrices,
    64,
    [("zmm0", "zmm1", "zmm2", "0")],
    64,
    [("zmm0", "zmm1", "zmm2", "0")]
);
recov2_kernel!(
    recov2_x2,
    gfni_recov2,
    matrices,
    128,
    [
        ("zmm0", "zmm1", "zmm2", "0"),
        ("zmm3", "zmm4", "zmm5", "64")
    ],
    64,
    [("zmm0", "zmm1", "zmm2", "0")]
);
recov2_kernel!(
    recov2_x4,
    gfni_recov2,
    matrices,
    256,
    [
        ("zmm0", "zmm1", "zmm2", "0"),
        ("zmm3", "zmm4", "zmm5", "64"),
        ("zmm6", "zmm7", "zmm8", "128"),
        ("zmm9", "zmm10", "zmm11", "192")
    ],
    64,
    [("zmm0", "zmm1", "zmm2", "0")]
);

mul_kernel!(mul_x1, gfni_mul, matrices, 64, [("zmm0", "0")]);

/// GFNI on AVX-512, one vector per step.
pub(super) static GFNI512X1: Impl = Impl {
    name: "gfni512x1",
    priority: 40,
    valid,
    simd: true,
    fused_recov: true,
    xor: avx512::xor_x1,
    pq: pq_x1,
    recov2: recov2_x1,
    mulc: mul_x1,
};

/// GFNI on AVX-512, two vectors per step.
pub(super) static GFNI512X2: Impl = Impl {
    name: "gfni512x2",
    priority: 41,
    valid,
    simd: true,
    fused_recov: true,
    xor: avx512::xor_x2,
    pq: pq_x2,
    recov2: recov2_x2,
    mulc: mul_x1,
};

/// GFNI on AVX-512, four vectors per step.
pub(super) static GFNI512X4: Impl = Impl {
    name: "gfni512x4",
    priority: 42,
    valid,
    simd: true,
    fused_recov: true,
    xor: avx512::xor_auto,
    pq: pq_x4,
    recov2: recov2_x4,
    mulc: mul_x1,
};
