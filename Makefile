# rraid: top-level entry points. Every target installs what it needs (scripts/setup.sh).
# Kernel-side builds go through scripts/, which use the cached guest kernel as KDIR.

SHELL := /bin/bash
T ?=
# DEBUG=1: the debug guest kernel (KASAN, kmemleak, debug objects; LLVM=1), cached apart.
DEBUG ?=
export RRAID_FLAVOUR := $(if $(DEBUG),debug,normal)
# The benchmarks run on their own kernel, without lockdep (scripts/kernel/rraid-bench.config);
# `make bench-smoke`, part of `make test`, keeps the tests' kernel.
bench profile bench-rebuild bench-bitmap: export RRAID_FLAVOUR := $(if $(DEBUG),debug,bench)

.PHONY: all setup kernel module initramfs host-test vm-test test test-full demo bench bench-parity bench-rebuild bench-bitmap profile clippy fmt clean

all: module

setup:
	@bash scripts/setup.sh

kernel: setup
	@scripts/build-kernel >/dev/null

module: kernel
	@scripts/build-module

initramfs: module
	@scripts/build-initramfs >/dev/null

# Host tests of the shared no_std code (layout/, parity/).
host-test: setup
	@scripts/host-test

# VM suite; T=<filter> runs only the tests whose name contains the filter.
vm-test: initramfs
	@scripts/vm-test $(T)

test: setup
	@scripts/test-all $(T)

# `make test` with the long matrices (RRAID_FULL=1), then the whole suite under the debug kernel.
test-full: setup
	@scripts/test-full $(T)

demo: initramfs
	@scripts/demo

# FULL=1: the whole matrix (resumable); ONLY=raid1,seq...: a subset (bench/README.md).
bench: initramfs
	@scripts/bench

# Each bench job file once (~1 s, tiny members, at most ~3 min): PASS/FAIL lines, `N passed, N failed`.
.PHONY: bench-smoke
bench-smoke: initramfs
	@scripts/bench-smoke

# Kernel CPU per 4K I/O and perf profiles, rraid against md, in one guest boot.
profile: initramfs
	@scripts/profile

# Rebuild of one member onto a spare, rraid against md, idle and under load, in one guest boot.
bench-rebuild: initramfs
	@scripts/bench-rebuild

bench-parity: setup
	@scripts/bench-parity

# The write-intent bitmap's cost: 4K random write QD 32 with and without, rraid against md.
bench-bitmap: initramfs
	@scripts/bench-bitmap

clippy: kernel
	@scripts/build-module clippy

fmt:
	@rustfmt --edition 2021 rraid.rs
	@cd tests && cargo fmt

clean:
	@rm -rf build tests/target
