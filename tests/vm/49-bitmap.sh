#!/bin/sh
# VM tests, md's write-intent bitmap: its format as mdadm reads it (`mdadm -X`, `-E`), md
# assembling rraid's bitmap arrays and the reverse, a crash that leaves bits set (only those
# chunks are resynced), and md's re-add (only the chunks written while the member was out are
# rebuilt, counted from the member's own I/O statistics).
# vm-run: --disks 5 --disk-size 64M
. "${RRAID_LIB:-/rraid/lib.sh}"

RRAID_META=1.2
# Bitmap chunk of these tests: 1 MiB (62 chunks on a 64 MiB member).
BMC=1024
MIB_SECT=2048

# expect_dirty N DEV...: `mdadm -X` counts N dirty bits on every DEV, within 15 s (the daemon
# clears a bit on its second pass after the chunk's last write).
expect_dirty() {
	local want d i got
	want=$1
	shift
	for d in "$@"; do
		i=0
		while got=$(bm_dirty "$d"); [ "$got" != "$want" ]; do
			[ $i -ge 150 ] && { mdadm -X "$d"; fail "$d: $got dirty bits, expected $want"; return 1; }
			sleep 0.1
			i=$((i + 1))
		done
	done
}

# bm_ready SPEC: rraid0 over $members, resynced (not assume-clean: check must find 0 over what
# earlier tests left), its daemon fast and every bit cleared.
bm_ready() {
	mk rraid0 "$1" $members || return 1
	sync_wait rraid0 || return 1
	bm_fast rraid0 || return 1
	expect_dirty 0 $members
}

# second_out: the member in slot 1 fails; $victim is its device, $k its name.
second_out() {
	victim=$(nth 2 $members)
	k=$(kname "$victim")
	fail_slot 1
}

# poke MIB...: one 4 KiB O_DIRECT write at each MiB offset of rraid0.
poke() {
	local m
	for m in "$@"; do
		dd if=/dev/urandom of=/dev/rraid0 bs=4k count=1 seek=$((m * 256)) oflag=direct conv=notrunc 2>/dev/null ||
			{ fail "write at $m MiB"; return 1; }
	done
}

