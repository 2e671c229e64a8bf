// sysfs-poll: waits, as mdadm --monitor does, for a sysfs attribute to change.
//
// Usage: sysfs-poll FILE TIMEOUT_MS
//
// Reads FILE (which arms sysfs's notification), then poll()s it for POLLPRI|POLLERR. Prints
// "changed: <new contents>" and exits 0 when the kernel notified the file, or "timeout" and
// exits 1. Built statically on the host by scripts/build-initramfs.
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[4096];
	struct pollfd p;
	ssize_t n;

	if (argc != 3) {
		fprintf(stderr, "usage: sysfs-poll FILE TIMEOUT_MS\n");
		return 2;
	}
	p.fd = open(argv[1], O_RDONLY);
	if (p.fd < 0) {
		perror(argv[1]);
		return 2;
	}
	if (read(p.fd, buf, sizeof(buf)) < 0) {
		perror("read");
		return 2;
	}
	p.events = POLLPRI | POLLERR;
	if (poll(&p, 1, atoi(argv[2])) <= 0) {
		printf("timeout\n");
		return 1;
	}
	lseek(p.fd, 0, SEEK_SET);
	n = read(p.fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	printf("changed: %s", buf);
	return 0;
}
