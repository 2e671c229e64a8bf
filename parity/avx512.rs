//! AVX-512 (F + BW) kernels: 64-byte `zmm` vectors, unrolled one, two and four times.
//!
//! Multiplication by 2 takes the top bits into a mask register (`vpmovb2m`), doubles with
//! `vpaddb`, and XORs 0x1d into the masked bytes together with the data through one
//! `vpternlogq`. Multiplication by other constants (recovery) looks the nibbles up with `vpshufb`.

use super::{CpuFeatures, Impl};

fn valid(f: &CpuFeatures) -> bool {
    f.avx && f.avx2 && f.avx512f && f.avx512bw && f.avx512vl
}

/// XOR template. Lanes: (accumulator, temporary, byte offset). Sources are taken two at a time
/// (one load and one three-way `vpternlogq` with a memory operand per pair and lane).
macro_rules! avx512_xor {
    ($stride:literal; $(($r:literal, $t:literal, $o:literal)),*) => { concat!(
        "2:\n",
        "mov r11, qword ptr [{ptrs}]\n",
        $("vmovdqu64 ", $r, ", zmmword ptr [r11 + r8 + ", $o, "]\n",)*
        "mov r10d, 1\n",
        "lea r9, [{n} - 1]\n",
        "cmp r10, r9\n",
        "jae 4f\n",
        "6:\n",
        "mov r11, qword ptr [{ptrs} + r10*8]\n",
        "mov r9, qword ptr [{ptrs} + r10*8 + 8]\n",
        $("vmovdqu64 ", $t, ", zmmword ptr [r11 + r8 + ", $o, "]\n",)*
        $("vpternlogq ", $r, ", ", $t, ", zmmword ptr [r9 + r8 + ", $o, "], 0x96\n",)*
        "add r10, 2\n",
        "lea r9, [{n} - 1]\n",
        "cmp r10, r9\n",
        "jb 6b\n",
        "4:\n",
        "cmp r10, {n}\n",
        "jae 5f\n",
        "mov r11, qword ptr [{ptrs} + r10*8]\n",
        $("vpxorq ", $r, ", ", $r, ", zmmword ptr [r11 + r8 + ", $o, "]\n",)*
        "5:\n",
        $("vmovdqu64 zmmword ptr [{dst} + r8 + ", $o, "], ", $r, "\n",)*
        "add r8, ", $stride, "\n",
        "cmp r8, {end}\n",
        "jb 2b\n",
        "vzeroupper\n",
    )};
}

