#!/bin/sh
# VM tests, md's v1.x superblocks: what rraid writes mdadm and md read (`mdadm --examine`,
# `mdadm --assemble`, md's check), what md writes rraid assembles, events and clean/dirty as
# md's, stale members left out, and bad metadata refused with nothing written.
# vm-run: --disks 5 --disk-size 64M
. "${RRAID_LIB:-/rraid/lib.sh}"

UUID=0a1b2c3d:4e5f6071:8293a4b5:c6d7e8f9
# Arrays here get md's default superblock unless a line says otherwise.
RRAID_META=1.2

# md_mk MD LEVEL VERSION "OPTIONS" MEMBERS...: `mdadm --create`, waited for (initial resync
# included).
md_mk() {
	local md lvl v o
	md=$1 lvl=$2 v=$3 o=$4
	shift 4
	md_mods
	mdadm --create "$md" --run --level="$lvl" --metadata="$v" --raid-devices=$# \
		--bitmap=none $o "$@" </dev/null || { fail "mdadm --create $md level $lvl $v"; return 1; }
	md_idle
}

# examine_ok DEV...: mdadm reads each device's superblock and finds its checksum correct.
examine_ok() {
	local d
	for d in "$@"; do
		mdadm --examine "$d" >"$T_DIR/exam" 2>&1 || { cat "$T_DIR/exam"; fail "mdadm --examine $d failed"; return 1; }
		grep -q 'Checksum : .* - correct' "$T_DIR/exam" || { cat "$T_DIR/exam"; fail "$d: checksum not correct"; return 1; }
	done
}

# expect_sb DEV FIELD VALUE: `mdadm --examine DEV` shows FIELD as VALUE.
expect_sb() {
	local v
	v=$(sbv "$1" "$2")
	[ "$v" = "$3" ] || { mdadm --examine "$1"; fail "$1: mdadm says $2 '$v', expected '$3'"; return 1; }
}

# Superblocks rraid writes are md's: mdadm --examine reads them, with the values rraid holds,
# and data offsets and sizes are mdadm's own choice for members of the same size.
examine() {
	lvl=$1 v=$2 n=$3
	members=$(first "$n" $DISKS)
	spec="level=$lvl metadata=$v uuid=$UUID name=meta-test assume-clean"
	[ "$lvl" = 5 ] && spec="$spec chunk=64K"
	mk rraid0 "$spec" $members || return 1
	examine_ok $members || return 1
	size=$(dev_bytes /dev/rraid0)
	i=0
	for d in $members; do
		expect_sb "$d" "Array UUID" "$UUID" || return 1
		expect_sb "$d" "Raid Level" "raid$lvl" || return 1
		expect_sb "$d" "Raid Devices" "$n" || return 1
		expect_sb "$d" "Version" "$v" || return 1
		expect_sb "$d" "Name" "meta-test" || return 1
		mdadm --examine "$d" | grep -q "Device Role : Active device $i" ||
			{ mdadm --examine "$d"; fail "$d: not active device $i"; return 1; }
		i=$((i + 1))
	done
	ev=$(sbv /dev/vdb Events)
	off=$(sbv /dev/vdb "Data Offset")
	used=$(sbv /dev/vdb "Avail Dev Size")
	note "rraid: data offset $off, used dev size $used, events $ev, array $size bytes"
	rm_array rraid0 || return 1
	# mdadm's choice over members of the same size.
	md_mk /dev/md0 "$lvl" "$v" "--assume-clean $([ "$lvl" = 5 ] && echo --chunk=64)" $members || return 1
	mdoff=$(sbv /dev/vdb "Data Offset")
	mdused=$(sbv /dev/vdb "Avail Dev Size")
	mdsize=$(dev_bytes /dev/md0)
	md_stop /dev/md0 || return 1
	note "mdadm: data offset $mdoff, used dev size $mdused, array $mdsize bytes"
	[ "$off" = "$mdoff" ] || { fail "data offset $off, mdadm chose $mdoff"; return 1; }
	[ "$used" = "$mdused" ] || { fail "used dev size $used, mdadm chose $mdused"; return 1; }
	[ "$size" = "$mdsize" ] || { fail "array $size bytes, mdadm's $mdsize"; return 1; }
}

