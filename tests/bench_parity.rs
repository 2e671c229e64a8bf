//! `make bench-parity`: rraid's parity implementations side by side with ISA-L and lib/raid6.
//!
//! - Stripes of 4 KiB blocks with 4, 8 and 16 data blocks.
//! - Operations: xor (RAID-5 parity), gen (P+Q), rmw (one changed data block folded into P and
//!   Q), recov (two lost data blocks).
//! - Peers: ISA-L (`xor_gen`, `pq_gen`, `ec_encode_data` with two output rows that rebuild the
//!   two lost blocks from the survivors, P and Q) and lib/raid6's userspace build (`raid6.a`:
//!   the best of its AVX2/AVX-512 `gen_syndrome`s, their `xor_syndrome`, and the best
//!   `2data_recov`).
//! - Regimes: cache-hot (one stripe, over and over) and streaming (at least 256 MiB of data
//!   blocks, each stripe touched once per sample), with the memory-bandwidth bound measured in
//!   the same run as an AVX-512 (or AVX2) streaming read of the same data blocks.
//! - Every candidate is sampled in interleaved rounds (the order rotates each round); the median
//!   is reported. Throughput is always the stripe's data-block bytes (n x 4 KiB) per operation,
//!   per second, for every peer (lib/raid6's convention, also for rmw).

use rraid_host_tests::parity::{self, CpuFeatures, Engine, UserFpu, IMPLS};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::time::Instant;

const BLOCK: usize = 4096;
const FPU: &UserFpu = &UserFpu;

fn rounds() -> usize {
    std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(11)
}

// ---------------------------------------------------------------------------------------------
// Peers.
// ---------------------------------------------------------------------------------------------

#[link(name = "isal")]
extern "C" {
    fn xor_gen(vects: c_int, len: c_int, array: *mut *mut c_void) -> c_int;
    fn pq_gen(vects: c_int, len: c_int, array: *mut *mut c_void) -> c_int;
    fn ec_init_tables(k: c_int, rows: c_int, a: *mut u8, gftbls: *mut u8);
    fn ec_encode_data(
        len: c_int,
        k: c_int,
        rows: c_int,
        gftbls: *mut u8,
        data: *mut *mut u8,
        coding: *mut *mut u8,
    );
}

#[repr(C)]
struct Raid6Calls {
    gen_syndrome: Option<unsafe extern "C" fn(c_int, usize, *mut *mut c_void)>,
    xor_syndrome: Option<unsafe extern "C" fn(c_int, c_int, c_int, usize, *mut *mut c_void)>,
    valid: Option<unsafe extern "C" fn() -> c_int>,
    name: *const c_char,
    priority: c_int,
}

#[repr(C)]
struct Raid6RecovCalls {
    data2: Option<unsafe extern "C" fn(c_int, usize, c_int, c_int, *mut *mut c_void)>,
    datap: Option<unsafe extern "C" fn(c_int, usize, c_int, *mut *mut c_void)>,
    valid: Option<unsafe extern "C" fn() -> c_int>,
    name: *const c_char,
    priority: c_int,
}

/// lib/raid6's userspace build expects its user to define the zero page (test.c does).
#[repr(C, align(4096))]
pub struct ZeroPage([u8; 4096]);

#[no_mangle]
pub static raid6_empty_zero_page: ZeroPage = ZeroPage([0; 4096]);

