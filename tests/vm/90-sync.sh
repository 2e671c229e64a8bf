#!/bin/sh
# VM tests, the sync thread: resync of members that hold different data (RAID 1: reads agree
# during and after, md's check then finds 0; RAID 5/6/10: under fio verify, then md reads the
# same and its check finds 0), check and repair of one corrupted 4 KiB block (md's exact
# mismatch_cnt), rebuild onto spares under ext4 and fio for RAID 1, 5, 6 (two at once) and 10
# (n2; f2 and o2 with RRAID_FULL=1) with other members failed afterwards, faults under fio
# verify (dm-error, dm-flakey, a vanished member, sysfs), errors during jobs (dm-dust: read
# errors corrected, a rebuild whose only source cannot be read aborts, a RAID 6 survivor's read
# error), writes racing a rebuild, RAID 10 check windows with 3 and 5 copies, poll() and
# uevents, /proc/rraidstat, the speed limits and sync_speed, idle/frozen, a member failed
# mid-resync, removal mid-resync and mid-recovery (thread gone, rmmod works), bad input.
# Members are 16 MiB linear maps, so a job takes seconds.
# vm-run: --disks 4 --disk-size 64M
. "${RRAID_LIB:-/rraid/lib.sh}"

MSZ_MB=16
MSZ_SEC=$((MSZ_MB * 2048))

# maps N: /dev/mapper/s1..sN, the first 16 MiB of the first N disks; prints their paths.
maps() {
	local i d out
	i=1
	out=
	for d in $(first "$1" $DISKS); do
		dm_linear "s$i" "$d" $MSZ_SEC >&2 || return 1
		out="$out /dev/mapper/s$i"
		i=$((i + 1))
	done
	echo $out
}

# randomize DEV...: each gets its own random bytes, so that the copies differ everywhere.
randomize() {
	local d
	for d in "$@"; do
		dd if=/dev/urandom of="$d" bs=1M count=$MSZ_MB oflag=direct 2>/dev/null ||
			{ fail "random fill of $d"; return 1; }
	done
}

# identical DEV...: every DEV holds the same 16 MiB.
identical() {
	local d ref h
	ref=
	for d in "$@"; do
		h=$(sha_head "$d" $((MSZ_MB * 1048576)))
		[ -z "$ref" ] && ref=$h
		[ "$h" = "$ref" ] || { fail "$d differs from $1"; return 1; }
	done
}

# md_check_zero DEV...: md's own check over the members (md RAID 1, no superblock) finds no
# mismatch.
md_check_zero() {
	md_build /dev/md0 1 0 "$@" || return 1
	md_check0 || return 1
	md_stop /dev/md0
}

# expect_running NAME ACTION: the job runs and sync_completed says how far: out of a 16 MiB
# member, or on RAID 10 out of the array's sectors.
expect_running() {
	local c total
	expect_attr "$1" sync_action "$2" || return 1
	c=$(attr "$1" sync_completed)
	total=$MSZ_SEC
	[ "$(attr "$1" level)" = raid10 ] && total=$(($(dev_bytes "/dev/$1") / 512))
	case $c in
	*" / $total") ;;
	*) fail "sync_completed is '$c' during $2, expected 'N / $total'"; return 1 ;;
	esac
}

# sync_resync: three members with different data, no assume-clean. While the resync runs (at
# 1 MiB/s), reading the whole array twice gives the same bytes, which are the first member's;
# afterwards too, every member holds them, and md's check agrees.
sync_resync() {
	m=$(maps 3) || return 1
	randomize $m || return 1
	want=$(sha_head "$(nth 1 $m)" $((MSZ_MB * 1048576)))
	speed_sys 1 1024 || return 1
	mk rraid0 "level=1" $m || return 1
	expect_running rraid0 resync || return 1
	h1=$(sha_head /dev/rraid0 $((MSZ_MB * 1048576)))
	h2=$(sha_head /dev/rraid0 $((MSZ_MB * 1048576)))
	note "during the resync: $(attr rraid0 sync_completed), $(attr rraid0 sync_speed) KiB/s"
	[ "$(attr rraid0 sync_action)" = resync ] ||
		{ fail "resync ended before the reads did: the test did not read during it"; return 1; }
	[ "$h1" = "$want" ] && [ "$h2" = "$want" ] ||
		{ fail "reads during the resync are not the first member's data"; return 1; }
	speed_sys 1000 200000 || return 1
	sync_wait rraid0 60 || return 1
	expect_attr rraid0 sync_completed none || return 1
	expect_attr rraid0 sync_speed none || return 1
	[ "$(sha_head /dev/rraid0 $((MSZ_MB * 1048576)))" = "$want" ] ||
		{ fail "the array's data changed in the resync"; return 1; }
	dmesg | grep -q "rraid0: resync done" || { fail "dmesg does not say the resync is done"; return 1; }
	rm_array rraid0 || return 1
	identical $m || return 1
	md_check_zero $m
}

# sync_resync_fio: fio verify writes and reads all over the array while the resync runs, ahead
# of its point and behind it; then the resync ends, the data verifies again and the copies agree.
sync_resync_fio() {
	m=$(maps 2) || return 1
	randomize $m || return 1
	# Slow enough that fio ends first, on a debug kernel too (fio runs to its end: a run cut
	# short by --runtime leaves blocks that a later verify-only expects).
	speed_sys 100 1024 || return 1
	mk rraid0 "level=1" $m || return 1
	fio_verify /dev/rraid0 --size=${MSZ_MB}M || return 1
	c=$(attr rraid0 sync_completed)
	note "after fio: $c"
	[ "$c" != none ] || { fail "the resync ended before fio did: not tested under I/O"; return 1; }
	speed_sys 1000 200000 || return 1
	sync_wait rraid0 60 || return 1
	fio_check /dev/rraid0 --size=${MSZ_MB}M || return 1
	rm_array rraid0 || return 1
	identical $m || return 1
	md_check_zero $m
}

# corrupt DEV BLOCK: overwrites 4 KiB block BLOCK of DEV with random bytes.
corrupt() {
	dd if=/dev/urandom of="$1" bs=4096 seek="$2" count=1 oflag=direct conv=notrunc 2>/dev/null ||
		{ fail "corrupting $1"; return 1; }
}

# sync_check_repair N: one 4 KiB block corrupted on the last of N members is counted exactly by
# check (md's unit: the 64 KiB block's 128 sectors) and not fixed; repair counts and fixes it;
# the next check finds 0; the data is the first member's.
sync_check_repair() {
	m=$(maps "$1") || return 1
	zero $m || return 1
	mk rraid0 "level=1 assume-clean" $m || return 1
	fio_fill /dev/rraid0 --size=${MSZ_MB}M || return 1
	rm_array rraid0 || return 1
	last=$(nth "$1" $m)
	corrupt "$last" 1283 || return 1
	mk rraid0 "level=1 assume-clean" $m || return 1
	expect_attr rraid0 mismatch_cnt 0 || return 1
	run_action rraid0 check || return 1
	expect_attr rraid0 mismatch_cnt 128 || return 1
	dmesg | grep -q "rraid0: data-check done" || { fail "dmesg does not say the check is done"; return 1; }
	[ "$(sha_head "$last" $((MSZ_MB * 1048576)))" != "$(sha_head "$(nth 1 $m)" $((MSZ_MB * 1048576)))" ] ||
		{ fail "check rewrote the mismatch"; return 1; }
	run_action rraid0 repair || return 1
	expect_attr rraid0 mismatch_cnt 128 || return 1
	run_action rraid0 check || return 1
	expect_attr rraid0 mismatch_cnt 0 || return 1
	fio_check /dev/rraid0 --size=${MSZ_MB}M || return 1
	rm_array rraid0 || return 1
	identical $m || return 1
	md_check_zero $m
}

# throttled ARRAY ACTION X WHAT: while ACTION runs, samples sync_speed; then requires at least 3
# samples, none above 1.2 X, and the job to have taken at least 0.8 S/X for S KiB per member.
# The job was started just before the call (at $t0, seconds with fractions).
throttled() {
	local top n s secs
	top=0
	n=0
	while [ "$(attr "$1" sync_action)" = "$2" ]; do
		s=$(attr "$1" sync_speed)
		case $s in none) ;; *) [ "$s" -gt $top ] && top=$s; n=$((n + 1)) ;; esac
		sleep 0.3
	done
	secs=$(echo "$t0 $(date +%s.%N)" | awk '{printf "%.1f", $2 - $1}')
	note "$4 of $((MSZ_MB * 1024)) KiB at sync_speed_max $3: ${secs}s, highest sync_speed $top over $n samples"
	[ $n -ge 3 ] || { fail "$4: only $n sync_speed samples"; return 1; }
	[ "$top" -le $(($3 * 12 / 10)) ] || { fail "$4: sync_speed $top above 1.2 x $3"; return 1; }
	awk -v s="$secs" -v min="$(echo "$MSZ_MB $3" | awk '{print 0.8 * $1 * 1024 / $2}')" \
		'BEGIN { exit !(s >= min) }' || { fail "$4 took ${secs}s, less than 0.8 S/X"; return 1; }
}

