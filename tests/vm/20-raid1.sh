#!/bin/sh
# VM tests, RAID1: 2 and 3 members, with and without assume-clean: status attributes and queue
# limits, fio verify, ext4 round trip, members identical afterwards; a member failed through
# sysfs; a member that returns errors (device-mapper error target) on write and on read; read
# balancing with assume-clean, and first-member reads beyond the resync point without it;
# unequal members.
# vm-run: --disks 4 --disk-size 64M
. "${RRAID_LIB:-/rraid/lib.sh}"

# members_identical BYTES DEV...: the first BYTES of every DEV hash the same.
members_identical() {
	local mi_bytes mi_ref h d
	mi_bytes=$1
	shift
	mi_ref=
	for d in "$@"; do
		h=$(sha_head "$d" "$mi_bytes")
		echo "$d $h"
		[ -z "$mi_ref" ] && mi_ref=$h
		[ "$h" = "$mi_ref" ] || { fail "member $d differs from $1 after writes through the mirror"; return 1; }
	done
}

# r1_status N
r1_status() {
	n=$1
	members=$(first "$n" $DISKS)
	mk rraid0 "level=1" $members || return 1
	expect_attr rraid0 level raid1 || return 1
	expect_attr rraid0 chunk_size 0 || return 1
	expect_attr rraid0 raid_disks "$n" || return 1
	expect_attr rraid0 array_state clean || return 1
	expect_attr rraid0 degraded 0 || return 1
	msz=$(dev_bytes "$(nth 1 $DISKS)")
	expect_attr rraid0 component_size $((msz / 1024)) || return 1
	[ "$(dev_bytes /dev/rraid0)" -eq "$msz" ] ||
		{ fail "/dev/rraid0 is $(dev_bytes /dev/rraid0) bytes, expected $msz"; return 1; }
	expect_slots rraid0 $members || return 1
	q=/sys/block/rraid0/queue
	[ "$(cat $q/minimum_io_size)" -eq "$(cat $q/logical_block_size)" ] ||
		{ fail "RAID1 minimum_io_size $(cat $q/minimum_io_size), expected the logical block size"; return 1; }
	[ "$(cat $q/optimal_io_size)" -eq 0 ] ||
		{ fail "RAID1 optimal_io_size $(cat $q/optimal_io_size), expected 0"; return 1; }
	rm_array rraid0
}

# r1_fio N [assume-clean]: fio verify, then every member holds the same bytes.
r1_fio() {
	n=$1
	members=$(first "$n" $DISKS)
	mk rraid0 "level=1 $2" $members || return 1
	fio_verify /dev/rraid0 || return 1
	# Without assume-clean the members agree once the resync is done.
	sync_wait rraid0 || return 1
	size=$(dev_bytes /dev/rraid0)
	rm_array rraid0 || return 1
	members_identical "$size" $members
}

# r1_ext4 N [assume-clean]: members zeroed first so that they start identical.
r1_ext4() {
	n=$1
	members=$(first "$n" $DISKS)
	zero $members || return 1
	mk rraid0 "level=1 $2" $members || return 1
	ext4_check /dev/rraid0 || return 1
	sync_wait rraid0 || return 1
	size=$(dev_bytes /dev/rraid0)
	rm_array rraid0 || return 1
	members_identical "$size" $members
}

# fail_member ARRAY DEV: marks DEV faulty through sysfs; it must be accepted.
fail_member() {
	local k r st
	k=$(kname "$2")
	r=$(sysw "/sys/block/$1/rraid/dev-$k/state" faulty)
	[ "$r" = OK ] || { fail "echo faulty > dev-$k/state: $r"; return 1; }
	st=$(member_state "$1" "$k")
	has_word "$st" faulty || { fail "dev-$k/state is '$st' after faulty"; return 1; }
	has_word "$st" in_sync && { fail "dev-$k/state is '$st': faulty and in_sync"; return 1; }
	return 0
}

# r1_degraded N: fail members through sysfs one by one down to one; the data still verifies and
# writes still succeed each time; failed members get no more writes; the last in-sync member
# cannot be failed (EBUSY).
r1_degraded() {
	n=$1
	members=$(first "$n" $DISKS)
	mk rraid0 "level=1" $members || return 1
	fio_fill /dev/rraid0 || return 1
	failed=
	nfailed=0
	for d in $(echo $members | tr ' ' '\n' | sed 1d | sort -r); do
		fail_member rraid0 "$d" || return 1
		failed="$failed $d"
		nfailed=$((nfailed + 1))
		expect_attr rraid0 degraded "$nfailed" || return 1
		st=$(attr rraid0 array_state)
		[ "$st" = clean ] || [ "$st" = active ] ||
			{ fail "array_state '$st' with $nfailed of $n failed"; return 1; }
		fio_check /dev/rraid0 || return 1
		before=
		for f in $failed; do before="$before $(writes_done "$f")"; done
		fio_verify /dev/rraid0 || return 1
		after=
		for f in $failed; do after="$after $(writes_done "$f")"; done
		[ "$before" = "$after" ] ||
			{ fail "failed members$failed got writes: $before -> $after"; return 1; }
	done
	last=$(nth 1 $members)
	expect_err EBUSY "/sys/block/rraid0/rraid/dev-$(kname "$last")/state" faulty || return 1
	has_word "$(member_state rraid0 "$(kname "$last")")" in_sync ||
		{ fail "last member not in_sync after refused faulty"; return 1; }
	fio_check /dev/rraid0 || return 1
	rm_array rraid0
}

