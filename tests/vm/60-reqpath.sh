#!/bin/sh
# VM tests, the request path: queue_rq never sleeps; member I/O comes from the submitter inside
# submit_bio, or else from rraid's workers (depth-1 members under many writers refusing nowait
# bios, a scheduler switch under I/O), nowait answers from a
# member are not media errors (dm-flakey refuses nowait bios), discards of many ranges merged into
# one request (NVMe members allow 256 discard segments), discard only when every member has it,
# no secure erase, zoned members refused, the tag set no deeper than the members, array
# lifetime against concurrent openers (400 rounds under make test-full), RAID1 read errors
# repaired as md does (dm-dust), rraid stacked on rraid, and forward progress under injected
# allocation failures aimed at rraid.
# vm-run: --disks 4 --nvme 2 --disk-size 64M
. "${RRAID_LIB:-/rraid/lib.sh}"

# null_depth1 N: N memory-backed null_blk devices with one hardware queue of depth 1.
null_depth1() {
	modprobe null_blk nr_devices="$1" queue_mode=2 submit_queues=1 hw_queue_depth=1 \
		memory_backed=1 gb=1 || { fail "modprobe null_blk depth 1"; return 1; }
}

# rp_depth1 LEVEL: many buffered writers, then fio with 4 jobs x QD 32, while the members'
# scheduler switches, over members that hold one request at a time. A deadlock shows as the
# test's timeout and, through the hung-task detector, as a stack trace in dmesg.
rp_depth1() {
	null_depth1 2 || return 1
	echo 30 >/proc/sys/kernel/hung_task_timeout_secs
	mk rraid0 "level=$1 chunk=64K assume-clean" /dev/nullb0 /dev/nullb1 || return 1
	head -c $((8 << 20)) /dev/urandom >/tmp/pat || return 1
	want=$(sha256sum </tmp/pat | cut -d' ' -f1)
	i=0
	while [ $i -lt 12 ]; do
		dd if=/tmp/pat of=/dev/rraid0 bs=64k seek=$((i * 128)) conv=notrunc 2>/dev/null &
		i=$((i + 1))
	done
	wait
	sync
	echo 3 >/proc/sys/vm/drop_caches
	i=0
	while [ $i -lt 12 ]; do
		got=$(dd if=/dev/rraid0 bs=64k skip=$((i * 128)) count=128 iflag=direct 2>/dev/null |
			sha256sum | cut -d' ' -f1)
		[ "$got" = "$want" ] || { fail "buffered writer $i: data differs after sync"; return 1; }
		i=$((i + 1))
	done
	(
		while [ ! -e /tmp/rp-stop ]; do
			for s in mq-deadline none; do
				echo $s >/sys/block/nullb0/queue/scheduler 2>/dev/null
				echo $s >/sys/block/nullb1/queue/scheduler 2>/dev/null
				sleep 0.3
			done
		done
	) &
	sw=$!
	bio_trace_on /dev/nullb0 /dev/nullb1 || { touch /tmp/rp-stop; wait $sw; return 1; }
	fio --name=depth1 --filename=/dev/rraid0 $FIO_COMMON --rw=randwrite --bsrange=4k-128k \
		--iodepth=32 --numjobs=4 --offset_increment=32M --size=24M --do_verify=1 ||
		{ touch /tmp/rp-stop; wait $sw; bio_trace_off /tmp/tr; fail "fio 4 jobs x QD 32 over depth-1 members"; return 1; }
	touch /tmp/rp-stop
	wait $sw
	rm -f /tmp/rp-stop
	bio_trace_off /tmp/tr
	# Each block is written once: a member write fio's task sent that a worker sends again
	# is one the member refused with "would block" (no free tag, frozen for the switch).
	byfio=$(awk '$2 ~ /W/ && $5 == "fio"' /tmp/tr | wc -l)
	again=$(awk '$2 ~ /W/ { k = $1 " " $3 " " $4; if ($5 == "fio") f[k] = 1; else if (k in f) r++ }
		END { print r + 0 }' /tmp/tr)
	note "member writes sent from queue_rq: $byfio, sent again by a worker: $again"
	[ "$byfio" -gt 0 ] || { fail "no member write was sent from queue_rq"; return 1; }
	[ "$again" -gt 0 ] || { fail "no member refused a nowait write: the retry path was not reached"; return 1; }
	# Buffered writers again, now through ext4, ending in a sync.
	mkfs.ext4 -F -q /dev/rraid0 || { fail "mkfs.ext4"; return 1; }
	mount /dev/rraid0 "$T_MNT" || { fail "mount"; return 1; }
	i=0
	while [ $i -lt 8 ]; do
		cp /tmp/pat "$T_MNT/f$i" &
		i=$((i + 1))
	done
	wait
	sync
	umount "$T_MNT" || { fail "umount"; return 1; }
	e2fsck -fn /dev/rraid0 || { fail "e2fsck"; return 1; }
}

# rp_reads WHAT FIO-ARGS...: reads /dev/rraid0 with fio (direct, sequential unless FIO-ARGS say
# otherwise) while tracing $members; sets total (member reads) and byfio (those fio's tasks sent).
rp_reads() {
	what=$1
	shift
	bio_trace_on $members || return 1
	fio --filename=/dev/rraid0 --direct=1 --rw=read "$@" >/dev/null ||
		{ bio_trace_off /tmp/tr; fail "fio: $what"; return 1; }
	bio_trace_off /tmp/tr
	total=$(awk '$2 ~ /R/' /tmp/tr | wc -l)
	byfio=$(awk '$2 ~ /R/ && $5 == "fio"' /tmp/tr | wc -l)
	note "$what: member bios $total, sent by fio's task: $byfio"
}

# rp_inline LEVEL: requests issued one at a time (psync) are mapped in queue_rq, inside
# submit_bio: fio's own task sends the member bios, as md's would, not a worker; data verified.
# RAID 5/6 map only reads there (writes gather in the stripe cache on the worker): only their
# member reads are counted. Requests over 32 KiB go to the worker while another request is in
# flight and the worker is idle (its copy on a bio-based member then runs beside the submitter):
# 64K reads one at a time must be sent by fio's task, and at depth 16 the worker must take a
# share (at least 1 in 8; a lone submitter's probes alone would be 1 in 64), unless every CPU has
# a submitter of its own.
rp_inline() {
	lvl=$1
	set -- $DISKS
	members="$1 $2"
	rw=W
	case $lvl in
	10) members="$1 $2 $3 $4" ;;
	5 | 6) members="$1 $2 $3 $4" rw=R ;;
	esac
	mk rraid0 "level=$lvl chunk=64K assume-clean" $members || return 1
	fio_inline="fio --name=inline --filename=/dev/rraid0 --ioengine=psync --direct=1
		--randrepeat=1 --rw=randwrite --bs=4k --size=16M --verify=crc32c --verify_fatal=1"
	# RAID 5/6: the writes (and the stripe cache's reads for them) first, then only fio's
	# verifying reads traced.
	if [ $rw = R ]; then
		$fio_inline --do_verify=0 >/dev/null || { fail "fio psync write"; return 1; }
		fio_inline="$fio_inline --verify_only"
	fi
	bio_trace_on $members || return 1
	$fio_inline --do_verify=1 >/dev/null || { bio_trace_off /tmp/tr; fail "fio psync verify"; return 1; }
	bio_trace_off /tmp/tr
	total=$(awk '$2 ~ /'$rw'/' /tmp/tr | wc -l)
	byfio=$(awk '$2 ~ /'$rw'/ && $5 == "fio"' /tmp/tr | wc -l)
	note "member bios ($rw): $total, sent by fio's task: $byfio"
	[ "$total" -ge 4096 ] || { fail "the trace saw $total member bios ($rw) of at least 4096"; return 1; }
	[ $((byfio * 10)) -ge $((total * 9)) ] ||
		{ fail "fio's task sent $byfio of $total member bios ($rw): requests went to the worker"; return 1; }
	rp_reads "64K reads at depth 1" --name=big --ioengine=psync --bs=64k --size=16M || return 1
	[ "$total" -ge 256 ] || { fail "the trace saw $total member reads for 16 MiB in 64K reads"; return 1; }
	[ $((byfio * 10)) -ge $((total * 9)) ] ||
		{ fail "fio's task sent $byfio of $total member reads of lone 64K requests"; return 1; }
	rp_reads "64K reads at depth 16" --name=deep --ioengine=libaio --iodepth=16 --bs=64k \
		--size=16M --loops=4 || return 1
	[ "$total" -ge 1024 ] || { fail "the trace saw $total member reads for 64 MiB in 64K reads"; return 1; }
	[ $(((total - byfio) * 8)) -ge "$total" ] ||
		{ fail "fio's task sent $byfio of $total member reads of 64K requests at depth 16"; return 1; }
	# Two submitters per CPU, each one request at a time: requests overlap, but no CPU is free
	# for the worker, so the submitters' own tasks send the member bios (a hand-off there cost
	# 1.4 context switches per request and overlapped nothing). Job starts and ends leave a
	# CPU without a submitter for a moment: 80 %, not 90.
	jobs=$(($(nproc) * 2))
	rp_reads "64K reads, two jobs per CPU" --name=many --ioengine=libaio --iodepth=1 \
		--rw=randread --bs=64k --size=16M --loops=2 --numjobs=$jobs || return 1
	[ "$total" -ge 1024 ] ||
		{ fail "the trace saw $total member reads for $jobs jobs reading 32 MiB each"; return 1; }
	[ $((byfio * 10)) -ge $((total * 8)) ] ||
		{ fail "fio's tasks sent $byfio of $total member reads with a submitter on every CPU"; return 1; }
}

