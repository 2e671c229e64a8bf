//! AVX2 kernels: 32-byte `ymm` vectors, unrolled one, two and four times.
//!
//! Multiplication by 2 is lib/raid6's: the bytes with the top bit set become 0xff by a signed
//! compare with zero, are masked to 0x1d and XORed into the doubled bytes. Multiplication by
//! other constants (recovery) looks the two nibbles up with `vpshufb`.

use super::{CpuFeatures, Impl};

fn valid(f: &CpuFeatures) -> bool {
    f.avx && f.avx2
}

/// XOR template. Lanes: (accumulator, byte offset).
macro_rules! avx2_xor {
    ($stride:literal; $(($r:literal, $o:literal)),*) => { concat!(
        "2:\n",
        "mov r11, qword ptr [{ptrs}]\n",
        $("vmovdqu ", $r, ", ymmword ptr [r11 + r8 + ", $o, "]\n",)*
        "mov r10d, 1\n",
        "cmp r10, {n}\n",
        "jae 5f\n",
        "6:\n",
        "mov r11, qword ptr [{ptrs} + r10*8]\n",
        $("vpxor ", $r, ", ", $r, ", ymmword ptr [r11 + r8 + ", $o, "]\n",)*
        "inc r10\n",
        "cmp r10, {n}\n",
        "jb 6b\n",
        "5:\n",
        $("vmovdqu ymmword ptr [{dst} + r8 + ", $o, "], ", $r, "\n",)*
        "add r8, ", $stride, "\n",
        "cmp r8, {end}\n",
        "jb 2b\n",
        "vzeroupper\n",
    )};
}

/// Horner template. Lanes: (P, Q, temporary, byte offset). ymm14 holds 0x1d bytes, ymm15 zero.
macro_rules! avx2_pq {
    ($stride:literal; $(($p:literal, $q:literal, $t:literal, $o:literal)),*) => { concat!(
        "# no fused recovery here ({x} unused)\n",
        "vpbroadcastb ymm14, byte ptr [{k}]\n",
        "vpxor xmm15, xmm15, xmm15\n",
        "2:\n",
        "test {flags}, 1\n",
        "jz 3f\n",
        $("vmovdqu ", $p, ", ymmword ptr [{p} + r8 + ", $o, "]\n",)*
        $("vmovdqu ", $q, ", ymmword ptr [{q} + r8 + ", $o, "]\n",)*
        "xor r10d, r10d\n",
        "jmp 4f\n",
        "3:\n",
        "mov r11, qword ptr [{ptrs}]\n",
        $("vmovdqu ", $p, ", ymmword ptr [r11 + r8 + ", $o, "]\n",)*
        $("vmovdqa ", $q, ", ", $p, "\n",)*
        "mov r10d, 1\n",
        "4:\n",
        "cmp r10, {n}\n",
        "jae 5f\n",
        "6:\n",
        "mov r11, qword ptr [{ptrs} + r10*8]\n",
        $("vpcmpgtb ", $t, ", ymm15, ", $q, "\n",)*
        $("vpaddb ", $q, ", ", $q, ", ", $q, "\n",)*
        $("vpand ", $t, ", ", $t, ", ymm14\n",)*
        $("vpxor ", $q, ", ", $q, ", ", $t, "\n",)*
        $("vmovdqu ", $t, ", ymmword ptr [r11 + r8 + ", $o, "]\n",)*
        $("vpxor ", $q, ", ", $q, ", ", $t, "\n",)*
        $("vpxor ", $p, ", ", $p, ", ", $t, "\n",)*
        "inc r10\n",
        "cmp r10, {n}\n",
        "jb 6b\n",
        "5:\n",
        "mov r10, {shift}\n",
        "test r10, r10\n",
        "jz 7f\n",
        "8:\n",
        $("vpcmpgtb ", $t, ", ymm15, ", $q, "\n",)*
        $("vpaddb ", $q, ", ", $q, ", ", $q, "\n",)*
        $("vpand ", $t, ", ", $t, ", ymm14\n",)*
        $("vpxor ", $q, ", ", $q, ", ", $t, "\n",)*
        "dec r10\n",
        "jnz 8b\n",
        "7:\n",
        "test {flags}, 2\n",
        "jz 9f\n",
        $("vpxor ", $p, ", ", $p, ", ymmword ptr [{p} + r8 + ", $o, "]\n",)*
        $("vpxor ", $q, ", ", $q, ", ymmword ptr [{q} + r8 + ", $o, "]\n",)*
        "9:\n",
        "test {flags}, 4\n",
        "jnz 12f\n",
        $("vmovdqu ymmword ptr [{p} + r8 + ", $o, "], ", $p, "\n",)*
        "12:\n",
        $("vmovdqu ymmword ptr [{q} + r8 + ", $o, "], ", $q, "\n",)*
        "add r8, ", $stride, "\n",
        "cmp r8, {end}\n",
        "jb 2b\n",
        "vzeroupper\n",
    )};
}