# The format: mdadm -X reads each member's bitmap as rraid keeps it, placed where mdadm puts
# its own (mdadm --create over the same members, compared); bits set by writes and cleared by
# the daemon; md assembles the array with its bitmap, and rraid assembles md's.
format() {
	lvl=$1 v=$2 n=$3
	members=$(first "$n" $DISKS)
	spec="level=$lvl metadata=$v bitmap=internal bitmap_chunk=$BMC"
	[ "$lvl" = 5 ] && spec="$spec chunk=64K"
	mk rraid0 "$spec" $members || return 1
	sync_wait rraid0 || return 1
	expect_attr rraid0 bitmap/location "$([ "$v" = 1.0 ] && sbv /dev/vdb "Internal Bitmap" || echo +8)" || return 1
	expect_attr rraid0 bitmap/chunksize $((BMC * 1024)) || return 1
	expect_attr rraid0 bitmap/metadata internal || return 1
	bm_fast rraid0 || return 1
	# The resync ended the marks; the daemon clears them.
	expect_dirty 0 $members || return 1
	for d in $members; do
		[ "$(bmx "$d" Magic)" = 6d746962 ] || { mdadm -X "$d"; fail "$d: no bitmap magic"; return 1; }
		[ "$(bmx "$d" Events)" = "$(sbv "$d" Events)" ] ||
			{ mdadm -X "$d"; mdadm -E "$d"; fail "$d: bitmap events differ from the superblock's"; return 1; }
		[ "$(bmx "$d" Chunksize)" = 1 ] || { mdadm -X "$d"; fail "$d: chunksize not 1 MB"; return 1; }
	done
	poke 3 7 || return 1
	# Set before the writes went out; still set right after them.
	d1=$(first 1 $members)
	got=$(bm_dirty "$d1")
	[ "$got" -ge 1 ] || { mdadm -X "$d1"; fail "no bit set after writes"; return 1; }
	note "after 2 writes: $got dirty bits (lvl $lvl; RAID 5 rows can share a bit)"
	expect_dirty 0 $members || return 1
	mine_bits=$(bm_bits "$d1") mine_sync=$(bmx "$d1" "Sync Size")
	mine_loc=$(sbv "$d1" "Internal Bitmap")
	mine_off=$(sbv "$d1" "Data Offset")
	note "rraid: $mine_bits bits, sync size $mine_sync, bitmap at $mine_loc, data offset $mine_off"
	fio_fill /dev/rraid0 --size=8M --io_size=2M || return 1
	rm_array rraid0 || return 1
	# A clean stop leaves no dirty bit.
	expect_dirty 0 $members || return 1
	# md assembles it, bitmap and all; its check finds the copies equal.
	md_asm $members || return 1
	[ "$(cat /sys/block/md0/md/bitmap/location)" = "$(echo "$mine_loc" | sed 's/^[0-9]/+&/')" ] ||
		{ cat /sys/block/md0/md/bitmap/location; fail "md's bitmap location differs"; return 1; }
	fio_check /dev/md0 --size=8M --io_size=2M || return 1
	md_check0 || return 1
	md_stop /dev/md0 || return 1
	# md's clean stop leaves no dirty bit either.
	expect_dirty 0 $members || return 1
	asm rraid0 $members || return 1
	fio_check /dev/rraid0 --size=8M --io_size=2M || return 1
	rm_array rraid0 || return 1
	# mdadm's own placement over the same members.
	md_mods
	mdadm --create /dev/md0 --run --level="$lvl" --metadata="$v" --raid-devices="$n" \
		--bitmap=internal --bitmap-chunk=$BMC --assume-clean \
		$([ "$lvl" = 5 ] && echo --chunk=64) $members </dev/null || { fail "mdadm --create"; return 1; }
	md_stop /dev/md0 || return 1
	md_bits=$(bm_bits "$d1") md_sync=$(bmx "$d1" "Sync Size")
	md_loc=$(sbv "$d1" "Internal Bitmap") md_off=$(sbv "$d1" "Data Offset")
	note "mdadm: $md_bits bits, sync size $md_sync, bitmap at $md_loc, data offset $md_off"
	[ "$mine_bits/$mine_sync/$mine_loc/$mine_off" = "$md_bits/$md_sync/$md_loc/$md_off" ] ||
		{ fail "rraid's bitmap geometry differs from mdadm's"; return 1; }
	# md's array, with the bits mdadm set (assume-clean: cleared by the daemon in rraid).
	asm rraid0 $members || return 1
	bm_fast rraid0 || return 1
	expect_dirty 0 $members || return 1
	fio_fill /dev/rraid0 --size=8M --io_size=2M || return 1
	rm_array rraid0 || return 1
	# Kept current by rraid: md takes its array back with the bitmap clean and the data whole.
	expect_dirty 0 $members || return 1
	md_asm $members || return 1
	[ "$(cat /sys/block/md0/md/bitmap/location)" != none ] || { fail "md lost its bitmap"; return 1; }
	fio_check /dev/md0 --size=8M --io_size=2M || return 1
	md_stop /dev/md0
}

