//! Host tests of `parity/`: every implementation against the scalar reference, known answers
//! from an independent GF(2^8) implementation, every recovery case, every RMW range, and
//! lib/raid6's own userspace build as a second oracle.
//!
//! A custom harness (`harness = false`): an implementation whose CPU features are missing is
//! reported as SKIPPED and counted apart, never as passed. The exit code is non-zero when any
//! test failed.

use rraid_host_tests::parity::{self, CpuFeatures, Engine, Error, Impl, UserFpu, IMPLS};
use std::panic::{catch_unwind, AssertUnwindSafe};

const FPU: &UserFpu = &UserFpu;

// ---------------------------------------------------------------------------------------------
// An independent GF(2^8), polynomial 0x11d: shift-and-add, no tables.
// ---------------------------------------------------------------------------------------------

fn ref_mul(mut a: u8, mut b: u8) -> u8 {
    let mut r = 0u8;
    while b != 0 {
        if b & 1 != 0 {
            r ^= a;
        }
        let carry = a & 0x80 != 0;
        a <<= 1;
        if carry {
            a ^= 0x1d;
        }
        b >>= 1;
    }
    r
}

fn ref_pow2(e: usize) -> u8 {
    (0..e).fold(1u8, |acc, _| ref_mul(acc, 2))
}

/// P and Q byte by byte, straight from the definition.
fn ref_pq(data: &[Vec<u8>], len: usize) -> (Vec<u8>, Vec<u8>) {
    let mut p = vec![0u8; len];
    let mut q = vec![0u8; len];
    for (i, d) in data.iter().enumerate() {
        let g = ref_pow2(i);
        for j in 0..len {
            p[j] ^= d[j];
            q[j] ^= ref_mul(g, d[j]);
        }
    }
    (p, q)
}

// ---------------------------------------------------------------------------------------------
// Helpers.
// ---------------------------------------------------------------------------------------------

/// The CPU's features, minus those named in `RRAID_PARITY_DISABLE` (comma-separated, e.g.
/// `gfni,avx512f`), which shows how implementations are skipped on a smaller CPU.
fn features() -> CpuFeatures {
    let mut f = detected();
    let off = std::env::var("RRAID_PARITY_DISABLE").unwrap_or_default();
    for name in off.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match name {
            "sse2" => f.sse2 = false,
            "ssse3" => f.ssse3 = false,
            "avx" => f.avx = false,
            "avx2" => f.avx2 = false,
            "avx512f" => f.avx512f = false,
            "avx512bw" => f.avx512bw = false,
            "avx512vl" => f.avx512vl = false,
            "gfni" => f.gfni = false,
            other => panic!("RRAID_PARITY_DISABLE: unknown feature {other}"),
        }
    }
    f
}