/// Two-data recovery template. Lanes: (P', Q', t1, t2, byte offset). ymm8..ymm11 hold the
/// nibble tables of `a` and `b`, ymm15 the 0x0f mask.
macro_rules! avx2_recov2 {
    ($stride:literal; $(($px:literal, $qx:literal, $t1:literal, $t2:literal, $o:literal)),*) => { concat!(
        "vbroadcasti128 ymm8, xmmword ptr [{k}]\n",
        "vbroadcasti128 ymm9, xmmword ptr [{k} + 16]\n",
        "vbroadcasti128 ymm10, xmmword ptr [{k} + 32]\n",
        "vbroadcasti128 ymm11, xmmword ptr [{k} + 48]\n",
        "vpbroadcastb ymm15, byte ptr [{k} + 64]\n",
        "2:\n",
        $("vmovdqu ", $px, ", ymmword ptr [{p} + r8 + ", $o, "]\n",)*
        $("vmovdqu ", $qx, ", ymmword ptr [{q} + r8 + ", $o, "]\n",)*
        $("vpxor ", $px, ", ", $px, ", ymmword ptr [{dx} + r8 + ", $o, "]\n",)*
        $("vpxor ", $qx, ", ", $qx, ", ymmword ptr [{dy} + r8 + ", $o, "]\n",)*
        $("vpsrlw ", $t2, ", ", $px, ", 4\n",)*
        $("vpand ", $t1, ", ", $px, ", ymm15\n",)*
        $("vpand ", $t2, ", ", $t2, ", ymm15\n",)*
        $("vpshufb ", $t1, ", ymm8, ", $t1, "\n",)*
        $("vpshufb ", $t2, ", ymm9, ", $t2, "\n",)*
        $("vpxor ", $t1, ", ", $t1, ", ", $t2, "\n",)*
        $("vpsrlw ", $t2, ", ", $qx, ", 4\n",)*
        $("vpand ", $qx, ", ", $qx, ", ymm15\n",)*
        $("vpand ", $t2, ", ", $t2, ", ymm15\n",)*
        $("vpshufb ", $qx, ", ymm10, ", $qx, "\n",)*
        $("vpshufb ", $t2, ", ymm11, ", $t2, "\n",)*
        $("vpxor ", $t1, ", ", $t1, ", ", $qx, "\n",)*
        $("vpxor ", $t1, ", ", $t1, ", ", $t2, "\n",)*
        $("vpxor ", $px, ", ", $px, ", ", $t1, "\n",)*
        $("vmovdqu ymmword ptr [{dx} + r8 + ", $o, "], ", $t1, "\n",)*
        $("vmovdqu ymmword ptr [{dy} + r8 + ", $o, "], ", $px, "\n",)*
        "add r8, ", $stride, "\n",
        "cmp r8, {end}\n",
        "jb 2b\n",
        "vzeroupper\n",
    )};
}