/// Horner template. Lanes: (P, Q, temporary, data, mask register, byte offset). zmm31 holds
/// 0x1d bytes; zmm16..zmm20 the nibble tables and mask of a fused recovery.
macro_rules! avx512_pq {
    ($stride:literal; $(($p:literal, $q:literal, $t:literal, $d:literal, $k:literal, $o:literal)),*) => { concat!(
        "vpbroadcastb zmm31, byte ptr [{k}]\n",
        "mov r11, qword ptr [{x} + 16]\n",
        "vbroadcasti32x4 zmm16, xmmword ptr [r11]\n",
        "vbroadcasti32x4 zmm17, xmmword ptr [r11 + 16]\n",
        "vbroadcasti32x4 zmm18, xmmword ptr [r11 + 32]\n",
        "vbroadcasti32x4 zmm19, xmmword ptr [r11 + 48]\n",
        "vpbroadcastb zmm20, byte ptr [r11 + 64]\n",
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
        $("vpmovb2m ", $k, ", ", $q, "\n",)*
        $("vmovdqu64 ", $d, ", zmmword ptr [r11 + r8 + ", $o, "]\n",)*
        $("vpaddb ", $q, ", ", $q, ", ", $q, "\n",)*
        $("vmovdqu8 ", $t, " {{", $k, "}}{{z}}, zmm31\n",)*
        $("vpxorq ", $p, ", ", $p, ", ", $d, "\n",)*
        $("vpternlogq ", $q, ", ", $t, ", ", $d, ", 0x96\n",)*
        "inc r10\n",
        "cmp r10, {n}\n",
        "jb 6b\n",
        "5:\n",
        "mov r10, {shift}\n",
        "test r10, r10\n",
        "jz 7f\n",
        "8:\n",
        $("vpmovb2m ", $k, ", ", $q, "\n",)*
        $("vpaddb ", $q, ", ", $q, ", ", $q, "\n",)*
        $("vmovdqu8 ", $t, " {{", $k, "}}{{z}}, zmm31\n",)*
        $("vpxorq ", $q, ", ", $q, ", ", $t, "\n",)*
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
        $("vpsrlw ", $t, ", ", $p, ", 4\n",)*
        $("vpandq ", $d, ", ", $p, ", zmm20\n",)*
        $("vpandq ", $t, ", ", $t, ", zmm20\n",)*
        $("vpshufb ", $d, ", zmm16, ", $d, "\n",)*
        $("vpshufb ", $t, ", zmm17, ", $t, "\n",)*
        $("vpxorq ", $d, ", ", $d, ", ", $t, "\n",)*
        $("vpsrlw ", $t, ", ", $q, ", 4\n",)*
        $("vpandq ", $q, ", ", $q, ", zmm20\n",)*
        $("vpandq ", $t, ", ", $t, ", zmm20\n",)*
        $("vpshufb ", $q, ", zmm18, ", $q, "\n",)*
        $("vpshufb ", $t, ", zmm19, ", $t, "\n",)*
        $("vpternlogq ", $d, ", ", $q, ", ", $t, ", 0x96\n",)*
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

/// Two-data recovery template. Lanes: (P', Q', t1, t2, byte offset). zmm16..zmm19 hold the
/// nibble tables of `a` and `b`, zmm20 the 0x0f mask.
macro_rules! avx512_recov2 {
    ($stride:literal; $(($px:literal, $qx:literal, $t1:literal, $t2:literal, $o:literal)),*) => { concat!(
        "vbroadcasti32x4 zmm16, xmmword ptr [{k}]\n",
        "vbroadcasti32x4 zmm17, xmmword ptr [{k} + 16]\n",
        "vbroadcasti32x4 zmm18, xmmword ptr [{k} + 32]\n",
        "vbroadcasti32x4 zmm19, xmmword ptr [{k} + 48]\n",
        "vpbroadcastb zmm20, byte ptr [{k} + 64]\n",
        "2:\n",
        $("vmovdqu64 ", $px, ", zmmword ptr [{p} + r8 + ", $o, "]\n",)*
        $("vmovdqu64 ", $qx, ", zmmword ptr [{q} + r8 + ", $o, "]\n",)*
        $("vpxorq ", $px, ", ", $px, ", zmmword ptr [{dx} + r8 + ", $o, "]\n",)*
        $("vpxorq ", $qx, ", ", $qx, ", zmmword ptr [{dy} + r8 + ", $o, "]\n",)*
        $("vpsrlw ", $t2, ", ", $px, ", 4\n",)*
        $("vpandq ", $t1, ", ", $px, ", zmm20\n",)*
        $("vpandq ", $t2, ", ", $t2, ", zmm20\n",)*
        $("vpshufb ", $t1, ", zmm16, ", $t1, "\n",)*
        $("vpshufb ", $t2, ", zmm17, ", $t2, "\n",)*
        $("vpxorq ", $t1, ", ", $t1, ", ", $t2, "\n",)*
        $("vpsrlw ", $t2, ", ", $qx, ", 4\n",)*
        $("vpandq ", $qx, ", ", $qx, ", zmm20\n",)*
        $("vpandq ", $t2, ", ", $t2, ", zmm20\n",)*
        $("vpshufb ", $qx, ", zmm18, ", $qx, "\n",)*
        $("vpshufb ", $t2, ", zmm19, ", $t2, "\n",)*
        $("vpternlogq ", $t1, ", ", $qx, ", ", $t2, ", 0x96\n",)*
        $("vpxorq ", $px, ", ", $px, ", ", $t1, "\n",)*
        $("vmovdqu64 zmmword ptr [{dx} + r8 + ", $o, "], ", $t1, "\n",)*
        $("vmovdqu64 zmmword ptr [{dy} + r8 + ", $o, "], ", $px, "\n",)*
        "add r8, ", $stride, "\n",
        "cmp r8, {end}\n",
        "jb 2b\n",
        "vzeroupper\n",
    )};
}

/// Multiplication template, `b = c * (a ^ b)`. Lanes: (x, t, byte offset).
macro_rules! avx512_mul {
    ($stride:literal; $(($x:literal, $t:literal, $o:literal)),*) => { concat!(
        "vbroadcasti32x4 zmm16, xmmword ptr [{k}]\n",
        "vbroadcasti32x4 zmm17, xmmword ptr [{k} + 16]\n",
        "vpbroadcastb zmm20, byte ptr [{k} + 64]\n",
        "2:\n",
        $("vmovdqu64 ", $x, ", zmmword ptr [{a} + r8 + ", $o, "]\n",)*
        $("vpxorq ", $x, ", ", $x, ", zmmword ptr [{b} + r8 + ", $o, "]\n",)*
        $("vpsrlw ", $t, ", ", $x, ", 4\n",)*
        $("vpandq ", $x, ", ", $x, ", zmm20\n",)*
        $("vpandq ", $t, ", ", $t, ", zmm20\n",)*
        $("vpshufb ", $x, ", zmm16, ", $x, "\n",)*
        $("vpshufb ", $t, ", zmm17, ", $t, "\n",)*
        $("vpxorq ", $x, ", ", $x, ", ", $t, "\n",)*
        $("vmovdqu64 zmmword ptr [{b} + r8 + ", $o, "], ", $x, "\n",)*
        "add r8, ", $stride, "\n",
        "cmp r8, {end}\n",
        "jb 2b\n",
        "vzeroupper\n",
    )};
}

xor_kernel!(
    xor_x1,
    avx512_xor,
    64,
    [("zmm0", "zmm8", "0")],
    64,
    [("zmm0", "zmm8", "0")]
);
xor_kernel!(
    xor_x2,
    avx512_xor,
    128,
    [("zmm0", "zmm8", "0"), ("zmm1", "zmm9", "64")],
    64,
    [("zmm0", "zmm8", "0")]
);
xor_kernel!(
    xor_x4,
    avx512_xor,
    256,
    [
        ("zmm0", "zmm8", "0"),
        ("zmm1", "zmm9", "64"),
        ("zmm2", "zmm10", "128"),
        ("zmm3", "zmm11", "192")
    ],
    64,
    [("zmm0", "zmm8", "0")]
);

xor_kernel!(
    xor_x8,
    avx512_xor,
    512,
    [
        ("zmm0", "zmm8", "0"),
        ("zmm1", "zmm9", "64"),
        ("zmm2", "zmm10", "128"),
        ("zmm3", "zmm11", "192"),
        ("zmm4", "zmm12", "256"),
        ("zmm5", "zmm13", "320"),
        ("zmm6", "zmm14", "384"),
        ("zmm7", "zmm15", "448")
    ],
    64,
    [("zmm0", "zmm8", "0")]
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

pq_kernel!(
    pq_x1,
    avx512_pq,
    nibbles,
    64,
    [("zmm0", "zmm4", "zmm8", "zmm12", "k1", "0")],
    64,
    [("zmm0", "zmm4", "zmm8", "zmm12", "k1", "0")]
);
pq_kernel!(
    pq_x2,
    avx512_pq,
    nibbles,
    128,
    [
        ("zmm0", "zmm4", "zmm8", "zmm12", "k1", "0"),
        ("zmm1", "zmm5", "zmm9", "zmm13", "k2", "64")
    ],
    64,
    [("zmm0", "zmm4", "zmm8", "zmm12", "k1", "0")]
);
pq_kernel!(
    pq_x4,
    avx512_pq,
    nibbles,
    256,
    [
        ("zmm0", "zmm4", "zmm8", "zmm12", "k1", "0"),
        ("zmm1", "zmm5", "zmm9", "zmm13", "k2", "64"),
        ("zmm2", "zmm6", "zmm10", "zmm14", "k3", "128"),
        ("zmm3", "zmm7", "zmm11", "zmm15", "k4", "192")
    ],
    64,
    [("zmm0", "zmm4", "zmm8", "zmm12", "k1", "0")]
);

recov2_kernel!(
    recov2_x1,
    avx512_recov2,
    nibbles,
    64,
    [("zmm0", "zmm1", "zmm2", "zmm3", "0")],
    64,
    [("zmm0", "zmm1", "zmm2", "zmm3", "0")]
);
recov2_kernel!(
    recov2_x2,
    avx512_recov2,
    nibbles,
    128,
    [
        ("zmm0", "zmm1", "zmm2", "zmm3", "0"),
        ("zmm4", "zmm5", "zmm6", "zmm7", "64")
    ],
    64,
    [("zmm0", "zmm1", "zmm2", "zmm3", "0")]
);
recov2_kernel!(
    recov2_x4,
    avx512_recov2,
    nibbles,
    256,
    [
        ("zmm0", "zmm1", "zmm2", "zmm3", "0"),
        ("zmm4", "zmm5", "zmm6", "zmm7", "64"),
        ("zmm8", "zmm9", "zmm10", "zmm11", "128"),
        ("zmm12", "zmm13", "zmm14", "zmm15", "192")
    ],
    64,
    [("zmm0", "zmm1", "zmm2", "zmm3", "0")]
);

mul_kernel!(mul_x1, avx512_mul, nibbles, 64, [("zmm0", "zmm1", "0")]);

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