# rp_split_order: a bio blk-mq splits into several requests reaches each member in order, as
# md's do. All but the last part find the rest of the bio waiting on bio_list and go to the
# worker; the last part, mapped in queue_rq while they waited, reached its member first (over
# capped null_blk that cost the linear read a throttle tick per slice). 1M reads one at a time
# over 128K requests and 512K chunks: each member's reads must come in ascending order.
rp_split_order() {
	set -- $DISKS
	members="$1 $2"
	mk rraid0 "level=0 chunk=512K" $members || return 1
	echo 128 >/sys/block/rraid0/queue/max_sectors_kb || { fail "max_sectors_kb 128"; return 1; }
	rp_reads "1M reads in 128K requests" --name=split --ioengine=psync --bs=1m --size=32M || return 1
	[ "$total" -ge 256 ] || { fail "the trace saw $total member reads for 32 MiB in 128K pieces"; return 1; }
	inv=$(awk '$2 ~ /R/ { if (($1 in last) && $3 < last[$1]) n++; last[$1] = $3 } END { print n + 0 }' /tmp/tr)
	note "member reads out of order: $inv of $total"
	[ "$inv" = 0 ] || { fail "$inv of $total member reads came before a read at a lower sector on the same member"; return 1; }
}

# rp_inline_rderr LEVEL: a read mapped in queue_rq that fails on its member (null_blk bad
# blocks: a nowait member that answers a media error) is rebuilt from the rest of the stripe on
# the worker; the reader gets the data written, and the member's error is counted.
rp_inline_rderr() {
	rp_rderr "$@"
	rc=$?
	[ -b /dev/rraid0 ] && rraid_remove rraid0 >/dev/null
	for d in /sys/kernel/config/nullb/rb*; do
		[ -d "$d" ] || continue
		echo 0 >$d/power
		rmdir $d
	done
	modprobe -r null_blk
	return $rc
}