# The same on a large member: a sparse 20 GiB loop device (mdadm's offset grows with size).
examine_large() {
	lvl=$1
	mkdir -p /tmp/big
	for i in 0 1 2; do
		truncate -s 20G /tmp/big/d$i || { fail "truncate"; return 1; }
		losetup "/dev/loop$i" "/tmp/big/d$i" || { fail "losetup loop$i"; return 1; }
	done
	members="/dev/loop0 /dev/loop1 /dev/loop2"
	[ "$lvl" = 1 ] && members="/dev/loop0 /dev/loop1"
	mk rraid0 "level=$lvl assume-clean" $members || return 1
	examine_ok $members || return 1
	off=$(sbv /dev/loop0 "Data Offset")
	used=$(sbv /dev/loop0 "Avail Dev Size")
	bb=$(mdadm --examine /dev/loop0 | sed -n 's/.*Bad Block Log : \(.*\)/\1/p')
	rm_array rraid0 || return 1
	md_mk /dev/md0 "$lvl" 1.2 --assume-clean $members || return 1
	mdoff=$(sbv /dev/loop0 "Data Offset")
	mdused=$(sbv /dev/loop0 "Avail Dev Size")
	mdbb=$(mdadm --examine /dev/loop0 | sed -n 's/.*Bad Block Log : \(.*\)/\1/p')
	md_stop /dev/md0 || return 1
	for i in 0 1 2; do losetup -d "/dev/loop$i"; done
	rm -rf /tmp/big
	note "20 GiB raid$lvl: rraid offset $off used $used ($bb); mdadm $mdoff $mdused ($mdbb)"
	[ "$off" = "$mdoff" ] && [ "$used" = "$mdused" ] && [ "$bb" = "$mdbb" ] ||
		{ fail "20 GiB members: rraid offset $off used $used bblog '$bb', mdadm $mdoff $mdused '$mdbb'"; return 1; }
}

# rraid creates (with its initial resync) and writes; md assembles it, reads the same bytes,
# its check finds 0; md stops; rraid assembles it again and reads it.
to_md() {
	lvl=$1 v=$2 n=$3
	members=$(first "$n" $DISKS)
	spec="level=$lvl metadata=$v"
	[ "$lvl" = 5 ] && spec="$spec chunk=64K"
	mk rraid0 "$spec" $members || return 1
	sync_wait rraid0 || return 1
	fio_fill /dev/rraid0 --io_size=8M || return 1
	size=$(dev_bytes /dev/rraid0)
	want=$(sha_head /dev/rraid0 "$size")
	rm_array rraid0 || return 1
	examine_ok $members || return 1
	mdadm --examine /dev/vdb | grep -q 'State : clean' || { mdadm --examine /dev/vdb; fail "not clean after remove"; return 1; }
	md_asm $members || return 1
	[ "$(dev_bytes /dev/md0)" = "$size" ] || { fail "md0 is $(dev_bytes /dev/md0) bytes, rraid0 was $size"; return 1; }
	[ "$(sha_head /dev/md0 "$size")" = "$want" ] || { fail "md reads what rraid wrote differently"; return 1; }
	fio_check /dev/md0 --io_size=8M || return 1
	md_check0 || return 1
	md_stop /dev/md0 || return 1
	asm rraid0 $members || return 1
	[ "$(sha_head /dev/rraid0 "$size")" = "$want" ] || { fail "rraid reads differently after md"; return 1; }
	expect_attr rraid0 sync_action idle || return 1
}

# md creates and writes; rraid assembles, reads the same bytes, writes more, removes; md
# assembles again and reads all of it.
from_md() {
	lvl=$1 v=$2 n=$3
	members=$(first "$n" $DISKS)
	md_mk /dev/md0 "$lvl" "$v" "$([ "$lvl" = 5 ] && echo --chunk=64)" $members || return 1
	fio_fill /dev/md0 --io_size=4M || return 1
	size=$(dev_bytes /dev/md0)
	want=$(sha_head /dev/md0 "$size")
	md_stop /dev/md0 || return 1
	# Given in another order: roles come from the superblocks.
	asm rraid0 $(echo $members | tr ' ' '\n' | sort -r) || return 1
	[ "$(dev_bytes /dev/rraid0)" = "$size" ] || { fail "rraid0 is $(dev_bytes /dev/rraid0) bytes, md0 was $size"; return 1; }
	[ "$(sha_head /dev/rraid0 "$size")" = "$want" ] || { fail "rraid reads what md wrote differently"; return 1; }
	fio_check /dev/rraid0 --io_size=4M || return 1
	fio_fill /dev/rraid0 --io_size=4M --randseed=7 --offset=$((size / 2)) || return 1
	want2=$(sha_head /dev/rraid0 "$size")
	rm_array rraid0 || return 1
	md_asm $members || return 1
	[ "$(sha_head /dev/md0 "$size")" = "$want2" ] || { fail "md reads what rraid wrote differently"; return 1; }
	md_check0 || return 1
}