# sync_throttle: with sync_speed_max X, a check and then a rebuild onto a spare of S KiB run no
# faster than X: sync_speed stays within 1.2 X and each job takes at least 0.8 S/X. The limit
# files read as md's.
sync_throttle() {
	m=$(maps 2) || return 1
	mk rraid0 "level=1 assume-clean" $m || return 1
	expect_attr rraid0 sync_speed_min "1000 (system)" || return 1
	expect_attr rraid0 sync_speed_max "200000 (system)" || return 1
	x=4096
	[ "$(sysw /sys/block/rraid0/rraid/sync_speed_max $x)" = OK ] || { fail "sync_speed_max $x refused"; return 1; }
	expect_attr rraid0 sync_speed_max "$x (local)" || return 1
	t0=$(date +%s.%N)
	[ "$(sysw /sys/block/rraid0/rraid/sync_action check)" = OK ] || { fail "check refused"; return 1; }
	throttled rraid0 check $x "the check" || return 1
	sp=$(map_at sp "$(nth 3 $DISKS)" 0) || return 1
	fail_dev rraid0 "$(nth 2 $m)" || return 1
	t0=$(date +%s.%N)
	new_spare rraid0 "$sp" || return 1
	wait_attr rraid0 sync_action recover 20
	throttled rraid0 recover $x "the rebuild" || return 1
	expect_attr rraid0 degraded 0 || return 1
	[ "$(sysw /sys/block/rraid0/rraid/sync_speed_max system)" = OK ] || { fail "sync_speed_max system refused"; return 1; }
	expect_attr rraid0 sync_speed_max "200000 (system)" || return 1
	rm_array rraid0 || return 1
	identical "$(nth 1 $m)" "$sp"
}

# sync_pid ARRAY: the pid of ARRAY's sync thread, or nothing.
sync_pid() {
	local d c
	for d in /proc/[0-9]*; do
		read -r c <"$d/comm" 2>/dev/null && [ "$c" = "${1}_sync" ] && { echo "${d#/proc/}"; return; }
	done
}

# nice_samples ARRAY N: up to N samples of the sync thread's nice (field 19 of its stat), 0.2 s
# apart, while a job runs.
nice_samples() {
	local a n i out pid l
	a=$1 n=$2
	pid=$(sync_pid "$a")
	[ -n "$pid" ] || return 0
	i=0
	out=
	while [ $i -lt "$n" ] && [ "$(attr "$a" sync_action)" != idle ]; do
		read -r l <"/proc/$pid/stat" || break
		set -- $l
		shift 18
		out="$out $1"
		sleep 0.2
		i=$((i + 1))
	done
	echo $out
}

# fill5 [FIO_ARGS...]: fio's verified sequential write over rraid0 (256 KiB blocks), or with
# --verify_only its read-back; output in $T_DIR/fio.out. In the foreground only.
fill5() {
	fio --name=fill --filename=/dev/rraid0 $FIO_COMMON --rw=write --bs=256k --iodepth=8 "$@" \
		>"$T_DIR/fio.out" 2>&1
}

# sync_under_load: a RAID 5 rebuild (sync_speed_max 1024, so that it lasts) steps aside for
# other I/O: while a read load runs the job goes on at nice 19 on its thread alone (the load
# keeps a CPU), without load at nice 0 again; held at sync_speed_min (1100, above the max) it
# is back at nice 0 under the load, so the minimum holds however busy the CPUs are. The data
# written before reads back right during the rebuild (from the spare where its recovery has
# passed) and after it.
sync_under_load() {
	local m sp fpid seen
	m=$(maps 4) || return 1
	sp=$(map_at sp "$(nth 4 $DISKS)" 1) || return 1
	mk rraid0 "level=5 chunk=64K assume-clean" $m || return 1
	fill5 || { fail "fio fill: $(tail -3 "$T_DIR/fio.out")"; return 1; }
	[ "$(sysw /sys/block/rraid0/rraid/sync_speed_max 1024)" = OK ] || { fail "sync_speed_max refused"; return 1; }
	fail_dev rraid0 "$(nth 2 $m)" || return 1
	fio --name=load --filename=/dev/rraid0 --ioengine=libaio --direct=1 --rw=randread --bs=4k \
		--iodepth=8 --time_based --runtime=60 >/dev/null 2>&1 &
	fpid=$!
	sleep 1
	new_spare rraid0 "$sp" || { kill $fpid; return 1; }
	sleep 0.5
	seen=$(nice_samples rraid0 10)
	kill -INT $fpid
	wait $fpid
	note "nice under load: $seen"
	case " $seen " in *" 19 "*) ;; *) fail "the sync thread never at nice 19 under load: '$seen'"; return 1 ;; esac
	# Back to nice 0 once the window under way (and the throttle's sleep after it, up to two
	# seconds at this speed) is over.
	sleep 1
	seen=$(nice_samples rraid0 10)
	note "nice without load: $seen ($(attr rraid0 sync_completed) $(attr rraid0 sync_speed))"
	case " $seen " in "  " | *" 19 ") fail "the sync thread at '$seen' without load"; return 1 ;; esac
	# The load now reads back and checks what the fill wrote, from the spare too where the
	# recovery has passed.
	# fio itself in the background (not through fill5), so that kill reaches it.
	fio --name=fill --filename=/dev/rraid0 $FIO_COMMON --rw=write --bs=256k --iodepth=8 \
		--verify_only --loops=2 >"$T_DIR/fio.out" 2>&1 &
	fpid=$!
	[ "$(sysw /sys/block/rraid0/rraid/sync_speed_min 1100)" = OK ] || { kill $fpid; fail "sync_speed_min refused"; return 1; }
	# Within a window (two seconds at this speed).
	sleep 1
	seen=$(nice_samples rraid0 10)
	note "nice under load at sync_speed_min: $seen ($(attr rraid0 sync_completed) $(attr rraid0 sync_speed))"
	case " $seen " in "  " | *" 19 ") kill $fpid; fail "the sync thread at '$seen' held at sync_speed_min"; return 1 ;; esac
	wait $fpid || { fail "fio verify during the rebuild: $(tail -3 "$T_DIR/fio.out")"; return 1; }
	sysw /sys/block/rraid0/rraid/sync_speed_max system >/dev/null
	sysw /sys/block/rraid0/rraid/sync_speed_min system >/dev/null
	sync_wait rraid0 60 || return 1
	expect_attr rraid0 degraded 0 || return 1
	fill5 --verify_only || { fail "fio verify after the rebuild: $(tail -3 "$T_DIR/fio.out")"; return 1; }
	# The spare carries its slot.
	fail_dev rraid0 "$(nth 3 $m)" || return 1
	fill5 --verify_only || { fail "fio verify on the spare: $(tail -3 "$T_DIR/fio.out")"; return 1; }
	rm_array rraid0
}

# sync_idle_frozen: idle stops a check; frozen keeps any job from starting (check gets EBUSY)
# until idle; a resync frozen midway goes on from its point after idle.
sync_idle_frozen() {
	m=$(maps 2) || return 1
	randomize $m || return 1
	speed_sys 1000 2048 || return 1
	mk rraid0 "level=1" $m || return 1
	sleep 1
	[ "$(sysw /sys/block/rraid0/rraid/sync_action frozen)" = OK ] || { fail "frozen refused"; return 1; }
	wait_attr rraid0 sync_completed none 100
	expect_attr rraid0 sync_action frozen || return 1
	expect_attr rraid0 sync_completed none || return 1
	dmesg | grep -q "rraid0: resync interrupted at" || { fail "dmesg does not say where the resync stopped"; return 1; }
	expect_err EBUSY /sys/block/rraid0/rraid/sync_action check || return 1
	[ "$(sysw /sys/block/rraid0/rraid/sync_action idle)" = OK ] || { fail "idle refused"; return 1; }
	sleep 0.5
	c=$(attr rraid0 sync_completed)
	expect_running rraid0 resync || return 1
	[ "${c%% *}" -gt 0 ] || { fail "the resync started again from 0 ($c)"; return 1; }
	expect_err EBUSY /sys/block/rraid0/rraid/sync_action check || return 1
	speed_sys 1000 200000 || return 1
	sync_wait rraid0 60 || return 1
	speed_sys 1000 2048 || return 1
	[ "$(sysw /sys/block/rraid0/rraid/sync_action check)" = OK ] || { fail "check refused"; return 1; }
	expect_running rraid0 check || return 1
	[ "$(sysw /sys/block/rraid0/rraid/sync_action idle)" = OK ] || { fail "idle refused"; return 1; }
	sync_wait rraid0 10 || return 1
	expect_attr rraid0 sync_completed none || return 1
	rm_array rraid0 || return 1
	identical $m
}

# sync_fail_source: the first member, which the resync reads, is failed midway; the resync goes
# on from the next member, and the two left agree.
sync_fail_source() {
	m=$(maps 3) || return 1
	randomize $m || return 1
	speed_sys 1000 4096 || return 1
	mk rraid0 "level=1" $m || return 1
	sleep 1
	r=$(sysw "/sys/block/rraid0/rraid/dev-$(kname "$(nth 1 $m)")/state" faulty)
	[ "$r" = OK ] || { fail "failing the first member: $r"; return 1; }
	expect_running rraid0 resync || return 1
	want=$(sha_head /dev/rraid0 $((MSZ_MB * 1048576)))
	speed_sys 1000 200000 || return 1
	sync_wait rraid0 60 || return 1
	expect_attr rraid0 degraded 1 || return 1
	[ "$(sha_head /dev/rraid0 $((MSZ_MB * 1048576)))" = "$want" ] ||
		{ fail "the array's data changed after the source failed"; return 1; }
	rm_array rraid0 || return 1
	identical $(nth 2 $m) $(nth 3 $m)
}

