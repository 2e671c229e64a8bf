// uring.h: the io_uring ring of the uring-* helpers, over raw syscalls (the guest has no
// liburing). Set up a ring (uring_init), fill entries (uring_sqe), then submit them all in one
// io_uring_enter() and check each completion (uring_run). Each function prints what failed
// and returns -1 or NULL.
#ifndef RRAID_URING_H
#define RRAID_URING_H

#include <errno.h>
#include <linux/io_uring.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct uring {
	int fd;
	uint32_t *sq_tail, *sq_mask, *sq_array, tail;
	struct io_uring_sqe *sqes;
	uint32_t *cq_head, *cq_tail, *cq_mask;
	struct io_uring_cqe *cqes;
};

// Sets up a ring of `entries` submission entries and maps its queues.
static inline int uring_init(struct uring *r, unsigned entries)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	r->fd = syscall(__NR_io_uring_setup, entries, &p);
	if (r->fd < 0) {
		perror("io_uring_setup");
		return -1;
	}
	size_t sq_sz = p.sq_off.array + p.sq_entries * sizeof(uint32_t);
	size_t cq_sz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	uint8_t *sq = mmap(0, sq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
			   IORING_OFF_SQ_RING);
	uint8_t *cq = mmap(0, cq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
			   IORING_OFF_CQ_RING);
	r->sqes = mmap(0, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED) {
		perror("mmap");
		return -1;
	}
	r->sq_tail = (uint32_t *)(sq + p.sq_off.tail);
	r->sq_mask = (uint32_t *)(sq + p.sq_off.ring_mask);
	r->sq_array = (uint32_t *)(sq + p.sq_off.array);
	r->tail = *r->sq_tail;
	r->cq_head = (uint32_t *)(cq + p.cq_off.head);
	r->cq_tail = (uint32_t *)(cq + p.cq_off.tail);
	r->cq_mask = (uint32_t *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

// The i-th entry of the next submission, zeroed and placed in the submission array.
static inline struct io_uring_sqe *uring_sqe(struct uring *r, unsigned i)
{
	uint32_t idx = (r->tail + i) & *r->sq_mask;
	struct io_uring_sqe *s = &r->sqes[idx];
	memset(s, 0, sizeof(*s));
	r->sq_array[idx] = idx;
	return s;
}

// Submits entries 0..n-1 in one io_uring_enter(), which waits for all of them to complete.
static inline int uring_submit(struct uring *r, unsigned n)
{
	__atomic_store_n(r->sq_tail, r->tail + n, __ATOMIC_RELEASE);
	r->tail += n;
	int got = syscall(__NR_io_uring_enter, r->fd, n, n, IORING_ENTER_GETEVENTS, NULL, 0);
	if (got < 0 || (unsigned)got != n) {
		fprintf(stderr, "io_uring_enter: submitted %d of %u: %s\n", got, n,
			got < 0 ? strerror(errno) : "short");
		return -1;
	}
	return 0;
}

// The next completion, waiting for one if there is none yet; uring_seen() releases it.
static inline struct io_uring_cqe *uring_cqe(struct uring *r)
{
	for (;;) {
		uint32_t head = *r->cq_head;
		if (head != __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
			return &r->cqes[head & *r->cq_mask];
		if (syscall(__NR_io_uring_enter, r->fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
			perror("io_uring_enter (wait)");
			return NULL;
		}
	}
}

// Releases the completion uring_cqe() returned.
static inline void uring_seen(struct uring *r)
{
	__atomic_store_n(r->cq_head, *r->cq_head + 1, __ATOMIC_RELEASE);
}

// Submits entries 0..n-1 in one io_uring_enter() and reaps their n completions, calling
// check(cqe, arg) on each. Returns -1 when a syscall failed, else 1 when any check returned
// non-zero, else 0.
static inline int uring_run(struct uring *r, unsigned n,
			    int (*check)(const struct io_uring_cqe *, void *), void *arg)
{
	if (uring_submit(r, n))
		return -1;
	int rc = 0;
	for (unsigned done = 0; done < n; done++) {
		struct io_uring_cqe *c = uring_cqe(r);
		if (!c)
			return -1;
		if (check(c, arg))
			rc = 1;
		uring_seen(r);
	}
	return rc;
}

#endif
