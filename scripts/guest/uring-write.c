// uring-write: writes several byte ranges of a file to the same offsets of a block device,
// O_DIRECT, all in one io_uring_enter().
//
// Usage: uring-write [-d] [-m MIRROR] DEVICE SOURCE OFFSET:LENGTH...   (bytes, multiples of 512)
//
// Each range becomes one IORING_OP_WRITE of SOURCE's bytes [OFFSET, OFFSET+LENGTH) to DEVICE at
// OFFSET. io_uring plugs a submission only when it holds more than two entries
// (io_submit_state_start: need_plug = max_ios > 2), so fewer than three ranges are padded with
// IORING_OP_NOPs: the writes then reach the block layer under one plug and arrive together,
// which is what a test of gathering adjacent partial-stripe writes into one full stripe needs.
// With -d, every write carries RWF_DSYNC (on a block device: a FUA write).
// With -m, once every write has completed in full, the same ranges are also written into the
// file MIRROR (a test's image of what the device should hold).
// Exits 0 when every write completed in full; prints the failing range and exits 1 otherwise.
// Built statically on the host by scripts/build-initramfs; the ring is uring.h's (raw syscalls:
// the guest has no liburing).
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uring.h"

#define MAX_RANGES 64
#define MIN_ENTRIES 3

// The writes of one submission: entries 0..nw-1 write ranges[i] (len[i] bytes); the rest are
// NOPs.
struct writes {
	unsigned nw;
	unsigned long long *len;
	char **ranges;
};

// A completion of entry user_data: reports a failed or short write.
static int check(const struct io_uring_cqe *c, void *arg)
{
	const struct writes *w = arg;
	unsigned i = c->user_data;
	if (i < w->nw && c->res < 0) {
		fprintf(stderr, "uring-write: range %s: %s\n", w->ranges[i], strerror(-c->res));
		return 1;
	} else if (i < w->nw && (unsigned long long)c->res != w->len[i]) {
		fprintf(stderr, "uring-write: range %s: wrote %d bytes\n", w->ranges[i], c->res);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mirror = NULL;
	int dsync = 0;
	if (argc > 1 && !strcmp(argv[1], "-d")) {
		dsync = 1;
		argv++;
		argc--;
	}
	if (argc > 2 && !strcmp(argv[1], "-m")) {
		mirror = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc < 4 || argc - 3 > MAX_RANGES) {
		fprintf(stderr,
			"usage: uring-write [-d] [-m MIRROR] DEVICE SOURCE OFFSET:LENGTH... (at most %d)\n",
			MAX_RANGES);
		return 2;
	}
	unsigned nw = argc - 3;
	unsigned n = nw < MIN_ENTRIES ? MIN_ENTRIES : nw;
	int fd = open(argv[1], O_WRONLY | O_DIRECT);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	int src = open(argv[2], O_RDONLY);
	if (src < 0) {
		perror(argv[2]);
		return 1;
	}
	unsigned long long off[MAX_RANGES], len[MAX_RANGES];
	void *buf[MAX_RANGES];
	for (unsigned i = 0; i < nw; i++) {
		if (sscanf(argv[i + 3], "%llu:%llu", &off[i], &len[i]) != 2 || len[i] == 0 ||
		    off[i] % 512 || len[i] % 512) {
			fprintf(stderr, "uring-write: bad range '%s'\n", argv[i + 3]);
			return 2;
		}
		if (posix_memalign(&buf[i], 4096, len[i])) {
			fprintf(stderr, "uring-write: out of memory\n");
			return 1;
		}
		if (pread(src, buf[i], len[i], off[i]) != (ssize_t)len[i]) {
			fprintf(stderr, "uring-write: short read of %s at %llu\n", argv[2], off[i]);
			return 1;
		}
	}
	struct uring r;
	if (uring_init(&r, MAX_RANGES))
		return 1;
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_sqe *s = uring_sqe(&r, i);
		s->user_data = i;
		if (i < nw) {
			s->opcode = IORING_OP_WRITE;
			s->fd = fd;
			s->addr = (uintptr_t)buf[i];
			s->len = len[i];
			s->off = off[i];
			if (dsync)
				s->rw_flags = RWF_DSYNC;
		} else {
			s->opcode = IORING_OP_NOP;
		}
	}
	struct writes w = { nw, len, argv + 3 };
	int rc = uring_run(&r, n, check, &w);
	if (rc < 0)
		return 1;
	if (rc || !mirror)
		return rc;
	int mfd = open(mirror, O_WRONLY);
	if (mfd < 0) {
		perror(mirror);
		return 1;
	}
	for (unsigned i = 0; i < nw; i++) {
		if (pwrite(mfd, buf[i], len[i], off[i]) != (ssize_t)len[i]) {
			fprintf(stderr, "uring-write: short write to %s at %llu\n", mirror, off[i]);
			return 1;
		}
	}
	return close(mfd) ? 1 : 0;
}