rp_rderr() {
	lvl=$1
	modprobe null_blk nr_devices=0 || { fail "modprobe null_blk"; return 1; }
	grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config ||
		{ fail "mount configfs"; return 1; }
	devs= i=0
	while [ $i -lt 4 ]; do
		d=/sys/kernel/config/nullb/rb$i
		mkdir $d && echo 64 >$d/size && echo 1 >$d/memory_backed && echo 2 >$d/queue_mode &&
			echo 1 >$d/power || { fail "null_blk configfs device rb$i"; return 1; }
		devs="$devs /dev/rb$i"
		i=$((i + 1))
	done
	mk rraid0 "level=$lvl chunk=64K assume-clean" $devs || return 1
	head -c $((16 << 20)) /dev/urandom >/tmp/pat || return 1
	want=$(sha256sum </tmp/pat | cut -d' ' -f1)
	dd if=/tmp/pat of=/dev/rraid0 bs=1M oflag=direct 2>/dev/null || { fail "write the pattern"; return 1; }
	# Member sectors 4096-8191 of rb1: data chunks of several stripes (and its parity in some).
	echo "+4096-8191" >/sys/kernel/config/nullb/rb1/badblocks || { fail "set bad blocks"; return 1; }
	bio_trace_on $devs || return 1
	got=$(dd if=/dev/rraid0 bs=4k count=4096 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)
	bio_trace_off /tmp/tr
	[ "$got" = "$want" ] || { fail "data read back differs with bad blocks on rb1"; return 1; }
	rb1=$(printf '%d,%d' 0x$(stat -L -c '%t' /dev/rb1) 0x$(stat -L -c '%T' /dev/rb1))
	bad=$(awk -v d="$rb1" '$1 == d && $2 ~ /R/ && $5 == "dd" && $3 >= 4096 && $3 < 8192' /tmp/tr | wc -l)
	errs=$(cat /sys/block/rraid0/rraid/dev-rb1/errors 2>/dev/null || echo 0)
	note "inline reads by dd into rb1's bad blocks: $bad; rb1 errors: $errs; degraded: $(cat /sys/block/rraid0/rraid/degraded)"
	[ "$bad" -gt 0 ] || { fail "no read mapped in queue_rq reached the bad blocks"; return 1; }
	[ "$errs" -gt 0 ] || { fail "rb1 counted no read error"; return 1; }
	rm_array rraid0
}