/// Multiplication template, `b = c * (a ^ b)`. Lanes: (x, t, byte offset).
macro_rules! avx2_mul {
    ($stride:literal; $(($x:literal, $t:literal, $o:literal)),*) => { concat!(
        "vbroadcasti128 ymm8, xmmword ptr [{k}]\n",
        "vbroadcasti128 ymm9, xmmword ptr [{k} + 16]\n",
        "vpbroadcastb ymm15, byte ptr [{k} + 64]\n",
        "2:\n",
        $("vmovdqu ", $x, ", ymmword ptr [{a} + r8 + ", $o, "]\n",)*
        $("vpxor ", $x, ", ", $x, ", ymmword ptr [{b} + r8 + ", $o, "]\n",)*
        $("vpsrlw ", $t, ", ", $x, ", 4\n",)*
        $("vpand ", $x, ", ", $x, ", ymm15\n",)*
        $("vpand ", $t, ", ", $t, ", ymm15\n",)*
        $("vpshufb ", $x, ", ymm8, ", $x, "\n",)*
        $("vpshufb ", $t, ", ymm9, ", $t, "\n",)*
        $("vpxor ", $x, ", ", $x, ", ", $t, "\n",)*
        $("vmovdqu ymmword ptr [{b} + r8 + ", $o, "], ", $x, "\n",)*
        "add r8, ", $stride, "\n",
        "cmp r8, {end}\n",
        "jb 2b\n",
        "vzeroupper\n",
    )};
}

xor_kernel!(xor_x1, avx2_xor, 32, [("ymm0", "0")], 32, [("ymm0", "0")]);
xor_kernel!(
    xor_x2,
    avx2_xor,
    64,
    [("ymm0", "0"), ("ymm1", "32")],
    32,
    [("ymm0", "0")]
);
xor_kernel!(
    xor_x4,
    avx2_xor,
    128,
    [
        ("ymm0", "0"),
        ("ymm1", "32"),
        ("ymm2", "64"),
        ("ymm3", "96")
    ],
    32,
    [("ymm0", "0")]
);

pq_kernel!(
    pq_x1,
    avx2_pq,
    nibbles,
    32,
    [("ymm0", "ymm4", "ymm8", "0")],
    32,
    [("ymm0", "ymm4", "ymm8", "0")]
);
pq_kernel!(
    pq_x2,
    avx2_pq,
    nibbles,
    64,
    [
        ("ymm0", "ymm4", "ymm8", "0"),
        ("ymm1", "ymm5", "ymm9", "32")
    ],
    32,
    [("ymm0", "ymm4", "ymm8", "0")]
);
pq_kernel!(
    pq_x4,
    avx2_pq,
    nibbles,
    128,
    [
        ("ymm0", "ymm4", "ymm8", "0"),
        ("ymm1", "ymm5", "ymm9", "32"),
        ("ymm2", "ymm6", "ymm10", "64"),
        ("ymm3", "ymm7", "ymm11", "96")
    ],
    32,
    [("ymm0", "ymm4", "ymm8", "0")]
);

recov2_kernel!(
    recov2_x1,
    avx2_recov2,
    nibbles,
    32,
    [("ymm0", "ymm1", "ymm2", "ymm3", "0")],
    32,
    [("ymm0", "ymm1", "ymm2", "ymm3", "0")]
);
recov2_kernel!(
    recov2_x2,
    avx2_recov2,
    nibbles,
    64,
    [
        ("ymm0", "ymm1", "ymm2", "ymm3", "0"),
        ("ymm4", "ymm5", "ymm6", "ymm7", "32")
    ],
    32,
    [("ymm0", "ymm1", "ymm2", "ymm3", "0")]
);

mul_kernel!(mul_x1, avx2_mul, nibbles, 32, [("ymm0", "ymm1", "0")]);

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
