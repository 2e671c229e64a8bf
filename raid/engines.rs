//! Parity engine selection at load, and `/sys/kernel/rraid/parity/`.
//!
//! Every implementation valid on this CPU is self-tested against the scalar reference and the
//! known-answer vectors, then benchmarked for a bounded time; the fastest that passed serves
//! each operation. The files `xor`, `gen`, `rmw` and `recov` list the usable implementations
//! with the chosen one in brackets (as `queue/scheduler` does); writing a name forces it.

use crate::parity::{self, CpuFeatures, Engine, Impl, Op, Outcome, IMPLS};
use crate::sys::fpu::{cpu_features, now_ns, KernelFpu};
use crate::sys::sysfs::{Attr, Buf, SysfsOps};
use crate::sys::LockKey;
use core::fmt::Write;
use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::{c_str, prelude::*};

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

/// The selection at load and its sysfs directory.
pub struct Engines {
    cpu: CpuFeatures,
    /// Bit `i`: `IMPLS[i]` is valid here and passed its self-test.
    usable: u64,
    /// `CHOSEN`, which this value owns while the module is loaded.
    chosen: &'static [AtomicUsize; 4],
}

fn index_of(imp: &'static Impl) -> usize {
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

const fn rw(name: &'static CStr) -> Attr {
    Attr {
        name,
        read: true,
        write: true,
    }
}

impl SysfsOps for Engines {
    const ATTRS: &'static [Attr] = &[
        rw(c_str!("xor")),
        rw(c_str!("gen")),
        rw(c_str!("rmw")),
        rw(c_str!("recov")),
    ];

    fn lock_class() -> &'static LockKey {
        static KEY: LockKey = LockKey::new();
        &KEY
    }

    fn show(&self, idx: usize, out: &mut Buf<'_>) -> Result {
        let chosen = self.chosen.get(idx).ok_or(EINVAL)?.load(Ordering::Relaxed);
        // Slowest first, as lib/raid6's table reads bottom up.
        let mut first = true;
        for (i, imp) in IMPLS.iter().enumerate().rev() {
            if self.usable & (1 << i) == 0 {
                continue;
            }
            let sep = if first { "" } else { " " };
            first = false;
            let r = if i == chosen {
                write!(out, "{sep}[{}]", imp.name)
            } else {
                write!(out, "{sep}{}", imp.name)
            };
            r.map_err(|_| EINVAL)?;
        }
        writeln!(out).map_err(|_| EINVAL)
    }

    fn store(&self, idx: usize, input: &[u8]) -> Result {
        let name = super::parse::text(input).map_err(|e| {
            pr_err!("parity: {}\n", e.why);
            e.code
        })?;
        let slot = self.chosen.get(idx).ok_or(EINVAL)?;
        let found = parity::find(name).map(index_of);
        match found {
            Some(i) if self.usable & (1 << i) != 0 && (IMPLS[i].valid)(&self.cpu) => {
                slot.store(i, Ordering::Relaxed);
                pr_info!("parity: {} forced to {}\n", Op::ALL[idx].name(), name);
                Ok(())
            }
            _ => {
                pr_err!("parity: '{}' is not a usable implementation here\n", name);
                Err(EINVAL)
            }
        }
    }
}