# rp_nowait LEVEL: io_uring writes carry REQ_NOWAIT; a dm-flakey member (no faults) refuses
# nowait bios. Member bios must not carry the flag, and nothing fails or degrades.
rp_nowait() {
	set -- "$1" $DISKS
	sz=$(blockdev --getsz "$3")
	modprobe dm-flakey || { fail "modprobe dm-flakey"; return 1; }
	dmsetup create fl --table "0 $sz flakey $3 0 3600 0" || { fail "dmsetup create flakey"; return 1; }
	[ -b /dev/mapper/fl ] || dmsetup mknodes fl
	mk rraid0 "level=$1 chunk=64K assume-clean" "$2" /dev/mapper/fl || return 1
	fio --name=nowait --filename=/dev/rraid0 --ioengine=io_uring --direct=1 --rw=write --bs=64k \
		--iodepth=32 --size=64M --verify=crc32c --verify_fatal=1 --do_verify=1 ||
		{ fail "io_uring writes over a dm-flakey member failed"; return 1; }
	expect_attr rraid0 degraded 0 || return 1
	fk=$(kname /dev/mapper/fl)
	st=$(member_state rraid0 "$fk")
	has_word "$st" in_sync || { fail "flakey member is '$st' after nowait writes"; return 1; }
	expect_attr rraid0 "dev-$fk/errors" 0 || return 1
}

# discard_merges DEV: discard requests merged (field 13 of /sys/block/X/stat).
discard_merges() {
	awk '{print $13}' "/sys/block/$(kname "$1")/stat"
}

# rp_discard_multi LEVEL: sixteen discards of 64 KiB, 256 KiB apart, in one io_uring_enter:
# blk-mq merges them into one request; the 192 KiB between them must read back intact.
rp_discard_multi() {
	[ -n "$NVME_DISKS" ] || { fail "no NVMe members (vm-run --nvme)"; return 1; }
	seg=$(cat /sys/block/$(kname "$(nth 1 $NVME_DISKS)")/queue/max_discard_segments)
	[ "$seg" -gt 1 ] || { fail "NVMe member allows $seg discard segment(s); the test needs more"; return 1; }
	mk rraid0 "level=$1 chunk=64K assume-clean" $NVME_DISKS || return 1
	head -c $((4 << 20)) /dev/urandom >/tmp/pat || return 1
	dd if=/tmp/pat of=/dev/rraid0 bs=1M oflag=direct 2>/dev/null || { fail "write pattern"; return 1; }
	ranges=
	k=0
	while [ $k -lt 16 ]; do
		ranges="$ranges $((k * 262144)):65536"
		k=$((k + 1))
	done
	m0=$(discard_merges /dev/rraid0)
	/rraid/uring-discard /dev/rraid0 $ranges || { fail "uring-discard"; return 1; }
	m1=$(discard_merges /dev/rraid0)
	note "array discard merges: $m0 -> $m1"
	[ "$m1" -gt "$m0" ] ||
		{ fail "no discard was merged on /dev/rraid0: the test cannot show multi-range discards"; return 1; }
	k=0
	while [ $k -lt 16 ]; do
		off=$((k * 262144 + 65536))
		got=$(dd if=/dev/rraid0 bs=64k skip=$((off / 65536)) count=3 iflag=direct 2>/dev/null | sha256sum)
		want=$(dd if=/tmp/pat bs=64k skip=$((off / 65536)) count=3 2>/dev/null | sha256sum)
		[ "$got" = "$want" ] || { fail "data between discarded ranges destroyed at byte $off"; return 1; }
		k=$((k + 1))
	done
}

