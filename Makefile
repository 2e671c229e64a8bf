# rraid: top-level entry points. Every target installs what it needs (scripts/setup.sh).
# Kernel-side builds go through scripts/, which use the cached guest kernel as KDIR.

SHELL := /bin/bash
T ?=

.PHONY: all setup kernel module initramfs host-test vm-test test demo bench bench-parity clippy fmt clean

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

demo: initramfs
	@scripts/demo

bench: initramfs
	@scripts/bench

bench-parity: setup
	@scripts/bench-parity

clippy: kernel
	@scripts/build-module clippy

fmt:
	@rustfmt --edition 2021 rraid.rs
	@cd tests && cargo fmt

clean:
	@rm -rf build tests/target
