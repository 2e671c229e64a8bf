//! Links the oracles of the parity tests and benchmark.
//!
//! - lib/raid6's userspace `raid6.a`, built outside the repository by `scripts/build-raid6test`;
//!   its path comes from `RRAID_RAID6_A`, or else the default cache location. When it is missing,
//!   the crate is built with `cfg(raid6_missing)` and the oracle test fails loudly.
//! - ISA-L (`-lisal`, Debian's libisal-dev) for the benchmark binary.
use std::path::PathBuf;

fn find_raid6() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("RRAID_RAID6_A") {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    let cache = std::env::var_os("RRAID_CACHE").unwrap_or_else(|| "/var/cache/rraid".into());
    let mut found: Vec<PathBuf> = std::fs::read_dir(&cache)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("raid6test-"))
        .map(|e| e.path().join("linux-source-6.12/lib/raid6/test/raid6.a"))
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found.pop()
}

fn main() {
    println!("cargo:rerun-if-env-changed=RRAID_RAID6_A");
    println!("cargo:rerun-if-env-changed=RRAID_CACHE");
    println!("cargo:rustc-check-cfg=cfg(raid6_missing)");
    match find_raid6() {
        Some(a) => {
            println!("cargo:rerun-if-changed={}", a.display());
            println!("cargo:rustc-link-arg-tests={}", a.display());
            println!("cargo:rustc-link-arg-bins={}", a.display());
            println!("cargo:rustc-env=RRAID_RAID6_A={}", a.display());
        }
        None => {
            println!("cargo:warning=raid6.a not found: run scripts/build-raid6test (the lib/raid6 oracle test will fail)");
            println!("cargo:rustc-cfg=raid6_missing");
        }
    }
    println!("cargo:rustc-link-arg-bins=-lisal");
}