# sync_remove_midway: removing an unopened array mid-resync stops its thread; an open one gives
# EBUSY and keeps syncing; after removal rmmod works.
sync_remove_midway() {
	m=$(maps 2) || return 1
	speed_sys 1000 1024 || return 1
	mk rraid0 "level=1" $m || return 1
	sleep 0.5
	ps | grep -q '[r]raid0_sync' || { fail "no rraid0_sync thread during the resync"; return 1; }
	exec 3</dev/rraid0
	expect_err EBUSY "$RRAID_SYS/remove" rraid0 || { exec 3<&-; return 1; }
	exec 3<&-
	expect_running rraid0 resync || return 1
	rm_array rraid0 || return 1
	dmesg | grep -q "rraid0: resync interrupted" || { fail "dmesg does not say the resync stopped"; return 1; }
	! ps | grep -q '[r]raid0_sync' || { fail "rraid0_sync still runs after remove"; return 1; }
	# The same mid-recovery.
	m3=$(map_at sp "$(nth 3 $DISKS)" 0) || return 1
	mk rraid0 "level=1 assume-clean" $m || return 1
	fail_dev rraid0 "$(nth 2 $m)" || return 1
	new_spare rraid0 "$m3" || return 1
	sleep 0.5
	expect_running rraid0 recover || return 1
	rm_array rraid0 || return 1
	dmesg | grep -q "rraid0: recovery interrupted" || { fail "dmesg does not say the recovery stopped"; return 1; }
	! ps | grep -q '[r]raid0_sync' || { fail "rraid0_sync still runs after remove"; return 1; }
	speed_sys 1000 200000 || return 1
	rmmod rraid || { fail "rmmod after removing an array mid-resync and mid-recovery"; return 1; }
	rraid_load
}

# sync_bad_members: new_dev and member state writes that must be refused.
sync_bad_members() {
	m=$(maps 3) || return 1
	dm_linear small "$(nth 4 $DISKS)" 8192 || return 1
	x4=$(map_at x4 "$(nth 4 $DISKS)" 1) || return 1
	mk rraid0 "level=1 assume-clean" $(first 2 $m) || return 1
	nd=/sys/block/rraid0/rraid/new_dev
	expect_err EINVAL "$nd" "abc" || return 1
	expect_err EINVAL "$nd" "8:x" || return 1
	expect_err "ENODEV|ENXIO|ENOENT" "$nd" "/dev/does-not-exist" || return 1
	expect_err EBUSY "$nd" "$(devnum "$(nth 1 $m)")" || return 1
	expect_err ENOSPC "$nd" "$(devnum /dev/mapper/small)" || return 1
	k1=$(kname "$(nth 1 $m)")
	expect_err EBUSY "/sys/block/rraid0/rraid/dev-$k1/state" remove || return 1
	expect_err EINVAL "/sys/block/rraid0/rraid/dev-$k1/state" bogus || return 1
	new_spare rraid0 "$(nth 3 $m)" || return 1
	k3=$(kname "$(nth 3 $m)")
	[ "$(cat /sys/block/rraid0/rraid/dev-$k3/state)" = spare ] || { fail "new spare is not 'spare'"; return 1; }
	[ "$(sysw "/sys/block/rraid0/rraid/dev-$k3/state" remove)" = OK ] || { fail "removing a spare refused"; return 1; }
	sleep 0.5
	[ ! -e "/sys/block/rraid0/rraid/dev-$k3" ] || { fail "dev-$k3 still there after remove"; return 1; }
	# Released: another array can claim it.
	mk rraid1 "level=1 assume-clean" "$(nth 3 $m)" "$x4" || return 1
	rm_array rraid1 || return 1
	rm_array rraid0 || return 1
	mk rraid0 "level=0 chunk=64K" $(first 2 $m) || return 1
	expect_err EINVAL "$nd" "$(devnum "$(nth 3 $m)")" || return 1
	rm_array rraid0
}

# sync_bad_input: unknown actions, checks on RAID 0, bad limits.
sync_bad_input() {
	m=$(maps 2) || return 1
	mk rraid0 "level=1 assume-clean" $m || return 1
	expect_err EINVAL /sys/block/rraid0/rraid/sync_action reshape || return 1
	expect_err EINVAL /sys/block/rraid0/rraid/sync_action "" || return 1
	expect_err EINVAL /sys/block/rraid0/rraid/sync_speed_min fast || return 1
	expect_err EINVAL /sys/block/rraid0/rraid/sync_speed_max -5 || return 1
	expect_err EINVAL "$RRAID_SYS/speed_limit_max" 0 || return 1
	expect_err EINVAL "$RRAID_SYS/speed_limit_min" x || return 1
	expect_attr rraid0 sync_action idle || return 1
	rm_array rraid0 || return 1
	mk rraid0 "level=0 chunk=64K" $m || return 1
	expect_err EINVAL /sys/block/rraid0/rraid/sync_action check || return 1
	expect_attr rraid0 sync_action idle || return 1
	expect_attr rraid0 mismatch_cnt 0 || return 1
	rm_array rraid0
}

# p_md LEVEL [LAYOUT]: md's superblock (1.0, at the end) over the 4 disks, data in their first
# 16 MiB, then md stopped: md_asm later reads what rraid left there.
p_md() {
	if [ "$1" = 10 ]; then
		modprobe raid10 || { fail "modprobe raid10"; return 1; }
	else
		modprobe raid456 || { fail "modprobe raid456"; return 1; }
	fi
	mdadm --create /dev/md0 --run --assume-clean --metadata=1.0 --bitmap=none --level="$1" \
		${2:+--layout=$2} --chunk=64 --raid-devices=4 --size=$((MSZ_MB * 1024)) $DISKS </dev/null ||
		{ fail "mdadm --create level $1"; return 1; }
	md_stop /dev/md0
}

# p_md_agrees: rraid0 is removed, md assembled over the members reads the same bytes as rraid0
# did (sha256) and its own check finds 0.
p_md_agrees() {
	local bytes want
	bytes=$(dev_bytes /dev/rraid0)
	want=$(sha_head /dev/rraid0 "$bytes")
	rm_array rraid0 || return 1
	md_asm $DISKS || return 1
	[ "$(sha_head /dev/md0 "$bytes")" = "$want" ] ||
		{ fail "md reads other bytes than rraid did"; return 1; }
	md_check0 || return 1
	md_stop /dev/md0
}

# sync_parity_resync LEVEL [LAYOUT]: RAID 5, 6 or 10 over members of random bytes, without
# assume-clean: fio verify runs while the resync does (RAID 5/6 writes beyond its point
# reconstruct parity); then rraid's check finds 0, and md over the same members reads the same
# bytes and finds 0.
sync_parity_resync() {
	p_md "$1" "$2" || return 1
	for d in $DISKS; do
		dd if=/dev/urandom of="$d" bs=1M count=$MSZ_MB oflag=direct 2>/dev/null ||
			{ fail "random fill of $d"; return 1; }
	done
	speed_sys 100 1024 || return 1
	mk rraid0 "level=$1 ${2:+layout=$2} chunk=64K size=$((MSZ_MB * 1024))" $DISKS || return 1
	expect_running rraid0 resync || return 1
	fio_verify /dev/rraid0 --size=8M --offset=16M || return 1
	note "after fio: $(attr rraid0 sync_completed)"
	speed_sys 1000 200000 || return 1
	sync_wait rraid0 120 || return 1
	fio_check /dev/rraid0 --size=8M --offset=16M || return 1
	run_action rraid0 check || return 1
	expect_attr rraid0 mismatch_cnt 0 || return 1
	p_md_agrees
}

# sync_parity_check_repair LEVEL COUNT [LAYOUT]: one 4 KiB block corrupted on one member: check
# counts md's COUNT sectors (RAID 5/6: 8, one stripe head; RAID 10: 128, one 64 KiB block),
# repair rewrites parity or the copy, the next check finds 0, and md agrees.
sync_parity_check_repair() {
	p_md "$1" "$3" || return 1
	for d in $DISKS; do
		dd if=/dev/zero of="$d" bs=1M count=$MSZ_MB oflag=direct 2>/dev/null || { fail "zeroing $d"; return 1; }
	done
	spec="level=$1 ${3:+layout=$3} chunk=64K size=$((MSZ_MB * 1024)) assume-clean"
	mk rraid0 "$spec" $DISKS || return 1
	fio_fill /dev/rraid0 --size=16M || return 1
	rm_array rraid0 || return 1
	corrupt "$(nth 2 $DISKS)" 1283 || return 1
	mk rraid0 "$spec" $DISKS || return 1
	run_action rraid0 check || return 1
	expect_attr rraid0 mismatch_cnt "$2" || return 1
	run_action rraid0 repair || return 1
	expect_attr rraid0 mismatch_cnt "$2" || return 1
	run_action rraid0 check || return 1
	expect_attr rraid0 mismatch_cnt 0 || return 1
	p_md_agrees
}

# map_at NAME DISK K: /dev/mapper/NAME, the K-th 16 MiB of DISK; prints its path.
map_at() {
	dmsetup create "$1" --table "0 $MSZ_SEC linear $2 $(($3 * MSZ_SEC))" >&2 ||
		{ fail "dmsetup create $1"; return 1; }
	[ -b "/dev/mapper/$1" ] || dmsetup mknodes "$1"
	echo "/dev/mapper/$1"
}