#[cfg(not(raid6_missing))]
extern "C" {
    static raid6_algos: [*const Raid6Calls; 0];
    static raid6_recov_algos: [*const Raid6RecovCalls; 0];
    static mut raid6_call: Raid6Calls;
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

fn cname(p: *const c_char) -> String {
    // SAFETY: lib/raid6's names are static C strings.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn usable(valid: Option<unsafe extern "C" fn() -> c_int>) -> bool {
    // SAFETY: the probes only run cpuid.
    valid.is_none_or(|f| unsafe { f() } != 0)
}

#[cfg(not(raid6_missing))]
fn raid6_tables() -> (Vec<&'static Raid6Calls>, Vec<&'static Raid6RecovCalls>) {
    // SAFETY: addresses of the extern tables.
    let gens = walk(unsafe { raid6_algos.as_ptr() });
    // SAFETY: as above.
    let recs = walk(unsafe { raid6_recov_algos.as_ptr() });
    // The SIMD generators only: the integer ones are never lib/raid6's best on this kind of CPU.
    let gens = gens
        .into_iter()
        .filter(|g| usable(g.valid) && cname(g.name).starts_with("avx"))
        .collect();
    let recs = recs
        .into_iter()
        .filter(|r| usable(r.valid) && cname(r.name).starts_with("avx"))
        .collect();
    (gens, recs)
}

#[cfg(raid6_missing)]
fn raid6_tables() -> (Vec<&'static Raid6Calls>, Vec<&'static Raid6RecovCalls>) {
    eprintln!("bench-parity: raid6.a missing: run scripts/build-raid6test");
    std::process::exit(1);
}

#[cfg(not(raid6_missing))]
fn set_raid6_call(g: &Raid6Calls) {
    // SAFETY: single-threaded; `raid6_call` is what raid6_select_algo() would set.
    unsafe {
        raid6_call = Raid6Calls {
            gen_syndrome: g.gen_syndrome,
            xor_syndrome: g.xor_syndrome,
            valid: g.valid,
            name: g.name,
            priority: g.priority,
        }
    }
}

#[cfg(raid6_missing)]
fn set_raid6_call(_: &Raid6Calls) {}

// ---------------------------------------------------------------------------------------------
// Memory.
// ---------------------------------------------------------------------------------------------

/// A page-aligned allocation of stripes: `[D_0 .. D_{n-1}, P, Q, DX, DY]`, 4 KiB each.
struct Arena {
    ptr: *mut u8,
    len: usize,
    n: usize,
    stripes: usize,
}

impl Arena {
    fn new(n: usize, stripes: usize) -> Arena {
        let len = stripes * (n + 4) * BLOCK;
        let layout = std::alloc::Layout::from_size_align(len, 4096).unwrap();
        // SAFETY: non-zero size.
        let ptr = unsafe { std::alloc::alloc(layout) };
        assert!(!ptr.is_null());
        // SAFETY: just allocated, len bytes; filling them faults every page in.
        let words = unsafe { std::slice::from_raw_parts_mut(ptr as *mut u64, len / 8) };
        let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ (n as u64);
        for w in words {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *w = x;
        }
        Arena {
            ptr,
            len,
            n,
            stripes,
        }
    }
    fn block(&self, s: usize, b: usize) -> *mut u8 {
        assert!(s < self.stripes && b < self.n + 4);
        // SAFETY: inside the allocation.
        unsafe { self.ptr.add((s * (self.n + 4) + b) * BLOCK) }
    }
    fn slice(&self, s: usize, b: usize) -> &[u8] {
        // SAFETY: one block of the allocation.
        unsafe { std::slice::from_raw_parts(self.block(s, b), BLOCK) }
    }
    #[allow(clippy::mut_from_ref)]
    fn slice_mut(&self, s: usize, b: usize) -> &mut [u8] {
        // SAFETY: one block of the allocation; the benchmark never holds two views of a block
        // that is written.
        unsafe { std::slice::from_raw_parts_mut(self.block(s, b), BLOCK) }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        let layout = std::alloc::Layout::from_size_align(self.len, 4096).unwrap();
        // SAFETY: allocated with this layout.
        unsafe { std::alloc::dealloc(self.ptr, layout) }
    }
}

/// Streaming read of `len` bytes at `p` (a multiple of 256), with vector loads.
fn read_stream(p: *const u8, len: usize, avx512: bool) {
    if avx512 {
        // SAFETY: reads `len` bytes of a live allocation; the registers it uses are declared.
        unsafe {
            std::arch::asm!(
                "2:",
                "vpxorq zmm0, zmm0, zmmword ptr [{p}]",
                "vpxorq zmm1, zmm1, zmmword ptr [{p} + 64]",
                "vpxorq zmm2, zmm2, zmmword ptr [{p} + 128]",
                "vpxorq zmm3, zmm3, zmmword ptr [{p} + 192]",
                "add {p}, 256",
                "cmp {p}, {e}",
                "jb 2b",
                "vzeroupper",
                p = inout(reg) p => _,
                e = in(reg) p.add(len),
                out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
                options(nostack, readonly),
            );
        }
    } else {
        // SAFETY: as above.
        unsafe {
            std::arch::asm!(
                "2:",
                "vpxor ymm0, ymm0, ymmword ptr [{p}]",
                "vpxor ymm1, ymm1, ymmword ptr [{p} + 32]",
                "vpxor ymm2, ymm2, ymmword ptr [{p} + 64]",
                "vpxor ymm3, ymm3, ymmword ptr [{p} + 96]",
                "add {p}, 128",
                "cmp {p}, {e}",
                "jb 2b",
                "vzeroupper",
                p = inout(reg) p => _,
                e = in(reg) p.add(len),
                out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
                options(nostack, readonly),
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Candidates.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    Xor,
    Gen,
    Rmw,
    Recov,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Rraid,
    Isal,
    Raid6,
    Bound,
}

struct Cand<'a> {
    name: String,
    kind: Kind,
    /// Runs the operation on stripe `s`.
    run: Box<dyn FnMut(usize) + 'a>,
    samples: Vec<f64>,
}

/// Per-stripe pointer tables, built once so that the timed loops only index them.
struct Tables {
    data: Vec<Vec<*const u8>>,
    survivors: Vec<Vec<*const u8>>,
    data_sl: Vec<Vec<&'static [u8]>>,
    surv_sl: Vec<Vec<&'static [u8]>>,
    isal_xor: Vec<Vec<*mut c_void>>,
    pq: Vec<Vec<*mut c_void>>,
    isal_src: Vec<Vec<*mut u8>>,
    isal_out: Vec<Vec<*mut u8>>,
}

fn lost(n: usize) -> (usize, usize) {
    (1, n - 2)
}

fn changed(n: usize) -> usize {
    n / 2
}

fn tables(a: &Arena) -> Tables {
    let n = a.n;
    let (x, y) = lost(n);
    let mut t = Tables {
        data: vec![],
        survivors: vec![],
        data_sl: vec![],
        surv_sl: vec![],
        isal_xor: vec![],
        pq: vec![],
        isal_src: vec![],
        isal_out: vec![],
    };
    for s in 0..a.stripes {
        let d: Vec<*const u8> = (0..n).map(|b| a.block(s, b) as *const u8).collect();
        t.survivors
            .push((0..n).filter(|&i| i != x && i != y).map(|i| d[i]).collect());
        let mut xo: Vec<*mut c_void> = d.iter().map(|&p| p as *mut c_void).collect();
        xo.push(a.block(s, n) as *mut c_void);
        t.isal_xor.push(xo);
        let mut pq: Vec<*mut c_void> = d.iter().map(|&p| p as *mut c_void).collect();
        pq.push(a.block(s, n) as *mut c_void);
        pq.push(a.block(s, n + 1) as *mut c_void);
        t.pq.push(pq);
        let mut src: Vec<*mut u8> = t.survivors[s].iter().map(|&p| p as *mut u8).collect();
        src.push(a.block(s, n));
        src.push(a.block(s, n + 1));
        t.isal_src.push(src);
        t.isal_out.push(vec![a.block(s, n + 2), a.block(s, n + 3)]);
        t.data_sl.push(as_slices(&d));
        t.surv_sl.push(as_slices(&t.survivors[s]));
        t.data.push(d);
    }
    t
}

fn as_slices(ptrs: &[*const u8]) -> Vec<&'static [u8]> {
    // SAFETY: blocks of a live arena (the benchmark drops the slices before the arena).
    ptrs.iter()
        .map(|&p| unsafe { std::slice::from_raw_parts(p, BLOCK) })
        .collect()
}

/// ISA-L's decode rows for two lost data blocks x < y, from the survivors, P and Q
/// (`Dx = A*P' ^ B*Q'`, `Dy = P' ^ Dx`, written out per source).
fn isal_decode_matrix(n: usize) -> Vec<u8> {
    use parity::gf;
    let (x, y) = lost(n);
    let (a, b) = gf::recov2_coefficients(x, y);
    let mut rx = vec![];
    let mut ry = vec![];
    for i in (0..n).filter(|&i| i != x && i != y) {
        let c = a ^ gf::mul(b, gf::exp(i));
        rx.push(c);
        ry.push(1 ^ c);
    }
    rx.extend([a, b]);
    ry.extend([1 ^ a, b]);
    rx.extend(ry);
    rx
}

#[allow(clippy::too_many_arguments)]
fn candidates<'a>(
    op: Op,
    a: &'a Arena,
    t: &'a Tables,
    cpu: &CpuFeatures,
    gens: &[&'static Raid6Calls],
    recs: &[&'static Raid6RecovCalls],
    gftbls: &'a [u8],
    stream: bool,
) -> Vec<Cand<'a>> {
    let n = a.n;
    let (x, y) = lost(n);
    let c = changed(n);
    let mut v: Vec<Cand<'a>> = vec![];
    for &imp in IMPLS {
        let Ok(e) = Engine::new(imp, cpu) else {
            continue;
        };
        let run: Box<dyn FnMut(usize)> = match op {
            Op::Xor => Box::new(move |s| {
                e.xor_gen(FPU, a.slice_mut(s, n), &t.data_sl[s]).unwrap();
            }),
            Op::Gen => Box::new(move |s| {
                e.gen_syndrome(FPU, &t.data_sl[s], a.slice_mut(s, n), a.slice_mut(s, n + 1))
                    .unwrap();
            }),
            Op::Rmw => Box::new(move |s| {
                let d = [a.slice(s, c)];
                e.xor_syndrome(FPU, c, &d, a.slice_mut(s, n), a.slice_mut(s, n + 1))
                    .unwrap();
            }),
            Op::Recov => Box::new(move |s| {
                e.recover_2data(
                    FPU,
                    x,
                    y,
                    &t.surv_sl[s],
                    a.slice(s, n),
                    a.slice(s, n + 1),
                    a.slice_mut(s, n + 2),
                    a.slice_mut(s, n + 3),
                )
                .unwrap();
            }),
        };
        v.push(Cand {
            name: imp.name.to_string(),
            kind: Kind::Rraid,
            run,
            samples: vec![],
        });
    }
    // ISA-L.
    let isal: Option<Box<dyn FnMut(usize)>> = match op {
        Op::Xor => Some({
            let mut tab = t.isal_xor.clone();
            Box::new(move |s| {
                let arr = &mut tab[s];
                // SAFETY: n sources and a destination, 4 KiB each, page-aligned.
                let r = unsafe { xor_gen((n + 1) as c_int, BLOCK as c_int, arr.as_mut_ptr()) };
                assert_eq!(r, 0);
            })
        }),
        Op::Gen => Some({
            let mut tab = t.pq.clone();
            Box::new(move |s| {
                let arr = &mut tab[s];
                // SAFETY: n sources, P and Q, 4 KiB each, page-aligned.
                let r = unsafe { pq_gen((n + 2) as c_int, BLOCK as c_int, arr.as_mut_ptr()) };
                assert_eq!(r, 0);
            })
        }),
        Op::Rmw => None,
        Op::Recov => Some({
            let mut srcs = t.isal_src.clone();
            let mut outs = t.isal_out.clone();
            Box::new(move |s| {
                let src = &mut srcs[s];
                let out = &mut outs[s];
                // SAFETY: n sources (survivors, P, Q) and two outputs of 4 KiB; tables for n x 2.
                unsafe {
                    ec_encode_data(
                        BLOCK as c_int,
                        n as c_int,
                        2,
                        gftbls.as_ptr() as *mut u8,
                        src.as_mut_ptr(),
                        out.as_mut_ptr(),
                    )
                };
            })
        }),
    };
    if let Some(run) = isal {
        let name = match op {
            Op::Xor => "isal:xor_gen",
            Op::Gen => "isal:pq_gen",
            _ => "isal:ec_encode",
        };
        v.push(Cand {
            name: name.into(),
            kind: Kind::Isal,
            run,
            samples: vec![],
        });
    }
    // lib/raid6.
    match op {
        Op::Xor => {}
        Op::Gen | Op::Rmw => {
            for &g in gens {
                let name = cname(g.name);
                let run: Box<dyn FnMut(usize)> = if op == Op::Gen {
                    let f = g.gen_syndrome.unwrap();
                    let mut tab = t.pq.clone();
                    Box::new(move |s| {
                        let arr = &mut tab[s];
                        // SAFETY: n data blocks, P and Q, 4 KiB each, page-aligned.
                        unsafe { f((n + 2) as c_int, BLOCK, arr.as_mut_ptr()) };
                    })
                } else {
                    let Some(f) = g.xor_syndrome else { continue };
                    let mut tab = t.pq.clone();
                    Box::new(move |s| {
                        let arr = &mut tab[s];
                        // SAFETY: as above; folds block c into P and Q.
                        unsafe {
                            f(
                                (n + 2) as c_int,
                                c as c_int,
                                c as c_int,
                                BLOCK,
                                arr.as_mut_ptr(),
                            )
                        };
                    })
                };
                v.push(Cand {
                    name: format!("raid6:{name}"),
                    kind: Kind::Raid6,
                    run,
                    samples: vec![],
                });
            }
        }
        Op::Recov => {
            for &r in recs {
                let f = r.data2.unwrap();
                let mut tab = t.pq.clone();
                let run: Box<dyn FnMut(usize)> = Box::new(move |s| {
                    let arr = &mut tab[s];
                    // SAFETY: as above; rebuilds blocks x and y in place (same contents).
                    unsafe {
                        f(
                            (n + 2) as c_int,
                            BLOCK,
                            x as c_int,
                            y as c_int,
                            arr.as_mut_ptr(),
                        )
                    };
                });
                v.push(Cand {
                    name: format!("raid6:{}", cname(r.name)),
                    kind: Kind::Raid6,
                    run,
                    samples: vec![],
                });
            }
        }
    }
    if stream {
        let avx512 = cpu.avx512f;
        v.push(Cand {
            name: "bound:read".into(),
            kind: Kind::Bound,
            run: Box::new(move |s| read_stream(a.block(s, 0), n * BLOCK, avx512)),
            samples: vec![],
        });
    }
    v
}

/// Checks every peer's output against rraid's on stripe 0 before anything is timed.
fn cross_check(
    a: &Arena,
    t: &Tables,
    gens: &[&Raid6Calls],
    recs: &[&Raid6RecovCalls],
    gftbls: &[u8],
) {
    let n = a.n;
    let e = Engine::scalar();
    let d = as_slices(&t.data[0]);
    let (mut p, mut q) = (vec![0u8; BLOCK], vec![0u8; BLOCK]);
    e.gen_syndrome(FPU, &d, &mut p, &mut q).unwrap();
    let mut arr = t.pq[0].clone();
    // SAFETY: as in the candidates.
    assert_eq!(
        unsafe { pq_gen((n + 2) as c_int, BLOCK as c_int, arr.as_mut_ptr()) },
        0
    );
    assert!(
        a.slice(0, n) == &p[..] && a.slice(0, n + 1) == &q[..],
        "ISA-L pq_gen differs"
    );
    for g in gens {
        a.slice_mut(0, n).fill(0);
        let mut arr = t.pq[0].clone();
        // SAFETY: as in the candidates.
        unsafe { g.gen_syndrome.unwrap()((n + 2) as c_int, BLOCK, arr.as_mut_ptr()) };
        assert!(
            a.slice(0, n) == &p[..] && a.slice(0, n + 1) == &q[..],
            "raid6 gen differs"
        );
    }
    let (x, y) = lost(n);
    let mut src = t.isal_src[0].clone();
    let mut out = t.isal_out[0].clone();
    // SAFETY: as in the candidates.
    unsafe {
        ec_encode_data(
            BLOCK as c_int,
            n as c_int,
            2,
            gftbls.as_ptr() as *mut u8,
            src.as_mut_ptr(),
            out.as_mut_ptr(),
        )
    };
    assert!(
        a.slice(0, n + 2) == d[x] && a.slice(0, n + 3) == d[y],
        "ISA-L decode differs"
    );
    for r in recs {
        let mut arr = t.pq[0].clone();
        // SAFETY: as in the candidates.
        unsafe {
            r.data2.unwrap()(
                (n + 2) as c_int,
                BLOCK,
                x as c_int,
                y as c_int,
                arr.as_mut_ptr(),
            )
        };
        assert!(
            a.slice(0, x) == d[x] && a.slice(0, y) == d[y],
            "raid6 recovery differs"
        );
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    if v.is_empty() {
        0.0
    } else {
        v[v.len() / 2]
    }
}

fn main() {
    let cpu = CpuFeatures {
        sse2: is_x86_feature_detected!("sse2"),
        ssse3: is_x86_feature_detected!("ssse3"),
        avx: is_x86_feature_detected!("avx"),
        avx2: is_x86_feature_detected!("avx2"),
        avx512f: is_x86_feature_detected!("avx512f"),
        avx512bw: is_x86_feature_detected!("avx512bw"),
        avx512vl: is_x86_feature_detected!("avx512vl"),
        gfni: is_x86_feature_detected!("gfni"),
    };
    assert!(cpu.avx2, "bench-parity needs at least AVX2");
    let (gens, recs) = raid6_tables();
    assert!(
        !gens.is_empty() && !recs.is_empty(),
        "raid6.a has no usable SIMD routines"
    );
    // What raid6_select_algo() picks here: the highest-priority valid generator.
    // The first valid entry of its table, ordered fastest first (avx512x4 on this kind of CPU).
    let best_gen = gens[0];
    set_raid6_call(best_gen);
    let rounds = rounds();
    let names: Vec<&str> = IMPLS
        .iter()
        .filter(|i| (i.valid)(&cpu))
        .map(|i| i.name)
        .collect();
    println!(
        "bench-parity: 4 KiB blocks; GB/s = 1e9 data-block bytes (n x 4 KiB per op) per second"
    );
    println!("  median of {rounds} interleaved rounds; cache-hot sample = 64 MiB of data bytes on one stripe;");
    println!("  streaming sample = one pass over >= 256 MiB of data blocks (each stripe once)");
    println!("  rmw: one changed data block (index n/2) folded into P and Q; recov: data blocks 1 and n-2 lost");
    println!(
        "  lib/raid6 recovery calls raid6_call = {} (what raid6_select_algo() picks)",
        cname(best_gen.name)
    );
    println!("  ratio = best rraid / better peer (ISA-L or lib/raid6); streaming also shows best rraid / bound");
    println!("  skipped rraid implementations (CPU features): {}", {
        let s: Vec<&str> = IMPLS
            .iter()
            .filter(|i| !(i.valid)(&cpu))
            .map(|i| i.name)
            .collect();
        if s.is_empty() {
            "none".to_string()
        } else {
            s.join(" ")
        }
    });
    println!();
    let mut header = format!("{:<6} {:>2} {:<6}", "regime", "n", "op");
    for nm in &names {
        header += &format!(" {:>9}", nm);
    }
    header += &format!(
        " | {:>9} {:>9} {:<18} {:>8} | {:>7} {:>9}",
        "isal", "raid6", "(raid6 best)", "bound", "ratio", "vs bound"
    );
    println!("{header}");
    println!("{}", "-".repeat(header.len()));

    // BENCH_REGIME=hot|stream and BENCH_N=8 narrow the run (for tuning); the default is all.
    let regime = std::env::var("BENCH_REGIME").unwrap_or_default();
    let only_n: Option<usize> = std::env::var("BENCH_N").ok().and_then(|s| s.parse().ok());
    let only_op = std::env::var("BENCH_OP").unwrap_or_default();
    for stream in [false, true] {
        if (regime == "hot" && stream) || (regime == "stream" && !stream) {
            continue;
        }
        for n in [4usize, 8, 16] {
            if only_n.is_some_and(|o| o != n) {
                continue;
            }
            let stripes = if stream {
                (256 << 20) / (n * BLOCK) + 1
            } else {
                1
            };
            let arena = Arena::new(n, stripes);
            let t = tables(&arena);
            let mut gftbls = vec![0u8; 32 * n * 2];
            let mut m = isal_decode_matrix(n);
            // SAFETY: a 2 x n matrix and tables of 32 * n * 2 bytes.
            unsafe { ec_init_tables(n as c_int, 2, m.as_mut_ptr(), gftbls.as_mut_ptr()) };
            cross_check(&arena, &t, &gens, &recs, &gftbls);
            let hot_iters = ((64 << 20) / (n * BLOCK)).max(1);
            for op in [Op::Xor, Op::Gen, Op::Rmw, Op::Recov] {
                if !only_op.is_empty() && format!("{op:?}").to_lowercase() != only_op {
                    continue;
                }
                let mut cands = candidates(op, &arena, &t, &cpu, &gens, &recs, &gftbls, stream);
                // Warm-up: one pass of everything.
                for c in cands.iter_mut() {
                    for s in 0..stripes.min(64) {
                        (c.run)(s);
                    }
                }
                let k = cands.len();
                for round in 0..rounds {
                    for j in 0..k {
                        let c = &mut cands[(round + j) % k];
                        let t0 = Instant::now();
                        let ops = if stream {
                            for s in 0..stripes {
                                (c.run)(s);
                            }
                            stripes
                        } else {
                            for _ in 0..hot_iters {
                                (c.run)(0);
                            }
                            hot_iters
                        };
                        let secs = t0.elapsed().as_secs_f64();
                        c.samples.push((ops * n * BLOCK) as f64 / secs / 1e9);
                    }
                }
                let mut line = format!(
                    "{:<6} {:>2} {:<6}",
                    if stream { "stream" } else { "hot" },
                    n,
                    format!("{op:?}").to_lowercase()
                );
                let mut best_rraid = 0.0f64;
                let mut isal = None;
                let mut raid6: Option<(f64, String)> = None;
                let mut bound = None;
                let mut per_impl = std::collections::HashMap::new();
                for c in cands.iter_mut() {
                    let med = median(&mut c.samples);
                    match c.kind {
                        Kind::Rraid => {
                            best_rraid = best_rraid.max(med);
                            per_impl.insert(c.name.clone(), med);
                        }
                        Kind::Isal => isal = Some(med),
                        Kind::Raid6 => {
                            if raid6.as_ref().is_none_or(|(b, _)| med > *b) {
                                raid6 =
                                    Some((med, c.name.trim_start_matches("raid6:").to_string()));
                            }
                        }
                        Kind::Bound => bound = Some(med),
                    }
                }
                for nm in &names {
                    line += &format!(" {:>9.1}", per_impl.get(*nm).copied().unwrap_or(0.0));
                }
                let fmt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
                let peer = isal.unwrap_or(0.0).max(raid6.as_ref().map_or(0.0, |r| r.0));
                line += &format!(
                    " | {:>9} {:>9} {:<18} {:>8} | {:>6.2}x {:>9}",
                    fmt(isal),
                    fmt(raid6.as_ref().map(|r| r.0)),
                    raid6
                        .as_ref()
                        .map_or("-".to_string(), |r| format!("({})", r.1)),
                    fmt(bound),
                    best_rraid / peer,
                    bound.map_or("-".to_string(), |b| format!("{:.2}", best_rraid / b)),
                );
                println!("{line}");
            }
        }
    }
}
