# Shared settings for rraid's scripts; sourced, not run.
# The kernel build is cached outside the repository, keyed by source version, fragments and
# compilers. RRAID_FLAVOUR picks the guest kernel: `normal` (default) or `debug` (KASAN,
# kmemleak, debug objects; built with LLVM=1). Each flavour has its own kernel cache entry and
# its own build/ directory for rraid.ko, the initramfs and console logs.
RRAID_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RRAID_CACHE="${RRAID_CACHE:-/var/cache/rraid}"
RRAID_FLAVOUR="${RRAID_FLAVOUR:-normal}"
case "$RRAID_FLAVOUR" in
  normal) RRAID_BUILD="$RRAID_ROOT/build" ;;
  debug) RRAID_BUILD="$RRAID_ROOT/build/debug" ;;
  *) echo "RRAID_FLAVOUR must be normal or debug, not '$RRAID_FLAVOUR'" >&2; exit 2 ;;
esac
export RRAID_FLAVOUR
RUSTC_KERNEL=/usr/bin/rustc
RUST_LIB_SRC=/usr/lib/rustlib/src/rust/library
BINDGEN="${CARGO_HOME:-$HOME/.cargo}/bin/bindgen"
KSRC_TAR=/usr/src/linux-source-6.12.tar.xz
JOBS="${JOBS:-$(( $(nproc) + 1 ))}"

# The config fragments of this flavour, in merge order.
rraid_fragments() {
  echo "$RRAID_ROOT/scripts/kernel/rraid.config"
  [ "$RRAID_FLAVOUR" = debug ] && echo "$RRAID_ROOT/scripts/kernel/rraid-debug.config"
  return 0
}

# The option lists the final .config must hold.
rraid_required() {
  echo "$RRAID_ROOT/scripts/kernel/required.txt"
  [ "$RRAID_FLAVOUR" = debug ] && echo "$RRAID_ROOT/scripts/kernel/required-debug.txt"
  return 0
}

# Versions that go into the cache key and into `make demo`'s output.
rraid_versions() {
  echo "linux-source $(dpkg-query -W -f='${Version}' linux-source-6.12)"
  echo "rustc $($RUSTC_KERNEL --version)"
  echo "bindgen $($BINDGEN --version)"
  if [ "$RRAID_FLAVOUR" = debug ]; then
    echo "clang $(clang --version | head -1) LLVM=1"
  else
    echo "gcc $(gcc -dumpfullversion)"
  fi
}

rraid_kernel_key() {
  { rraid_versions; cat $(rraid_fragments); } | sha256sum | cut -c1-16
}

rraid_kernel_dir() {
  if [ "$RRAID_FLAVOUR" = debug ]; then
    echo "$RRAID_CACHE/kernel-debug-$(rraid_kernel_key)"
  else
    echo "$RRAID_CACHE/kernel-$(rraid_kernel_key)"
  fi
}

# Make variables every kernel-side make needs.
rraid_kmake_vars() {
  echo "RUSTC=$RUSTC_KERNEL RUST_LIB_SRC=$RUST_LIB_SRC BINDGEN=$BINDGEN"
  [ "$RRAID_FLAVOUR" = debug ] && echo "LLVM=1"
  return 0
}
