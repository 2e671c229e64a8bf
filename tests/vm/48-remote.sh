#!/bin/sh
# VM tests, mirrors across machines: md's failfast, and rraid over members behind the kernel's
# NVMe over TCP target in other network namespaces ("hosts" a and b, each exporting two of the
# guest's disks; lib.sh's nvmf_*). A host's link is cut while fio verify runs: its members
# fail, the array goes on degraded, fio verify passes; the link comes back and the member is
# added back, rebuilding only the chunks written meanwhile (the write-intent bitmap).
# vm-run: --disks 5 --disk-size 64M
. "${RRAID_LIB:-/rraid/lib.sh}"

RRAID_META=1.2
BMC=1024
MIB_SECT=2048
# The disks: one local; host a exports the next two, host b the last two.
LOCAL=$(nth 1 $DISKS)

# remote_up FAST_IO_FAIL_TMO: both hosts, connected.
remote_up() {
	nvmf_host a 1 $(nth 2 $DISKS) $(nth 3 $DISKS) || return 1
	nvmf_host b 2 $(nth 4 $DISKS) $(nth 5 $DISKS) || return 1
	nvmf_connect a 1 "$1" || return 1
	nvmf_connect b 2 "$1" || return 1
	nvmf_wait_ns a 2 && nvmf_wait_ns b 2
}

# ff_on DEV...: marks each member failfast; its state says so.
ff_on() {
	local d k
	for d in "$@"; do
		k=$(kname "$d")
		[ "$(sysw "/sys/block/rraid0/rraid/dev-$k/state" failfast)" = OK ] || { fail "failfast on $k"; return 1; }
		has_word "$(member_state rraid0 "$k")" failfast || { fail "$k: state without failfast"; return 1; }
	done
}

# dev_state_word DEV WORD: waits (30 s) until DEV's state in rraid0 holds WORD.
wait_state() {
	local k i
	k=$(kname "$1") i=0
	while ! has_word "$(member_state rraid0 "$k")" "$2"; do
		[ $i -ge 300 ] && { fail "$k never became $2 (state: $(member_state rraid0 "$k"))"; return 1; }
		sleep 0.1
		i=$((i + 1))
	done
}

# wait_ctrl H STATE: waits (30 s) until host H's controller is in STATE ("gone": deleted).
wait_ctrl() {
	local i
	i=0
	while [ "$(nvmf_ctrl_state "$1")" != "$2" ]; do
		[ $i -ge 300 ] && { fail "controller of $1: $(nvmf_ctrl_state "$1"), never $2"; return 1; }
		sleep 0.1
		i=$((i + 1))
	done
}

# cut_under_fio H SECONDS_DOWN: fio verify (random 4K writes, each verified behind, 20 s) runs
# while host H's link is down for SECONDS_DOWN; prints the longest completion it saw (the
# stall) as a note; fio's verify must pass.
cut_under_fio() {
	local h down pid out rc lat
	h=$1 down=$2
	out=/tmp/fio-cut.out
	fio --name=cut --filename=/dev/rraid0 $FIO_COMMON --rw=randwrite --bs=4k --iodepth=4 \
		--size=8M --time_based --runtime=20 --verify_backlog=32 >"$out" 2>&1 &
	pid=$!
	sleep 4
	nvmf_cut "$h" || { kill $pid; return 1; }
	sleep "$down"
	[ "$down" -lt 15 ] && { nvmf_restore "$h" || { kill $pid; return 1; }; }
	wait $pid
	rc=$?
	[ $rc = 0 ] || { cat "$out"; fail "fio verify failed while $h was cut"; return 1; }
	grep -E '^ *(clat|lat) \(|IOPS=' "$out" | sed 's/^/  fio| /'
	lat=$(fio_max_lat_ms "$out")
	note "host $h cut for $down s: longest write $lat ms"
	echo "$lat" >/tmp/stall.ms
}