# rp_discard_every: discard is offered only when every member has it (null_blk has none).
rp_discard_every() {
	set -- $DISKS
	modprobe null_blk nr_devices=1 memory_backed=1 gb=1 || { fail "modprobe null_blk"; return 1; }
	[ "$(cat /sys/block/nullb0/queue/discard_max_bytes)" = 0 ] ||
		{ fail "null_blk offers discard; the test needs a member without"; return 1; }
	[ "$(cat /sys/block/$(kname "$1")/queue/discard_max_bytes)" != 0 ] ||
		{ fail "virtio member offers no discard"; return 1; }
	for lvl in 0 1; do
		mk rraid0 "level=$lvl chunk=64K assume-clean" "$1" /dev/nullb0 || return 1
		v=$(cat /sys/block/rraid0/queue/discard_max_bytes)
		[ "$v" = 0 ] || { fail "RAID$lvl over a member without discard offers discard ($v bytes)"; return 1; }
		rm_array rraid0 || return 1
	done
	mk rraid0 "level=0 chunk=64K" "$1" "$2" || return 1
	[ "$(cat /sys/block/rraid0/queue/discard_max_bytes)" != 0 ] ||
		{ fail "RAID0 over members that all discard offers no discard"; return 1; }
	# Secure erase is not implemented: never inherited.
	out=$(blkdiscard -s /dev/rraid0 2>&1) && { fail "blkdiscard -s succeeded"; return 1; }
	echo "$out"
	echo "$out" | grep -qi "not supported" || { fail "blkdiscard -s: '$out', expected EOPNOTSUPP"; return 1; }
}

# rp_zoned: zoned members are refused at create, with one rraid: line and nothing created.
rp_zoned() {
	set -- $DISKS
	modprobe null_blk nr_devices=2 zoned=1 zone_size=16 memory_backed=1 gb=1 ||
		{ fail "modprobe null_blk zoned"; return 1; }
	[ "$(cat /sys/block/nullb0/queue/zoned)" = host-managed ] || { fail "nullb0 is not zoned"; return 1; }
	rraid_load || return 1
	expect_create_err EINVAL "rraid0 level=1 /dev/nullb0 /dev/nullb1" || return 1
	expect_create_err EINVAL "rraid0 level=0 $1 /dev/nullb0" || return 1
}

# rp_depth: the tag set is no deeper than the members' request queues together.
rp_depth() {
	null_depth1 2 || return 1
	mk rraid0 "level=1 assume-clean" /dev/nullb0 /dev/nullb1 || return 1
	sum=$(($(cat /sys/block/nullb0/queue/nr_requests) + $(cat /sys/block/nullb1/queue/nr_requests)))
	d=$(cat /sys/block/rraid0/queue/nr_requests)
	note "depth-1 members: array nr_requests $d, members' sum $sum"
	[ "$d" -le "$sum" ] || { fail "array nr_requests $d exceeds the members' $sum"; return 1; }
	fio_verify /dev/rraid0 --size=16M || return 1
	rm_array rraid0 || return 1
	set -- $DISKS
	mk rraid0 "level=0 chunk=64K" "$1" "$2" || return 1
	sum=$(($(cat /sys/block/$(kname "$1")/queue/nr_requests) + $(cat /sys/block/$(kname "$2")/queue/nr_requests)))
	d=$(cat /sys/block/rraid0/queue/nr_requests)
	[ "$d" -le "$sum" ] || { fail "array nr_requests $d exceeds the members' $sum"; return 1; }
}