# r1_write_error: the second member starts failing every I/O; fio verify passes and the member
# ends up faulty.
r1_write_error() {
	set -- $DISKS
	dm_linear bad "$2" || return 1
	mk rraid0 "level=1" "$1" /dev/mapper/bad || return 1
	k=$(kname /dev/mapper/bad)
	fio_fill /dev/rraid0 --size=8M || return 1
	dm_to_error bad || return 1
	fio_verify /dev/rraid0 || return 1
	st=$(member_state rraid0 "$k")
	has_word "$st" faulty || { fail "erroring member dev-$k/state is '$st', expected faulty"; return 1; }
	expect_attr rraid0 degraded 1 || return 1
	has_word "$(member_state rraid0 "$(kname "$1")")" in_sync ||
		{ fail "healthy member not in_sync"; return 1; }
	rm_array rraid0
}

# r1_read_error: the first member (the one reads go to without assume-clean) starts failing
# every I/O after the data is written; every read must be retried on the other member.
r1_read_error() {
	set -- $DISKS
	dm_linear bad "$1" || return 1
	mk rraid0 "level=1" /dev/mapper/bad "$2" || return 1
	k=$(kname /dev/mapper/bad)
	fio_fill /dev/rraid0 || return 1
	dm_to_error bad || return 1
	r0=$(reads_done "$2")
	fio_check /dev/rraid0 || return 1
	r1=$(reads_done "$2")
	[ "$r1" -gt "$r0" ] || { fail "no reads reached the healthy member"; return 1; }
	# Its rewrite fails too (md's fix_read_error), so the dead member is failed and stops
	# taking reads.
	st=$(member_state rraid0 "$k")
	has_word "$st" faulty || { fail "a member that fails reads and rewrites is '$st', expected faulty"; return 1; }
	expect_attr rraid0 degraded 1 || return 1
	dmesg | grep -q "unrecoverable read error at sector .* rewrite failed" ||
		{ fail "dmesg does not say why the member was failed"; return 1; }
	rm_array rraid0
}

# r1_balance N: with assume-clean, a random-read job makes every member's read count grow,
# each by at least 10% of the job's 4096 reads (a fair split gives each 1/N).
# The split is printed as a note.
r1_balance() {
	n=$1
	members=$(first "$n" $DISKS)
	mk rraid0 "level=1 assume-clean" $members || return 1
	before=
	for d in $members; do before="$before $(reads_done "$d")"; done
	randread /dev/rraid0 || return 1
	dist=
	i=1
	ok=0
	for d in $members; do
		delta=$(($(reads_done "$d") - $(nth $i $before)))
		dist="$dist $(kname "$d")=$delta"
		[ "$delta" -ge 410 ] || ok=1
		i=$((i + 1))
	done
	note "member reads during 4096 random reads:$dist"
	[ $ok -eq 0 ] || { fail "reads not balanced across members:$dist"; return 1; }
	rm_array rraid0
}

# r1_first_only N: without assume-clean, reads beyond the resync point come only from the first
# in-sync member. The resync is slowed to 1 KiB/s and frozen, so it stops within its first 1 MiB
# window; the reads are beyond 8 MiB.
r1_first_only() {
	n=$1
	members=$(first "$n" $DISKS)
	speed_sys 1 1 || return 1
	mk rraid0 "level=1" $members || return 1
	[ "$(sysw /sys/block/rraid0/rraid/sync_action frozen)" = OK ] || { fail "frozen refused"; return 1; }
	before=
	for d in $members; do before="$before $(reads_done "$d")"; done
	randread /dev/rraid0 --offset=8M || return 1
	dist=
	i=1
	for d in $members; do
		delta=$(($(reads_done "$d") - $(nth $i $before)))
		dist="$dist $(kname "$d")=$delta"
		if [ $i -eq 1 ]; then
			[ "$delta" -ge 1024 ] || { fail "first member served only $delta reads"; return 1; }
		else
			[ "$delta" -eq 0 ] || { fail "member $(kname "$d") served reads without assume-clean:$dist"; return 1; }
		fi
		i=$((i + 1))
	done
	note "member reads during 4096 random reads:$dist"
	rm_array rraid0
}

# r1_unequal: the mirror has the smallest member's size.
r1_unequal() {
	set -- $DISKS
	dm_linear small "$2" 81920 || return 1
	mk rraid0 "level=1" "$1" /dev/mapper/small || return 1
	expect_attr rraid0 component_size 40960 || return 1
	[ "$(dev_bytes /dev/rraid0)" -eq $((40 * 1048576)) ] ||
		{ fail "/dev/rraid0 is $(dev_bytes /dev/rraid0) bytes, expected 40 MiB"; return 1; }
	fio_verify /dev/rraid0 || return 1
	rm_array rraid0
}

# make test: every test with 2 members, and the degraded test with 3 (three-way mirrors also
# run in 90-sync's check and read-error tests); RRAID_FULL=1: every test with 3 too.
for n in 2 3; do
	full=1
	[ $n = 2 ] || [ "${RRAID_FULL:-0}" = 1 ] || full=0
	[ $full = 1 ] && t_run "raid1-n$n-status" r1_status $n
	[ $full = 1 ] && t_run "raid1-n$n-fio" r1_fio $n
	[ $full = 1 ] && t_run "raid1-n$n-clean-fio" r1_fio $n assume-clean
	[ $full = 1 ] && t_run "raid1-n$n-ext4" r1_ext4 $n
	[ $full = 1 ] && t_run "raid1-n$n-clean-ext4" r1_ext4 $n assume-clean
	t_run "raid1-n$n-degraded-sysfs" r1_degraded $n
	[ $full = 1 ] && t_run "raid1-n$n-read-balance" r1_balance $n
	[ $full = 1 ] && t_run "raid1-n$n-reads-first-only" r1_first_only $n
done
t_run raid1-write-error-member-faulty r1_write_error
t_run raid1-read-error-dead-member-failed r1_read_error
t_run raid1-unequal-members r1_unequal
t_summary