# devnum DEV: MAJOR:MINOR of a block device, as md's new_dev takes it.
devnum() {
	printf '%d:%d' "0x$(stat -L -c %t "$1")" "0x$(stat -L -c %T "$1")"
}

# st ARRAY DEV: the state of DEV in ARRAY; sl: its slot.
st() { cat "/sys/block/$1/rraid/dev-$(kname "$2")/state"; }
sl() { cat "/sys/block/$1/rraid/dev-$(kname "$2")/slot"; }

# fail_dev ARRAY DEV: marks DEV faulty through sysfs.
fail_dev() {
	[ "$(sysw "/sys/block/$1/rraid/dev-$(kname "$2")/state" faulty)" = OK ] ||
		{ fail "echo faulty > dev-$(kname "$2")/state refused"; return 1; }
}

# new_spare ARRAY DEV: adds DEV as a spare by MAJOR:MINOR.
new_spare() {
	[ "$(sysw "/sys/block/$1/rraid/new_dev" "$(devnum "$2")")" = OK ] ||
		{ fail "new_dev $(devnum "$2") ($2) refused"; return 1; }
}

# sync_rebuild SPEC NFAIL [CACHE]: an array of SPEC (stripe_cache_size CACHE, if given) over 4
# members of 16 MiB with ext4 in use; NFAIL members fail and as many spares come (new_dev
# MAJOR:MINOR); they are rebuilt while fio verify writes and reads a file on the file system (sync_action recover, the spare in its slot,
# "spare" until done); then NFAIL *other* members fail, so the rebuilt ones must carry the data:
# the files and fio's data verify, e2fsck -fn is clean, faulty devices are removed (their
# directories go), and a check after the rebuild finds mismatch_cnt 0.
sync_rebuild() {
	spec=$1 nf=$2 cache=${3:-}
	set -- $DISKS
	m="$(map_at a1 "$1" 0) $(map_at a2 "$2" 0) $(map_at a3 "$3" 0) $(map_at a4 "$4" 0)" || return 1
	spares="$(map_at b1 "$1" 1) $(map_at b2 "$2" 1)" || return 1
	for d in $m; do
		dd if=/dev/zero of="$d" bs=1M count=$MSZ_MB oflag=direct 2>/dev/null || { fail "zeroing $d"; return 1; }
	done
	mk rraid0 "$spec assume-clean" $m || return 1
	# A cache of one window's heads: the recovery cannot hold the next window while it writes.
	if [ -n "$cache" ]; then
		r=$(sysw /sys/block/rraid0/rraid/stripe_cache_size "$cache")
		[ "$r" = OK ] || { fail "stripe_cache_size $cache: $r"; return 1; }
	fi
	mkfs.ext4 -F -q -b 4096 /dev/rraid0 || { fail "mkfs.ext4"; return 1; }
	mount -t ext4 /dev/rraid0 "$T_MNT" || { fail "mount"; return 1; }
	mkdir -p "$T_MNT/tree"
	head -c 2000000 /dev/urandom >"$T_MNT/a" || { fail "write files"; return 1; }
	for j in $(seq 1 20); do head -c $((j * 5000)) /dev/urandom >"$T_MNT/tree/f$j"; done
	(cd "$T_MNT" && find . -type f | sort | xargs sha256sum) >"$T_DIR/sums"
	sync
	gone=$(first "$nf" $(echo $m | tr ' ' '\n' | sed 1d))
	# Frozen while members fail and spares come, so that one recovery takes them all.
	[ "$(sysw /sys/block/rraid0/rraid/sync_action frozen)" = OK ] || { fail "frozen refused"; return 1; }
	for d in $gone; do fail_dev rraid0 "$d" || return 1; done
	expect_attr rraid0 degraded "$nf" || return 1
	speed_sys 100 1024 || return 1
	for d in $(first "$nf" $spares); do
		new_spare rraid0 "$d" || return 1
		[ "$(st rraid0 "$d")" = spare ] && [ "$(sl rraid0 "$d")" = none ] ||
			{ fail "new spare $(kname "$d") is '$(st rraid0 "$d")' in slot $(sl rraid0 "$d")"; return 1; }
	done
	[ "$(sysw /sys/block/rraid0/rraid/sync_action idle)" = OK ] || { fail "idle refused"; return 1; }
	sleep 0.5
	expect_running rraid0 recover || return 1
	# /proc/rraidstat, as /proc/mdstat shows a recovery.
	cat /proc/rraidstat
	lvl=${spec%% *}
	grep -q "^rraid0 : active raid${lvl#level=} " /proc/rraidstat ||
		{ fail "/proc/rraidstat has no 'rraid0 : active' line for the array"; return 1; }
	grep -qE '^      \[=*>\.*\]  recovery = *[0-9]+\.[0-9]% \([0-9]+/[0-9]+\) finish=[0-9]+\.[0-9]min speed=[0-9]+K/sec$' /proc/rraidstat ||
		{ fail "/proc/rraidstat has no md-style progress line for the recovery"; return 1; }
	grep -qE " $(kname "$(nth 2 $m)")\[[0-9]+\]\(F\)" /proc/rraidstat ||
		{ fail "/proc/rraidstat does not flag the failed member (F)"; return 1; }
	for d in $(first "$nf" $spares); do
		[ "$(st rraid0 "$d")" = spare ] || { fail "$(kname "$d") is '$(st rraid0 "$d")' while rebuilt, expected spare"; return 1; }
		case $(sl rraid0 "$d") in none) fail "$(kname "$d") has no slot while rebuilt"; return 1 ;; esac
	done
	fio --name=f --filename="$T_MNT/fio" --size=4M $FIO_COMMON --direct=0 --ioengine=psync \
		--rw=randwrite --bsrange=4k-64k --do_verify=1 >"$T_DIR/fio.out" 2>&1 || {
		grep -iE 'err|verify|bad|fail' "$T_DIR/fio.out" | head -8
		fail "fio verify on the file system during the rebuild"
		return 1
	}
	note "after fio: $(attr rraid0 sync_completed)"
	[ "$(attr rraid0 sync_action)" = recover ] || { fail "the rebuild ended before fio did: not tested under I/O"; return 1; }
	speed_sys 1000 200000 || return 1
	sync_wait rraid0 120 || return 1
	dmesg | grep -q "rraid0: recovery done" || { fail "dmesg does not say the recovery is done"; return 1; }
	expect_attr rraid0 degraded 0 || return 1
	for d in $(first "$nf" $spares); do
		[ "$(st rraid0 "$d")" = in_sync ] || { fail "rebuilt $(kname "$d") is '$(st rraid0 "$d")'"; return 1; }
	done
	for d in $gone; do
		[ "$(st rraid0 "$d")" = faulty ] && [ "$(sl rraid0 "$d")" = none ] ||
			{ fail "replaced $(kname "$d") is '$(st rraid0 "$d")' in slot $(sl rraid0 "$d")"; return 1; }
		[ "$(sysw "/sys/block/rraid0/rraid/dev-$(kname "$d")/state" remove)" = OK ] ||
			{ fail "remove of faulty $(kname "$d") refused"; return 1; }
	done
	sleep 0.5
	for d in $gone; do
		[ ! -e "/sys/block/rraid0/rraid/dev-$(kname "$d")" ] || { fail "dev-$(kname "$d") still there after remove"; return 1; }
	done
	# Scrub: every copy (or parity) the rebuild wrote agrees with the rest.
	n0=$(dmesg | grep -c "rraid0: data-check done")
	run_action rraid0 check || return 1
	[ "$(dmesg | grep -c "rraid0: data-check done")" -gt "$n0" ] ||
		{ fail "the check after the rebuild did not run to its end"; return 1; }
	expect_attr rraid0 mismatch_cnt 0 || return 1
	# Other members fail: the rebuilt ones carry the data now.
	# RAID 1: every original member goes; RAID 5/6: as many as the array tolerates.
	others=$(echo $m | tr ' ' '\n' | grep -v -x -F "$(echo $gone | tr ' ' '\n')")
	case $spec in "level=1" | "level=1 "*) ;; *) others=$(first "$nf" $others) ;; esac
	for d in $others; do fail_dev rraid0 "$d" || return 1; done
	echo 3 >/proc/sys/vm/drop_caches
	(cd "$T_MNT" && sha256sum -c "$T_DIR/sums" >/dev/null) || { fail "files differ after the rebuilt members took over"; return 1; }
	fio --name=f --filename="$T_MNT/fio" --size=4M $FIO_COMMON --direct=1 --ioengine=psync \
		--rw=randwrite --bsrange=4k-64k --verify_only ||
		{ fail "fio's data does not verify on the rebuilt members"; return 1; }
	umount "$T_MNT" || { fail "umount"; return 1; }
	e2fsck -fn /dev/rraid0 || { fail "e2fsck -fn not clean"; return 1; }
	rm_array rraid0
}

# flakey NAME DEV FEATURE: NAME's table becomes dm-flakey over DEV's first 16 MiB, down (up
# interval 0) from now on with FEATURE: error_reads or error_writes.
flakey() {
	modprobe dm-flakey 2>/dev/null
	dmsetup load "$1" --table "0 $MSZ_SEC flakey $2 0 0 3600 1 $3" || { fail "dmsetup load $1 flakey $3"; return 1; }
	dmsetup resume "$1" || { fail "dmsetup resume $1"; return 1; }
}

