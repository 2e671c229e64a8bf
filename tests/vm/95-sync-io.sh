#!/bin/sh
# VM tests, requests against sync jobs and failures: a BLKZEROOUT and a discard below the
# build point of a RAID 1 rebuild or replacement reach the spare (it ends identical to its
# mirror, and check finds 0); a spare without discard is refused by an array that offers discard; a RAID 5 past
# its tolerance still serves reads of the chunks on its surviving members, fails reads of the
# lost ones and every write, as md's; a spare's limits are stacked in when it joins (its write
# cache: flushes reach it), and one with larger logical blocks is refused.
# vm-run: --disks 4 --disk-size 64M
. "${RRAID_LIB:-/rraid/lib.sh}"

# recovered_past NAME SECTORS: waits (at most 60 s) until NAME's recovery has passed SECTORS.
recovered_past() {
	local i c
	i=0
	while :; do
		c=$(attr "$1" sync_completed)
		case $c in
		*" / "*) [ "${c%% / *}" -ge "$2" ] && return 0 ;;
		esac
		[ "$(attr "$1" sync_action)" = recover ] || [ $i -lt 50 ] ||
			{ fail "no recovery running (sync_action '$(attr "$1" sync_action)', sync_completed '$c')"; return 1; }
		[ $i -lt 600 ] || { fail "recovery not past sector $2 after 60 s ('$c')"; return 1; }
		sleep 0.1
		i=$((i + 1))
	done
}

# raid1_ranges_below_recovery HOW: a RAID 1 over two virtio disks holds a pattern; a spare is
# built at 2000 KiB/s, HOW: "recover" (the second member fails and the spare is rebuilt in its
# slot) or "replace" (the second member wants a replacement and the spare is built as it). Once
# the build has passed 8 MiB, BLKZEROOUT zeroes MiB 0-4 and a discard goes to MiB 4-6, both
# behind the build point. Afterwards the spare holds exactly what the first member holds, the
# array reads back the zeroes, and a check finds no mismatch.
raid1_ranges_below_recovery() {
	how=$1
	set -- $DISKS
	members="$1 $2"
	spare=$3
	mk rraid0 "level=1 assume-clean" $members || return 1
	[ "$(cat /sys/block/rraid0/queue/discard_max_bytes)" -gt 0 ] ||
		{ fail "precondition: rraid0 over virtio offers no discard"; return 1; }
	size=$(dev_bytes /dev/rraid0)
	fill_pat "$size" || return 1
	if [ "$how" = recover ]; then
		fail_slot 1 || return 1
	else
		r=$(sysw "/sys/block/rraid0/rraid/dev-$(kname "$2")/state" want_replacement)
		[ "$r" = OK ] || { fail "want_replacement: $r"; return 1; }
	fi
	[ "$(sysw /sys/block/rraid0/rraid/sync_speed_max 2000)" = OK ] || { fail "sync_speed_max 2000 refused"; return 1; }
	[ "$(sysw /sys/block/rraid0/rraid/new_dev "$spare")" = OK ] || { fail "new_dev $spare refused"; return 1; }
	recovered_past rraid0 16384 || return 1
	/rraid/blkzeroout /dev/rraid0 0 4194304 || { fail "BLKZEROOUT of MiB 0-4"; return 1; }
	blkdiscard -o 4194304 -l 2097152 /dev/rraid0 || { fail "blkdiscard of MiB 4-6"; return 1; }
	c=$(attr rraid0 sync_completed)
	note "zeroed and discarded with the recovery at '$c'"
	[ "$(attr rraid0 sync_action)" = recover ] && [ "${c%% / *}" -lt $((size / 512)) ] ||
		{ fail "the recovery ended before the ranges were sent: not tested"; return 1; }
	[ "$(sysw /sys/block/rraid0/rraid/sync_speed_max system)" = OK ] || { fail "sync_speed_max system refused"; return 1; }
	sync_wait rraid0 120 || return 1
	[ "$(member_state rraid0 "$(kname "$spare")")" = in_sync ] ||
		{ fail "spare is '$(member_state rraid0 "$(kname "$spare")")' after the rebuild"; return 1; }
	dev_cmp "$spare" "$1" 0 "$size" || { fail "the spare differs from the surviving member"; return 1; }
	dd if=/dev/zero of=/tmp/exp bs=1M count=4 conv=notrunc 2>/dev/null
	dev_cmp /dev/rraid0 /tmp/exp 0 4194304 || { fail "MiB 0-4 do not read back as zeroes"; return 1; }
	dev_cmp /dev/rraid0 /tmp/exp 6291456 $((size - 6291456)) || { fail "data past the ranges changed"; return 1; }
	[ "$(sysw /sys/block/rraid0/rraid/sync_action check)" = OK ] || { fail "check refused"; return 1; }
	sync_wait rraid0 120 || return 1
	expect_attr rraid0 mismatch_cnt 0 || return 1
	rm_array rraid0
}