# md's array made dirty (resync point 0) and stopped: rraid assembles it and resyncs.
md_dirty() {
	members=$(first 3 $DISKS)
	md_mk /dev/md0 5 1.2 --chunk=64 $members || return 1
	fio_fill /dev/md0 --io_size=4M || return 1
	echo frozen >/sys/block/md0/md/sync_action
	echo 0 >/sys/block/md0/md/resync_start
	md_stop /dev/md0 || return 1
	sbv /dev/vdb State | grep -qx active || { mdadm --examine /dev/vdb; fail "md left its array clean"; return 1; }
	asm rraid0 $members || return 1
	dmesg | grep -q 'rraid0: resync of' || { fail "no resync started on assembly"; return 1; }
	sync_wait rraid0 || return 1
	run_action rraid0 check || return 1
	expect_attr rraid0 mismatch_cnt 0 || return 1
	fio_check /dev/rraid0 --io_size=4M
}

# md stopped mid-rebuild (recovery_offset on the new member): rraid goes on from there.
md_mid_rebuild() {
	set -- $(first 3 $DISKS)
	md_mk /dev/md0 1 1.2 "" "$1" "$2" || return 1
	fio_fill /dev/md0 --io_size=4M || return 1
	mdadm /dev/md0 --fail "$2" --remove "$2" || { fail "mdadm fail/remove"; return 1; }
	mdadm --zero-superblock "$3" 2>/dev/null
	echo 2000 >/proc/sys/dev/raid/speed_limit_max
	echo 1000 >/proc/sys/dev/raid/speed_limit_min
	mdadm /dev/md0 --add "$3" || { fail "mdadm --add"; return 1; }
	sleep 6
	mdadm --stop /dev/md0 || { fail "mdadm --stop"; return 1; }
	echo 200000 >/proc/sys/dev/raid/speed_limit_max
	ro=$(sbv "$3" "Recovery Offset")
	note "md stopped its rebuild at recovery offset $ro sectors"
	[ -n "$ro" ] && [ "$ro" -gt 0 ] || { mdadm --examine "$3"; fail "md left no recovery offset"; return 1; }
	asm rraid0 "$1" "$3" || return 1
	dmesg | grep -E "rraid0: recovery of .* started at [1-9]" ||
		{ dmesg | grep rraid0; fail "the recovery did not resume from md's offset"; return 1; }
	sync_wait rraid0 || return 1
	expect_attr rraid0 degraded 0 || return 1
	run_action rraid0 check || return 1
	expect_attr rraid0 mismatch_cnt 0 || return 1
	fio_check /dev/rraid0 --io_size=4M
}

# A degraded md RAID 5: rraid assembles it degraded and reads every block.
md_degraded() {
	set -- $(first 3 $DISKS)
	md_mk /dev/md0 5 1.2 --chunk=64 "$1" "$2" missing || return 1
	fio_fill /dev/md0 --io_size=4M || return 1
	md_stop /dev/md0 || return 1
	asm rraid0 "$1" "$2" || return 1
	expect_attr rraid0 degraded 1 || return 1
	fio_check /dev/rraid0 --io_size=4M
}

# assemble_bad WHY DEVICES...: assemble refused with EINVAL, one rraid: line, no array, and
# not a byte of the devices changed.
assemble_bad() {
	why=$1
	shift
	for d in "$@"; do dd if="$d" bs=1M count=4 2>/dev/null | sha256sum; done >"$T_DIR/before"
	expect_err EINVAL "$RRAID_SYS/assemble" "rraid0 $*" || return 1
	dmesg | grep -q "rraid: .*$why" || { dmesg | tail -3; fail "dmesg does not say '$why'"; return 1; }
	[ ! -e /sys/block/rraid0 ] || { fail "rraid0 exists after a refused assemble"; return 1; }
	for d in "$@"; do dd if="$d" bs=1M count=4 2>/dev/null | sha256sum; done >"$T_DIR/after"
	cmp -s "$T_DIR/before" "$T_DIR/after" || { fail "a refused assemble changed the devices"; return 1; }
}