# sync_faults SPEC HOW...: fio verify writes over an array of 4 members of 16 MiB while
# members fail under it, one per HOW: "error" (dm-error table), "error_reads" or
# "error_writes" (dm-flakey), "sysfs" (echo faulty), "vanish" (dmsetup remove --force).
# No verify error, before or after; the state files say which members failed.
sync_faults() {
	spec=$1
	shift
	set -- $DISKS "$@"
	m="$(map_at a1 "$1" 0) $(map_at a2 "$2" 0) $(map_at a3 "$3" 0) $(map_at a4 "$4" 0)" || return 1
	shift 4
	for d in $m; do
		dd if=/dev/zero of="$d" bs=1M count=$MSZ_MB oflag=direct 2>/dev/null || { fail "zeroing $d"; return 1; }
	done
	mk rraid0 "$spec assume-clean" $m || return 1
	fio --name=w --filename=/dev/rraid0 $FIO_COMMON --rw=randwrite --bsrange=4k-128k --iodepth=8 \
		--size=12M --do_verify=1 >"$T_DIR/fio.out" 2>&1 &
	fpid=$!
	sleep 1
	i=2
	hit=
	for how in "$@"; do
		d=/dev/mapper/a$i
		k=$(kname "$d")
		case $how in
		error) dm_to_error "a$i" || return 1 ;;
		error_reads | error_writes) flakey "a$i" "$(nth $i $DISKS)" "$how" || return 1 ;;
		sysfs) fail_dev rraid0 "$d" || return 1 ;;
		# While rraid holds it, the device cannot go: --force swaps in a table that fails all
		# I/O, and the removal itself then fails (busy).
		vanish)
			dmsetup remove --force "a$i" 2>/dev/null
			dmsetup table "a$i" | grep -q ' error' || { fail "dmsetup remove --force a$i left no error table"; return 1; }
			;;
		esac
		hit="$hit $k:$how"
		i=$((i + 1))
	done
	wait $fpid || { grep -iE 'err|verify|bad' "$T_DIR/fio.out" | head -8; fail "fio verify with$hit"; return 1; }
	# And writes and reads that surely come after the faults.
	fio --name=w2 --filename=/dev/rraid0 $FIO_COMMON --rw=randwrite --bsrange=4k-128k --iodepth=8 \
		--size=12M --randseed=7 --do_verify=1 >"$T_DIR/fio.out" 2>&1 ||
		{ grep -iE 'err|verify|bad' "$T_DIR/fio.out" | head -8; fail "fio verify after$hit"; return 1; }
	fio --name=w2 --filename=/dev/rraid0 $FIO_COMMON --rw=randwrite --bsrange=4k-128k --iodepth=8 \
		--size=12M --randseed=7 --verify_only >"$T_DIR/fio.out" 2>&1 ||
		{ grep -iE 'err|verify|bad' "$T_DIR/fio.out" | head -8; fail "fio verify-only after$hit"; return 1; }
	states=
	for x in $hit; do
		k=${x%%:*}
		states="$states $k=$(cat /sys/block/rraid0/rraid/dev-$k/state),errors=$(cat /sys/block/rraid0/rraid/dev-$k/errors)"
	done
	note "after$hit:$states; degraded $(attr rraid0 degraded), $(attr rraid0 array_state)"
	for x in $hit; do
		k=${x%%:*}
		case $(cat /sys/block/rraid0/rraid/dev-$k/state) in
		faulty) ;;
		*) case $x in
		   *:error_reads) [ "$(cat /sys/block/rraid0/rraid/dev-$k/errors)" -gt 0 ] ||
				{ fail "$k returned read errors but its errors count is 0"; return 1; } ;;
		   *) fail "$k is not faulty after ${x#*:}"; return 1 ;;
		   esac ;;
		esac
	done
	rm_array rraid0
}

# sync_events: poll() on sync_action wakes when a check starts; on degraded and on the
# member's state when a member fails under writes (in the bio completion, told later by the
# worker); and a change uevent for the array's disk goes out for both.
sync_events() {
	m=$(maps 3) || return 1
	mk rraid0 "level=1 assume-clean" $m || return 1
	a=/sys/block/rraid0/rraid
	/rraid/uevent-listen 5000 "change@" >"$T_DIR/ev1" &
	ue=$!
	/rraid/sysfs-poll $a/sync_action 8000 >"$T_DIR/p1" &
	p1=$!
	sleep 0.5
	speed_sys 1000 8192 || return 1
	[ "$(sysw $a/sync_action check)" = OK ] || { fail "check refused"; return 1; }
	wait $p1 || { fail "poll() on sync_action did not wake when a check started"; return 1; }
	note "sync_action: $(cat "$T_DIR/p1")"
	[ "$(sysw $a/sync_action idle)" = OK ] || { fail "idle refused"; return 1; }
	wait $ue || { fail "no change uevent when a check started"; return 1; }
	grep -q "rraid0" "$T_DIR/ev1" || { fail "the uevent is not the array's: $(head -2 "$T_DIR/ev1")"; return 1; }
	sync_wait rraid0 20 || return 1
	k=$(kname "$(nth 2 $m)")
	/rraid/sysfs-poll $a/degraded 8000 >"$T_DIR/p2" &
	p2=$!
	/rraid/sysfs-poll $a/dev-$k/state 8000 >"$T_DIR/p3" &
	p3=$!
	/rraid/uevent-listen 5000 "change@" >"$T_DIR/ev2" &
	ue=$!
	sleep 0.5
	dm_to_error s2 || return 1
	dd if=/dev/zero of=/dev/rraid0 bs=64k count=4 oflag=direct 2>/dev/null
	wait $p2 || { fail "poll() on degraded did not wake when a member failed"; return 1; }
	wait $p3 || { fail "poll() on dev-$k/state did not wake when it failed"; return 1; }
	note "degraded: $(cat "$T_DIR/p2"); dev-$k/state: $(cat "$T_DIR/p3")"
	wait $ue || { fail "no change uevent when a member failed"; return 1; }
	rm_array rraid0
}

t_run sync-poll-and-uevents sync_events
t_run sync-raid1-faults-under-fio sync_faults "level=1" error_reads vanish
t_run sync-raid5-faults-under-fio sync_faults "level=5 chunk=64K" error_writes
t_run sync-raid6-faults-under-fio sync_faults "level=6 chunk=64K" error sysfs
t_run sync-raid10-faults-under-fio sync_faults "level=10 layout=n2 chunk=64K" error_writes sysfs
# zeroed_four: $m, the maps a1..a4 (the first 16 MiB of each disk), zeroed so that they agree
# whatever earlier tests left there; $sp, the map b1 (the next 16 MiB of the first disk).
zeroed_four() {
	set -- $DISKS
	m="$(map_at a1 "$1" 0) $(map_at a2 "$2" 0) $(map_at a3 "$3" 0) $(map_at a4 "$4" 0)" || return 1
	sp=$(map_at b1 "$1" 1) || return 1
	for d in $m; do
		dd if=/dev/zero of="$d" bs=1M count=$MSZ_MB oflag=direct 2>/dev/null || { fail "zeroing $d"; return 1; }
	done
}

# sync_replace SPEC: md's want_replacement on slot 1 of an array of SPEC over 4 members: with no
# spare nothing starts; a spare added is built as the replacement (spare,replacement, slot 1)
# while the member keeps serving (degraded stays 0) under fio verify; then it takes the slot,
# the old device goes faulty, and when other members fail the replacement carries the data.
sync_replace() {
	spec=$1
	zeroed_four || return 1
	mk rraid0 "$spec assume-clean" $m || return 1
	fio_fill /dev/rraid0 --size=12M || return 1
	old=$(nth 2 $m)
	[ "$(sysw "/sys/block/rraid0/rraid/dev-$(kname "$old")/state" want_replacement)" = OK ] ||
		{ fail "want_replacement refused"; return 1; }
	[ "$(st rraid0 "$old")" = "in_sync,want_replacement" ] || { fail "state '$(st rraid0 "$old")' after want_replacement"; return 1; }
	sleep 0.3
	expect_attr rraid0 sync_action idle || return 1
	speed_sys 100 1024 || return 1
	new_spare rraid0 "$sp" || return 1
	sleep 0.5
	expect_running rraid0 recover || return 1
	[ "$(st rraid0 "$sp")" = "spare,replacement" ] && [ "$(sl rraid0 "$sp")" = 1 ] ||
		{ fail "replacement is '$(st rraid0 "$sp")' in slot $(sl rraid0 "$sp")"; return 1; }
	expect_attr rraid0 degraded 0 || return 1
	grep -qE " $(kname "$sp")\[1\]\(R\)" /proc/rraidstat || { fail "/proc/rraidstat does not show the replacement (R)"; return 1; }
	# Other data than before (another seed), so that a write the replacement missed shows.
	fio_verify /dev/rraid0 --size=12M --randseed=99 >/dev/null || return 1
	note "after fio: $(attr rraid0 sync_completed)"
	speed_sys 1000 200000 || return 1
	sync_wait rraid0 120 || return 1
	dmesg | grep -q "rraid0: slot 1 replaced" || { fail "dmesg does not say slot 1 was replaced"; return 1; }
	# Every write reached both while the replacement was built: the two are the same bytes (fio's
	# verify alone cannot tell a block the replacement missed, which holds older valid data).
	[ "$(sha_head "$sp" $((MSZ_MB * 1048576)))" = "$(sha_head "$old" $((MSZ_MB * 1048576)))" ] ||
		{ fail "the replacement differs from the member it replaced"; return 1; }
	[ "$(st rraid0 "$sp")" = in_sync ] && [ "$(sl rraid0 "$sp")" = 1 ] ||
		{ fail "replacement is '$(st rraid0 "$sp")' in slot $(sl rraid0 "$sp") afterwards"; return 1; }
	[ "$(st rraid0 "$old")" = faulty ] && [ "$(sl rraid0 "$old")" = none ] ||
		{ fail "replaced device is '$(st rraid0 "$old")' in slot $(sl rraid0 "$old")"; return 1; }
	expect_attr rraid0 degraded 0 || return 1
	# The replacement carries slot 1's data: other members fail (RAID 1: all of them).
	case $spec in
	"level=1") others="$(nth 1 $m) $(nth 3 $m) $(nth 4 $m)" ;;
	*) others=$(nth 1 $m) ;;
	esac
	for d in $others; do fail_dev rraid0 "$d" || return 1; done
	fio_check /dev/rraid0 --size=12M --randseed=99 || return 1
	rm_array rraid0
}

