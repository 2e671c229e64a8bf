// uevent-listen: prints the kernel's uevents whose header contains MATCH, for a while.
//
// Usage: uevent-listen TIMEOUT_MS MATCH
//
// Listens on the kernel's uevent netlink socket (what udev listens to) and prints the header
// line ("change@/devices/virtual/block/rraid0") of each event that contains MATCH, until
// TIMEOUT_MS pass. Exits 0 when at least one was printed, 1 otherwise. Built statically on the
// host by scripts/build-initramfs.
#include <linux/netlink.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	char buf[8192];
	long end;
	int fd, seen = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: uevent-listen TIMEOUT_MS MATCH\n");
		return 2;
	}
	fd = socket(AF_NETLINK, SOCK_DGRAM, NETLINK_KOBJECT_UEVENT);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		perror("uevent socket");
		return 2;
	}
	printf("listening\n");
	fflush(stdout);
	end = now_ms() + atol(argv[1]);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long left = end - now_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			break;
		buf[n] = 0;
		if (strstr(buf, argv[2])) {
			printf("%s\n", buf);
			fflush(stdout);
			seen++;
		}
	}
	return seen ? 0 : 1;
}
