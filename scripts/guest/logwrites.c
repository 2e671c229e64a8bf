// logwrites: prints the entries of a dm-log-writes log, one line each, to check write order.
//
// Usage: logwrites LOGDEV SB_SECTOR
//
// Each line: `INDEX SECTOR NR_SECTORS FLAGS [mark TEXT | sb EVENTS RESYNC ROLE0 ROLE1]`, FLAGS
// as letters (F flush, U fua, D discard, M mark, X metadata) or `-`. A write of one sector or
// more at SB_SECTOR is decoded as md's v1.x superblock: its events, resync_offset and the roles
// of devices 0 and 1 (hex). Debian has no replay tool for this format
// (drivers/md/dm-log-writes.c: a super at sector 0, then per entry one sector holding
// `struct log_write_entry` followed by the entry's data). Exits 2 on a bad log.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAGIC 0x6a736677736872ULL

static uint64_t le64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static unsigned le16(const unsigned char *p)
{
	return p[0] | (p[1] << 8);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: logwrites LOGDEV SB_SECTOR\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	uint64_t sb_sector = strtoull(argv[2], NULL, 0);
	unsigned char sec[4096];
	if (pread(fd, sec, 512, 0) != 512 || le64(sec) != MAGIC) {
		fprintf(stderr, "%s: not a dm-log-writes log\n", argv[1]);
		return 2;
	}
	uint64_t n = le64(sec + 16);
	unsigned ss = sec[24] | (sec[25] << 8) | (sec[26] << 16) | ((unsigned)sec[27] << 24);
	if (ss < 512 || ss > sizeof(sec)) {
		fprintf(stderr, "%s: sector size %u\n", argv[1], ss);
		return 2;
	}
	uint64_t at = ss; // the first entry, in bytes
	for (uint64_t i = 0; i < n; i++) {
		if (pread(fd, sec, ss, at) != (ssize_t)ss) {
			fprintf(stderr, "%s: entry %llu unreadable\n", argv[1], (unsigned long long)i);
			return 2;
		}
		uint64_t sector = le64(sec), nr = le64(sec + 8), flags = le64(sec + 16);
		uint64_t dlen = le64(sec + 24);
		char f[8] = "", *p = f;
		const char *names = "FUDMX";
		for (int b = 0; b < 5; b++)
			if (flags & (1u << b))
				*p++ = names[b];
		if (p == f)
			*p++ = '-';
		*p = 0;
		printf("%llu %llu %llu %s", (unsigned long long)i, (unsigned long long)sector,
		       (unsigned long long)nr, f);
		if (flags & 8) {
			size_t l = dlen < ss - 32 ? dlen : ss - 32;
			printf(" mark %.*s", (int)l, (const char *)sec + 32);
		}
		at += ss;
		if (!(flags & 8) && nr > 0) {
			if (sector == sb_sector) {
				unsigned char sb[1024];
				if (pread(fd, sb, sizeof(sb), at) == (ssize_t)sizeof(sb))
					printf(" sb %llu %llu %04x %04x",
					       (unsigned long long)le64(sb + 200),
					       (unsigned long long)le64(sb + 208), le16(sb + 256),
					       le16(sb + 258));
			}
			at += nr * ss;
		}
		printf("\n");
	}
	return 0;
}
