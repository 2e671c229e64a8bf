//! GFNI kernels on AVX-512 registers: multiplication by a constant is one `vgf2p8affineqb` with
//! that constant's 8x8 bit matrix in md's field (0x11d).
//!
//! `vgf2p8mulb` is not used: it multiplies in AES's field (0x11b), which gives different
//! products (2 * 0x80 is 0x1b there and 0x1d in md's field).
//!
//! The loops are the shared templates of `x86`; this file holds what GFNI does in them. XOR has
//! no GFNI instruction: it is AVX-512's.

use super::{avx512, CpuFeatures, Impl};

fn valid(f: &CpuFeatures) -> bool {
    f.avx && f.avx2 && f.avx512f && f.avx512bw && f.avx512vl && f.gfni
}

/// What GFNI does in the templates of `x86`.
macro_rules! gfni {
    // Horner. Lanes: (offset, P, Q, data). zmm31 holds the matrix of 2; zmm29 and zmm30 the
    // matrices of a fused recovery's `a` and `b`.
    (pq_setup) => { concat!(
        "vpbroadcastq zmm31, qword ptr [{k} + 8]\n",
        "mov r11, qword ptr [{x} + 16]\n",
        "vpbroadcastq zmm29, qword ptr [r11]\n",
        "vpbroadcastq zmm30, qword ptr [r11 + 8]\n",
    )};
    (pq_step; $(($o:literal, $p:literal, $q:literal, $d:literal)),*) => { concat!(
        gfni!(pq_mul2; $(($o, $p, $q, $d)),*),
        $(vload!(gfni, $d, "r11", $o),)*
        $("vpxorq ", $q, ", ", $q, ", ", $d, "\n",)*
        $("vpxorq ", $p, ", ", $p, ", ", $d, "\n",)*
    )};
    (pq_mul2; $(($o:literal, $p:literal, $q:literal, $d:literal)),*) => { concat!(
        $("vgf2p8affineqb ", $q, ", ", $q, ", zmm31, 0\n",)*
    )};
    (pq_recov; $(($o:literal, $p:literal, $q:literal, $d:literal)),*) => {
        pq_fused_recov!(gfni, concat!(
            $("vgf2p8affineqb ", $d, ", ", $p, ", zmm29, 0\n",)*
            $("vgf2p8affineqb ", $q, ", ", $q, ", zmm30, 0\n",)*
            $(vxor!(gfni, $d, $d, $q),)*
        ); $(($o, $p, $q, $d)),*)
    };

    // Two-data recovery. Lanes: (offset, P', Q', t). zmm30 and zmm31 hold the matrices of `a`
    // and `b`.
    (recov2_setup) => { concat!(
        "vpbroadcastq zmm30, qword ptr [{k}]\n",
        "vpbroadcastq zmm31, qword ptr [{k} + 8]\n",
    )};
    (recov2_mul; $(($o:literal, $px:literal, $qx:literal, $t:literal)),*) => { concat!(
        $("vgf2p8affineqb ", $t, ", ", $px, ", zmm30, 0\n",)*
        $("vgf2p8affineqb ", $qx, ", ", $qx, ", zmm31, 0\n",)*
        $("vpxorq ", $t, ", ", $t, ", ", $qx, "\n",)*
    )};

    // Multiplication by a constant. Lanes: (offset, x). zmm30 holds the matrix.
    (mul_setup) => {
        "vpbroadcastq zmm30, qword ptr [{k}]\n"
    };
    (mul; $(($o:literal, $x:literal)),*) => { concat!(
        $("vgf2p8affineqb ", $x, ", ", $x, ", zmm30, 0\n",)*
    )};

    (consts $a:expr, $b:expr) => {
        super::x86::Consts::matrices($a, $b)
    };
    ($word:ident) => {
        zmm!($word)
    };
}

unroll!(pq_kernel, gfni; pq_x1, pq_x2, pq_x4;
    (0, "zmm0", "zmm4", "zmm8"),
    (64, "zmm1", "zmm5", "zmm9"),
    (128, "zmm2", "zmm6", "zmm10"),
    (192, "zmm3", "zmm7", "zmm11"),
);

unroll!(recov2_kernel, gfni; recov2_x1, recov2_x2, recov2_x4;
    (0, "zmm0", "zmm1", "zmm2"),
    (64, "zmm3", "zmm4", "zmm5"),
    (128, "zmm6", "zmm7", "zmm8"),
    (192, "zmm9", "zmm10", "zmm11"),
);

unroll!(mul_kernel, gfni; mul_x1; (0, "zmm0"));

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
