// uring-discard: discards several byte ranges of a block device in one io_uring_enter().
//
// Usage: uring-discard DEVICE OFFSET:LENGTH...   (bytes, multiples of the logical block size)
//
// Each range becomes one BLOCK_URING_CMD_DISCARD command; all of them are submitted by a single
// io_uring_enter(), which plugs them, so blk-mq may merge discards of non-adjacent ranges into
// one request when the queue allows more than one discard segment. ext4 -o discard and
// blkdiscard cannot produce such a request: they wait for each discard alone. Exits 0 when every
// command succeeded; prints the failing errno and exits 1 otherwise. Built statically on the host
// by scripts/build-initramfs (raw syscalls: the guest has no liburing).
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/io_uring.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef BLOCK_URING_CMD_DISCARD
#define BLOCK_URING_CMD_DISCARD _IO(0x12, 0)
#endif
#define MAX_RANGES 256

int main(int argc, char **argv)
{
	if (argc < 3 || argc - 2 > MAX_RANGES) {
		fprintf(stderr, "usage: uring-discard DEVICE OFFSET:LENGTH... (at most %d)\n", MAX_RANGES);
		return 2;
	}
	unsigned n = argc - 2;
	int fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
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
		unsigned long long off, len;
		if (sscanf(argv[i + 2], "%llu:%llu", &off, &len) != 2) {
			fprintf(stderr, "uring-discard: bad range '%s'\n", argv[i + 2]);
			return 2;
		}
		uint32_t idx = (tail + i) & *sq_mask;
		struct io_uring_sqe *s = &sqes[idx];
		memset(s, 0, sizeof(*s));
		s->opcode = IORING_OP_URING_CMD;
		s->fd = fd;
		s->cmd_op = BLOCK_URING_CMD_DISCARD;
		s->addr = off;
		s->addr3 = len;
		s->user_data = i;
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
		if (c->res < 0) {
			fprintf(stderr, "uring-discard: range %s: %s\n", argv[c->user_data + 2],
				strerror(-c->res));
			rc = 1;
		}
		__atomic_store_n(cq_head, head + 1, __ATOMIC_RELEASE);
		done++;
	}
	return rc;
}
