#!/bin/sh
# Guest side of `make demo` (run by scripts/demo through scripts/vm-run): load rraid, create a
# RAID0 and a RAID1 through sysfs, run short fio jobs on them, put ext4 on both, write and read
# back files, fail a mirror member and read the files again, tear everything down. Prints each
# command and the figures.
. "${RRAID_LIB:-/rraid/lib.sh}"
set -- $DISKS
[ $# -ge 4 ] || { echo "demo: needs 4 member disks, got: $DISKS"; exit 2; }

die() { echo "demo: FAILED: $*"; dmesg | tail -30; exit 1; }
say() { echo; echo "== $*"; }
run() { echo "# $*"; "$@"; }
ctl() { echo "# echo \"$2\" > $1"; r=$(sysw "$1" "$2"); [ "$r" = OK ] || die "write to $1: $r"; }

say "guest: Linux $(uname -r), $(nproc) vCPUs (QEMU TCG), member disks $DISKS"
[ -f "$RRAID_KO" ] || die "rraid.ko missing from the initramfs"
dmesg -c >/dev/null
run insmod "$RRAID_KO" || die "insmod"
run ls /sys/kernel/rraid

say "create a RAID0 (chunk 64K) over $1 $2 and a RAID1 over $3 $4"
ctl /sys/kernel/rraid/create "rraid0 level=0 chunk=64K $1 $2"
ctl /sys/kernel/rraid/create "rraid1 level=1 assume-clean $3 $4"
for a in rraid0 rraid1; do
	echo "-- /sys/block/$a/rraid:"
	for f in level chunk_size raid_disks array_state degraded component_size; do
		printf '   %-15s %s\n' "$f" "$(attr $a $f)"
	done
	for m in /sys/block/$a/rraid/dev-*; do
		printf '   %-15s slot %s, %s\n' "${m##*/}" "$(cat "$m/slot")" "$(cat "$m/state")"
	done
	printf '   size %s MiB, io_min %s, io_opt %s, write_cache "%s", slaves: %s\n' \
		$(($(dev_bytes /dev/$a) / 1048576)) "$(cat /sys/block/$a/queue/minimum_io_size)" \
		"$(cat /sys/block/$a/queue/optimal_io_size)" "$(cat /sys/block/$a/queue/write_cache)" \
		"$(ls /sys/block/$a/slaves | tr '\n' ' ')"
done

say "fio, 5 s per job on the raw arrays (direct I/O, libaio; emulated CPU, so compare, don't quote)"
printf '   %-8s %-22s %12s %10s\n' array job MiB/s IOPS
for a in rraid0 rraid1; do
	for job in "seq-read-1M:read:1M:8" "seq-write-1M:write:1M:8" "rand-read-4K:randread:4k:32" "rand-write-4K:randwrite:4k:32"; do
		IFS=: read -r name rw bs qd <<J
$job
J
		fio --name="$name" --filename=/dev/$a --ioengine=libaio --direct=1 --rw=$rw --bs=$bs \
			--iodepth=$qd --time_based --runtime=5 --output-format=terse --terse-version=3 \
			>/tmp/fio.terse 2>/tmp/fio.err || { cat /tmp/fio.err; die "fio $name on $a"; }
		case $rw in
		*read) kb=$(cut -d';' -f7 /tmp/fio.terse) io=$(cut -d';' -f8 /tmp/fio.terse) ;;
		*) kb=$(cut -d';' -f48 /tmp/fio.terse) io=$(cut -d';' -f49 /tmp/fio.terse) ;;
		esac
		printf '   %-8s %-22s %12s %10s\n' $a "$name (QD$qd)" $((kb / 1024)) "$io"
	done
done

say "ext4 on both"
for a in rraid0 rraid1; do
	run mkfs.ext4 -q -F /dev/$a || die "mkfs.ext4 /dev/$a"
	mkdir -p /mnt/$a
	run mount /dev/$a /mnt/$a || die "mount /dev/$a"
done
dumpe2fs -h /dev/rraid0 2>/dev/null | grep -i '^RAID' | sed 's/^/   rraid0: /'

say "write files, checksum, unmount, fsck, remount, compare"
for a in rraid0 rraid1; do
	t0=$(date +%s)
	dd if=/dev/urandom of=/mnt/$a/big bs=1M count=48 2>/dev/null || die "write big on $a"
	mkdir -p /mnt/$a/small
	for i in $(seq 1 200); do head -c $((i * 331)) /dev/urandom >/mnt/$a/small/f$i; done
	cp -a /rraid /mnt/$a/tree
	(cd /mnt/$a && find . -type f | sort | xargs sha256sum) >/tmp/$a.sums
	echo "   $a: wrote $(wc -l </tmp/$a.sums) files, $(du -sm /mnt/$a | cut -f1) MiB in $(($(date +%s) - t0))s"
	run umount /mnt/$a || die "umount"
	run e2fsck -fn /dev/$a >/tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; die "e2fsck /dev/$a"; }
	tail -1 /tmp/fsck.out | sed 's/^/   /'
	run mount /dev/$a /mnt/$a || die "remount"
	(cd /mnt/$a && sha256sum -c /tmp/$a.sums >/dev/null) || die "checksums differ on $a"
	echo "   $a: all $(wc -l </tmp/$a.sums) checksums match after remount"
done
run df -h /mnt/rraid0 /mnt/rraid1
for a in rraid0 rraid1; do run umount /mnt/$a || die "umount"; done

say "fail a RAID1 member through sysfs; the mirror goes on degraded"
ctl /sys/block/rraid1/rraid/dev-$(kname "$4")/state faulty
echo "   dev-$(kname "$4")/state: $(member_state rraid1 "$(kname "$4")"), degraded: $(attr rraid1 degraded), array_state: $(attr rraid1 array_state)"
run mount /dev/rraid1 /mnt/rraid1 || die "mount degraded"
(cd /mnt/rraid1 && sha256sum -c /tmp/rraid1.sums >/dev/null) || die "checksums on degraded rraid1"
echo "   rraid1: checksums still match with one member failed"
echo more >/mnt/rraid1/after-failure && sync || die "write on degraded rraid1"
run umount /mnt/rraid1 || die "umount"

say "remove the arrays and unload"
ctl /sys/kernel/rraid/remove rraid0
ctl /sys/kernel/rraid/remove rraid1
run rmmod rraid || die "rmmod"
bad=$(dmesg | grep -v '^rraid:' | grep -E "$DMESG_BAD")
[ -z "$bad" ] || { echo "$bad"; die "kernel log holds errors"; }
echo "   kernel log clean (no BUG/WARNING/Oops/panic/refcount_t); rraid said:"
dmesg | grep '^rraid:' | head -20 | sed 's/^/     /'
say "demo done"