t_run sync-raid1-want-replacement sync_replace "level=1"
t_run sync-raid5-want-replacement sync_replace "level=5 chunk=64K"
t_run sync-raid10-want-replacement sync_replace "level=10 layout=n2 chunk=64K"
# sync_race SPEC KIND: writes race the sync thread while it builds a new device at full speed,
# KIND recover (a spare takes a failed member's slot) or replace (want_replacement): fio writes
# 4-16K at QD 32 all over the array until the job is done. Each write must reach the new device
# wherever the build has passed when it is planned, even in the moment between a window's copy
# and the step of the build point. Then check finds mismatch_cnt 0: a block the new device
# missed would not match its stripe's parity or its mirror. (The old device cannot be compared
# with a replacement here: writes after the swap reach only the replacement.)
sync_race() {
	spec=$1 kind=$2
	zeroed_four || return 1
	mk rraid0 "$spec assume-clean" $m || return 1
	old=$(nth 2 $m)
	fio_fill /dev/rraid0 --size=4M >/dev/null || return 1
	if [ $kind = replace ]; then
		[ "$(sysw "/sys/block/rraid0/rraid/dev-$(kname "$old")/state" want_replacement)" = OK ] ||
			{ fail "want_replacement refused"; return 1; }
	else
		fail_dev rraid0 "$old" || return 1
	fi
	# Writes all over the array while the build runs. The build starts only once the load
	# writes (fio takes seconds to start under TCG, longer than a full-speed build of 16 MiB),
	# and runs at 4 MiB/s, so that writes surely race it; both are checked.
	fio --name=race --filename=/dev/rraid0 --ioengine=libaio --direct=1 --rw=randwrite \
		--bsrange=4k-16k --iodepth=32 --time_based --runtime=300 >"$T_DIR/race.out" 2>&1 &
	fpid=$!
	i=0
	while [ "$(writes_done /dev/rraid0)" -eq 0 ]; do
		[ $i -ge 600 ] && { kill $fpid; fail "fio wrote nothing in 60 s"; return 1; }
		sleep 0.1
		i=$((i + 1))
	done
	[ "$(sysw /sys/block/rraid0/rraid/sync_speed_max 4096)" = OK ] || { kill $fpid; fail "sync_speed_max refused"; return 1; }
	w0=$(writes_done /dev/rraid0)
	new_spare rraid0 "$sp" || { kill $fpid; return 1; }
	sync_wait rraid0 120 || { kill $fpid; return 1; }
	w1=$(writes_done /dev/rraid0)
	kill -INT $fpid
	wait $fpid
	[ "$w1" -gt $((w0 + 100)) ] || { fail "only $((w1 - w0)) writes completed during the $kind: no race tested"; return 1; }
	note "$((w1 - w0)) writes completed during the $kind"
	dmesg | grep -q "rraid0: recovery done" || { fail "the $kind did not run to its end"; return 1; }
	expect_attr rraid0 degraded 0 || return 1
	run_action rraid0 check || return 1
	expect_attr rraid0 mismatch_cnt 0 || return 1
	rm_array rraid0
}

t_run sync-raid5-recover-races-writes sync_race "level=5 chunk=64K" recover
t_run sync-raid10-replace-races-writes sync_race "level=10 layout=n2 chunk=64K" replace
# dust_on DEV: /dev/mapper/dust0, dm-dust over DEV (512-byte blocks), its bad blocks enabled.
dust_on() {
	modprobe dm-dust || { fail "modprobe dm-dust"; return 1; }
	dmsetup create dust0 --table "0 $(blockdev --getsz "$1") dust $1 0 512" ||
		{ fail "dmsetup create dust0"; return 1; }
	[ -b /dev/mapper/dust0 ] || dmsetup mknodes dust0
	dmsetup message dust0 0 enable || { fail "enable dust0"; return 1; }
}

# sync_write_error_in_resync: a 3-way RAID 1 resyncs at 1 MB/s over dm-delay members (5 ms)
# under fio random writes; one member's table becomes dm-flakey error_writes. The failed write
# pieces go to the request worker while the sync thread raises the barrier of the same bucket
# (16 MiB members: one bucket) again and again; a piece that kept its barrier count there made
# the thread wait for it while the worker waited for the barrier (md's rule: nothing that waits
# for a barrier waits on I/O only it can finish). fio must end, the member is faulty, the
# resync goes on with two members and ends, and check finds 0.
sync_write_error_in_resync() {
	modprobe dm-delay || { fail "modprobe dm-delay"; return 1; }
	members=
	for i in 1 2 3; do
		b=$(map_at "a$i" "$(nth $i $DISKS)" 0) || return 1
		dmsetup create "d$i" --table "0 $MSZ_SEC delay $b 0 5" || { fail "dmsetup create d$i"; return 1; }
		[ -b "/dev/mapper/d$i" ] || dmsetup mknodes "d$i"
		members="$members /dev/mapper/d$i"
	done
	mk rraid0 "level=1" $members || return 1
	[ "$(sysw /sys/block/rraid0/rraid/sync_speed_max 1000)" = OK ] || { fail "sync_speed_max refused"; return 1; }
	fio --name=w --filename=/dev/rraid0 --ioengine=libaio --direct=1 --rw=randwrite --bs=4k \
		--iodepth=16 --time_based --runtime=12 >"$T_DIR/fio.out" 2>&1 &
	fpid=$!
	sleep 3
	expect_attr rraid0 sync_action resync || { kill $fpid; return 1; }
	flakey d3 /dev/mapper/a3 error_writes || { kill $fpid; return 1; }
	i=0
	while kill -0 $fpid 2>/dev/null; do
		[ $i -ge 600 ] && { fail "fio still running 60 s after its 12 s: writes hang"; return 1; }
		sleep 0.1
		i=$((i + 1))
	done
	wait $fpid || { tail -5 "$T_DIR/fio.out"; fail "fio failed"; return 1; }
	has_word "$(st rraid0 /dev/mapper/d3)" faulty || { fail "the member whose writes fail is '$(st rraid0 /dev/mapper/d3)'"; return 1; }
	note "after fio: $(attr rraid0 sync_action) $(attr rraid0 sync_completed)"
	[ "$(sysw /sys/block/rraid0/rraid/sync_speed_max 0)" = OK ] || { fail "sync_speed_max 0 refused"; return 1; }
	sync_wait rraid0 120 || return 1
	dmesg | grep -q "rraid0: resync done" || { fail "the resync did not end"; return 1; }
	run_action rraid0 check || return 1
	expect_attr rraid0 mismatch_cnt 0 || return 1
}

# members_on N [DUST]: sets $members to N maps of 16 MiB (a0, a1, ...) spread over the disks,
# slot DUST (when given) on dm-dust (dust0).
members_on() {
	members=
	for i in $(seq 0 $(($1 - 1))); do
		d=$(map_at "a$i" "$(nth $((i % 4 + 1)) $DISKS)" $((i / 4))) || return 1
		[ "$i" = "${2:-}" ] && { dust_on "$d" || return 1; d=/dev/mapper/dust0; }
		members="$members $d"
	done
}

# bad_block BLOCK [WR_FAILS]: 512-byte block BLOCK of dust0 fails reads (and WR_FAILS writes),
# which must show.
bad_block() {
	dmsetup message dust0 0 addbadblock "$1" ${2:-} || { fail "addbadblock $1"; return 1; }
	dd if=/dev/mapper/dust0 of=/dev/null bs=512 skip="$1" count=1 iflag=direct 2>/dev/null &&
		{ fail "dust0 reads its bad block $1: the test cannot fail"; return 1; }
	return 0
}

# array_pat: a pattern over the whole of rraid0 (/tmp/exp its image).
array_pat() {
	fill_pat "$(dev_bytes /dev/rraid0)" || return 1
}