# A crash with writes done and bits set: the members' dm tables go to `error` under the
# array (nothing it writes from then on lands), the array is removed, the tables come back.
# Assembly finds the array dirty and resyncs only the two chunks whose bits are set, as the
# first member's reads show; the data reads back and check finds 0.
crash() {
	set -- $(first 2 $DISKS)
	dm_linear m0 "$1" || return 1
	dm_linear m1 "$2" || return 1
	members="/dev/mapper/m0 /dev/mapper/m1"
	mk rraid0 "level=1 bitmap=internal bitmap_chunk=$BMC assume-clean" $members || return 1
	# Never marked clean while it runs: the crash finds it active.
	echo 0 >/sys/block/rraid0/rraid/safe_mode_delay
	bm_fast rraid0 || return 1
	expect_dirty 0 $members || return 1
	echo 60 >/sys/block/rraid0/rraid/bitmap/time_base
	poke 5 9 || return 1
	expect_dirty 2 $members || return 1
	want=$(sha_head /dev/rraid0 $((16 << 20)))
	dm_to_error m0 || return 1
	dm_to_error m1 || return 1
	rraid_remove rraid0 >/dev/null
	[ ! -e /sys/block/rraid0 ] || { fail "rraid0 still there after remove"; return 1; }
	for m in m0 m1; do
		dmsetup load "$m" --table "0 $(blockdev --getsz "$([ $m = m0 ] && echo "$1" || echo "$2")") linear $([ $m = m0 ] && echo "$1" || echo "$2") 0" &&
			dmsetup resume "$m" || { fail "restoring $m"; return 1; }
	done
	[ "$(sbv /dev/mapper/m0 State)" = active ] || { mdadm -E /dev/mapper/m0; fail "the crash left the array clean"; return 1; }
	[ "$(bm_dirty /dev/mapper/m0)" = 2 ] || { mdadm -X /dev/mapper/m0; fail "the crash left $(bm_dirty /dev/mapper/m0) bits"; return 1; }
	r0=$(rsect /dev/mapper/m0)
	asm rraid0 $members || return 1
	sync_wait rraid0 || return 1
	read=$(($(rsect /dev/mapper/m0) - r0))
	note "resync after the crash read $read sectors of m0 (2 chunks: $((2 * MIB_SECT)); the member: $(blockdev --getsz "$1"))"
	dmesg | grep 'rraid0: resync: .* skipped, clean in the bitmap' || { fail "the resync skipped nothing"; return 1; }
	[ "$read" -ge $((2 * MIB_SECT)) ] && [ "$read" -le $((2 * MIB_SECT + 1024)) ] ||
		{ fail "the resync read $read sectors, not the 2 dirty chunks"; return 1; }
	[ "$(sha_head /dev/rraid0 $((16 << 20)))" = "$want" ] || { fail "data changed over the crash"; return 1; }
	run_action rraid0 check || return 1
	expect_attr rraid0 mismatch_cnt 0 || return 1
	rm_array rraid0 || return 1
	dmsetup remove m0 && dmsetup remove m1
}

# md's re-add: a member failed, a known set of chunks written while it was out, the member
# re-added: only those chunks are rebuilt, as its own write count shows; check finds 0; the
# data reads back. RAID 1 then does it again through `remove` and `new_dev`, as a member that
# comes back under another name.
readd() {
	lvl=$1 n=$2
	members=$(first "$n" $DISKS)
	spec="level=$lvl bitmap=internal bitmap_chunk=$BMC"
	case $lvl in
	5) spec="$spec chunk=64K" ;;
	10) spec="$spec chunk=64K layout=n2" ;;
	esac
	bm_ready "$spec" || return 1
	second_out || return 1
	# Three chunks of the victim's: far apart in the array, in distinct bitmap chunks of its
	# sync space (RAID 5: rows of 64K x (n-1); RAID 10: the array's own sectors).
	poke 1 20 40 || return 1
	sleep 3
	dirty=$(bm_dirty "$(nth 1 $members)")
	note "while degraded: $dirty dirty bits after 3 writes"
	[ "$dirty" -ge 3 ] || { fail "degraded writes left $dirty bits, expected 3 or more"; return 1; }
	size=$(dev_bytes /dev/rraid0)
	want=$(sha_head /dev/rraid0 "$size")
	# Sectors of the victim per bitmap chunk: all of it on RAID 1/5 (member space); on RAID
	# 10 n2 the chunk is array space, of which each member holds 2/n.
	per=$MIB_SECT
	[ "$lvl" = 10 ] && per=$((MIB_SECT * 2 / n))
	w0=$(wsect "$victim")
	[ "$(sysw "/sys/block/rraid0/rraid/dev-$k/state" re-add)" = OK ] || { fail "re-add refused"; return 1; }
	sync_wait rraid0 || return 1
	expect_attr rraid0 degraded 0 || return 1
	wrote=$(($(wsect "$victim") - w0))
	note "re-add rebuilt $wrote sectors of $victim ($dirty dirty chunks: $((dirty * per)) sectors + metadata)"
	[ "$wrote" -ge $((dirty * per)) ] && [ "$wrote" -le $((dirty * per + 1024)) ] ||
		{ fail "re-add wrote $wrote sectors, not the $dirty dirty chunks"; return 1; }
	[ "$(sha_head /dev/rraid0 "$size")" = "$want" ] || { fail "the array reads differently after re-add"; return 1; }
	run_action rraid0 check || return 1
	expect_attr rraid0 mismatch_cnt 0 || return 1
	if [ "$lvl" = 1 ]; then
		# Out, under "another name": failed, removed, written, then new_dev.
		fail_slot 1 || return 1
		[ "$(sysw "/sys/block/rraid0/rraid/dev-$k/state" remove)" = OK ] || { fail "remove $k"; return 1; }
		poke 30 || return 1
		w0=$(wsect "$victim")
		[ "$(sysw /sys/block/rraid0/rraid/new_dev "$victim")" = OK ] || { fail "new_dev $victim"; return 1; }
		dmesg | grep -q "rraid0: $k comes back to slot 1" || { fail "not taken back into its slot"; return 1; }
		sync_wait rraid0 || return 1
		expect_attr rraid0 degraded 0 || return 1
		wrote=$(($(wsect "$victim") - w0))
		note "new_dev rebuilt $wrote sectors (1 dirty chunk: $MIB_SECT)"
		[ "$wrote" -ge $MIB_SECT ] && [ "$wrote" -le $((MIB_SECT + 1024)) ] ||
			{ fail "new_dev of a returning member wrote $wrote sectors, not one chunk"; return 1; }
		run_action rraid0 check || return 1
		expect_attr rraid0 mismatch_cnt 0 || return 1
	fi
	fio_verify /dev/rraid0 --size=8M --io_size=2M || return 1
	rm_array rraid0 || return 1
	asm rraid0 $members || return 1
	expect_attr rraid0 degraded 0 || return 1
	rm_array rraid0
}

