//! Arithmetic in md's GF(2^8): polynomial 0x11d, generator 2.
//!
//! The tables are built by `const fn` at compile time; nothing here allocates or panics at run
//! time (every index is masked or bounded by construction).

/// The field polynomial, x^8 + x^4 + x^3 + x^2 + 1, as md's `raid6_gfmul` uses it.
pub const POLY: u16 = 0x11d;

/// `EXP[i]` is g^i for i in 0..510, so `EXP[LOG[a] + LOG[b]]` needs no reduction.
pub static EXP: [u8; 512] = build_exp();

/// `LOG[a]` is the discrete logarithm of `a` (`LOG[0]` is unused and 0).
pub static LOG: [u8; 256] = build_log();

const fn build_exp() -> [u8; 512] {
    let mut t = [0u8; 512];
    let mut x: u16 = 1;
    let mut i = 0;
    while i < 512 {
        t[i] = x as u8;
        x <<= 1;
        if x & 0x100 != 0 {
            x ^= POLY;
        }
        i += 1;
    }
    t
}

const fn build_log() -> [u8; 256] {
    let exp = build_exp();
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 255 {
        t[exp[i] as usize] = i as u8;
        i += 1;
    }
    t
}

/// Multiplies `a` by 2 (the generator).
#[inline]
pub const fn mul2(a: u8) -> u8 {
    (a << 1)
        ^ (if a & 0x80 != 0 {
            (POLY & 0xff) as u8
        } else {
            0
        })
}

/// Multiplies two field elements.
#[inline]
pub fn mul(a: u8, b: u8) -> u8 {
    if a == 0 || b == 0 {
        0
    } else {
        EXP[LOG[a as usize] as usize + LOG[b as usize] as usize]
    }
}

/// Returns g^e for any exponent (reduced modulo 255).
#[inline]
pub fn exp(e: usize) -> u8 {
    EXP[e % 255]
}

/// Returns the multiplicative inverse of `a`, or 0 for 0.
#[inline]
pub fn inv(a: u8) -> u8 {
    if a == 0 {
        0
    } else {
        EXP[255 - LOG[a as usize] as usize]
    }
}

/// Returns the 8x8 bit matrix that makes `vgf2p8affineqb` multiply each byte by `c` in md's
/// field.
///
/// For output bit `i`, the instruction takes the parity of `x AND matrix.byte[7 - i]`. Bit `k`
/// of that row byte is therefore bit `i` of `c * 2^k`.
pub const fn affine_matrix(c: u8) -> u64 {
    // cols[k] = c * 2^k.
    let mut cols = [0u8; 8];
    let mut v = c;
    let mut k = 0;
    while k < 8 {
        cols[k] = v;
        v = mul2(v);
        k += 1;
    }
    let mut m = 0u64;
    let mut i = 0;
    while i < 8 {
        let mut row = 0u8;
        let mut k = 0;
        while k < 8 {
            row |= ((cols[k] >> i) & 1) << k;
            k += 1;
        }
        m |= (row as u64) << (8 * (7 - i));
        i += 1;
    }
    m
}

/// Returns the two `pshufb` tables that multiply by `c`: products of the low nibbles and of the
/// high nibbles.
pub fn nibble_tables(c: u8) -> ([u8; 16], [u8; 16]) {
    let mut lo = [0u8; 16];
    let mut hi = [0u8; 16];
    for n in 0..16u8 {
        lo[n as usize] = mul(c, n);
        hi[n as usize] = mul(c, n << 4);
    }
    (lo, hi)
}

/// The coefficients that recover data blocks `x < y` from P' = P ^ Pxy and Q' = Q ^ Qxy:
/// `Dx = a * P' ^ b * Q'` and `Dy = P' ^ Dx`.
pub fn recov2_coefficients(x: usize, y: usize) -> (u8, u8) {
    let gx = exp(x);
    let gy = exp(y);
    let denom = inv(gx ^ gy);
    (mul(gy, denom), denom)
}
