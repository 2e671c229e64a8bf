//! Parity engine selection at load (its files, `/sys/kernel/rraid/parity/`, are in
//! `control::parity`).
//!
//! Every implementation valid on this CPU is self-tested against the scalar reference and the
//! known-answer vectors, then benchmarked for a bounded time; the fastest that passed serves
//! each operation. The files `xor`, `gen`, `rmw` and `recov` list the usable implementations
//! with the chosen one in brackets (as `queue/scheduler` does); writing a name forces it.

use crate::parity::{self, CpuFeatures, Engine, Impl, Op, Outcome, IMPLS};
use crate::sys::fpu::{cpu_features, now_ns, KernelFpu};
use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::prelude::*;

/// Benchmark time per implementation and operation.
const BENCH_NS: u64 = 2_000_000;

/// Index into `IMPLS` of the implementation serving each `Op::ALL` entry; the scalar
/// reference (last) until the selection at load. Module-wide, as lib/raid6's `raid6_call`: the
/// arrays' stripe engines read it for every stripe.
static CHOSEN: [AtomicUsize; 4] = [const { AtomicUsize::new(usize::MAX) }; 4];

/// The implementation serving `op` now, checked against the CPU.
pub fn engine(op: Op) -> Engine {
    let k = Op::ALL.iter().position(|&o| o == op).unwrap_or(0);
    let i = CHOSEN
        .get(k)
        .map_or(usize::MAX, |c| c.load(Ordering::Relaxed));
    IMPLS
        .get(i)
        .and_then(|imp| Engine::new(imp, &cpu_features()).ok())
        .unwrap_or_else(Engine::scalar)
}

/// The engines a stripe uses, one per operation.
pub fn stripe_engines() -> crate::plan::Engines {
    crate::plan::Engines {
        xor: engine(Op::Xor),
        gen: engine(Op::Gen),
        rmw: engine(Op::Rmw),
        recov: engine(Op::Recov),
    }
}

/// The selection at load.
pub struct Engines {
    pub(crate) cpu: CpuFeatures,
    /// Bit `i`: `IMPLS[i]` is valid here and passed its self-test.
    pub(crate) usable: u64,
    /// `CHOSEN`, which this value owns while the module is loaded.
    pub(crate) chosen: &'static [AtomicUsize; 4],
}

/// The index of `imp` in `IMPLS`.
pub(crate) fn index_of(imp: &'static Impl) -> usize {
    IMPLS
        .iter()
        .position(|&i| core::ptr::eq(i, imp))
        .unwrap_or(IMPLS.len() - 1)
}

impl Engines {
    /// Self-tests and benchmarks every implementation, and picks one per operation.
    pub fn select() -> Result<Self> {
        let cpu = cpu_features();
        let mut scratch = KVec::from_elem(0u8, parity::SCRATCH_BYTES, GFP_KERNEL)?;
        let mut usable = 0u64;
        let chosen = &CHOSEN;
        for (k, op) in Op::ALL.iter().enumerate() {
            let mut report = |imp: &'static Impl, outcome: Outcome| {
                let i = index_of(imp);
                match outcome {
                    Outcome::Unsupported => {}
                    Outcome::Failed(e) => {
                        // Logged once, on the first operation's walk.
                        if k == 0 {
                            pr_err!(
                                "parity: {} failed its self-test ({:?}); never used\n",
                                imp.name,
                                e
                            );
                        }
                    }
                    Outcome::Speed(_) => usable |= 1 << i,
                }
            };
            let (imp, speed) = parity::select(
                *op,
                &cpu,
                &KernelFpu,
                &now_ns,
                &mut scratch,
                BENCH_NS,
                &mut report,
            )
            .map_err(|_| EIO)?;
            chosen[k].store(index_of(imp), Ordering::Relaxed);
            let mbs = speed / 1_000_000;
            match op {
                Op::Xor => pr_info!("xor: {} {} MB/s\n", imp.name, mbs),
                Op::Gen => pr_info!("pq: {} gen() {} MB/s\n", imp.name, mbs),
                Op::Rmw => pr_info!("rmw: {} {} MB/s\n", imp.name, mbs),
                Op::Recov => pr_info!("recov: {} {} MB/s\n", imp.name, mbs),
            }
        }
        Ok(Self {
            cpu,
            usable,
            chosen,
        })
    }
}