# rp_lifetime: create/remove in a loop while other tasks open, probe and read the array, then
# members failing under I/O followed by remove. Use-after-free shows under the debug kernel.
rp_lifetime() {
	set -- $DISKS
	rraid_load || return 1
	(
		while [ ! -e /tmp/rp-stop ]; do
			blkid /dev/rraid0 >/dev/null 2>&1
			dd if=/dev/rraid0 of=/dev/null bs=4k count=4 iflag=direct 2>/dev/null
			cat /sys/block/rraid0/rraid/array_state >/dev/null 2>&1
		done
	) &
	p1=$!
	(
		while [ ! -e /tmp/rp-stop ]; do
			exec 3</dev/rraid0 2>/dev/null && exec 3<&-
			head -c 512 /dev/rraid0 >/dev/null 2>&1
		done
	) &
	p2=$!
	i=0 created=0 busy=0
	rounds=40
	[ "${RRAID_FULL:-0}" = 1 ] && rounds=400
	while [ $i -lt $rounds ]; do
		r=$(rraid_create "rraid0 level=$((i % 2)) chunk=64K $1 $2")
		[ "$r" = OK ] || { touch /tmp/rp-stop; wait; fail "create round $i: $r"; return 1; }
		created=$((created + 1))
		j=0
		while :; do
			r=$(rraid_remove rraid0)
			[ "$r" = OK ] && break
			[ "$r" = EBUSY ] || { touch /tmp/rp-stop; wait; fail "remove round $i: $r"; return 1; }
			busy=$((busy + 1))
			j=$((j + 1))
			[ $j -lt 200 ] || { touch /tmp/rp-stop; wait; fail "remove stays EBUSY"; return 1; }
		done
		i=$((i + 1))
	done
	touch /tmp/rp-stop
	wait $p1 $p2
	rm -f /tmp/rp-stop
	note "$created create/remove rounds against openers; $busy removes refused while open"
	# Members fail while fio writes, then the array goes away.
	dm_linear e0 "$3" || return 1
	mk rraid0 "level=1 assume-clean" "$4" /dev/mapper/e0 || return 1
	fio --name=w --filename=/dev/rraid0 $FIO_COMMON --rw=randwrite --bs=4k --iodepth=32 \
		--size=32M --do_verify=0 --time_based --runtime=6 >/dev/null 2>&1 &
	f=$!
	sleep 2
	dm_to_error e0 || return 1
	wait $f || { fail "fio failed although one member stayed in sync"; return 1; }
	expect_attr rraid0 degraded 1 || return 1
	rm_array rraid0 || return 1
	[ "$(cat /sys/module/rraid/refcnt)" = 0 ] || { fail "module refcnt $(cat /sys/module/rraid/refcnt) after remove"; return 1; }
}