# sb_poke DEV BYTE VALUE [FIX]: sets byte BYTE of DEV's 1.2 superblock; FIX: recompute the
# checksum (md's: the 32-bit little-endian sum of 256 + 2 x max_dev bytes, carry folded).
sb_poke() {
	printf "$(printf '\\%03o' "$3")" | dd of="$1" bs=1 seek=$((4096 + $2)) conv=notrunc 2>/dev/null
	[ -n "${4:-}" ] || return 0
	maxdev=$(dd if="$1" bs=1 skip=$((4096 + 220)) count=4 2>/dev/null | od -An -tu4 | tr -d ' ')
	len=$((256 + 2 * maxdev))
	sum=$(dd if="$1" bs=1 skip=4096 count=$len 2>/dev/null | od -An -v -tu4 -w4 |
		awk 'NR != 55 { s += $1 } END { printf "%.0f", s }')
	c=$(( (sum & 0xffffffff) + (sum >> 32) ))
	for k in 0 1 2 3; do
		printf "$(printf '\\%03o' $(( (c >> (8 * k)) & 255 )))"
	done | dd of="$1" bs=1 seek=$((4096 + 216)) conv=notrunc 2>/dev/null
}

bad_meta() {
	set -- $(first 4 $DISKS)
	mk rraid0 "level=1 assume-clean" "$1" "$2" || return 1
	rm_array rraid0 || return 1
	mk rraid1 "level=1 assume-clean" "$3" "$4" || return 1
	rm_array rraid1 || return 1
	examine_ok "$1" || return 1
	# A member of another array.
	assemble_bad "different arrays" "$1" "$3" || return 1
	# The same disk twice: a copy of its metadata on another disk.
	dd if="$2" of="$3" bs=1M count=4 conv=notrunc 2>/dev/null
	assemble_bad "same device number" "$1" "$2" "$3" || return 1
	mk rraid1 "level=1 assume-clean" "$3" "$4" || return 1
	rm_array rraid1 || return 1
	# An unknown feature bit (bit 13 of feature_map, byte 9), with a right checksum.
	cp /dev/null "$T_DIR/x"
	dd if="$2" of="$T_DIR/sb2" bs=4096 skip=1 count=1 2>/dev/null
	sb_poke "$2" 9 32 fix
	mdadm --examine "$2" | grep -q 'Checksum : .* - correct' || { mdadm --examine "$2"; fail "sb_poke broke the checksum"; return 1; }
	assemble_bad "unknown feature" "$1" "$2" || return 1
	# A known feature rraid lacks: md's journal (bit 9).
	sb_poke "$2" 9 2 fix
	assemble_bad "feature not supported: journal" "$1" "$2" || return 1
	# The bitmap bit (bit 0) with no bitmap where it points: both devices, so the freshest
	# has it.
	dd if="$1" of="$T_DIR/sb1" bs=4096 skip=1 count=1 2>/dev/null
	sb_poke "$2" 9 0 fix
	sb_poke "$2" 8 1 fix
	sb_poke "$1" 8 1 fix
	assemble_bad "bitmap superblock is invalid" "$1" "$2" || return 1
	dd if="$T_DIR/sb1" of="$1" bs=4096 seek=1 count=1 conv=notrunc 2>/dev/null
	dd if="$T_DIR/sb2" of="$2" bs=4096 seek=1 count=1 conv=notrunc 2>/dev/null
	# A corrupted checksum: its low byte flipped (setting it to a fixed value leaves it right
	# when it already held that value).
	b=$(dd if="$2" bs=1 skip=$((4096 + 216)) count=1 2>/dev/null | od -An -tu1 | tr -d ' ')
	sb_poke "$2" 216 $((b ^ 255))
	assemble_bad "checksum" "$1" "$2" || return 1
	dd if="$T_DIR/sb2" of="$2" bs=4096 seek=1 count=1 conv=notrunc 2>/dev/null
	# A truncated member: a linear device shorter than its recorded data size.
	dm_linear short "$2" $(( $(dev_bytes "$2") / 512 / 2 )) || return 1
	assemble_bad "exceeds the device" "$1" /dev/mapper/short || return 1
	dmsetup remove short
	# 0.90 metadata.
	mdadm --zero-superblock "$3" 2>/dev/null
	modprobe raid1
	mdadm --create /dev/md0 --run --level=1 --metadata=0.90 --raid-devices=2 --assume-clean "$3" "$4" </dev/null ||
		{ fail "mdadm --create 0.90"; return 1; }
	md_stop /dev/md0 || return 1
	assemble_bad "0.90" "$3" "$4" || return 1
	# Created over them, rraid wipes the 0.90 superblocks, as mdadm's create does: left in the
	# new array's data, mdadm would still find the old array there.
	# (mdadm --examine exits 0 when it finds none: its output tells.)
	has_090() { mdadm --examine --metadata=0.90 "$1" 2>&1 | grep -q 'Version : 0\.90'; }
	has_090 "$3" || { mdadm --examine --metadata=0.90 "$3"; fail "mdadm finds no 0.90 superblock it made"; return 1; }
	mk rraid1 "level=1 assume-clean" "$3" "$4" || return 1
	rm_array rraid1 || return 1
	for d in "$3" "$4"; do
		if has_090 "$d"; then
			mdadm --examine --metadata=0.90 "$d"
			fail "a 0.90 superblock is left on $d"
			return 1
		fi
	done
	examine_ok "$3" "$4" || return 1
	# Still assembles whole.
	asm rraid0 "$1" "$2" || return 1
}