# The failfast flag: the state file takes it, the superblock records it (mdadm -E's Flags),
# assembly keeps it; a failfast member's read error fails it at once (no rewrite), while the
# last copy left is read without failfast and kept.
failfast_state() {
	set -- $(first 2 $DISKS)
	dm_linear m0 "$1" && dm_linear m1 "$2" || return 1
	members="/dev/mapper/m0 /dev/mapper/m1"
	mk rraid0 "level=1 bitmap=internal bitmap_chunk=$BMC" $members || return 1
	sync_wait rraid0 || return 1
	fio_fill /dev/rraid0 --size=4M --io_size=1M || return 1
	ff_on /dev/mapper/m1 || return 1
	mdadm -E /dev/mapper/m1 | grep -q "Flags : failfast" || { mdadm -E /dev/mapper/m1; fail "no failfast in mdadm -E"; return 1; }
	mdadm -E /dev/mapper/m0 | grep -q "Flags :" && { fail "m0 got a flag"; return 1; }
	rm_array rraid0 && asm rraid0 $members || return 1
	has_word "$(member_state rraid0 "$(kname /dev/mapper/m1)")" failfast || { fail "failfast lost at assembly"; return 1; }
	[ "$(sysw "/sys/block/rraid0/rraid/dev-$(kname /dev/mapper/m0)/state" failfast)" = OK ] || return 1
	[ "$(sysw "/sys/block/rraid0/rraid/dev-$(kname /dev/mapper/m0)/state" -failfast)" = OK ] || return 1
	has_word "$(member_state rraid0 "$(kname /dev/mapper/m0)")" failfast && { fail "-failfast ignored"; return 1; }
	# A read error on the failfast member: failed at once, the read served by m0.
	dm_to_error m1 || return 1
	dd if=/dev/rraid0 of=/dev/null bs=64k count=64 iflag=direct 2>/dev/null ||
		{ fail "reads failed with one copy left"; return 1; }
	fio_check /dev/rraid0 --size=4M --io_size=1M || return 1
	dmesg | grep -q "failfast read error on $(kname /dev/mapper/m1): member failed" ||
		{ dmesg | tail -20; fail "no failfast failure of m1"; return 1; }
	expect_attr rraid0 degraded 1 || return 1
	dmesg | grep -q "read error corrected.*$(kname /dev/mapper/m1)" && { fail "m1 was rewritten, not failed"; return 1; }
	rm_array rraid0
}

# raid1_up TMO FF: RAID 1 over the local disk and one namespace of each host, with a bitmap
# (TMO: nvme-tcp's fast_io_fail_tmo; FF: the remote members failfast or not).
raid1_up() {
	remote_up "$1" || return 1
	ra=$(nvmf_ns a 1) rb=$(nvmf_ns b 1)
	members="$LOCAL $ra $rb"
	mk rraid0 "level=1 bitmap=internal bitmap_chunk=$BMC" $members || return 1
	sync_wait rraid0 || return 1
	bm_fast rraid0 || return 1
	[ "$2" = 0 ] || ff_on "$ra" "$rb"
}

# Host a's link is cut for 5 s under fio verify; it comes back within ctrl_loss_tmo, the same
# device is re-added, and only the chunks written meanwhile are rebuilt; check finds 0; then
# the rebuilt member alone serves the data. Without failfast and fast_io_fail_tmo (-1), I/O
# waits for the reconnect instead, and the member may stay.
remote_raid1() {
	raid1_up "$1" "$2" || return 1
	cut_under_fio a 5 || return 1
	if [ "$1" = -1 ] && [ "$2" = 0 ]; then
		sleep 2
		if ! has_word "$(member_state rraid0 "$(kname "$ra")")" faulty; then
			note "no member failed: the writes waited for the reconnect"
			expect_attr rraid0 degraded 0 || return 1
			run_action rraid0 check || return 1
			expect_attr rraid0 mismatch_cnt 0 || return 1
			sole_copy "$ra"
			return
		fi
	fi
	wait_state "$ra" faulty || return 1
	expect_attr rraid0 degraded 1 || return 1
	wait_ctrl a live || return 1
	[ "$(nvmf_ns a 1)" = "$ra" ] || { fail "host a's namespace came back as $(nvmf_ns a 1), not $ra"; return 1; }
	readd_counted "$ra" "$(kname "$ra")" || return 1
	sole_copy "$ra" || return 1
}

