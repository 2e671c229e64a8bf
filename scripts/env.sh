# Shared settings for rraid's scripts; sourced, not run.
# The kernel build is cached outside the repository, keyed by source version, fragment and compiler.
RRAID_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RRAID_CACHE="${RRAID_CACHE:-/var/cache/rraid}"
RUSTC_KERNEL=/usr/bin/rustc
RUST_LIB_SRC=/usr/lib/rustlib/src/rust/library
BINDGEN="${CARGO_HOME:-$HOME/.cargo}/bin/bindgen"
KSRC_TAR=/usr/src/linux-source-6.12.tar.xz
JOBS="${JOBS:-$(( $(nproc) + 1 ))}"

# Versions that go into the cache key and into `make demo`'s output.
rraid_versions() {
  echo "linux-source $(dpkg-query -W -f='${Version}' linux-source-6.12)"
  echo "rustc $($RUSTC_KERNEL --version)"
  echo "bindgen $($BINDGEN --version)"
  echo "gcc $(gcc -dumpfullversion)"
}

rraid_kernel_key() {
  { rraid_versions; cat "$RRAID_ROOT/scripts/kernel/rraid.config"; } | sha256sum | cut -c1-16
}

rraid_kernel_dir() {
  echo "$RRAID_CACHE/kernel-$(rraid_kernel_key)"
}

# Make variables every kernel-side make needs.
rraid_kmake_vars() {
  echo "RUSTC=$RUSTC_KERNEL RUST_LIB_SRC=$RUST_LIB_SRC BINDGEN=$BINDGEN"
}