# A member failed, the array written, removed: assembled with the stale device listed, it is
# left out and never read; added back as a spare it is rebuilt whole.
stale_member() {
	set -- $(first 2 $DISKS)
	mk rraid0 "level=1 assume-clean" "$1" "$2" || return 1
	echo faulty >"/sys/block/rraid0/rraid/dev-$(kname "$2")/state" || { fail "fail $2"; return 1; }
	fio_fill /dev/rraid0 --io_size=4M || return 1
	size=$(dev_bytes /dev/rraid0)
	want=$(sha_head /dev/rraid0 "$size")
	rm_array rraid0 || return 1
	note "events: $1 $(sbv "$1" Events), $2 $(sbv "$2" Events)"
	asm rraid0 "$2" "$1" || return 1
	dmesg | grep -q "kicking non-fresh $(kname "$2")" || { dmesg | grep rraid0; fail "stale $2 not kicked"; return 1; }
	expect_attr rraid0 degraded 1 || return 1
	r0=$(reads_done "$2")
	[ "$(sha_head /dev/rraid0 "$size")" = "$want" ] || { fail "the array reads wrong"; return 1; }
	[ "$(reads_done "$2")" = "$r0" ] || { fail "the stale device was read"; return 1; }
	echo "$2" >/sys/block/rraid0/rraid/new_dev || { fail "new_dev $2"; return 1; }
	sync_wait rraid0 || return 1
	dmesg | grep -q 'rraid0: recovery of .* started at 0 KiB' || { dmesg | grep rraid0; fail "not rebuilt whole"; return 1; }
	expect_attr rraid0 degraded 0 || return 1
	run_action rraid0 check || return 1
	expect_attr rraid0 mismatch_cnt 0 || return 1
	rm_array rraid0 || return 1
	asm rraid0 "$1" "$2" || return 1
	expect_attr rraid0 degraded 0
}

# A replacement stopped half built (`remove` mid-build) is recorded as md's (replacement role,
# recovery offset); assembly resumes it there, and it takes its slot.
replacement_resume() {
	set -- $(first 3 $DISKS)
	mk rraid0 "level=1 assume-clean" "$1" "$2" || return 1
	fio_fill /dev/rraid0 --io_size=4M || return 1
	echo "$3" >/sys/block/rraid0/rraid/new_dev || { fail "new_dev $3"; return 1; }
	echo 2000 >/sys/block/rraid0/rraid/sync_speed_max
	echo want_replacement >"/sys/block/rraid0/rraid/dev-$(kname "$2")/state" || { fail "want_replacement"; return 1; }
	sleep 5
	rm_array rraid0 || return 1
	mdadm --examine "$3" | grep -q 'Device Role : Replacement device 1' || { mdadm --examine "$3"; fail "$3 not recorded as the replacement"; return 1; }
	ro=$(sbv "$3" "Recovery Offset")
	[ -n "$ro" ] && [ "$ro" -gt 0 ] || { mdadm --examine "$3"; fail "no recovery offset on the replacement"; return 1; }
	asm rraid0 "$3" "$2" "$1" || return 1
	[ "$(member_state rraid0 "$(kname "$3")")" = "spare,replacement" ] || { fail "$3 is '$(member_state rraid0 "$(kname "$3")")' after assembly"; return 1; }
	dmesg | grep -q "rraid0: recovery of .* started at $((ro / 2)) KiB" || { dmesg | grep rraid0; fail "the replacement did not resume at $((ro / 2)) KiB"; return 1; }
	echo 200000 >/sys/block/rraid0/rraid/sync_speed_max
	sync_wait rraid0 || return 1
	[ "$(member_state rraid0 "$(kname "$3")")" = in_sync ] || { fail "the replacement did not take its slot"; return 1; }
	[ "$(member_state rraid0 "$(kname "$2")")" = faulty ] || { fail "the replaced member is not faulty"; return 1; }
	run_action rraid0 check || return 1
	expect_attr rraid0 mismatch_cnt 0 || return 1
	fio_check /dev/rraid0 --io_size=4M
}

