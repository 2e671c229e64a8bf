#!/bin/sh
# VM tests that span a crash: the first boot writes to arrays with superblocks (fio verify,
# and files on ext4) until fio's own trigger crashes the guest (sysrq b: no flush, no
# shutdown); the second boot, over the same member images, assembles each array from its
# superblocks, which say dirty, lets it resync, and checks that every acknowledged write reads
# back intact (fio --verify_only from the state fio saved at the trigger), e2fsck is clean and
# check finds 0. vm-run's images are cache=unsafe: what the guest issued survives the kill, so
# these tests catch a missing dirty mark or resync, not a missing flush.
# vm-run: --boots 2 --disks 17 --disk-size 64M
. "${RRAID_LIB:-/rraid/lib.sh}"

RRAID_META=1.2
AUX=/aux

# The arrays: name, level words, member count. RAID 6 and 10 under RRAID_FULL=1.
arrays() {
	echo "rraid1 level=1 2"
	echo "rraid5 level=5_chunk=64K 3"
	echo "rraid50 level=5_chunk=64K 3"
	if [ "${RRAID_FULL:-0}" = 1 ]; then
		echo "rraid6 level=6_chunk=64K 4"
		echo "rraid10 level=10_chunk=64K 4"
	fi
}

# members NAME: the disks of array NAME, after the aux disk, in the order of `arrays`.
members() {
	set -- $DISKS
	shift
	arrays | while read -r a _ n; do
		if [ "$a" = "$M_WANT" ]; then
			echo $(first "$n" "$@")
			break
		fi
		shift "$n"
	done
}

# Boot 1: arrays made (with their initial resync), fio writing to each (but rraid50, which
# holds ext4: files with checksums, and more files written when the crash comes), crashed by
# fio's trigger after 10 s.
crash_prepare() {
	mkdir -p "$T_DIR" "$AUX"
	rraid_load || exit 1
	set -- $DISKS
	mkfs.ext4 -q -F "$1" && mount "$1" "$AUX" || exit 1
	jobs="[global]
ioengine=libaio
direct=1
verify=crc32c
verify_fatal=1
randrepeat=1
rw=randwrite
bsrange=4k-64k
iodepth=16
rate=1m
verify_state_save=1
"
	arrays | while read -r a l n; do
		M_WANT=$a
		mk "$a" "$(echo "$l" | tr _ ' ')" $(members) || exit 1
	done
	for a in $(arrays | cut -d' ' -f1); do sync_wait "$a" 300 || exit 1; done
	mkdir -p /mnt/r50
	mkfs.ext4 -q -F /dev/rraid50 && mount /dev/rraid50 /mnt/r50 || exit 1
	for i in 1 2 3 4 5 6; do head -c 1048576 /dev/urandom >/mnt/r50/f$i; done
	sync
	(cd /mnt/r50 && sha256sum f*) >"$AUX/sums"
	# Files still being written when the crash comes.
	(i=0; while :; do head -c 262144 /dev/urandom >/mnt/r50/late$i; i=$(((i + 1) % 40)); done) &
	for a in $(arrays | cut -d' ' -f1); do
		[ "$a" = rraid50 ] && continue
		jobs="$jobs
[$a]
filename=/dev/$a
size=32m
"
	done
	echo "$jobs" >"$AUX/crash.fio"
	sync
	echo "boot 1: arrays written; fio runs until its trigger crashes the guest"
	cd "$AUX" && fio --eta=never --aux-path="$AUX" --trigger-timeout=10 \
		--trigger="echo b > /proc/sysrq-trigger" "$AUX/crash.fio"
	echo "boot 1: fio returned without crashing the guest"
	exit 1
}

# Boot 2: NAME assembles dirty, resyncs, and check finds 0; rraid50's ext4 is clean and its
# files intact.
crash_assemble() {
	a=$1
	M_WANT=$a
	for d in $(members); do
		mdadm --examine "$d" | grep -q 'State : active' ||
			{ mdadm --examine "$d"; fail "$d: superblock not active after the crash"; return 1; }
	done
	asm "$a" $(members) || return 1
	dmesg | grep -q "$a: assembling .* not clean: resync" || { dmesg | grep "$a"; fail "$a assembled as clean"; return 1; }
	sync_wait "$a" 300 || return 1
	run_action "$a" check || return 1
	expect_attr "$a" mismatch_cnt 0 || return 1
	note "$(dmesg | grep -E "$a: (assembling|resync done)" | sed 's/.*\] //' | tr '\n' ';')"
	if [ "$a" = rraid50 ]; then
		# Mounting replays the journal; then the file system must be clean.
		mkdir -p /mnt/r50
		mount /dev/rraid50 /mnt/r50 || { fail "mount /dev/rraid50"; return 1; }
		(cd /mnt/r50 && sha256sum -c "$AUX/sums") || { fail "files on ext4 changed across the crash"; return 1; }
		umount /mnt/r50 || { fail "umount"; return 1; }
		e2fsck -fn /dev/rraid50 || { fail "e2fsck -fn /dev/rraid50 after the crash"; return 1; }
	fi
}

# Boot 2: every array assembled as above, then fio verifies each one's acknowledged writes
# from the state it saved at the trigger (one run over the whole job file: fio seeds a job's
# offsets by its number in the file).
crash_check() {
	mkdir -p "$AUX"
	grep -q " $AUX " /proc/mounts || mount "$(first 1 $DISKS)" "$AUX" || { fail "mount aux"; return 1; }
	for a in $(arrays | cut -d' ' -f1 | grep -vx rraid50); do
		[ -n "$(ls "$AUX" | grep -- "-$a-[0-9]*-verify.state")" ] ||
			{ ls -l "$AUX"; fail "fio saved no verify state for $a: the crash test shows nothing"; return 1; }
	done
	for a in $(arrays | cut -d' ' -f1); do
		crash_assemble "$a" || return 1
	done
	(cd "$AUX" && fio --eta=never --aux-path="$AUX" --verify_state_load=1 --verify_only \
		"$AUX/crash.fio") >"$T_DIR/fio.out" 2>&1 ||
		{ grep -iE 'verify|bad|error|expected' "$T_DIR/fio.out" | head; fail "fio --verify_only of the acknowledged writes"; return 1; }
	cat "$T_DIR/fio.out"
	for a in $(arrays | cut -d' ' -f1 | grep -vx rraid50); do
		n=$(sed -n "/^$a: (groupid/,/issued rwts/p" "$T_DIR/fio.out" | sed -n 's/.*issued rwts: total=\([0-9]*\),.*/\1/p')
		[ "${n:-0}" -gt 0 ] || { fail "fio verified nothing on $a"; return 1; }
		note "$a: $n blocks verified"
	done
}

if [ "${RRAID_LIST:-0}" != 1 ] && [ "${RRAID_BOOT:-1}" = 1 ]; then
	crash_prepare
fi
t_run "crash-dirty-$(arrays | cut -d' ' -f1 | tr '\n' '-' | sed 's/-$//')" crash_check
t_summary