fn detected() -> CpuFeatures {
    CpuFeatures {
        sse2: is_x86_feature_detected!("sse2"),
        ssse3: is_x86_feature_detected!("ssse3"),
        avx: is_x86_feature_detected!("avx"),
        avx2: is_x86_feature_detected!("avx2"),
        avx512f: is_x86_feature_detected!("avx512f"),
        avx512bw: is_x86_feature_detected!("avx512bw"),
        avx512vl: is_x86_feature_detected!("avx512vl"),
        gfni: is_x86_feature_detected!("gfni"),
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn block(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
    fn blocks(&mut self, n: usize, len: usize) -> Vec<Vec<u8>> {
        (0..n).map(|_| self.block(len)).collect()
    }
}

fn refs(v: &[Vec<u8>]) -> Vec<&[u8]> {
    v.iter().map(|b| b.as_slice()).collect()
}

/// Block lengths from the smallest accepted up to 64 KiB, with odd multiples of 64 that leave
/// tails to every unrolled loop.
const LENS: &[usize] = &[
    64, 128, 192, 256, 320, 448, 512, 576, 1024, 1088, 4096, 4160, 8192, 65536,
];

/// Data counts: 1..32 and some larger, across the kernels' group size of 32.
fn counts() -> Vec<usize> {
    let mut v: Vec<usize> = (1..=32).collect();
    v.extend([33, 47, 63, 64, 65, 100, 200, 255]);
    v
}

/// The lengths tried for `n` data blocks: all of them for a few counts, a rotating pair
/// otherwise, and short ones only for the largest counts.
fn lens_for(n: usize) -> Vec<usize> {
    if [1, 2, 5, 16, 32].contains(&n) {
        LENS.to_vec()
    } else if n > 64 {
        vec![64, 4096]
    } else {
        vec![LENS[n % LENS.len()], LENS[(n * 7 + 3) % LENS.len()]]
    }
}

// ---------------------------------------------------------------------------------------------
// The tests, one function per (test, implementation).
// ---------------------------------------------------------------------------------------------

fn t_known_answers(e: Engine) {
    // 2 * 0x80 is 0x1d in md's field and 0x1b in AES's, where vgf2p8mulb works.
    assert_eq!(ref_mul(0x80, 2), 0x1d);
    let len = 256;
    let d = vec![vec![0u8; len], vec![0x80u8; len]];
    let (mut p, mut q) = (vec![0u8; len], vec![0u8; len]);
    e.gen_syndrome(FPU, &refs(&d), &mut p, &mut q).unwrap();
    assert!(p.iter().all(|&b| b == 0x80));
    assert!(
        q.iter().all(|&b| b == 0x1d),
        "Q = {:#x}, not md's field",
        q[0]
    );
    // Constants that tell the fields apart: g^k * c for many k and c, against the definition.
    let mut rng = Rng(0x1234_5678);
    for n in [1, 3, 8, 13, 32, 40] {
        let len = 192;
        let data = rng.blocks(n, len);
        let (rp, rq) = ref_pq(&data, len);
        let (mut p, mut q) = (vec![0u8; len], vec![0u8; len]);
        e.gen_syndrome(FPU, &refs(&data), &mut p, &mut q).unwrap();
        assert_eq!(p, rp, "P, n={n}");
        assert_eq!(q, rq, "Q, n={n}");
    }
    // Recovery constants: recover from syndromes computed by the definition.
    let n = 20;
    let data = rng.blocks(n, 64);
    let (rp, rq) = ref_pq(&data, 64);
    for (x, y) in [(0, 1), (2, 17), (18, 19), (0, 19)] {
        let surv: Vec<&[u8]> = (0..n)
            .filter(|&i| i != x && i != y)
            .map(|i| data[i].as_slice())
            .collect();
        let (mut dx, mut dy) = (vec![0u8; 64], vec![0u8; 64]);
        e.recover_2data(FPU, x, y, &surv, &rp, &rq, &mut dx, &mut dy)
            .unwrap();
        assert_eq!((&dx, &dy), (&data[x], &data[y]), "x={x} y={y}");
    }
}

fn t_field_tables(_: Engine) {
    for a in 0..=255u8 {
        for b in 0..=255u8 {
            assert_eq!(parity::gf::mul(a, b), ref_mul(a, b), "{a} * {b}");
        }
        assert_eq!(parity::gf::mul2(a), ref_mul(a, 2));
        if a != 0 {
            assert_eq!(ref_mul(a, parity::gf::inv(a)), 1);
        }
    }
    for e in 0..600 {
        assert_eq!(parity::gf::exp(e), ref_pow2(e % 255));
    }
}

fn t_vs_scalar(e: Engine) {
    let r = Engine::scalar();
    let mut rng = Rng(0xdead_beef);
    for n in counts() {
        for len in lens_for(n) {
            let data = rng.blocks(n, len);
            let d = refs(&data);
            let ctx = format!("n={n} len={len}");

            let (mut p, mut rp) = (rng.block(len), vec![0u8; len]);
            e.xor_gen(FPU, &mut p, &d).unwrap();
            r.xor_gen(FPU, &mut rp, &d).unwrap();
            assert_eq!(p, rp, "xor_gen {ctx}");

            let mut acc = rng.block(len);
            let mut racc = acc.clone();
            e.xor_acc(FPU, &mut acc, &d).unwrap();
            r.xor_acc(FPU, &mut racc, &d).unwrap();
            assert_eq!(acc, racc, "xor_acc {ctx}");

            let (mut q, mut rq) = (rng.block(len), vec![0u8; len]);
            e.gen_syndrome(FPU, &d, &mut p, &mut q).unwrap();
            r.gen_syndrome(FPU, &d, &mut rp, &mut rq).unwrap();
            assert_eq!(p, rp, "gen P {ctx}");
            assert_eq!(q, rq, "gen Q {ctx}");

            let mut q2 = rng.block(len);
            e.regen_q(FPU, &d, &mut q2).unwrap();
            assert_eq!(q2, rq, "regen_q {ctx}");
        }
    }
    // The scalar reference itself against the definition.
    for n in [1, 7, 33, 70] {
        let data = rng.blocks(n, 128);
        let (rp, rq) = ref_pq(&data, 128);
        let (mut p, mut q) = (vec![0u8; 128], vec![0u8; 128]);
        r.gen_syndrome(FPU, &refs(&data), &mut p, &mut q).unwrap();
        assert_eq!((p, q), (rp, rq), "scalar vs definition, n={n}");
    }
}

/// An FPU that is never usable, as in an interrupt that hit a kernel FPU section: every
/// operation must still give the scalar answer, and never enter a SIMD section.
struct NoFpu(std::cell::Cell<u32>);

impl parity::Fpu for NoFpu {
    fn usable(&self) -> bool {
        false
    }

    fn run(&self, _f: &mut dyn FnMut()) -> bool {
        self.0.set(self.0.get() + 1);
        false
    }
}

fn t_no_fpu(e: Engine) {
    let nofpu = NoFpu(std::cell::Cell::new(0));
    let r = Engine::scalar();
    let mut rng = Rng(0x5eed);
    for n in [1, 3, 8, 17] {
        let len = 4096;
        let data = rng.blocks(n, len);
        let d = refs(&data);
        let (mut p, mut q, mut rp, mut rq) = (
            vec![0u8; len],
            vec![0u8; len],
            vec![0u8; len],
            vec![0u8; len],
        );
        e.gen_syndrome(&nofpu, &d, &mut p, &mut q).unwrap();
        r.gen_syndrome(FPU, &d, &mut rp, &mut rq).unwrap();
        assert_eq!((&p, &q), (&rp, &rq), "gen without FPU, n={n}");
        let mut x = vec![0u8; len];
        e.xor_gen(&nofpu, &mut x, &d).unwrap();
        assert_eq!(x, rp, "xor without FPU, n={n}");
        if n >= 2 {
            let (mut dx, mut dy) = (vec![0u8; len], vec![0u8; len]);
            let survivors: Vec<&[u8]> = d[2..].to_vec();
            e.recover_2data(&nofpu, 0, 1, &survivors, &p, &q, &mut dx, &mut dy)
                .unwrap();
            assert_eq!((&dx, &dy), (&data[0], &data[1]), "recov without FPU, n={n}");
        }
    }
    assert_eq!(
        nofpu.0.get(),
        0,
        "an FPU section was attempted where none is usable"
    );
}

fn t_rejects(e: Engine) {
    let good = vec![0u8; 128];
    for bad in [0usize, 1, 8, 32, 63, 65, 100, 130, 4095] {
        let b = vec![0u8; bad];
        let (mut p, mut q) = (vec![0u8; bad], vec![0u8; bad]);
        assert_eq!(
            e.xor_gen(FPU, &mut p, &[&b]),
            Err(Error::BadLength(bad)),
            "xor len {bad}"
        );
        assert_eq!(
            e.gen_syndrome(FPU, &[&b, &b], &mut p, &mut q),
            Err(Error::BadLength(bad)),
            "gen len {bad}"
        );
        assert_eq!(
            e.xor_syndrome(FPU, 0, &[&b], &mut p, &mut q),
            Err(Error::BadLength(bad))
        );
    }
    let (mut p, mut q) = (vec![0u8; 128], vec![0u8; 128]);
    let short = vec![0u8; 64];
    assert_eq!(
        e.gen_syndrome(FPU, &[&good, &short], &mut p, &mut q),
        Err(Error::LengthMismatch)
    );
    let mut q64 = vec![0u8; 64];
    assert_eq!(
        e.gen_syndrome(FPU, &[&good], &mut p, &mut q64),
        Err(Error::LengthMismatch)
    );
    assert_eq!(e.gen_syndrome(FPU, &[], &mut p, &mut q), Err(Error::NoData));
    assert_eq!(e.xor_gen(FPU, &mut p, &[]), Err(Error::NoData));
    let many: Vec<&[u8]> = (0..256).map(|_| good.as_slice()).collect();
    assert_eq!(
        e.gen_syndrome(FPU, &many, &mut p, &mut q),
        Err(Error::TooManyData)
    );
    assert_eq!(
        e.xor_syndrome(FPU, 250, &many[..6], &mut p, &mut q),
        Err(Error::TooManyData)
    );
    let (mut dx, mut dy) = (vec![0u8; 128], vec![0u8; 128]);
    let surv: Vec<&[u8]> = (0..4).map(|_| good.as_slice()).collect();
    for (x, y) in [(1, 1), (2, 1), (0, 6), (6, 7)] {
        assert_eq!(
            e.recover_2data(FPU, x, y, &surv, &good, &good, &mut dx, &mut dy),
            Err(Error::BadIndex),
            "x={x} y={y}"
        );
    }
    assert_eq!(
        e.recover_data_q(FPU, 5, &surv, &good, &mut dx, &mut dy),
        Err(Error::BadIndex)
    );
    assert_eq!(
        Engine::new(e.imp(), &CpuFeatures::NONE).err(),
        if e.imp().simd {
            Some(Error::Unsupported)
        } else {
            None
        }
    );
}

fn t_recovery(e: Engine) {
    let mut rng = Rng(0x5eed);
    for n in 1..=32usize {
        let len = if n % 3 == 0 { 1088 } else { 64 * (1 + n % 4) };
        let data = rng.blocks(n, len);
        let d = refs(&data);
        let (mut p, mut q) = (vec![0u8; len], vec![0u8; len]);
        Engine::scalar()
            .gen_syndrome(FPU, &d, &mut p, &mut q)
            .unwrap();
        let (mut dx, mut dy) = (vec![0u8; len], vec![0u8; len]);
        for x in 0..n {
            // Data + P lost: D_x from Q, P regenerated.
            let surv: Vec<&[u8]> = (0..n).filter(|&i| i != x).map(|i| d[i]).collect();
            let mut p2 = rng.block(len);
            dx.fill(0x5a);
            e.recover_data_q(FPU, x, &surv, &q, &mut dx, &mut p2)
                .unwrap();
            assert_eq!(dx, data[x], "data+P n={n} x={x}");
            assert_eq!(p2, p, "data+P, P, n={n} x={x}");
            // Data + Q lost: D_x from P, Q regenerated.
            dx.fill(0xa5);
            e.recover_data_p(FPU, &surv, &p, &mut dx).unwrap();
            assert_eq!(dx, data[x], "data+Q n={n} x={x}");
            let mut q2 = rng.block(len);
            e.regen_q(FPU, &d, &mut q2).unwrap();
            assert_eq!(q2, q, "data+Q, Q, n={n} x={x}");
            // Two data blocks.
            for y in x + 1..n {
                let surv: Vec<&[u8]> = (0..n).filter(|&i| i != x && i != y).map(|i| d[i]).collect();
                dx.fill(1);
                dy.fill(2);
                e.recover_2data(FPU, x, y, &surv, &p, &q, &mut dx, &mut dy)
                    .unwrap();
                assert_eq!(dx, data[x], "2data n={n} x={x} y={y}");
                assert_eq!(dy, data[y], "2data n={n} x={x} y={y}");
            }
        }
        // P + Q lost.
        let (mut p2, mut q2) = (rng.block(len), rng.block(len));
        e.gen_syndrome(FPU, &d, &mut p2, &mut q2).unwrap();
        assert_eq!((&p2, &q2), (&p, &q), "P+Q n={n}");
    }
    // Larger stripes, across the group size.
    for n in [33, 64, 65, 130, 255] {
        let len = 128;
        let data = rng.blocks(n, len);
        let d = refs(&data);
        let (mut p, mut q) = (vec![0u8; len], vec![0u8; len]);
        Engine::scalar()
            .gen_syndrome(FPU, &d, &mut p, &mut q)
            .unwrap();
        let (mut dx, mut dy) = (vec![0u8; len], vec![0u8; len]);
        for (x, y) in [(0, 1), (0, n - 1), (31, 32), (n / 2, n - 2), (n - 2, n - 1)] {
            let surv: Vec<&[u8]> = (0..n).filter(|&i| i != x && i != y).map(|i| d[i]).collect();
            e.recover_2data(FPU, x, y, &surv, &p, &q, &mut dx, &mut dy)
                .unwrap();
            assert_eq!((&dx, &dy), (&data[x], &data[y]), "2data n={n} x={x} y={y}");
            let surv: Vec<&[u8]> = (0..n).filter(|&i| i != y).map(|i| d[i]).collect();
            let mut p2 = vec![0u8; len];
            e.recover_data_q(FPU, y, &surv, &q, &mut dx, &mut p2)
                .unwrap();
            assert_eq!((&dx, &p2), (&data[y], &p), "data+P n={n} y={y}");
        }
    }
}

fn t_rmw(e: Engine) {
    let r = Engine::scalar();
    let mut rng = Rng(0xabcdef);
    let mut ns: Vec<usize> = (1..=32).collect();
    ns.extend([40, 70]);
    for n in ns {
        let len = if n % 2 == 0 { 128 } else { 1088 };
        let old = rng.blocks(n, len);
        let (mut p, mut q) = (vec![0u8; len], vec![0u8; len]);
        r.gen_syndrome(FPU, &refs(&old), &mut p, &mut q).unwrap();
        let ranges: Vec<(usize, usize)> = if n <= 32 {
            (0..n).flat_map(|s| (s..n).map(move |t| (s, t))).collect()
        } else {
            vec![
                (0, n - 1),
                (0, 32),
                (5, 40.min(n - 1)),
                (31, 33),
                (n - 1, n - 1),
            ]
        };
        for (start, stop) in ranges {
            let mut new = old.clone();
            for b in &mut new[start..=stop] {
                *b = rng.block(len);
            }
            let (mut np, mut nq) = (vec![0u8; len], vec![0u8; len]);
            r.gen_syndrome(FPU, &refs(&new), &mut np, &mut nq).unwrap();
            // Fold the old contents out and the new ones in.
            let (mut p2, mut q2) = (p.clone(), q.clone());
            e.xor_syndrome(FPU, start, &refs(&old[start..=stop]), &mut p2, &mut q2)
                .unwrap();
            e.xor_syndrome(FPU, start, &refs(&new[start..=stop]), &mut p2, &mut q2)
                .unwrap();
            assert_eq!(p2, np, "RMW P n={n} {start}..={stop}");
            assert_eq!(q2, nq, "RMW Q n={n} {start}..={stop}");
        }
    }
}

fn t_self_test(e: Engine) {
    let mut scratch = vec![0u8; parity::SCRATCH_BYTES];
    parity::self_test(e.imp(), &features(), FPU, &mut scratch, 42).unwrap();
    assert_eq!(
        parity::self_test(e.imp(), &features(), FPU, &mut scratch[..100], 42),
        Err(Error::ScratchTooSmall)
    );
}

fn t_bench_helper(e: Engine) {
    let mut scratch = vec![0u8; parity::SCRATCH_BYTES];
    let t0 = std::time::Instant::now();
    let clock = move || t0.elapsed().as_nanos() as u64;
    for op in parity::Op::ALL {
        let bps = parity::bench(
            e.imp(),
            op,
            &features(),
            FPU,
            &clock,
            &mut scratch,
            1_000_000,
            50,
        )
        .unwrap();
        assert!(bps > 0, "{op:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// The second oracle: lib/raid6's userspace build (raid6.a), linked by build.rs.
// ---------------------------------------------------------------------------------------------

#[cfg(not(raid6_missing))]
mod raid6 {
    use std::ffi::{c_char, c_int, c_void, CStr};

    #[repr(C)]
    pub struct Calls {
        pub gen_syndrome: Option<unsafe extern "C" fn(c_int, usize, *mut *mut c_void)>,
        pub xor_syndrome:
            Option<unsafe extern "C" fn(c_int, c_int, c_int, usize, *mut *mut c_void)>,
        pub valid: Option<unsafe extern "C" fn() -> c_int>,
        pub name: *const c_char,
        pub priority: c_int,
    }

    #[repr(C)]
    pub struct RecovCalls {
        pub data2: Option<unsafe extern "C" fn(c_int, usize, c_int, c_int, *mut *mut c_void)>,
        pub datap: Option<unsafe extern "C" fn(c_int, usize, c_int, *mut *mut c_void)>,
        pub valid: Option<unsafe extern "C" fn() -> c_int>,
        pub name: *const c_char,
        pub priority: c_int,
    }

    /// lib/raid6's userspace build expects its user to define the zero page (test.c does).
    #[repr(C, align(4096))]
    pub struct ZeroPage([u8; 4096]);

    #[no_mangle]
    pub static raid6_empty_zero_page: ZeroPage = ZeroPage([0; 4096]);

    extern "C" {
        static raid6_algos: [*const Calls; 0];
        static raid6_recov_algos: [*const RecovCalls; 0];
        static mut raid6_call: Calls;
    }

    /// Makes `gen` the generator that lib/raid6's recovery routines call (`raid6_call`), as
    /// `raid6_select_algo()` would, without its benchmark.
    pub fn set_call(gen: &Calls) {
        // SAFETY: single-threaded test harness; `raid6_call` is a plain global struct.
        unsafe {
            raid6_call = Calls {
                gen_syndrome: gen.gen_syndrome,
                xor_syndrome: gen.xor_syndrome,
                valid: gen.valid,
                name: gen.name,
                priority: gen.priority,
            }
        };
    }

    fn walk<T>(base: *const *const T) -> Vec<&'static T> {
        let mut v = Vec::new();
        // SAFETY: lib/raid6's tables are NULL-terminated arrays of pointers to statics.
        unsafe {
            let mut p = base;
            while !(*p).is_null() {
                v.push(&**p);
                p = p.add(1);
            }
        }
        v
    }

    fn usable(valid: Option<unsafe extern "C" fn() -> c_int>) -> bool {
        // SAFETY: the probes only run cpuid.
        valid.is_none_or(|f| unsafe { f() } != 0)
    }

    pub fn name(p: *const c_char) -> String {
        // SAFETY: names are static C strings.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// The generators whose CPU probe passes.
    pub fn gens() -> Vec<&'static Calls> {
        // SAFETY: taking the address of the extern table.
        walk(unsafe { raid6_algos.as_ptr() })
            .into_iter()
            .filter(|c| usable(c.valid))
            .collect()
    }

    /// The recovery routines whose CPU probe passes.
    pub fn recovs() -> Vec<&'static RecovCalls> {
        // SAFETY: taking the address of the extern table.
        walk(unsafe { raid6_recov_algos.as_ptr() })
            .into_iter()
            .filter(|c| usable(c.valid))
            .collect()
    }
}

/// A page-aligned buffer: lib/raid6's SIMD code uses aligned loads.
struct Aligned {
    ptr: *mut u8,
    len: usize,
}

impl Aligned {
    fn new(len: usize) -> Aligned {
        let layout = std::alloc::Layout::from_size_align(len.max(1), 4096).unwrap();
        // SAFETY: non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null());
        Aligned { ptr, len }
    }
    fn as_slice(&self) -> &[u8] {
        // SAFETY: allocated for len bytes, initialized.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
    fn as_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        let layout = std::alloc::Layout::from_size_align(self.len.max(1), 4096).unwrap();
        // SAFETY: allocated with this layout.
        unsafe { std::alloc::dealloc(self.ptr, layout) }
    }
}

#[cfg(raid6_missing)]
fn t_raid6_oracle(_: Engine) {
    panic!(
        "lib/raid6's raid6.a is not available: run scripts/build-raid6test (or scripts/host-test); \
         the second oracle is required"
    );
}

#[cfg(not(raid6_missing))]
fn t_raid6_oracle(e: Engine) {
    use std::ffi::c_void;
    let gens = raid6::gens();
    let recovs = raid6::recovs();
    assert!(
        gens.len() >= 2 && !recovs.is_empty(),
        "raid6.a has no usable routines"
    );
    raid6::set_call(gens[0]);
    let mut rng = Rng(0x0dd5_eed);
    // lib/raid6 needs lengths that are multiples of its widest unroll (256 bytes for avx512x4)
    // and at most a page for recovery (its zero page).
    for n in [1usize, 2, 3, 4, 6, 8, 13, 16, 31, 32, 33, 64, 100, 253] {
        for len in [256usize, 4096, 65536] {
            let len = if n > 64 && len == 65536 { 4096 } else { len };
            let mut bufs: Vec<Aligned> = (0..n + 2).map(|_| Aligned::new(len)).collect();
            for b in &mut bufs[..n] {
                let v = rng.block(len);
                b.as_mut().copy_from_slice(&v);
            }
            let data: Vec<Vec<u8>> = bufs[..n].iter().map(|b| b.as_slice().to_vec()).collect();
            let (mut p, mut q) = (vec![0u8; len], vec![0u8; len]);
            e.gen_syndrome(FPU, &refs(&data), &mut p, &mut q).unwrap();
            // lib/raid6's SIMD generators need at least two data blocks (they load two at once).
            if n >= 2 {
                for g in &gens {
                    let mut ptrs: Vec<*mut c_void> =
                        bufs.iter().map(|b| b.ptr as *mut c_void).collect();
                    // SAFETY: n + 2 page-aligned buffers of len bytes, as gen_syndrome expects.
                    unsafe { (g.gen_syndrome.unwrap())((n + 2) as i32, len, ptrs.as_mut_ptr()) };
                    let name = raid6::name(g.name);
                    assert_eq!(bufs[n].as_slice(), &p[..], "P vs {name} n={n} len={len}");
                    assert_eq!(
                        bufs[n + 1].as_slice(),
                        &q[..],
                        "Q vs {name} n={n} len={len}"
                    );
                }
            }
            // RMW against lib/raid6's xor_syndrome on a middle range.
            if n >= 3 && len <= 4096 {
                let (start, stop) = (1, n - 2);
                for g in gens.iter().filter(|g| g.xor_syndrome.is_some()) {
                    let mut ptrs: Vec<*mut c_void> =
                        bufs.iter().map(|b| b.ptr as *mut c_void).collect();
                    bufs[n].as_mut().copy_from_slice(&p);
                    bufs[n + 1].as_mut().copy_from_slice(&q);
                    // SAFETY: as above; folds blocks start..=stop into P and Q.
                    unsafe {
                        (g.xor_syndrome.unwrap())(
                            (n + 2) as i32,
                            start as i32,
                            stop as i32,
                            len,
                            ptrs.as_mut_ptr(),
                        )
                    };
                    let (mut p2, mut q2) = (p.clone(), q.clone());
                    e.xor_syndrome(FPU, start, &refs(&data[start..=stop]), &mut p2, &mut q2)
                        .unwrap();
                    let name = raid6::name(g.name);
                    assert_eq!(bufs[n].as_slice(), &p2[..], "RMW P vs {name} n={n}");
                    assert_eq!(bufs[n + 1].as_slice(), &q2[..], "RMW Q vs {name} n={n}");
                }
            }
            // Two-data recovery: lib/raid6 recovers in place; ours must give the same bytes.
            if n >= 2 && len <= 4096 {
                bufs[n].as_mut().copy_from_slice(&p);
                bufs[n + 1].as_mut().copy_from_slice(&q);
                for (x, y) in [(0, 1), (0, n - 1), (n / 2, n - 1)] {
                    if x >= y {
                        continue;
                    }
                    for rc in &recovs {
                        bufs[x].as_mut().fill(0);
                        bufs[y].as_mut().fill(0);
                        let mut ptrs: Vec<*mut c_void> =
                            bufs.iter().map(|b| b.ptr as *mut c_void).collect();
                        // SAFETY: as above; rebuilds blocks x and y in place.
                        unsafe {
                            (rc.data2.unwrap())(
                                (n + 2) as i32,
                                len,
                                x as i32,
                                y as i32,
                                ptrs.as_mut_ptr(),
                            )
                        };
                        let name = raid6::name(rc.name);
                        assert_eq!(bufs[x].as_slice(), &data[x][..], "{name} x={x}");
                        assert_eq!(bufs[y].as_slice(), &data[y][..], "{name} y={y}");
                    }
                    let surv: Vec<&[u8]> = (0..n)
                        .filter(|&i| i != x && i != y)
                        .map(|i| data[i].as_slice())
                        .collect();
                    let (mut dx, mut dy) = (vec![0u8; len], vec![0u8; len]);
                    e.recover_2data(FPU, x, y, &surv, &p, &q, &mut dx, &mut dy)
                        .unwrap();
                    assert_eq!((&dx, &dy), (&data[x], &data[y]), "ours x={x} y={y}");
                }
            }
        }
    }
    if e.imp().name == "scalar" {
        let names: Vec<String> = gens.iter().map(|g| raid6::name(g.name)).collect();
        let rnames: Vec<String> = recovs.iter().map(|g| raid6::name(g.name)).collect();
        println!(
            "    lib/raid6 oracle: {} (recovery: {})",
            names.join(" "),
            rnames.join(" ")
        );
        println!("    raid6.a: {}", env!("RRAID_RAID6_A"));
    }
}

// ---------------------------------------------------------------------------------------------
// The harness.
// ---------------------------------------------------------------------------------------------

type TestFn = fn(Engine);

const TESTS: &[(&str, TestFn)] = &[
    ("field_tables", t_field_tables),
    ("known_answers", t_known_answers),
    ("vs_scalar", t_vs_scalar),
    ("rejects", t_rejects),
    ("no_fpu", t_no_fpu),
    ("recovery", t_recovery),
    ("rmw", t_rmw),
    ("self_test", t_self_test),
    ("bench_helper", t_bench_helper),
    ("raid6_oracle", t_raid6_oracle),
];

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let cpu = features();
    println!("cpu: {cpu:?}");
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    let mut failures = Vec::new();
    for &imp in IMPLS {
        let imp: &'static Impl = imp;
        for &(tname, f) in TESTS {
            let full = format!("{}::{}", imp.name, tname);
            if !filter.is_empty() && !filter.iter().any(|p| full.contains(p.as_str())) {
                continue;
            }
            let Ok(engine) = Engine::new(imp, &cpu) else {
                println!(
                    "test {full} ... SKIPPED (CPU lacks the features of {})",
                    imp.name
                );
                skipped += 1;
                continue;
            };
            let t = std::time::Instant::now();
            let res = catch_unwind(AssertUnwindSafe(|| f(engine)));
            let ms = t.elapsed().as_millis();
            match res {
                Ok(()) => {
                    println!("test {full} ... ok ({ms} ms)");
                    passed += 1;
                }
                Err(_) => {
                    println!("test {full} ... FAILED");
                    failed += 1;
                    failures.push(full);
                }
            }
        }
    }
    println!();
    if !failures.is_empty() {
        println!("failures:");
        for f in &failures {
            println!("    {f}");
        }
    }
    println!(
        "test result: {}. {passed} passed; {failed} failed; {skipped} skipped (missing CPU features)",
        if failed == 0 { "ok" } else { "FAILED" }
    );
    if failed != 0 {
        std::process::exit(1);
    }
}