# A spare added while the array keeps going clean and active (safe_mode_delay 10 ms, a write
# every 25 ms, so superblocks are written about 80 times a second) gets its superblock: a
# superblock write between the spare's record and its joining the array must not drop the record.
spare_sb_race() {
	set -- $(first 3 $DISKS)
	mk rraid0 "level=1 assume-clean" "$1" "$2" || return 1
	echo 0.010 >/sys/block/rraid0/rraid/safe_mode_delay || { fail "safe_mode_delay"; return 1; }
	fio --name=w --filename=/dev/rraid0 --ioengine=psync --direct=1 --rw=randwrite --bs=4k \
		--rate_iops=40 --time_based --runtime=120 >/dev/null 2>&1 &
	fpid=$!
	k=0 lost=0
	while [ $k -lt 20 ]; do
		dd if=/dev/zero of="$3" bs=4096 seek=1 count=1 oflag=direct conv=notrunc 2>/dev/null
		echo "$3" >/sys/block/rraid0/rraid/new_dev || { kill $fpid; fail "new_dev $3"; return 1; }
		sleep 0.3
		m=$(dd if="$3" bs=4096 skip=1 count=1 iflag=direct 2>/dev/null | od -An -tx4 -N4 | tr -d ' ')
		[ "$m" = a92b4efc ] || lost=$((lost + 1))
		echo remove >"/sys/block/rraid0/rraid/dev-$(kname "$3")/state" ||
			{ kill $fpid; fail "remove spare $3"; return 1; }
		k=$((k + 1))
	done
	kill $fpid
	wait $fpid
	[ $lost = 0 ] || { fail "$lost of 20 spares got no superblock"; return 1; }
}

# Clean and active as md's: active (and recorded so) while writes come, clean again after
# safe_mode_delay, events +1 then back.
clean_active() {
	set -- $(first 2 $DISKS)
	mk rraid0 "level=1 assume-clean" "$1" "$2" || return 1
	expect_attr rraid0 array_state clean || return 1
	expect_attr rraid0 safe_mode_delay 0.200 || return 1
	expect_attr rraid0 metadata_version 1.2 || return 1
	# A TCG guest on a busy host can hold fio off for over a second, at its start or mid-run, and
	# the array then rightly goes clean (CI saw both). So the write phase runs with 3 s of
	# safe mode, waits for the array to go active rather than sleeping a fixed time, and the
	# clean phase waits for clean rather than sleeping.
	echo 3 >/sys/block/rraid0/rraid/safe_mode_delay || { fail "safe_mode_delay 3"; return 1; }
	ev0=$(sbv "$1" Events)
	fio --name=w --filename=/dev/rraid0 --ioengine=libaio --direct=1 --rw=randwrite --bs=4k \
		--iodepth=4 --time_based --runtime=120 >/dev/null 2>&1 &
	fpid=$!
	wait_attr rraid0 array_state active 300
	# array_state goes active as the superblock write is queued; give that write time to land.
	sleep 0.5
	st=$(attr rraid0 array_state)
	sbst=$(sbv "$1" State)
	ev1=$(sbv "$1" Events)
	kill $fpid 2>/dev/null
	wait $fpid
	wait_attr rraid0 array_state clean 150
	sleep 0.5
	st2=$(attr rraid0 array_state)
	sbst2=$(sbv "$1" State)
	ev2=$(sbv "$1" Events)
	note "events $ev0 -> $ev1 (writing: $st, superblock $sbst) -> $ev2 ($st2, $sbst2)"
	[ "$st" = active ] && [ "$sbst" = active ] || { fail "while writing: array_state $st, superblock $sbst"; return 1; }
	[ "$st2" = clean ] && [ "$sbst2" = clean ] || { fail "after: array_state $st2, superblock $sbst2"; return 1; }
	[ "$ev1" = $((ev0 + 1)) ] && [ "$ev2" = "$ev0" ] || { fail "events $ev0 -> $ev1 -> $ev2, md's are N -> N+1 -> N"; return 1; }
	# A member failure is recorded: events move on, and the failed member is faulty to mdadm.
	echo faulty >"/sys/block/rraid0/rraid/dev-$(kname "$2")/state" || { fail "fail $2"; return 1; }
	sleep 0.5
	mdadm --examine "$1" | grep -q 'Array State : A\. ' || { mdadm --examine "$1"; fail "failure not recorded"; return 1; }
	[ "$(sbv "$1" Events)" -gt "$ev2" ] || { fail "events did not move on a failure"; return 1; }
}