# sync_lost_source SPEC SLOTS DUST FAILS [AT]: an array of SPEC over SLOTS members of 16 MiB,
# slot DUST on dm-dust, the slots FAILS (comma-separated) failed, a pattern written; a block at
# member sector AT (8192) of the dust member cannot be read; a spare is added and rebuilt.
# Where no other copy (RAID 1 with 2 members, RAID 10 n2, RAID 5) can give that block, the
# recovery stops there, never past it: the spare goes back to the spares, not in sync
# ("recovery aborted" in dmesg), nothing starts again by itself, and the data the array still
# has reads right. The old code marked the spare in sync with a hole of stale bytes.
sync_lost_source() {
	spec=$1 n=$2 dust=$3 fails=$4 at=${5:-8192}
	members_on "$n" "$dust" || return 1
	sp=$(map_at b1 "$(nth 1 $DISKS)" 3) || return 1
	mk rraid0 "$spec assume-clean" $members || return 1
	array_pat || return 1
	for f in $(echo "$fails" | tr , ' '); do fail_slot "$f" || return 1; done
	bad_block "$at" || return 1
	new_spare rraid0 "$sp" || return 1
	sleep 0.5
	sync_wait rraid0 120 || return 1
	dmesg | grep -q "rraid0: recovery aborted" || { dmesg | grep rraid0 | tail -5; fail "no 'recovery aborted' in dmesg"; return 1; }
	dmesg | grep -q "rraid0: recovery done" && { fail "the recovery says it is done over an unreadable block"; return 1; }
	# The recovery point never passes the block (member space, no data offset; RAID 10 walks
	# array space).
	case $spec in
	*level=10*) ;;
	*)
		stop=$(dmesg | sed -n 's/.*rraid0: recovery aborted at member sector \([0-9]*\).*/\1/p' | tail -1)
		[ -n "$stop" ] && [ "$stop" -le "$at" ] || { fail "the recovery stopped at '$stop', past the unreadable sector $at"; return 1; }
		;;
	esac
	[ "$(st rraid0 "$sp")" = spare ] && [ "$(sl rraid0 "$sp")" = none ] ||
		{ fail "the spare is '$(st rraid0 "$sp")' in slot $(sl rraid0 "$sp") after the abort"; return 1; }
	expect_attr rraid0 degraded 1 || return 1
	has_word "$(st rraid0 /dev/mapper/dust0)" in_sync || { fail "the dust member is '$(st rraid0 /dev/mapper/dust0)'"; return 1; }
	# Nothing starts again by itself.
	sleep 2
	expect_attr rraid0 sync_action idle || return 1
	# The data below the bad block reads right.
	dev_cmp /dev/rraid0 /tmp/exp 0 1048576 || { fail "the array's first MiB reads wrong after the abort"; return 1; }
	rm_array rraid0
}

# sync_survivor_error: RAID 6 over 5 members, slot 0 failed and a spare added; a survivor (slot
# 2, on dm-dust) fails a read during the rebuild. The block is rebuilt from the rest of the
# stripe and rewritten ("read error corrected"), the survivor stays in sync, the spare ends in
# sync, and every byte of the array reads right, also once the spare and the survivor must
# carry it. The old code failed the survivor, skipped the rest of its eight windows and marked
# the spare in sync over them (silent corruption).
sync_survivor_error() {
	set -- $DISKS
	members="$(map_at a0 "$1" 0) $(map_at a1 "$2" 0) $(map_at a2x "$3" 0) $(map_at a3 "$4" 0) $(map_at a4 "$1" 1)" || return 1
	dust_on /dev/mapper/a2x || return 1
	members=$(echo $members | sed 's|/dev/mapper/a2x|/dev/mapper/dust0|')
	sp=$(map_at b1 "$2" 1) || return 1
	mk rraid0 "level=6 chunk=64K assume-clean" $members || return 1
	array_pat || return 1
	fail_slot 0 || return 1
	bad_block 8192 || return 1
	new_spare rraid0 "$sp" || return 1
	sleep 0.5
	sync_wait rraid0 120 || return 1
	dmesg | grep -q "rraid0: recovery done" || { dmesg | grep rraid0 | tail -5; fail "the recovery did not end"; return 1; }
	[ "$(st rraid0 "$sp")" = in_sync ] || { fail "the spare is '$(st rraid0 "$sp")'"; return 1; }
	dev_cmp /dev/rraid0 /tmp/exp 0 "$(stat -c %s /tmp/exp)" || { fail "the array reads wrong after the rebuild"; return 1; }
	# The survivor's block was rebuilt from the stripe and rewritten, as md's.
	dmesg | grep -q "rraid0: read error corrected .* on $(kname /dev/mapper/dust0))" ||
		{ fail "no 'read error corrected' for the survivor"; return 1; }
	expect_attr rraid0 degraded 0 || return 1
	# The spare must carry its slot: fail two others.
	fail_slot 3 || return 1
	fail_slot 4 || return 1
	dev_cmp /dev/rraid0 /tmp/exp 0 "$(stat -c %s /tmp/exp)" || { fail "the array reads wrong with the spare carrying its slot"; return 1; }
	rm_array rraid0
}

# sync_r10_windows LAYOUT N CHUNK_K: RAID 10 with 3 or 5 copies, whose check windows are not a
# chunk: a consistent array filled with a pattern; check finds 0 and repair changes no byte.
# The old windows (80 pages for 3 copies, 48 for 5) crossed chunk ends: check counted
# mismatches and repair wrote one chunk's data over another's copy.
sync_r10_windows() {
	members_on "$2" || return 1
	zero_members $members || return 1
	mk rraid0 "level=10 layout=$1 chunk=$3K assume-clean" $members || return 1
	array_pat || return 1
	run_action rraid0 check || return 1
	expect_attr rraid0 mismatch_cnt 0 || return 1
	run_action rraid0 repair || return 1
	dev_cmp /dev/rraid0 /tmp/exp 0 "$(stat -c %s /tmp/exp)" || { fail "repair changed the array's data"; return 1; }
	rm_array rraid0
}

# sync_read_error SPEC N DUST ACTION [WR_FAILS]: an array of SPEC over N members of 16 MiB,
# slot DUST on dm-dust, whose block at member sector 8192 fails reads during ACTION (check:
# over a consistent array holding a pattern; resync: of a new array, the block on the copy it
# reads). The block is rebuilt from another copy or the stripe and rewritten: "read error
# corrected", the member stays in sync, a check after finds 0, the data reads right. With
# WR_FAILS the rewrite fails too: the member goes faulty and the job goes on without it.
sync_read_error() {
	spec=$1 n=$2 dust=$3 action=$4 wrf=${5:-}
	members_on "$n" "$dust" || return 1
	zero_members $members || return 1
	dk=$(kname /dev/mapper/dust0)
	if [ "$action" = resync ]; then
		bad_block 8192 $wrf || return 1
		mk rraid0 "$spec" $members || return 1
		sync_wait rraid0 120 || return 1
		dmesg | grep -q "rraid0: resync done" || { dmesg | grep rraid0 | tail -5; fail "the resync did not end"; return 1; }
	else
		mk rraid0 "$spec assume-clean" $members || return 1
		array_pat || return 1
		bad_block 8192 $wrf || return 1
		run_action rraid0 "$action" || return 1
	fi
	if [ -n "$wrf" ]; then
		has_word "$(st rraid0 /dev/mapper/dust0)" faulty || { fail "the member whose rewrite failed is '$(st rraid0 /dev/mapper/dust0)'"; return 1; }
		expect_attr rraid0 degraded 1 || return 1
	else
		dmesg | grep -q "rraid0: read error corrected .* on $dk)" ||
			{ dmesg | grep rraid0 | tail -5; fail "no 'read error corrected' on $dk"; return 1; }
		[ "$(st rraid0 /dev/mapper/dust0)" = in_sync ] || { fail "the dust member is '$(st rraid0 /dev/mapper/dust0)'"; return 1; }
		dd if=/dev/mapper/dust0 of=/dev/null bs=512 skip=8192 count=1 iflag=direct 2>/dev/null ||
			{ fail "the bad block was not rewritten"; return 1; }
		run_action rraid0 check || return 1
		expect_attr rraid0 mismatch_cnt 0 || return 1
	fi
	[ "$action" = resync ] || dev_cmp /dev/rraid0 /tmp/exp 0 "$(stat -c %s /tmp/exp)" ||
		{ fail "the array reads wrong after the $action"; return 1; }
	rm_array rraid0
}

t_run sync-raid1-n3-check-read-error sync_read_error "level=1" 3 1 check
t_run sync-raid1-resync-read-error sync_read_error "level=1" 2 0 resync
t_run sync-raid5-check-read-error sync_read_error "level=5 chunk=64K" 4 1 check
t_run sync-raid10-n2-check-read-error sync_read_error "level=10 layout=n2 chunk=64K" 4 1 check
# RAID 10 resyncs a window of chunks at once; a read error in it sends the window chunk by
# chunk through the copies (slot 0 holds the first copy read).
t_run sync-raid10-n2-resync-read-error sync_read_error "level=10 layout=n2 chunk=64K" 4 0 resync
t_run sync-raid1-n3-check-rewrite-fails sync_read_error "level=1" 3 1 check 200
if [ "${RRAID_FULL:-0}" = 1 ]; then
	t_run sync-raid6-resync-read-error sync_read_error "level=6 chunk=64K" 5 2 resync
	t_run sync-raid10-n3-check-read-error sync_read_error "level=10 layout=n3 chunk=64K" 4 2 check
	t_run sync-raid5-resync-read-error sync_read_error "level=5 chunk=64K" 4 3 resync
