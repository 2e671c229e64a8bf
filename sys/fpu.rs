//! The kernel side of the parity engine: CPU features, FPU sections and a clock.

use crate::parity::{CpuFeatures, Fpu};
use kernel::bindings;

/// `KFPU_387 | KFPU_MXCSR`: the full FPU state, as `kernel_fpu_begin()` takes it.
const KFPU_FULL: u32 = (1 << 0) | (1 << 1);

fn boot_cpu_has(bit: u32) -> bool {
    let cpu = &raw const bindings::boot_cpu_data;
    // SAFETY: `boot_cpu_data` is filled in before modules load and not changed afterwards; the
    // capability words are the only member of their union.
    let caps = unsafe { &(*cpu).__bindgen_anon_2.x86_capability };
    caps.get((bit / 32) as usize)
        .is_some_and(|w| w & (1 << (bit % 32)) != 0)
}

/// The CPU's features, as the kernel sees them.
///
/// The kernel clears the AVX and AVX-512 bits when XSAVE does not cover their register state,
/// so a set bit means the instructions are usable inside a `kernel_fpu_begin` section.
pub fn cpu_features() -> CpuFeatures {
    CpuFeatures {
        sse2: boot_cpu_has(bindings::X86_FEATURE_XMM2),
        ssse3: boot_cpu_has(bindings::X86_FEATURE_SSSE3),
        avx: boot_cpu_has(bindings::X86_FEATURE_AVX),
        avx2: boot_cpu_has(bindings::X86_FEATURE_AVX2),
        avx512f: boot_cpu_has(bindings::X86_FEATURE_AVX512F),
        avx512bw: boot_cpu_has(bindings::X86_FEATURE_AVX512BW),
        avx512vl: boot_cpu_has(bindings::X86_FEATURE_AVX512VL),
        gfni: boot_cpu_has(bindings::X86_FEATURE_GFNI),
    }
}

/// Vector registers through `kernel_fpu_begin_mask`/`kernel_fpu_end`.
///
/// The section runs with preemption off; the parity code bounds each one to
/// `parity::SECTION_BYTES` of work. Where the registers are not usable (an interrupt that hit a
/// task's FPU use, or a section already open on this CPU: sections do not nest), `run` refuses
/// and the parity engine computes with its scalar code instead.
pub struct KernelFpu;

impl Fpu for KernelFpu {
    fn usable(&self) -> bool {
        // SAFETY: `irq_fpu_usable` only reads this CPU's state; callable from any context.
        unsafe { bindings::irq_fpu_usable() }
    }

    fn run(&self, f: &mut dyn FnMut()) -> bool {
        if !self.usable() {
            return false;
        }
        // SAFETY: The registers are usable in this context (checked above, and nothing between
        // can open a section here); the section is closed below on the same CPU, since
        // preemption stays off in between.
        unsafe { bindings::kernel_fpu_begin_mask(KFPU_FULL) };
        f();
        // SAFETY: Closes the section opened above.
        unsafe { bindings::kernel_fpu_end() };
        true
    }
}

/// Monotonic time in nanoseconds.
pub fn now_ns() -> u64 {
    // SAFETY: `ktime_get` may be called from any context but NMI.
    unsafe { bindings::ktime_get() }.max(0) as u64
}