# Incremental assembly: devices one at a time; the array starts with its last member (or
# with `run`, once enough have come). And mdadm, told to ignore the array in mdadm.conf, leaves
# it alone when its udev rule's command runs.
incremental() {
	set -- $(first 3 $DISKS)
	mk rraid7 "level=5 chunk=64K assume-clean" "$1" "$2" "$3" || return 1
	uuid=$(sbv "$1" "Array UUID")
	rm_array rraid7 || return 1
	printf 'DEVICE partitions\nARRAY <ignore> UUID=%s\n' "$uuid" >/tmp/mdadm-ignore.conf
	modprobe raid456
	for d in "$@"; do
		mdadm --incremental --export "$d" --offroot --config=/tmp/mdadm-ignore.conf </dev/null
		echo "mdadm --incremental $d: status $?"
	done
	[ -z "$(ls /sys/block | grep '^md')" ] || { cat /proc/mdstat; fail "mdadm claimed the array despite ARRAY <ignore>"; return 1; }
	[ "$(sysw "$RRAID_SYS/incremental" "$3")" = OK ] || { fail "incremental $3"; return 1; }
	[ "$(sysw "$RRAID_SYS/incremental" "$1")" = OK ] || { fail "incremental $1"; return 1; }
	[ ! -e /sys/block/rraid7 ] || { fail "rraid7 started with 2 of 3 members"; return 1; }
	[ "$(sysw "$RRAID_SYS/incremental" "$2")" = OK ] || { fail "incremental $2"; return 1; }
	wait_bdev /dev/rraid7 50 || { fail "rraid7 did not start with its last member"; return 1; }
	expect_attr rraid7 degraded 0 || return 1
	rm_array rraid7 || return 1
	# With run: two of three start it degraded.
	[ "$(sysw "$RRAID_SYS/incremental" "$1")" = OK ] || { fail "incremental $1"; return 1; }
	[ "$(sysw "$RRAID_SYS/incremental" "$2 run")" = OK ] || { fail "incremental $2 run"; return 1; }
	wait_bdev /dev/rraid7 50 || { fail "rraid7 did not start with run"; return 1; }
	expect_attr rraid7 degraded 1 || return 1
	# A running array's member again is refused.
	expect_err EBUSY "$RRAID_SYS/incremental" "$1"
}

# new_dev refused where only the superblock can tell: a device of exactly the member size has
# no room for a 1.0 superblock at its end. ENOSPC with one "rraid:" line and nothing left
# behind (bad_write's snapshot lists the member directories and holder links), twice: the
# second must not trip over what the first left. Then a device with room joins.
new_dev_no_room() {
	set -- $DISKS
	mk rraid0 "level=1 metadata=1.0 assume-clean" "$1" "$2" || return 1
	cs=$(cat /sys/block/rraid0/rraid/component_size)
	dm_linear tight "$3" $((cs * 2)) || return 1
	for i in 1 2; do
		expect_err ENOSPC /sys/block/rraid0/rraid/new_dev /dev/mapper/tight || return 1
	done
	[ "$(sysw /sys/block/rraid0/rraid/new_dev "$4")" = OK ] || { fail "new_dev $4 refused"; return 1; }
	[ "$(cat "/sys/block/rraid0/rraid/dev-$(kname "$4")/state")" = spare ] ||
		{ fail "$4 did not join as a spare"; return 1; }
	rm_array rraid0
}