# spare_without_discard: a RAID 1 that offers discard refuses a spare that has none (null_blk),
# with EINVAL and one line, changing nothing; the array still offers discard.
spare_without_discard() {
	set -- $DISKS
	modprobe null_blk nr_devices=1 gb=1 || { fail "modprobe null_blk"; return 1; }
	[ "$(cat /sys/block/nullb0/queue/discard_max_bytes)" = 0 ] ||
		{ fail "precondition: nullb0 has discard"; return 1; }
	mk rraid0 "level=1 assume-clean" "$1" "$2" || return 1
	expect_err EINVAL /sys/block/rraid0/rraid/new_dev /dev/nullb0 || return 1
	[ "$(cat /sys/block/rraid0/queue/discard_max_bytes)" -gt 0 ] ||
		{ fail "rraid0 no longer offers discard"; return 1; }
	rm_array rraid0
}

# linked ARRAY DEV: DEV is drawn under ARRAY (slaves/ and holders/ links, as lsblk reads them).
linked() {
	[ -e "/sys/block/$1/slaves/$2" ] && [ -e "/sys/block/$2/holders/$1" ]
}

# spare_write_cache: a RAID 1 over brd (no write cache: the array shows "write through") is
# rebuilt onto a virtio spare whose write cache is on: the array takes the spare's limits in
# (queue/write_cache "write back"), and a flush of the array reaches the spare. The spare is
# linked under the array (slaves/, holders/) from new_dev on; the member it replaced stays
# linked while it is listed as faulty, and its links go with its remove.
spare_write_cache() {
	set -- $DISKS
	modprobe brd rd_nr=2 rd_size=65536 || { fail "modprobe brd"; return 1; }
	[ "$(cat "/sys/block/$(kname "$1")/queue/write_cache")" = "write back" ] ||
		{ fail "precondition: $1 has no write cache"; return 1; }
	members="/dev/ram0 /dev/ram1"
	mk rraid0 "level=1 assume-clean" $members || return 1
	[ "$(cat /sys/block/rraid0/queue/write_cache)" = "write through" ] ||
		{ fail "precondition: rraid0 over brd shows '$(cat /sys/block/rraid0/queue/write_cache)'"; return 1; }
	fail_slot 1 || return 1
	[ "$(sysw /sys/block/rraid0/rraid/new_dev "$1")" = OK ] || { fail "new_dev $1 refused"; return 1; }
	sp=$(kname "$1")
	linked rraid0 "$sp" || { ls /sys/block/rraid0/slaves; fail "spare $sp is not linked under rraid0"; return 1; }
	sync_wait rraid0 60 || return 1
	linked rraid0 "$sp" && linked rraid0 ram0 && linked rraid0 ram1 ||
		{ ls /sys/block/rraid0/slaves; fail "links after the rebuild: $(ls /sys/block/rraid0/slaves | tr '\n' ' ')"; return 1; }
	[ "$(sysw /sys/block/rraid0/rraid/dev-ram1/state remove)" = OK ] || { fail "remove of faulty ram1 refused"; return 1; }
	[ ! -e /sys/block/rraid0/slaves/ram1 ] && [ ! -e /sys/block/ram1/holders/rraid0 ] ||
		{ fail "ram1 still linked under rraid0 after its remove"; return 1; }
	[ "$(member_state rraid0 "$(kname "$1")")" = in_sync ] ||
		{ fail "spare is '$(member_state rraid0 "$(kname "$1")")' after the rebuild"; return 1; }
	wc=$(cat /sys/block/rraid0/queue/write_cache)
	[ "$wc" = "write back" ] || { fail "rraid0's write_cache is '$wc' with a write-back spare in a slot"; return 1; }
	n0=$(flushes_done "$1")
	dd if=/dev/zero of=/dev/rraid0 bs=4k count=1 conv=fsync 2>/dev/null || { fail "write + fsync"; return 1; }
	n1=$(flushes_done "$1")
	note "flushes on the spare: $n0 before the fsync, $n1 after"
	[ "$n1" -gt "$n0" ] || { fail "a flush of the array did not reach the spare"; return 1; }
	rm_array rraid0
}