# readd_counted DEV DIRNAME: re-adds DEV (state re-add) and checks that the rebuild wrote
# about the chunks the bitmap marks (each of MIB_SECT), then check finds 0.
readd_counted() {
	dirty=$(bm_dirty "$LOCAL")
	[ "$dirty" -ge 1 ] || { mdadm -X "$LOCAL"; fail "no dirty bit after degraded writes"; return 1; }
	w0=$(wsect "$1")
	[ "$(sysw "/sys/block/rraid0/rraid/dev-$2/state" re-add)" = OK ] || { fail "re-add $2"; return 1; }
	sync_wait rraid0 || return 1
	expect_attr rraid0 degraded 0 || return 1
	wrote=$(($(wsect "$1") - w0))
	note "re-add rebuilt $wrote sectors ($dirty dirty chunks: $((dirty * MIB_SECT)); the member: $(blockdev --getsz "$1"))"
	[ "$wrote" -ge $((dirty * MIB_SECT)) ] && [ "$wrote" -le $((dirty * MIB_SECT + 2048)) ] ||
		{ fail "re-add wrote $wrote sectors, not the $dirty dirty chunks"; return 1; }
	run_action rraid0 check || return 1
	expect_attr rraid0 mismatch_cnt 0
}

# sole_copy DEV: the other members fail; DEV alone reads back what the array held.
sole_copy() {
	local sz want d
	sz=$(dev_bytes /dev/rraid0)
	want=$(sha_head /dev/rraid0 "$sz")
	for d in $members; do
		[ "$d" = "$1" ] && continue
		[ "$(sysw "/sys/block/rraid0/rraid/dev-$(kname "$d")/state" faulty)" = OK ] || { fail "fail $d"; return 1; }
	done
	[ "$(sha_head /dev/rraid0 "$sz")" = "$want" ] || { fail "$1 alone reads differently"; return 1; }
	rm_array rraid0
}

# The link stays down past ctrl_loss_tmo: the controller is deleted; the dead member is
# removed; when the link comes back the namespace returns under a new name, and new_dev takes
# it back into its slot (its events are not older than the bitmap's events_cleared), rebuilding
# only the chunks written meanwhile.
remote_lost() {
	raid1_up 0 1 || return 1
	cut_under_fio a 16 || return 1
	wait_ctrl a gone || return 1
	wait_state "$ra" faulty || return 1
	k=$(kname "$ra")
	[ "$(sysw "/sys/block/rraid0/rraid/dev-$k/state" remove)" = OK ] || { fail "remove $k"; return 1; }
	nvmf_restore a || return 1
	nvmf_connect a 1 0 || return 1
	# Its old name was freed by the remove: the new device may take it.
	na=$(nvmf_ns a 1)
	note "host a's namespace: $ra, then $na (a new controller)"
	dirty=$(bm_dirty "$LOCAL")
	[ "$(sysw /sys/block/rraid0/rraid/new_dev "$na")" = OK ] || { fail "new_dev $na"; return 1; }
	dmesg | grep -q "rraid0: $(kname "$na") comes back to slot 1" || { fail "$na not taken back into slot 1"; return 1; }
	sync_wait rraid0 || return 1
	expect_attr rraid0 degraded 0 || return 1
	wrote=$(wsect "$na")
	note "new_dev rebuilt $wrote sectors ($dirty dirty chunks: $((dirty * MIB_SECT)))"
	[ "$wrote" -ge $((dirty * MIB_SECT)) ] && [ "$wrote" -le $((dirty * MIB_SECT + 2048)) ] ||
		{ fail "new_dev wrote $wrote sectors, not the $dirty dirty chunks"; return 1; }
	run_action rraid0 check || return 1
	expect_attr rraid0 mismatch_cnt 0 || return 1
	members="$LOCAL $na $rb"
	sole_copy "$na"
}

