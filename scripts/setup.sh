#!/usr/bin/env bash
# Installs every host dependency of rraid, idempotently: Debian packages and bindgen-cli.
# Safe to run again; does nothing when all is present.
set -euo pipefail

PKGS=(
  # Kernel source and the Rust toolchain that matches it.
  linux-source-6.12 rustc-web rust-web-src rust-web-clippy
  # Kernel build.
  rsync build-essential flex bison bc libelf-dev libssl-dev cpio kmod libclang-dev clang lld llvm
  # Guest and its payload.
  qemu-system-x86 busybox-static fio e2fsprogs mdadm dmsetup linux-perf
  # Remote members in the guest: network namespaces, netem, nsenter.
  iproute2 util-linux
  # Parity peers for the benchmark.
  libisal-dev
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

BINDGEN_VERSION=0.70.1
BINDGEN="${CARGO_HOME:-$HOME/.cargo}/bin/bindgen"
if ! { [ -x "$BINDGEN" ] && "$BINDGEN" --version 2>/dev/null | grep -q "$BINDGEN_VERSION"; }; then
  echo "setup: installing bindgen-cli $BINDGEN_VERSION"
  cargo install bindgen-cli --version "$BINDGEN_VERSION" --locked -q
fi