# spare_larger_block: a RAID 5 over brd (512-byte blocks) refuses a spare with 4 KiB logical
# blocks (null_blk) with EINVAL and one line; its block size stays 512.
spare_larger_block() {
	modprobe brd rd_nr=3 rd_size=16384 || { fail "modprobe brd"; return 1; }
	modprobe null_blk nr_devices=1 bs=4096 gb=1 || { fail "modprobe null_blk"; return 1; }
	mk rraid0 "level=5 chunk=64K assume-clean" /dev/ram0 /dev/ram1 /dev/ram2 || return 1
	expect_err EINVAL /sys/block/rraid0/rraid/new_dev /dev/nullb0 || return 1
	[ "$(cat /sys/block/rraid0/queue/logical_block_size)" = 512 ] ||
		{ fail "rraid0's logical block size is $(cat /sys/block/rraid0/queue/logical_block_size)"; return 1; }
	rm_array rraid0
}

# raid5_broken_reads: a RAID 5 of four 16 MiB members (64K chunks, left-symmetric) holds a
# pattern; two members fail (the second is past the tolerance: EBUSY, the array is broken).
# Every chunk of the first 16 stripes is read alone: a chunk whose member survives reads back
# right, one on a failed member fails; writes fail everywhere.
raid5_broken_reads() {
	i=1
	members=
	for d in $DISKS; do
		dm_linear "r$i" "$d" 32768 || return 1
		members="$members /dev/mapper/r$i"
		i=$((i + 1))
	done
	mk rraid0 "level=5 chunk=64K assume-clean" $members || return 1
	fill_pat "$(dev_bytes /dev/rraid0)" || return 1
	fail_slot 1 || return 1
	r=$(sysw "/sys/block/rraid0/rraid/dev-$(kname "$(nth 3 $members)")/state" faulty)
	[ "$r" = EBUSY ] || { fail "failing a second member: $r, expected EBUSY"; return 1; }
	expect_attr rraid0 array_state broken || return 1
	good=0 lost=0
	k=0
	while [ $k -lt 48 ]; do
		# left-symmetric over 4: parity on 3 - stripe % 4, data from the member after it.
		s=$((k / 3))
		m=$(((3 - s % 4 + 1 + k % 3) % 4))
		if dd if=/dev/rraid0 of=/tmp/chunk bs=64k skip=$k count=1 iflag=direct 2>/dev/null; then
			case $m in 1 | 2) fail "chunk $k, on failed member $m, read without error"; return 1 ;; esac
			dd if=/tmp/exp of=/tmp/want bs=64k skip=$k count=1 2>/dev/null
			cmp -s /tmp/chunk /tmp/want || { fail "chunk $k (member $m) read back wrong"; return 1; }
			good=$((good + 1))
		else
			case $m in 1 | 2) ;; *) fail "read of chunk $k (member $m, which survives) failed"; return 1 ;; esac
			lost=$((lost + 1))
		fi
		k=$((k + 1))
	done
	note "chunks read right: $good; lost (EIO): $lost"
	for k in 0 1 2 3 4 5; do
		dd if=/tmp/exp of=/dev/rraid0 bs=64k seek=$k skip=$k count=1 oflag=direct conv=notrunc 2>/dev/null &&
			{ fail "write of chunk $k succeeded on a broken array"; return 1; }
	done
	rm_array rraid0
}

t_run raid1-zeroout-discard-below-recovery raid1_ranges_below_recovery recover
t_run raid1-zeroout-discard-below-replacement raid1_ranges_below_recovery replace
t_run raid1-spare-without-discard-refused spare_without_discard
t_run raid5-broken-serves-surviving-reads raid5_broken_reads
t_run raid1-spare-joins-write-cache-links spare_write_cache
t_run raid5-spare-larger-block-refused spare_larger_block
t_summary