fi
t_run sync-raid1-write-error-in-resync sync_write_error_in_resync
# RAID 1's block lies in the second half of its 1 MiB window, which a worker syncs.
t_run sync-raid1-rebuild-lost-source sync_lost_source "level=1" 2 1 0 9728
t_run sync-raid10-n2-rebuild-lost-source sync_lost_source "level=10 layout=n2 chunk=64K" 4 1 0
# RAID 5's is window 5 of a call's 32, which either the thread or its worker takes.
t_run sync-raid5-rebuild-lost-source sync_lost_source "level=5 chunk=64K" 4 2 0 8832
t_run sync-raid6-rebuild-survivor-read-error sync_survivor_error
t_run sync-raid10-n3-check-windows sync_r10_windows n3 4 512
t_run sync-raid10-n5-check-windows sync_r10_windows n5 6 256
t_run sync-raid1-rebuild-onto-spare sync_rebuild "level=1" 1
t_run sync-raid5-rebuild-onto-spare sync_rebuild "level=5 chunk=64K" 1
t_run sync-raid6-rebuild-two-spares-cache-17 sync_rebuild "level=6 chunk=64K" 2 17
t_run sync-raid10-n2-rebuild-onto-spare sync_rebuild "level=10 layout=n2 chunk=64K" 1
t_run sync-raid6-resync-under-fio sync_parity_resync 6
t_run sync-raid10-n2-resync-under-fio sync_parity_resync 10 n2
t_run sync-raid6-check-repair sync_parity_check_repair 6 8
t_run sync-raid10-o2-check-repair sync_parity_check_repair 10 128 o2
# Further variants of the tests above (about 110 s): RRAID_FULL=1.
if [ "${RRAID_FULL:-0}" = 1 ]; then
	t_run sync-raid10-o2-rebuild-onto-spare sync_rebuild "level=10 layout=o2 chunk=64K" 1
	t_run sync-raid1-n2-check-repair sync_check_repair 2
	t_run sync-raid5-replace-races-writes sync_race "level=5 chunk=64K" replace
	t_run sync-raid6-recover-races-writes sync_race "level=6 chunk=64K" recover
	t_run sync-raid10-f2-rebuild-onto-spare sync_rebuild "level=10 layout=f2 chunk=64K" 1
	t_run sync-raid5-resync-under-fio sync_parity_resync 5
	t_run sync-raid10-f2-resync-under-fio sync_parity_resync 10 f2
	t_run sync-raid5-check-repair sync_parity_check_repair 5 8
fi
t_run sync-raid1-resync-reads-agree sync_resync
t_run sync-raid1-resync-under-fio sync_resync_fio
t_run sync-raid1-n3-check-repair sync_check_repair 3
t_run sync-throttle-speed-max sync_throttle
t_run sync-raid5-rebuild-steps-aside-for-io sync_under_load
t_run sync-idle-frozen sync_idle_frozen
t_run sync-raid1-fail-source-midway sync_fail_source
t_run sync-remove-midway sync_remove_midway
# sync_pci_vanish: a member's virtio PCI device is removed from the machine under fio verify
# (the last test of the group: the disk is gone for the rest of the boot). The member fails,
# the data verifies, the array is removed cleanly.
sync_pci_vanish() {
	set -- $DISKS
	mk rraid0 "level=1 assume-clean" "$1" "$2" "$4" || return 1
	k=$(kname "$4")
	pci=$(readlink -f "/sys/block/$k/device/..")
	[ -e "$pci/remove" ] || { fail "no PCI device behind $k ($pci)"; return 1; }
	fio --name=w --filename=/dev/rraid0 $FIO_COMMON --rw=randwrite --bsrange=4k-128k --iodepth=8 \
		--size=24M --do_verify=1 >"$T_DIR/fio.out" 2>&1 &
	fpid=$!
	sleep 1
	echo 1 >"$pci/remove" || { fail "removing $pci"; return 1; }
	wait $fpid || { grep -iE 'err|verify|bad' "$T_DIR/fio.out" | head -8; fail "fio verify while $k vanished"; return 1; }
	fio --name=w2 --filename=/dev/rraid0 $FIO_COMMON --rw=randwrite --bsrange=4k-128k --iodepth=8 \
		--size=8M --randseed=5 --do_verify=1 >"$T_DIR/fio.out" 2>&1 ||
		{ grep -iE 'err|verify|bad' "$T_DIR/fio.out" | head -8; fail "fio verify after $k vanished"; return 1; }
	[ ! -e "/sys/block/$k" ] || { fail "$k still there after its PCI device was removed"; return 1; }
	st=$(cat /sys/block/rraid0/rraid/dev-$k/state)
	note "$k after its PCI device went: $st, errors $(cat /sys/block/rraid0/rraid/dev-$k/errors), degraded $(attr rraid0 degraded)"
	[ "$st" = faulty ] || { fail "vanished member $k is '$st'"; return 1; }
	[ "$(sysw /sys/block/rraid0/rraid/dev-$k/state remove)" = OK ] || { fail "remove of the vanished member refused"; return 1; }
	rm_array rraid0
}

# le32 N: N as 4 little-endian bytes.
le32() {
	printf "\\$(printf %03o $(($1 & 255)))\\$(printf %03o $((($1 >> 8) & 255)))"
	printf "\\$(printf %03o $((($1 >> 16) & 255)))\\$(printf %03o $((($1 >> 24) & 255)))"
}

# unit_disk LOOP FILE: a 33 MiB disk in FILE on /dev/LOOP with two 16 MiB MBR partitions
# (LOOPp1 at 1 MiB, LOOPp2 after it).
unit_disk() {
	local i
	dd if=/dev/zero of="$2" bs=1M count=33 2>/dev/null || { fail "making $2"; return 1; }
	{
		head -c 446 /dev/zero
		for i in 2048 34816; do
			printf '\000\000\000\000\203\000\000\000'
			le32 $i
			le32 $MSZ_SEC
		done
		head -c 32 /dev/zero
		printf '\125\252'
	} | dd of="$2" conv=notrunc 2>/dev/null || { fail "partition table of $2"; return 1; }
	losetup -P "/dev/$1" "$2" || { fail "losetup -P /dev/$1 $2"; return 1; }
	wait_bdev "/dev/${1}p2" 30 || { fail "no partitions on /dev/$1"; return 1; }
}

# sync_shared_units: arrays over partitions of the same disks sync one at a time, as md's
# ("they share one or more physical units"). RAID 1 rraid0 over loop6p1+loop7p1 resyncs; rraid1
# over loop6p2+loop7p2 waits (sync_action resync, sync_completed "delayed", resync=DELAYED in
# /proc/rraidstat, md's reason in dmesg), while rraid2 on other disks resyncs beside rraid0.
# Then rraid1 runs by itself, and every array's copies agree.
sync_shared_units() {
	local i
	speed_sys 1000 2048 || return 1
	unit_disk loop6 "$T_DIR/unit6.img" || return 1
	unit_disk loop7 "$T_DIR/unit7.img" || { losetup -d /dev/loop6; return 1; }
	(
		m=$(maps 2) || exit 1
		randomize /dev/loop6p1 /dev/loop7p1 /dev/loop6p2 /dev/loop7p2 $m || exit 1
		mk rraid0 "level=1" /dev/loop6p1 /dev/loop7p1 || exit 1
		# rraid0's job has its units once it shows its progress.
		i=0
		while :; do
			case $(attr rraid0 sync_completed) in *" / $MSZ_SEC") break ;; esac
			[ $i -lt 30 ] || break
			sleep 0.1
			i=$((i + 1))
		done
		expect_running rraid0 resync || exit 1
		mk rraid1 "level=1" /dev/loop6p2 /dev/loop7p2 || exit 1
		mk rraid2 "level=1" $m || exit 1
		sleep 1
		expect_running rraid0 resync || exit 1
		expect_running rraid2 resync || exit 1
		expect_attr rraid1 sync_action resync || exit 1
		expect_attr rraid1 sync_completed delayed || exit 1
		grep -A3 '^rraid1 :' /proc/rraidstat | grep -q 'resync=DELAYED' ||
			{ cat /proc/rraidstat; fail "/proc/rraidstat does not show rraid1's resync=DELAYED"; exit 1; }
		dmesg | grep -q "rraid1: delaying resync until rraid0 has finished (they share one or more physical units)" ||
			{ fail "dmesg does not say why rraid1 waits"; exit 1; }
		! dmesg | grep -q "rraid2: delaying" || { fail "rraid2, on other disks, was delayed"; exit 1; }
		speed_sys 1000 200000 || exit 1
		for a in rraid0 rraid1 rraid2; do
			sync_wait $a 60 || exit 1
		done
		dmesg | grep -q "rraid1: resync done" || { fail "rraid1's resync did not run after rraid0's"; exit 1; }
		for a in rraid0 rraid1 rraid2; do
			rm_array $a || exit 1
		done
		identical /dev/loop6p1 /dev/loop7p1 || exit 1
		identical /dev/loop6p2 /dev/loop7p2 || exit 1
		identical $m
	)
	rc=$?
	for a in rraid0 rraid1 rraid2; do
		[ -e /sys/block/$a ] && rraid_remove $a >/dev/null
	done
	losetup -d /dev/loop6 && losetup -d /dev/loop7 || { fail "losetup -d"; return 1; }
	rm -f "$T_DIR/unit6.img" "$T_DIR/unit7.img"
	return $rc
}

t_run sync-shared-disk-delayed sync_shared_units
t_run sync-bad-input sync_bad_input
t_run sync-bad-members sync_bad_members
t_run sync-member-pci-device-vanishes sync_pci_vanish
t_summary