# The link is cut again while the re-add rebuilds (throttled to 1 MiB/s): the member fails
# during its recovery, the array stays degraded and reads what it held; the link back, a
# second re-add finishes the job.
remote_cut_rebuild() {
	raid1_up 0 1 || return 1
	cut_under_fio a 5 || return 1
	wait_state "$ra" faulty || return 1
	wait_ctrl a live || return 1
	sz=$(dev_bytes /dev/rraid0)
	want=$(sha_head /dev/rraid0 "$sz")
	[ "$(sysw /sys/block/rraid0/rraid/sync_speed_max 1000)" = OK ] || { fail "sync_speed_max"; return 1; }
	[ "$(sysw "/sys/block/rraid0/rraid/dev-$(kname "$ra")/state" re-add)" = OK ] || { fail "re-add"; return 1; }
	sleep 2
	[ "$(attr rraid0 sync_action)" = recover ] || { fail "no recovery running 2 s after re-add"; return 1; }
	nvmf_cut a || return 1
	wait_state "$ra" faulty || return 1
	sync_wait rraid0 || return 1
	expect_attr rraid0 degraded 1 || return 1
	[ "$(sha_head /dev/rraid0 "$sz")" = "$want" ] || { fail "the array reads differently after the second cut"; return 1; }
	nvmf_restore a || return 1
	wait_ctrl a live || return 1
	[ "$(sysw /sys/block/rraid0/rraid/sync_speed_max system)" = OK ] || { fail "sync_speed_max system"; return 1; }
	readd_counted "$ra" "$(kname "$ra")" || return 1
	sole_copy "$ra"
}

# RAID 10 n2 over the four namespaces, host a, b, a, b: every mirror pair spans both hosts.
# Host a's link is cut under fio verify: both its members fail, the array goes on; the link
# back, both are re-added, rebuilding only their halves of the dirty chunks (array space).
remote_raid10() {
	remote_up 0 || return 1
	a1=$(nvmf_ns a 1) b1=$(nvmf_ns b 1) a2=$(nvmf_ns a 2) b2=$(nvmf_ns b 2)
	members="$a1 $b1 $a2 $b2"
	mk rraid0 "level=10 layout=n2 chunk=64K bitmap=internal bitmap_chunk=$BMC" $members || return 1
	sync_wait rraid0 || return 1
	bm_fast rraid0 || return 1
	ff_on $members || return 1
	cut_under_fio a 5 || return 1
	wait_state "$a1" faulty && wait_state "$a2" faulty || return 1
	expect_attr rraid0 degraded 2 || return 1
	wait_ctrl a live || return 1
	dirty=$(bm_dirty "$b1")
	w1=$(wsect "$a1") w2=$(wsect "$a2")
	for d in "$a1" "$a2"; do
		[ "$(sysw "/sys/block/rraid0/rraid/dev-$(kname "$d")/state" re-add)" = OK ] || { fail "re-add $d"; return 1; }
	done
	sync_wait rraid0 || return 1
	# A second re-add may have waited for the first one's recovery.
	sync_wait rraid0 || return 1
	expect_attr rraid0 degraded 0 || return 1
	wrote=$(($(wsect "$a1") - w1 + $(wsect "$a2") - w2))
	# Each member holds half of each dirty chunk of array space.
	per=$((MIB_SECT / 2))
	note "re-add rebuilt $wrote sectors on a's two members ($dirty dirty chunks: $((dirty * per * 2)))"
	[ "$wrote" -ge $((dirty * per * 2)) ] && [ "$wrote" -le $((dirty * per * 2 + 4096)) ] ||
		{ fail "re-add wrote $wrote sectors, not the $dirty dirty chunks"; return 1; }
	run_action rraid0 check || return 1
	expect_attr rraid0 mismatch_cnt 0 || return 1
	fio_verify /dev/rraid0 --size=8M --io_size=2M || return 1
	rm_array rraid0
}

t_run failfast-raid1 failfast_state
t_run remote-raid1-cut remote_raid1 0 1
if [ "${RRAID_FULL:-0}" = 1 ]; then
	# nvme-tcp's own fast failure off (fast_io_fail_tmo -1): failfast alone, then neither.
	t_run remote-raid1-failfast-only remote_raid1 -1 1
	t_run remote-raid1-nofailfast remote_raid1 -1 0
	t_run remote-raid1-lost remote_lost
	t_run remote-raid1-cut-rebuild remote_cut_rebuild
	t_run remote-raid10-cut remote_raid10
fi
t_summary
