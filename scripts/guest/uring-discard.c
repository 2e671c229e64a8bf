// uring-discard: discards several byte ranges of a block device in one io_uring_enter().
//
// Usage: uring-discard DEVICE OFFSET:LENGTH...   (bytes, multiples of the logical block size)
//
// Each range becomes one BLOCK_URING_CMD_DISCARD command; all of them are submitted by a single
// io_uring_enter(), which plugs them, so blk-mq may merge discards of non-adjacent ranges into
// one request when the queue allows more than one discard segment. ext4 -o discard and
// blkdiscard cannot produce such a request: they wait for each discard alone. Exits 0 when every
// command succeeded; prints the failing errno and exits 1 otherwise. Built statically on the host
// by scripts/build-initramfs; the ring is uring.h's (raw syscalls: the guest has no liburing).
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "uring.h"

#ifndef BLOCK_URING_CMD_DISCARD
#define BLOCK_URING_CMD_DISCARD _IO(0x12, 0)
#endif
#define MAX_RANGES 256

// A completion of range ranges[user_data]: reports a failure.
static int check(const struct io_uring_cqe *c, void *ranges)
{
	if (c->res >= 0)
		return 0;
	fprintf(stderr, "uring-discard: range %s: %s\n", ((char **)ranges)[c->user_data],
		strerror(-c->res));
	return 1;
}

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
	struct uring r;
	if (uring_init(&r, MAX_RANGES))
		return 1;
	for (unsigned i = 0; i < n; i++) {
		unsigned long long off, len;
		if (sscanf(argv[i + 2], "%llu:%llu", &off, &len) != 2) {
			fprintf(stderr, "uring-discard: bad range '%s'\n", argv[i + 2]);
			return 2;
		}
		struct io_uring_sqe *s = uring_sqe(&r, i);
		s->opcode = IORING_OP_URING_CMD;
		s->fd = fd;
		s->cmd_op = BLOCK_URING_CMD_DISCARD;
		s->addr = off;
		s->addr3 = len;
		s->user_data = i;
	}
	int rc = uring_run(&r, n, check, argv + 2);
	return rc < 0 ? 1 : rc;
}
