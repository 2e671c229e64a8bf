#!/bin/sh
# Guest side of `make demo` (scripts/demo boots the guest twice over the same disks).
# Boot 1: a RAID 5 with md's v1.2 superblock is created through sysfs and resyncs, gets ext4,
# files and fio; a member fails under I/O, a spare is rebuilt by the sync thread (progress in
# /proc/rraidstat), the data is verified; the guest then reboots with the array still up.
# Boot 2: the array is assembled from its superblocks (devices given in another order), the
# data verified again, and finally md itself assembles what rraid wrote.
. "${RRAID_LIB:-/rraid/lib.sh}"
set -- $DISKS
[ $# -ge 6 ] || { echo "demo: needs 6 disks, got: $DISKS"; exit 2; }
AUX=$1 M1=$2 M2=$3 M3=$4 M4=$5 SPARE=$6

die() { echo "demo: FAILED: $*"; dmesg | tail -30; exit 1; }
say() { echo; echo "== $*"; }
run() { echo "# $*"; "$@"; }
ctl() { echo "# echo \"$2\" > $1"; r=$(sysw "$1" "$2"); [ "$r" = OK ] || die "write to $1: $r"; }
show() {
	for f in level chunk_size raid_disks metadata_version array_state degraded component_size \
		sync_action sync_completed; do
		printf '   %-17s %s\n' "$f" "$(attr rraid0 $f)"
	done
	for m in /sys/block/rraid0/rraid/dev-*; do
		printf '   %-17s slot %s, %s\n' "${m##*/}" "$(cat "$m/slot")" "$(cat "$m/state")"
	done
}
# progress SECONDS: /proc/rraidstat every 2 s while a sync runs (at most SECONDS).
progress() {
	i=0
	while [ "$(attr rraid0 sync_action)" != idle ] && [ $i -lt "$1" ]; do
		sed -n '/^rraid0/,/^$/p' /proc/rraidstat | sed 's/^/   | /'
		sleep 2
		i=$((i + 2))
	done
	sync_wait rraid0 600 || die "sync did not end"
}
kernel_clean() {
	bad=$(dmesg | grep -v '^rraid:' | grep -E "$DMESG_BAD")
	[ -z "$bad" ] || { echo "$bad"; die "kernel log holds errors"; }
	echo "   kernel log clean (no BUG/WARNING/Oops/panic/refcount_t)"
}

mkdir -p /aux /mnt/r5
if [ "${RRAID_BOOT:-1}" = 1 ]; then
	say "boot 1: Linux $(uname -r), $(nproc) vCPUs (QEMU TCG), disks $DISKS"
	dmesg -c >/dev/null
	run insmod "$RRAID_KO" || die "insmod"
	mkfs.ext4 -q -F "$AUX" && mount "$AUX" /aux || die "aux disk"

	say "create a RAID 5 (chunk 64K, md's v1.2 superblock) over $M1 $M2 $M3 $M4; it resyncs"
	ctl /sys/kernel/rraid/create "rraid0 level=5 chunk=64K name=demo $M1 $M2 $M3 $M4"
	show
	progress 60
	echo "   resync done: $(dmesg | grep 'rraid0: resync done' | sed 's/.*rraid0: //')"
	run mdadm --examine "$M1" | sed -n '/Magic/,/Array State/p' | sed 's/^/   /'

	say "ext4 and files, checksummed"
	run mkfs.ext4 -q -F /dev/rraid0 || die "mkfs"
	run mount /dev/rraid0 /mnt/r5 || die "mount"
	dd if=/dev/urandom of=/mnt/r5/big bs=1M count=32 2>/dev/null || die "write big"
	mkdir -p /mnt/r5/small
	for i in $(seq 1 100); do head -c $((i * 331)) /dev/urandom >/mnt/r5/small/f$i; done
	cp -a /rraid /mnt/r5/tree
	(cd /mnt/r5 && find . -type f | sort | xargs sha256sum) >/aux/sums
	sync
	echo "   wrote $(wc -l </aux/sums) files, $(du -sm /mnt/r5 | cut -f1) MiB"

	say "fio verify on a file while $M2 fails under I/O; the array goes on degraded"
	fio --eta=never --name=under-failure --filename=/mnt/r5/fio.dat --size=24m --ioengine=libaio --direct=1 \
		--rw=randwrite --bsrange=4k-64k --iodepth=16 --verify=crc32c --verify_fatal=1 \
		--do_verify=1 --rate=2m --output=/tmp/fio.out &
	fpid=$!
	sleep 4
	ctl "/sys/block/rraid0/rraid/dev-$(kname "$M2")/state" faulty
	wait $fpid || { cat /tmp/fio.out; die "fio verify with a member failed under it"; }
	grep -E 'write:|READ:|WRITE:' /tmp/fio.out | sed 's/^ */   fio: /'
	show

	say "add a spare; the sync thread rebuilds it (throttled to 20 MiB/s to watch it)"
	ctl /sys/block/rraid0/rraid/sync_speed_max 20000
	ctl /sys/block/rraid0/rraid/new_dev "$SPARE"
	progress 120
	dmesg | grep -E 'rraid0: (recovery|.* takes slot)' | sed 's/^/   /'
	ctl /sys/block/rraid0/rraid/sync_action check
	sync_wait rraid0 600 || die "check"
	echo "   check: mismatch_cnt $(attr rraid0 mismatch_cnt)"
	[ "$(attr rraid0 mismatch_cnt)" = 0 ] || die "mismatches after the rebuild"
	(cd /mnt/r5 && sha256sum -c /aux/sums >/dev/null) || die "checksums after the rebuild"
	echo "   all $(wc -l </aux/sums) checksums match after the rebuild"
	show
	run umount /mnt/r5 || die "umount"
	kernel_clean
	say "reboot with the array up: rraid's reboot notifier leaves it clean on its members"
	exit 0
fi

say "boot 2: the disks as boot 1 left them"
dmesg -c >/dev/null
mount "$AUX" /aux || die "aux disk"
run mdadm --examine "$M1" | grep -E 'State :|Events|Array State|Device Role' | sed 's/^/   /'
mdadm --examine "$M1" | grep -q 'State : clean' || die "the array was not left clean at reboot"
run insmod "$RRAID_KO" || die "insmod"
say "assemble from the superblocks, the devices given in another order"
ctl /sys/kernel/rraid/assemble "rraid0 $SPARE $M4 $M3 $M1 $M2"
dmesg | grep 'rraid0:' | sed 's/^/   /'
show
run mount /dev/rraid0 /mnt/r5 || die "mount"
(cd /mnt/r5 && sha256sum -c /aux/sums >/dev/null) || die "checksums after the reboot"
echo "   all $(wc -l </aux/sums) checksums match after the reboot"
run umount /mnt/r5 || die "umount"
ctl /sys/kernel/rraid/remove rraid0
run rmmod rraid || die "rmmod"

say "md assembles what rraid wrote"
modprobe raid456 || die "modprobe raid456"
run mdadm --assemble /dev/md0 --run "$M1" "$M3" "$M4" "$SPARE" </dev/null || die "mdadm --assemble"
run mdadm --detail /dev/md0 | grep -E 'Raid Level|Array Size|State :|Active Devices|Events' | sed 's/^/   /'
run e2fsck -fn /dev/md0 >/tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; die "e2fsck on md0"; }
tail -1 /tmp/fsck.out | sed 's/^/   /'
run mount -o ro /dev/md0 /mnt/r5 || die "mount md0"
(cd /mnt/r5 && sha256sum -c /aux/sums >/dev/null) || die "checksums through md"
echo "   md reads all $(wc -l </aux/sums) files rraid wrote, checksums match"
umount /mnt/r5
mdadm --stop /dev/md0 >/dev/null
kernel_clean
say "demo done"