# Every allocation rraid makes for new_dev fails in turn: the N-th with rraid on the stack, slab
# or page (the writing task's fail-nth), on an array with no spare yet, so that the spare list's
# own allocation is among them. A refusal is ENOMEM with one "rraid:" line, and nothing is left:
# no member directory, no holder link, and the device is not held (the next round opens it
# again). A failure rraid rides out (a mempool's reserve, a holder link it goes without, as md
# does) lets the device join; the sweep goes on over a new array. It ends at the first write
# that makes fewer allocations than N.
new_dev_faults() {
	set -- $(fi_range)
	[ -n "$2" ] || { fail "no rraid text symbols in /proc/kallsyms"; return 1; }
	end=$(printf '%x' $((0x$2 + 65536)))
	fi_setup failslab "$1" "$end" -1 || return 1
	fi_setup fail_page_alloc "$1" "$end" -1 || return 1
	# No random failures: only the writing task's N-th.
	fi_off
	set -- $DISKS
	nd=/sys/block/rraid0/rraid/new_dev
	mk rraid0 "level=1 assume-clean" "$1" "$2" || return 1
	n=1 refused=0 ridden=0 r=
	while [ $n -le 400 ]; do
		snapshot >"$T_DIR/snap.before"
		dmesg_mark "new_dev, allocation $n fails"
		r=$(printf '%s\n' "$3" | FAIL_NTH=$n "$SYSFS_WRITE" "$nd")
		case "$r" in
		"OK missed") break ;;
		"OK injected")
			ridden=$((ridden + 1))
			[ "$(cat "/sys/block/rraid0/rraid/dev-$(kname "$3")/state")" = spare ] ||
				{ fail "allocation $n failed, new_dev said OK, but $3 is no spare"; return 1; }
			rm_array rraid0 || return 1
			mk rraid0 "level=1 assume-clean" "$1" "$2" || return 1
			;;
		"ENOMEM injected")
			refused=$((refused + 1))
			lines=$(rraid_lines)
			snapshot >"$T_DIR/snap.after"
			[ "$lines" -eq 1 ] ||
				{ dmesg | grep '^rraid:'; fail "allocation $n failed: $lines 'rraid:' lines, expected 1"; return 1; }
			cmp -s "$T_DIR/snap.before" "$T_DIR/snap.after" || {
				diff "$T_DIR/snap.before" "$T_DIR/snap.after"
				fail "allocation $n failed: new_dev was refused but left state behind"
				return 1
			}
			;;
		*) dmesg | grep '^rraid:'; fail "allocation $n failed: new_dev gave '$r'"; return 1 ;;
		esac
		n=$((n + 1))
	done
	[ "$r" = "OK missed" ] || { fail "new_dev still allocating after $n allocations"; return 1; }
	note "new_dev makes $((n - 1)) allocations: $refused failures refused (ENOMEM), $ridden ridden out"
	[ $refused -ge 3 ] || { fail "only $refused refusals: the faults did not reach rraid"; return 1; }
	[ "$(cat "/sys/block/rraid0/rraid/dev-$(kname "$3")/state")" = spare ] ||
		{ fail "$3 did not join at the end"; return 1; }
	rm_array rraid0
}

# Create lines with bad metadata options are refused, nothing written.
bad_create_meta() {
	set -- $(first 2 $DISKS)
	rraid_load || return 1
	expect_create_err EINVAL "rraid0 level=1 metadata=0.90 $1 $2" || return 1
	expect_create_err EINVAL "rraid0 level=1 metadata=2.0 $1 $2" || return 1
	expect_create_err EINVAL "rraid0 level=1 metadata=1.0 data_offset=1M $1 $2" || return 1
	expect_create_err EINVAL "rraid0 level=1 metadata=none data_offset=1M $1 $2" || return 1
	expect_create_err EINVAL "rraid0 level=1 uuid=1234 $1 $2" || return 1
	expect_create_err EINVAL "rraid0 level=1 data_offset=100G $1 $2" || return 1
	expect_create_err EINVAL "rraid0 level=1 name=0123456789012345678901234567890123 $1 $2"
}

t_run meta-examine-raid1-1.2 examine 1 1.2 2
t_run meta-examine-raid5-1.2 examine 5 1.2 4
t_run meta-examine-raid1-1.0 examine 1 1.0 2
t_run meta-examine-raid5-large examine_large 5
t_run meta-to-md-raid1-1.2 to_md 1 1.2 2
t_run meta-to-md-raid5-1.0 to_md 5 1.0 3
t_run meta-from-md-raid1-1.0 from_md 1 1.0 2
t_run meta-md-dirty-resync md_dirty
t_run meta-md-mid-rebuild md_mid_rebuild
t_run meta-md-degraded md_degraded
t_run meta-bad-metadata bad_meta
t_run meta-stale-member stale_member
t_run meta-replacement-resume replacement_resume
t_run meta-spare-sb-race spare_sb_race
t_run meta-clean-active clean_active
t_run meta-incremental incremental
t_run meta-bad-create bad_create_meta
t_run meta-new-dev-no-room new_dev_no_room
t_run meta-new-dev-faults new_dev_faults
# make test assembles md's RAID 5 in meta-md-dirty-resync (and checks it); the round trip through
# md's RAID 5 takes over a minute here.
if [ "${RRAID_FULL:-0}" = 1 ]; then
	t_run meta-from-md-raid5-1.2 from_md 5 1.2 3
	t_run meta-examine-raid1-large examine_large 1
	t_run meta-examine-raid5-1.1 examine 5 1.1 3
	t_run meta-to-md-raid6-1.2 to_md 6 1.2 4
	t_run meta-to-md-raid10-1.2 to_md 10 1.2 4
	t_run meta-from-md-raid10-1.2 from_md 10 1.2 4
fi
t_summary