# Bitmap options refused at create: nothing is written.
bad_bitmap() {
	set -- $(first 2 $DISKS)
	rraid_load || return 1
	expect_create_err EINVAL "rraid0 level=1 bitmap=external $1 $2" || return 1
	expect_create_err EINVAL "rraid0 level=1 metadata=none bitmap=internal $1 $2" || return 1
	expect_create_err EINVAL "rraid0 level=0 bitmap=internal $1 $2" || return 1
	expect_create_err EINVAL "rraid0 level=1 bitmap_chunk=64K $1 $2" || return 1
	expect_create_err EINVAL "rraid0 level=1 bitmap=internal bitmap_chunk=3K $1 $2"
}

# A re-add's recovery stopped half way by `remove` is recorded with MD_FEATURE_RECOVERY_BITMAP
# (mdadm -E: "Recovery Offset"), and assembly resumes it as a bitmap recovery: the device's
# writes over both halves come to the dirty chunks, not the member.
readd_resume() {
	members=$(first 2 $DISKS)
	bm_ready "level=1 bitmap=internal bitmap_chunk=$BMC" || return 1
	second_out || return 1
	poke 1 10 20 30 40 50 || return 1
	dirty=$(bm_dirty "$(nth 1 $members)")
	w0=$(wsect "$victim")
	[ "$(sysw /sys/block/rraid0/rraid/sync_speed_max 1000)" = OK ] || { fail "sync_speed_max"; return 1; }
	[ "$(sysw "/sys/block/rraid0/rraid/dev-$k/state" re-add)" = OK ] || { fail "re-add refused"; return 1; }
	sleep 3
	[ "$(attr rraid0 sync_action)" = recover ] || { fail "no recovery 3 s after re-add"; return 1; }
	rm_array rraid0 || return 1
	mdadm -E "$victim" | grep -q "Recovery Offset" || { mdadm -E "$victim"; fail "no recovery offset recorded"; return 1; }
	asm rraid0 $members || return 1
	sync_wait rraid0 || return 1
	expect_attr rraid0 degraded 0 || return 1
	wrote=$(($(wsect "$victim") - w0))
	note "re-add over two assemblies rebuilt $wrote sectors ($dirty dirty chunks: $((dirty * MIB_SECT)))"
	[ "$wrote" -ge $((dirty * MIB_SECT)) ] && [ "$wrote" -le $((dirty * MIB_SECT + 2048)) ] ||
		{ fail "the resumed re-add wrote $wrote sectors, not the $dirty dirty chunks"; return 1; }
	run_action rraid0 check || return 1
	expect_attr rraid0 mismatch_cnt 0 || return 1
	rm_array rraid0
}

t_run bitmap-format-raid1 format 1 1.2 2
t_run bitmap-crash-raid1 crash
t_run bitmap-readd-raid1 readd 1 2
t_run bitmap-readd-raid5 readd 5 3
t_run bitmap-bad-create bad_bitmap
if [ "${RRAID_FULL:-0}" = 1 ]; then
	t_run bitmap-format-raid5-1.0 format 5 1.0 3
	t_run bitmap-format-raid10 format 10 1.2 4
	t_run bitmap-readd-raid10 readd 10 4
	t_run bitmap-readd-resume readd_resume
fi
t_summary
