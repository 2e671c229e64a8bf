#!/bin/sh
# VM tests, write order of the superblocks (make test-full): dm-log-writes under a member records
# every write with its flush and FUA marks (scripts/guest/logwrites.c reads the log). The
# superblock write that marks the array active, with FUA, comes before the first data write
# after a clean period; the superblock that records a failed member comes before the failed
# write's completion.
# vm-run: --disks 4 --disk-size 64M
. "${RRAID_LIB:-/rraid/lib.sh}"

RRAID_META=1.2
LW=/rraid/logwrites

# lw NAME DEV LOG: a dm-log-writes device NAME over DEV, logging to LOG.
lw() {
	modprobe dm-log-writes 2>/dev/null
	dmsetup create "$1" --table "0 $(blockdev --getsz "$2") log-writes $2 $3" ||
		{ fail "dmsetup create $1 (log-writes)"; return 1; }
	[ -b "/dev/mapper/$1" ] || dmsetup mknodes "$1"
}

# The first data write after a clean period follows an active superblock written with FUA.
active_first() {
	set -- $DISKS
	zero "$3" || return 1
	lw lw0 "$1" "$3" || return 1
	mk rraid0 "level=1 assume-clean" /dev/mapper/lw0 "$2" || return 1
	sleep 1
	expect_attr rraid0 array_state clean || return 1
	dmsetup message lw0 0 mark clean-period || { fail "mark"; return 1; }
	dd if=/dev/urandom of=/dev/rraid0 bs=4k count=1 seek=100 oflag=direct 2>/dev/null || { fail "write"; return 1; }
	sleep 1
	rm_array rraid0 || return 1
	dmsetup remove lw0
	$LW "$3" 8 >"$T_DIR/log" || { fail "logwrites $3"; return 1; }
	off=$(sbv "$1" "Data Offset")
	# After the mark: the first data write (at or past the data offset), and what came before it.
	awk -v off="$off" 'f && $2 >= off && $3 > 0 { print NR; exit } /mark clean-period/ { f = 1 }' "$T_DIR/log" >"$T_DIR/n"
	n=$(cat "$T_DIR/n")
	[ -n "$n" ] || { cat "$T_DIR/log"; fail "no data write after the mark"; return 1; }
	sed -n "/mark clean-period/,${n}p" "$T_DIR/log" >"$T_DIR/before"
	cat "$T_DIR/before"
	note "before the first data write: $(grep -c . "$T_DIR/before") log entries, the active superblock: $(grep -E " sb [0-9]+ 0 " "$T_DIR/before" | head -1)"
	grep -E '^[0-9]+ 8 [0-9]+ [A-Z]*U[A-Z]* sb [0-9]+ 0 ' "$T_DIR/before" ||
		{ fail "no active superblock (resync_offset 0) with FUA before the first data write"; return 1; }
	grep -E '^[0-9]+ 8 [0-9]+ [A-Z]*F' "$T_DIR/before" >/dev/null ||
		{ fail "the active superblock write has no preflush"; return 1; }
	# And the array went clean again afterwards.
	sed -n "${n},\$p" "$T_DIR/log" | grep -E ' sb [0-9]+ 18446744073709551615 ' >/dev/null ||
		{ fail "no clean superblock after the write"; return 1; }
}

# A member failed by a write error is on the survivor's superblock before the write completes.
failure_first() {
	set -- $DISKS
	zero "$3" || return 1
	lw lw0 "$1" "$3" || return 1
	dm_linear bad "$2" || return 1
	mk rraid0 "level=1 assume-clean" /dev/mapper/lw0 /dev/mapper/bad || return 1
	sleep 1
	dm_to_error bad || return 1
	dd if=/dev/urandom of=/dev/rraid0 bs=4k count=1 seek=100 oflag=direct 2>/dev/null || { fail "write"; return 1; }
	# The write has completed to its caller: mark that moment in the log.
	dmsetup message lw0 0 mark write-completed || { fail "mark"; return 1; }
	expect_attr rraid0 degraded 1 || return 1
	rm_array rraid0 || return 1
	dmsetup remove lw0
	$LW "$3" 8 >"$T_DIR/log" || { fail "logwrites $3"; return 1; }
	sed -n '1,/mark write-completed/p' "$T_DIR/log" >"$T_DIR/before"
	tail -8 "$T_DIR/before"
	grep -E '^[0-9]+ 8 [0-9]+ [A-Z]*U[A-Z]* sb [0-9]+ [0-9]+ 0000 fffe' "$T_DIR/before" ||
		{ fail "the failed member is not recorded faulty before the write completed"; return 1; }
}

if [ "${RRAID_FULL:-0}" = 1 ]; then
	t_run order-active-before-data active_first
	t_run order-failure-before-completion failure_first
fi
t_summary
