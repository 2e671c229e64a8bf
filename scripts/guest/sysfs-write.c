// sysfs-write: one write() of all of stdin to FILE, and the errno that came back.
//
// Usage: printf 'rraid0 level=0 /dev/vdb /dev/vdc\n' | sysfs-write /sys/kernel/rraid/create
//
// Prints "OK" and exits 0 when write() took every byte. Otherwise prints the errno's name
// (EINVAL, ENODEV, ...; "E<number>" for one not in the table) or "SHORT <written>/<total>" and
// exits 1. A shell's `echo > file` reports only a strerror() text and may split or retry the
// write; this helper makes the single write() and its exact errno the thing a test checks.
//
// With FAIL_NTH=N in the environment, the N-th allocation that fault injection counts in this
// task during the write fails (the kernel's /proc/thread-self/fail-nth; failslab's filters say
// which count), and the result gets a second word: "injected", or "missed" when the write made
// fewer than N such allocations.
// Built statically on the host by scripts/build-initramfs.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_INPUT_BYTES (1 << 20)

static const struct {
	int num;
	const char *name;
} names[] = {
	{ EPERM, "EPERM" },	    { ENOENT, "ENOENT" },	{ EIO, "EIO" },
	{ ENXIO, "ENXIO" },	    { E2BIG, "E2BIG" },		{ EBADF, "EBADF" },
	{ EAGAIN, "EAGAIN" },	    { ENOMEM, "ENOMEM" },	{ EACCES, "EACCES" },
	{ EFAULT, "EFAULT" },	    { ENOTBLK, "ENOTBLK" },	{ EBUSY, "EBUSY" },
	{ EEXIST, "EEXIST" },	    { ENODEV, "ENODEV" },	{ ENOTDIR, "ENOTDIR" },
	{ EISDIR, "EISDIR" },	    { EINVAL, "EINVAL" },	{ ENOSPC, "ENOSPC" },
	{ EROFS, "EROFS" },	    { ERANGE, "ERANGE" },	{ ENAMETOOLONG, "ENAMETOOLONG" },
	{ ENOSYS, "ENOSYS" },	    { EOPNOTSUPP, "EOPNOTSUPP" }, { EOVERFLOW, "EOVERFLOW" },
	{ ETIMEDOUT, "ETIMEDOUT" }, { EILSEQ, "EILSEQ" },
};

int main(int argc, char **argv)
{
	static char buf[MAX_INPUT_BYTES];
	size_t len = 0;
	ssize_t n;

	if (argc != 2) {
		fprintf(stderr, "usage: sysfs-write FILE < data\n");
		return 2;
	}
	while ((n = read(0, buf + len, sizeof(buf) - len)) > 0)
		len += (size_t)n;
	if (n < 0 || len == sizeof(buf)) {
		fprintf(stderr, "sysfs-write: cannot read stdin (or more than %d bytes)\n",
			MAX_INPUT_BYTES - 1);
		return 2;
	}
	int fd = open(argv[1], O_WRONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	const char *nth = getenv("FAIL_NTH");
	int nth_fd = -1;
	if (nth) {
		nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
		if (nth_fd < 0 || write(nth_fd, nth, strlen(nth)) < 0) {
			perror("/proc/thread-self/fail-nth");
			return 2;
		}
	}
	n = write(fd, buf, len);
	int err = errno;
	close(fd);
	const char *tail = "";
	if (nth_fd >= 0) {
		// Reads 0 once the fault was injected; what is left of N otherwise. Writing 0
		// disarms it, so nothing after this write fails.
		char left[16] = "";
		if (pread(nth_fd, left, sizeof(left) - 1, 0) < 0) {
			perror("read /proc/thread-self/fail-nth");
			return 2;
		}
		tail = atoi(left) == 0 ? " injected" : " missed";
		if (pwrite(nth_fd, "0", 1, 0) < 0) {
			perror("disarm /proc/thread-self/fail-nth");
			return 2;
		}
		close(nth_fd);
	}
	if (n == (ssize_t)len) {
		printf("OK%s\n", tail);
		return 0;
	}
	if (n >= 0) {
		printf("SHORT %zd/%zu%s\n", n, len, tail);
		return 1;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].num == err) {
			printf("%s%s\n", names[i].name, tail);
			return 1;
		}
	}
	printf("E%d%s\n", err, tail);
	return 1;
}