# rp_read_repair: a RAID1 read error is corrected as md does: read from another member,
# rewritten, re-read; the member stays in sync. With a block whose rewrite fails (dm-dust
# wr_fail_cnt), the member goes faulty. assume-clean: a resync still running (on a loaded
# host) loads the first member with its reads, so the balanced read went to the other member
# and saw no error. Idle, the array sends both reads, in its first 1 MiB, to the first member:
# the dust one.
rp_read_repair() {
	set -- $DISKS
	sz=$(blockdev --getsz "$1")
	modprobe dm-dust || { fail "modprobe dm-dust"; return 1; }
	dmsetup create dust0 --table "0 $sz dust $1 0 512" || { fail "dmsetup create dust"; return 1; }
	[ -b /dev/mapper/dust0 ] || dmsetup mknodes dust0
	mk rraid0 "level=1 assume-clean" /dev/mapper/dust0 "$2" || return 1
	head -c $((1 << 20)) /dev/urandom >/tmp/pat || return 1
	dd if=/tmp/pat of=/dev/rraid0 bs=1M oflag=direct 2>/dev/null || { fail "write pattern"; return 1; }
	dk=$(kname /dev/mapper/dust0)
	# Block 256 (byte 128 KiB) goes bad for reads; a 4 KiB read there starts a member bio on it.
	dmsetup message dust0 0 addbadblock 256 || { fail "addbadblock"; return 1; }
	dmsetup message dust0 0 enable || { fail "enable dust"; return 1; }
	dd if=/dev/mapper/dust0 of=/dev/null bs=4k skip=32 count=1 iflag=direct 2>/dev/null &&
		{ fail "dust member reads its bad block without error: the test cannot fail"; return 1; }
	dmesg_mark "repair read"
	got=$(dd if=/dev/rraid0 bs=4k skip=32 count=1 iflag=direct 2>/dev/null | sha256sum)
	want=$(dd if=/tmp/pat bs=4k skip=32 count=1 2>/dev/null | sha256sum)
	[ "$got" = "$want" ] || { fail "read of the bad block returned wrong data"; return 1; }
	dmesg | grep 'rraid:' | sed 's/^/    /'
	e=$(attr rraid0 "dev-$dk/errors")
	[ "$e" -ge 1 ] || { fail "member errors is $e after a read error"; return 1; }
	dmesg | grep -q "read error corrected" || { fail "no 'read error corrected' in dmesg"; return 1; }
	dmesg | grep -q "removed from badblocklist by write" ||
		{ fail "the bad block was not rewritten on the member"; return 1; }
	got=$(dd if=/dev/mapper/dust0 bs=4k skip=32 count=1 iflag=direct 2>/dev/null | sha256sum) ||
		{ fail "member still fails the corrected block"; return 1; }
	[ "$got" = "$want" ] || { fail "member holds wrong data after the correction"; return 1; }
	st=$(member_state rraid0 "$dk")
	has_word "$st" in_sync || { fail "member is '$st' after a corrected read error"; return 1; }
	# Now a block that also refuses its rewrite: the member must go faulty, the data stays right.
	dmsetup message dust0 0 addbadblock 512 10 || { fail "addbadblock with wr_fail_cnt"; return 1; }
	got=$(dd if=/dev/rraid0 bs=4k skip=64 count=1 iflag=direct 2>/dev/null | sha256sum)
	want=$(dd if=/tmp/pat bs=4k skip=64 count=1 2>/dev/null | sha256sum)
	[ "$got" = "$want" ] || { fail "read with a failing rewrite returned wrong data"; return 1; }
	st=$(member_state rraid0 "$dk")
	has_word "$st" faulty || { fail "member is '$st' after its rewrite failed, expected faulty"; return 1; }
	expect_attr rraid0 degraded 1 || return 1
	cmp /tmp/pat /dev/rraid0 -n $((1 << 20)) || { fail "array data differs after the member failed"; return 1; }
}

