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
// Built statically on the host by scripts/build-initramfs (raw syscalls: the guest has no
// liburing).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/io_uring.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_RANGES 64
#define MIN_ENTRIES 3

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
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	int ring = syscall(__NR_io_uring_setup, MAX_RANGES, &p);
	if (ring < 0) {
		perror("io_uring_setup");
		return 1;
	}
	size_t sq_sz = p.sq_off.array + p.sq_entries * sizeof(uint32_t);
	size_t cq_sz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	uint8_t *sq = mmap(0, sq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
			   IORING_OFF_SQ_RING);
	uint8_t *cq = mmap(0, cq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
			   IORING_OFF_CQ_RING);
	struct io_uring_sqe *sqes = mmap(0, p.sq_entries * sizeof(struct io_uring_sqe),
					 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
					 IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	uint32_t *sq_tail = (uint32_t *)(sq + p.sq_off.tail);
	uint32_t *sq_mask = (uint32_t *)(sq + p.sq_off.ring_mask);
	uint32_t *sq_array = (uint32_t *)(sq + p.sq_off.array);
	uint32_t tail = *sq_tail;
	for (unsigned i = 0; i < n; i++) {
		uint32_t idx = (tail + i) & *sq_mask;
		struct io_uring_sqe *s = &sqes[idx];
		memset(s, 0, sizeof(*s));
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
		sq_array[idx] = idx;
	}
	__atomic_store_n(sq_tail, tail + n, __ATOMIC_RELEASE);
	int got = syscall(__NR_io_uring_enter, ring, n, n, IORING_ENTER_GETEVENTS, NULL, 0);
	if (got < 0 || (unsigned)got != n) {
		fprintf(stderr, "io_uring_enter: submitted %d of %u: %s\n", got, n,
			got < 0 ? strerror(errno) : "short");
		return 1;
	}
	uint32_t *cq_head = (uint32_t *)(cq + p.cq_off.head);
	uint32_t *cq_tail = (uint32_t *)(cq + p.cq_off.tail);
	uint32_t *cq_mask = (uint32_t *)(cq + p.cq_off.ring_mask);
	struct io_uring_cqe *cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	unsigned done = 0;
	int rc = 0;
	while (done < n) {
		uint32_t head = *cq_head;
		if (head == __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE)) {
			if (syscall(__NR_io_uring_enter, ring, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
				perror("io_uring_enter (wait)");
				return 1;
			}
			continue;
		}
		struct io_uring_cqe *c = &cqes[head & *cq_mask];
		unsigned i = c->user_data;
		if (i < nw && c->res < 0) {
			fprintf(stderr, "uring-write: range %s: %s\n", argv[i + 3], strerror(-c->res));
			rc = 1;
		} else if (i < nw && (unsigned long long)c->res != len[i]) {
			fprintf(stderr, "uring-write: range %s: wrote %d bytes\n", argv[i + 3], c->res);
			rc = 1;
		}
		__atomic_store_n(cq_head, head + 1, __ATOMIC_RELEASE);
		done++;
	}
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
