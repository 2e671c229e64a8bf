# Shared settings for rraid's scripts; sourced, not run.
# The kernel build is cached outside the repository, keyed by source version, fragments and
# compilers. RRAID_FLAVOUR picks the guest kernel: `normal` (default: the tests' kernel, with
# lockdep), `debug` (KASAN, kmemleak, debug objects; built with LLVM=1) or `bench` (the
# benchmarks' kernel: no lockdep). Each flavour has its own kernel cache entry and its own
# build/ directory for rraid.ko, the initramfs and console logs.
RRAID_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RRAID_CACHE="${RRAID_CACHE:-/var/cache/rraid}"
RRAID_FLAVOUR="${RRAID_FLAVOUR:-normal}"
case "$RRAID_FLAVOUR" in
  normal) RRAID_BUILD="$RRAID_ROOT/build" ;;
  debug) RRAID_BUILD="$RRAID_ROOT/build/debug" ;;
  bench) RRAID_BUILD="$RRAID_ROOT/build/bench" ;;
  *) echo "RRAID_FLAVOUR must be normal, debug or bench, not '$RRAID_FLAVOUR'" >&2; exit 2 ;;
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
  [ "$RRAID_FLAVOUR" = bench ] && echo "$RRAID_ROOT/scripts/kernel/rraid-bench.config"
  return 0
}

# The option lists the final .config must hold.
rraid_required() {
  echo "$RRAID_ROOT/scripts/kernel/required.txt"
  case "$RRAID_FLAVOUR" in
    normal) echo "$RRAID_ROOT/scripts/kernel/required-checks.txt" ;;
    debug) echo "$RRAID_ROOT/scripts/kernel/required-debug.txt" ;;
    bench) echo "$RRAID_ROOT/scripts/kernel/required-bench.txt" ;;
  esac
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
  if [ "$RRAID_FLAVOUR" != normal ]; then
    echo "$RRAID_CACHE/kernel-$RRAID_FLAVOUR-$(rraid_kernel_key)"
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

# rraid_tally [--last] RC FILE...: one "N passed, N failed" line summing those lines of the
# FILEs: every one in each FILE, or with --last only each FILE's last (a FILE without one then
# counts one failure). RC is the status of the runs that wrote them (0: all succeeded); a run
# that failed without saying so still fails the total.
rraid_tally() {
  local last=0 p=0 f=0 rc file a b
  if [ "${1:-}" = --last ]; then last=1; shift; fi
  rc=$1; shift
  for file in "$@"; do
    if [ $last -eq 1 ]; then
      read -r a _ b _ < <(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$file" | tail -1) || { a=0 b=1; }
      p=$((p + a)); f=$((f + b))
    else
      while read -r a _ b _; do
        p=$((p + a)); f=$((f + b))
      done < <(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$file")
    fi
  done
  [ "$rc" -eq 0 ] || [ $f -gt 0 ] || f=1
  echo "$p passed, $f failed"
}
