// blkzeroout: zeroes a byte range of a block device with the BLKZEROOUT ioctl.
//
// Usage: blkzeroout DEVICE OFFSET LENGTH   (bytes, multiples of the logical block size)
//
// The block layer sends REQ_OP_WRITE_ZEROES when the device offers it and falls back to
// writing zero pages otherwise, so the range must read back as zeroes either way: a test of
// how a stacking driver maps (or switches off) write-zeroes. Exits 0 on success; prints the
// errno and exits 1 otherwise. Built statically on the host by scripts/build-initramfs.
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: blkzeroout DEVICE OFFSET LENGTH\n");
		return 2;
	}
	uint64_t range[2] = { strtoull(argv[2], NULL, 0), strtoull(argv[3], NULL, 0) };
	int fd = open(argv[1], O_WRONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	if (ioctl(fd, BLKZEROOUT, range) != 0) {
		printf("BLKZEROOUT %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	return close(fd) == 0 ? 0 : 1;
}