# rp_repair_race: a read over a dm-dust bad block races a write of new data to the same block.
# Both members delay writes (dm-delay: 300 ms on the dust member, 600 ms on the other), reads
# not: the read fails on the dust member while the write is on its way, and a repair that reads
# the other copy at once gets the old data, whose rewrite then lands after the new write on the
# dust member. md freezes the array around fix_read_error; rraid holds writes off the range
# (Barrier::hold_writes), so the repair reads the new data. Afterwards both members must hold
# the last data written, and check finds 0.
rp_repair_race() {
	set -- $DISKS
	sz=$(blockdev --getsz "$1")
	# Equal members, so that check counts only what the race left.
	zero_members "$1" "$2" || return 1
	modprobe dm-dust || { fail "modprobe dm-dust"; return 1; }
	modprobe dm-delay || { fail "modprobe dm-delay"; return 1; }
	dmsetup create dust0 --table "0 $sz dust $1 0 512" || { fail "dmsetup create dust"; return 1; }
	[ -b /dev/mapper/dust0 ] || dmsetup mknodes dust0
	dmsetup message dust0 0 enable || { fail "enable dust"; return 1; }
	dmsetup create slow0 --table "0 $sz delay /dev/mapper/dust0 0 0 /dev/mapper/dust0 0 300" ||
		{ fail "dmsetup create slow0"; return 1; }
	dmsetup create slow1 --table "0 $sz delay $2 0 0 $2 0 600" || { fail "dmsetup create slow1"; return 1; }
	for d in slow0 slow1; do [ -b /dev/mapper/$d ] || dmsetup mknodes $d; done
	mk rraid0 "level=1 assume-clean" /dev/mapper/slow0 /dev/mapper/slow1 || return 1
	head -c $((1 << 20)) /dev/urandom >/tmp/pat || return 1
	dd if=/tmp/pat of=/dev/rraid0 bs=1M oflag=direct 2>/dev/null || { fail "write pattern"; return 1; }
	i=0
	while [ $i -lt 8 ]; do
		dmsetup message dust0 0 addbadblock 256 2>/dev/null
		dd if=/tmp/pat of=/tmp/w bs=4k skip=$((i + 50)) count=1 2>/dev/null
		dd if=/tmp/w of=/dev/rraid0 bs=4k seek=32 count=1 oflag=direct 2>/dev/null &
		w=$!
		sleep 0.1
		dd if=/dev/rraid0 of=/dev/null bs=4k skip=32 count=1 iflag=direct 2>/dev/null
		wait $w || { fail "write $i"; return 1; }
		sleep 0.7
		i=$((i + 1))
	done
	dmsetup message dust0 0 clearbadblocks >/dev/null 2>&1
	n=$(dmesg | grep -c 'read error corrected')
	note "$n of $i reads repaired"
	[ "$n" -gt 0 ] || { fail "no read hit the bad block: the test tested nothing"; return 1; }
	want=$(sha256sum </tmp/w)
	for d in /dev/mapper/dust0 "$2"; do
		got=$(dd if="$d" bs=4k skip=32 count=1 iflag=direct 2>/dev/null | sha256sum)
		[ "$got" = "$want" ] || { fail "$(kname "$d") does not hold the last data written"; return 1; }
	done
	run_action rraid0 check || return 1
	expect_attr rraid0 mismatch_cnt 0 || return 1
}

# rp_stacked: RAID1 over two rraid RAID0 arrays, fio verify with flushes, then ext4.
rp_stacked() {
	set -- $DISKS
	mk rraid1 "level=0 chunk=64K" "$1" "$2" || return 1
	mk rraid2 "level=0 chunk=64K" "$3" "$4" || return 1
	mk rraid0 "level=1 assume-clean" /dev/rraid1 /dev/rraid2 || return 1
	fio_verify /dev/rraid0 --fsync=8 --size=48M || return 1
	ext4_check /dev/rraid0 || return 1
}

# rp_failslab LEVEL: fault injection aimed at rraid under fio verify (lib.sh failslab_verify).
rp_failslab() {
	set -- "$1" $DISKS
	failslab_verify "level=$1 chunk=64K assume-clean" "$2" "$3"
}

t_run reqpath-depth1-raid1 rp_depth1 1
t_run reqpath-depth1-raid0 rp_depth1 0
t_run reqpath-inline-raid0 rp_inline 0
t_run reqpath-inline-raid1 rp_inline 1
t_run reqpath-inline-raid10 rp_inline 10
t_run reqpath-inline-raid5 rp_inline 5
t_run reqpath-split-order-raid0 rp_split_order
t_run reqpath-inline-rderr-raid5 rp_inline_rderr 5
t_run reqpath-inline-rderr-raid6 rp_inline_rderr 6
t_run reqpath-nowait-flakey-raid1 rp_nowait 1
t_run reqpath-nowait-flakey-raid0 rp_nowait 0
t_run reqpath-discard-multirange-raid0 rp_discard_multi 0
t_run reqpath-discard-multirange-raid1 rp_discard_multi 1
t_run reqpath-discard-every-member rp_discard_every
t_run reqpath-zoned-refused rp_zoned
t_run reqpath-tagset-depth rp_depth
t_run reqpath-lifetime rp_lifetime
t_run reqpath-raid1-read-repair rp_read_repair
t_run reqpath-raid1-repair-races-writes rp_repair_race
t_run reqpath-raid1-over-raid0 rp_stacked
t_run reqpath-failslab-raid1 rp_failslab 1
t_run reqpath-failslab-raid0 rp_failslab 0
# RAID 6 maps reads inline as RAID 5 does (its inline read errors run above).
[ "${RRAID_FULL:-0}" = 1 ] && t_run reqpath-inline-raid6 rp_inline 6
t_summary
