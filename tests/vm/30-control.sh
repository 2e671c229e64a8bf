#!/bin/sh
# VM tests, control interface and lifecycle: every bad input of issue 2 (exact errno, one
# "rraid:" line in dmesg, nothing created), accepted spellings, remove and rmmod refused while
# an array exists / is open / is mounted, create/remove and insmod/rmmod cycles, module
# references, holders/slaves links, queue limits and features following the members
# (virtio, brd, null_blk with FUA), flushes reaching every member, write-zeroes and discard
# mapping.
# vm-run: --disks 4 --disk-size 32M
. "${RRAID_LIB:-/rraid/lib.sh}"

C=/sys/kernel/rraid/create
R=/sys/kernel/rraid/remove

# --- bad input ------------------------------------------------------------------------------

bad_level() {
	rraid_load || return 1
	set -- $DISKS
	expect_create_err EINVAL "rraid0 level=7 $1 $2" || return 1
	expect_create_err EINVAL "rraid0 level=foo $1 $2" || return 1
	expect_create_err EINVAL "rraid0 level= $1 $2" || return 1
	expect_create_err EINVAL "rraid0 level=raid $1 $2" || return 1
	expect_create_err EINVAL "rraid0 $1 $2" || return 1
}

bad_chunk() {
	rraid_load || return 1
	set -- $DISKS
	for c in "" K 64X abc -64K 64KK 0K 0x40K 1.5M; do
		expect_create_err EINVAL "rraid0 level=0 chunk=$c $1 $2" || return 1
	done
}

bad_chunk_pow2() {
	rraid_load || return 1
	set -- $DISKS
	for c in 48K 100K 3M 12K; do
		expect_create_err EINVAL "rraid0 level=0 chunk=$c $1 $2" || return 1
	done
}

bad_chunk_range() {
	rraid_load || return 1
	set -- $DISKS
	for c in 1K 2K 32M 64M 1024M; do
		expect_create_err EINVAL "rraid0 level=0 chunk=$c $1 $2" || return 1
	done
}

bad_too_few() {
	rraid_load || return 1
	set -- $DISKS
	expect_create_err EINVAL "rraid0 level=0 $1" || return 1
	expect_create_err EINVAL "rraid0 level=1 $1" || return 1
	expect_create_err EINVAL "rraid0 level=0" || return 1
	expect_create_err EINVAL "rraid0 level=1 chunk=64K" || return 1
}

# The same member twice, also through a second path to the same device: EBUSY, the member is
# in use (by the array being created). The claim itself would succeed for the same holder, so
# the module must compare device numbers.
bad_duplicate() {
	rraid_load || return 1
	set -- $DISKS
	expect_create_err EBUSY "rraid0 level=0 $1 $1" || return 1
	expect_create_err EBUSY "rraid0 level=1 $1 $2 $1" || return 1
	ln -sf "$1" /tmp/alias-of-member
	expect_create_err EBUSY "rraid0 level=1 $1 /tmp/alias-of-member" || return 1
	mknod /tmp/node-of-member b $(stat -L -c '%t %T' "$1" | (read ma mi; echo $((0x$ma)) $((0x$mi))))
	expect_create_err EBUSY "rraid0 level=1 /tmp/node-of-member $1" || return 1
}

bad_missing_member() {
	rraid_load || return 1
	set -- $DISKS
	expect_create_err ENODEV "rraid0 level=0 $1 /dev/vdz" || return 1
	expect_create_err ENODEV "rraid0 level=1 /dev/does-not-exist $1" || return 1
}

bad_member_in_array() {
	set -- $DISKS
	mk rraid0 "level=0 chunk=64K" "$1" "$2" || return 1
	expect_create_err EBUSY "rraid1 level=1 $2 $3" || return 1
	expect_create_err EBUSY "rraid1 level=0 $3 $4 $1" || return 1
	fio_verify /dev/rraid0 --size=8M || return 1
	rm_array rraid0
}

bad_member_in_md() {
	set -- $DISKS
	rraid_load || return 1
	md_build /dev/md0 1 0 "$3" "$4" || return 1
	expect_create_err EBUSY "rraid0 level=1 $1 $3" || return 1
	md_stop /dev/md0
}

bad_member_mounted() {
	set -- $DISKS
	rraid_load || return 1
	mkfs.ext4 -F -q "$4" || { fail "mkfs.ext4 $4"; return 1; }
	mount "$4" "$T_MNT" || { fail "mount $4"; return 1; }
	expect_create_err EBUSY "rraid0 level=0 $1 $4" || return 1
	umount "$T_MNT"
}

bad_name_taken() {
	set -- $DISKS
	mk rraid0 "level=0" "$1" "$2" || return 1
	expect_create_err EEXIST "rraid0 level=1 $3 $4" || return 1
	rm_array rraid0
}

bad_name() {
	rraid_load || return 1
	set -- $DISKS
	for name in rraid rraid1234 md0 rraidx rraid0a RRAID0 rraid-1 ../rraid0 rraid/0 vdb rraid0: +rraid0; do
		expect_create_err EINVAL "$name level=0 $1 $2" || return 1
	done
}

bad_overlong() {
	rraid_load || return 1
	set -- $DISKS
	long=$(head -c 3000 /dev/zero | tr '\0' 7)
	expect_create_err EINVAL "rraid$long level=0 $1 $2" || return 1
	expect_create_err EINVAL "rraid0 level=$long $1 $2" || return 1
	# 5000 bytes: sysfs hands the first 4096 to the store.
	{ printf 'rraid'; head -c 4995 /dev/zero | tr '\0' 1; } |
		bad_write EINVAL "$C" "5000 bytes" || return 1
	# Remove: a malformed name may be refused as malformed or as no such array.
	expect_err "EINVAL|ENODEV" "$R" "rraid$long" || return 1
}

bad_garbage() {
	rraid_load || return 1
	set -- $DISKS
	printf '\377\376\375\374\n' | bad_write EINVAL "$C" "bytes ff fe fd fc" || return 1
	printf "rraid0 level=0\001 $1 $2\n" | bad_write EINVAL "$C" "a control byte" || return 1
	printf "rraid0\000 level=0 $1 $2\n" | bad_write EINVAL "$C" "a NUL byte" || return 1
	printf "rraid0\377 level=0 $1 $2\n" | bad_write EINVAL "$C" "a 0xff in the name" || return 1
	printf '\n' | bad_write EINVAL "$C" "an empty line" || return 1
	printf '   \n' | bad_write EINVAL "$C" "blanks" || return 1
	head -c 3000 /dev/urandom | tr -d '\n' | bad_write EINVAL "$C" "3000 random bytes" || return 1
	printf '\377\376\n' | bad_write "EINVAL|ENODEV" "$R" "bytes ff fe to remove" || return 1
}

bad_option() {
	rraid_load || return 1
	set -- $DISKS
	expect_create_err EINVAL "rraid0 level=0 color=blue $1 $2" || return 1
	expect_create_err EINVAL "rraid0 level=1 assume-clean=yes $1 $2" || return 1
}

bad_remove_missing() {
	rraid_load || return 1
	expect_err ENODEV "$R" rraid7 || return 1
	set -- $DISKS
	mk rraid0 "level=0" "$1" "$2" || return 1
	expect_err ENODEV "$R" rraid1 || return 1
	rm_array rraid0 || return 1
	expect_err ENODEV "$R" rraid0
}

bad_member_state() {
	set -- $DISKS
	mk rraid0 "level=1 assume-clean" "$1" "$2" || return 1
	expect_err EINVAL "/sys/block/rraid0/rraid/dev-$(kname "$2")/state" bogus || return 1
	rm_array rraid0
}

# --- accepted input and lifecycle -------------------------------------------------------------

good_spellings() {
	set -- $DISKS
	for spec in "rraid1 level=raid1:raid1:0" "rraid999 level=1:raid1:0" "rraid0 level=0 chunk=4K:raid0:4096" \
		"rraid12 level=raid0 chunk=16M:raid0:16777216" "rraid5 level=0 chunk=1M:raid0:1048576" \
		"rraid6 level=1 chunk=64K:raid1:0" "rraid7 level=1 assume-clean:raid1:0"; do
		line=${spec%%:*}
		rest=${spec#*:}
		name=${line%% *}
		mk "$name" "${line#* }" "$1" "$2" || return 1
		expect_attr "$name" level "${rest%%:*}" || return 1
		expect_attr "$name" chunk_size "${rest#*:}" || return 1
		rm_array "$name" || return 1
	done
}

two_arrays() {
	set -- $DISKS
	mk rraid0 "level=0 chunk=4K" "$1" "$2" || return 1
	mk rraid1 "level=1" "$3" "$4" || return 1
	fio_verify /dev/rraid0 --size=8M || return 1
	fio_verify /dev/rraid1 --size=8M || return 1
	rm_array rraid1 || return 1
	rm_array rraid0
}

remove_busy_open() {
	set -- $DISKS
	mk rraid0 "level=0" "$1" "$2" || return 1
	sleep 30 </dev/rraid0 &
	holder=$!
	sleep 0.5
	expect_err EBUSY "$R" rraid0 || { kill $holder; return 1; }
	kill $holder
	wait $holder 2>/dev/null
	rm_array rraid0
}

remove_busy_mounted() {
	set -- $DISKS
	mk rraid0 "level=1 assume-clean" "$1" "$2" || return 1
	mkfs.ext4 -F -q /dev/rraid0 || { fail "mkfs.ext4"; return 1; }
	mount /dev/rraid0 "$T_MNT" || { fail "mount"; return 1; }
	expect_err EBUSY "$R" rraid0 || return 1
	umount "$T_MNT" || { fail "umount"; return 1; }
	rm_array rraid0
}

rmmod_busy() {
	set -- $DISKS
	mk rraid0 "level=0" "$1" "$2" || return 1
	rmmod rraid && { fail "rmmod succeeded while rraid0 exists"; return 1; }
	rraid_loaded || { fail "module gone while rraid0 exists"; return 1; }
	[ -b /dev/rraid0 ] || { fail "rraid0 gone after refused rmmod"; return 1; }
	mkfs.ext4 -F -q /dev/rraid0 || { fail "mkfs.ext4"; return 1; }
	mount /dev/rraid0 "$T_MNT" || { fail "mount"; return 1; }
	rmmod rraid && { fail "rmmod succeeded while rraid0 is mounted"; return 1; }
	echo hello >"$T_MNT/f" && sync || { fail "write after refused rmmod"; return 1; }
	umount "$T_MNT" || { fail "umount"; return 1; }
	rm_array rraid0 || return 1
	rmmod rraid || { fail "rmmod refused with no array left"; return 1; }
	[ ! -d /sys/kernel/rraid ] || { fail "/sys/kernel/rraid left behind after rmmod"; return 1; }
}

module_refs() {
	set -- $DISKS
	rraid_load || return 1
	base=$(cat /sys/module/rraid/refcnt)
	mk rraid0 "level=0" "$1" "$2" || return 1
	mk rraid1 "level=1" "$3" "$4" || return 1
	[ "$(cat /sys/module/rraid/refcnt)" -eq $((base + 2)) ] ||
		{ fail "refcnt $(cat /sys/module/rraid/refcnt) with 2 arrays, expected $((base + 2))"; return 1; }
	rm_array rraid0 || return 1
	rm_array rraid1 || return 1
	[ "$(cat /sys/module/rraid/refcnt)" -eq "$base" ] ||
		{ fail "refcnt $(cat /sys/module/rraid/refcnt) after removing both, expected $base"; return 1; }
}

holders_links() {
	set -- $DISKS
	mk rraid0 "level=0" "$1" "$2" "$3" || return 1
	s=$(ls /sys/block/rraid0/slaves | tr '\n' ' ')
	[ "$s" = "$(kname "$1") $(kname "$2") $(kname "$3") " ] || { fail "rraid0/slaves: '$s'"; return 1; }
	for d in "$1" "$2" "$3"; do
		[ "$(ls /sys/block/$(kname "$d")/holders)" = rraid0 ] ||
			{ fail "$(kname "$d")/holders: '$(ls /sys/block/$(kname "$d")/holders)'"; return 1; }
	done
	rm_array rraid0 || return 1
	for d in "$1" "$2" "$3"; do
		[ -z "$(ls /sys/block/$(kname "$d")/holders)" ] ||
			{ fail "$(kname "$d")/holders not empty after remove"; return 1; }
	done
}

create_remove_cycles() {
	set -- $DISKS
	rraid_load || return 1
	base=$(cat /sys/module/rraid/refcnt)
	head -c 1048576 /dev/urandom >/tmp/blob
	want=$(sha256sum </tmp/blob | cut -d' ' -f1)
	i=0
	while [ $i -lt 20 ]; do
		if [ $((i % 2)) -eq 0 ]; then lv="level=0 chunk=4K"; else lv="level=1"; fi
		mk rraid$i "$lv" "$1" "$2" "$3" || return 1
		dd if=/tmp/blob of=/dev/rraid$i bs=64K seek=$i oflag=direct 2>/dev/null || { fail "dd write cycle $i"; return 1; }
		got=$(dd if=/dev/rraid$i bs=64K skip=$i count=16 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)
		[ "$got" = "$want" ] || { fail "read-back differs in cycle $i"; return 1; }
		rm_array rraid$i || return 1
		i=$((i + 1))
	done
	[ "$(cat /sys/module/rraid/refcnt)" -eq "$base" ] ||
		{ fail "module refcnt $(cat /sys/module/rraid/refcnt) after cycles, expected $base"; return 1; }
}

insmod_rmmod_cycles() {
	set -- $DISKS
	i=0
	while [ $i -lt 10 ]; do
		mk rraid0 "level=$((i % 2))" "$1" "$2" || return 1
		dd if=/dev/rraid0 of=/dev/null bs=1M count=4 iflag=direct 2>/dev/null || { fail "read cycle $i"; return 1; }
		rm_array rraid0 || return 1
		rmmod rraid || { fail "rmmod in cycle $i"; return 1; }
		[ ! -d /sys/module/rraid ] && [ ! -d /sys/kernel/rraid ] ||
			{ fail "module left state behind after rmmod in cycle $i"; return 1; }
		i=$((i + 1))
	done
}

# rmmod_opener_race: insmod, create, an opener loop on the array, remove, rmmod: 50 rounds. An
# opener that loses the race with remove makes the disk's final put, whose drop puts the
# module's last reference; that drop runs on the module's queue, which rmmod drains, so no
# module code runs after rmmod freed it (under DEBUG=1, KASAN and the page allocator's checks
# would see it). rmmod may be refused for a moment while the opener still holds the disk.
rmmod_opener_race() {
	set -- $DISKS
	i=0
	while [ $i -lt 50 ]; do
		mk rraid0 "level=1 assume-clean" "$1" "$2" || return 1
		( while [ ! -e /tmp/or-stop ]; do head -c 512 /dev/rraid0 >/dev/null 2>&1; done ) &
		op=$!
		sleep 0.05
		j=0
		while [ "$(rraid_remove rraid0)" != OK ]; do
			j=$((j + 1))
			[ $j -lt 200 ] || { touch /tmp/or-stop; wait $op; fail "remove stays refused in round $i"; return 1; }
		done
		touch /tmp/or-stop
		wait $op
		rm -f /tmp/or-stop
		j=0
		until rmmod rraid 2>/dev/null; do
			j=$((j + 1))
			[ $j -lt 50 ] || { fail "rmmod refused in round $i"; return 1; }
			sleep 0.1
		done
		i=$((i + 1))
	done
}

# --- queue limits and features ---------------------------------------------------------------

# same_queue ARRAY MEMBER ATTR...: queue attributes equal between the array and a member.
same_queue() {
	local sq_a sq_m f va vm
	sq_a=$1 sq_m=$(kname "$2")
	shift 2
	for f in "$@"; do
		va=$(cat "/sys/block/$sq_a/queue/$f") vm=$(cat "/sys/block/$sq_m/queue/$f")
		echo "$f: $sq_a='$va' $sq_m='$vm'"
		[ "$va" = "$vm" ] || { fail "queue/$f of $sq_a is '$va', member $sq_m has '$vm'"; return 1; }
	done
}

# no_larger ARRAY MEMBER ATTR: the array's value does not exceed the member's.
no_larger() {
	local va vm
	va=$(cat "/sys/block/$1/queue/$3") vm=$(cat "/sys/block/$(kname "$2")/queue/$3")
	[ "$va" -le "$vm" ] || { fail "queue/$3 of $1 is $va, above member's $vm"; return 1; }
}

queue_virtio() {
	set -- $DISKS
	for lv in "level=0 chunk=64K" "level=1"; do
		mk rraid0 "$lv" "$1" "$2" || return 1
		same_queue rraid0 "$1" write_cache fua logical_block_size physical_block_size || return 1
		no_larger rraid0 "$1" max_hw_sectors_kb || return 1
		grep -q '\[none\]' /sys/block/rraid0/queue/scheduler ||
			{ fail "scheduler '$(cat /sys/block/rraid0/queue/scheduler)', expected none"; return 1; }
		rm_array rraid0 || return 1
	done
}

queue_brd() {
	modprobe brd rd_nr=2 rd_size=16384 || { fail "modprobe brd"; return 1; }
	[ "$(cat /sys/block/ram0/queue/write_cache)" = "write through" ] ||
		{ fail "precondition: brd write_cache '$(cat /sys/block/ram0/queue/write_cache)'"; return 1; }
	for lv in "level=0 chunk=64K" "level=1"; do
		mk rraid0 "$lv" /dev/ram0 /dev/ram1 || return 1
		same_queue rraid0 /dev/ram0 write_cache fua logical_block_size || return 1
		rm_array rraid0 || return 1
	done
}

queue_nullb_fua() {
	modprobe null_blk nr_devices=2 memory_backed=1 cache_size=8 gb=1 fua=1 ||
		{ fail "modprobe null_blk"; return 1; }
	[ "$(cat /sys/block/nullb0/queue/write_cache)" = "write back" ] &&
		[ "$(cat /sys/block/nullb0/queue/fua)" = 1 ] ||
		{ fail "precondition: nullb0 without write cache + FUA"; return 1; }
	for lv in "level=0 chunk=64K" "level=1"; do
		mk rraid0 "$lv" /dev/nullb0 /dev/nullb1 || return 1
		same_queue rraid0 /dev/nullb0 write_cache fua || return 1
		fio --name=fua --filename=/dev/rraid0 --ioengine=libaio --direct=1 --rw=randwrite \
			--bs=4k --iodepth=8 --io_size=2M --fsync=16 --sync=1 --verify=crc32c \
			--do_verify=1 >"$T_DIR/fua.out" 2>&1 || { cat "$T_DIR/fua.out"; fail "O_SYNC writes"; return 1; }
		rm_array rraid0 || return 1
	done
}

# A flush of the array (fsync on the block device) reaches every member with a write cache,
# whichever member the data went to.
flush_members() {
	set -- $DISKS
	for lv in "level=0 chunk=64K" "level=1"; do
		mk rraid0 "$lv" "$1" "$2" "$3" || return 1
		[ "$(cat /sys/block/rraid0/queue/write_cache)" = "write back" ] ||
			{ fail "rraid0 over write-back members is not write back"; return 1; }
		before="$(flushes_done "$1") $(flushes_done "$2") $(flushes_done "$3")"
		dd if=/dev/urandom of=/dev/rraid0 bs=4k count=1 conv=fsync 2>/dev/null ||
			{ fail "dd conv=fsync"; return 1; }
		after="$(flushes_done "$1") $(flushes_done "$2") $(flushes_done "$3")"
		echo "$lv: member flushes $before -> $after"
		set -- $before $after $DISKS
		[ "$4" -gt "$1" ] && [ "$5" -gt "$2" ] && [ "$6" -gt "$3" ] ||
			{ fail "$lv: fsync did not flush every member: flushes $before -> $after"; return 1; }
		set -- $DISKS
		rm_array rraid0 || return 1
	done
}

# Logical block size is the largest of the members' (null_blk with 4K blocks + a virtio disk).
queue_block_size() {
	set -- $DISKS
	modprobe null_blk nr_devices=1 memory_backed=1 bs=4096 gb=1 || { fail "modprobe null_blk"; return 1; }
	mk rraid0 "level=1" "$1" /dev/nullb0 || return 1
	[ "$(cat /sys/block/rraid0/queue/logical_block_size)" -eq 4096 ] ||
		{ fail "logical_block_size $(cat /sys/block/rraid0/queue/logical_block_size), expected 4096"; return 1; }
	fio_verify /dev/rraid0 --size=8M || return 1
	rm_array rraid0
}

# Discard through the array reaches exactly the mapped ranges of the members: brd frees
# discarded pages (they read back as zeroes) and leaves the rest alone.
discard_brd() {
	lv=$1
	modprobe brd rd_nr=3 rd_size=8192 || { fail "modprobe brd"; return 1; }
	mk rraid0 "$lv" /dev/ram0 /dev/ram1 /dev/ram2 || return 1
	size=$(dev_bytes /dev/rraid0)
	dd if=/dev/urandom of=/tmp/pat bs=1M count=$((size / 1048576)) 2>/dev/null
	dd if=/tmp/pat of=/dev/rraid0 bs=1M oflag=direct 2>/dev/null ||
		{ fail "fill"; return 1; }
	[ "$(cat /sys/block/rraid0/queue/discard_max_bytes)" -gt 0 ] ||
		{ fail "no discard on rraid0 over brd (discard_max_bytes 0)"; return 1; }
	# Discard [1 MiB + 192 KiB, 1 MiB + 192 KiB + 3 MiB + 64 KiB): crosses many chunks.
	off=$((1048576 + 196608)) len=$((3 * 1048576 + 65536))
	blkdiscard -o $off -l $len /dev/rraid0 || { fail "blkdiscard"; return 1; }
	dd if=/dev/rraid0 of=/tmp/after bs=1M iflag=direct 2>/dev/null
	# Expected: the pattern with the discarded range zeroed.
	cp /tmp/pat /tmp/want
	dd if=/dev/zero of=/tmp/want bs=4096 seek=$((off / 4096)) count=$((len / 4096)) conv=notrunc 2>/dev/null
	cmp /tmp/want /tmp/after || { fail "contents after discard differ from expected"; return 1; }
	rm_array rraid0
}

# BLKZEROOUT through the array zeroes exactly the range, whether the array maps write-zeroes
# onto the members (virtio disks offer it) or has it switched off (the block layer then writes
# zero pages).
zeroout() {
	lv=$1
	set -- $DISKS
	mk rraid0 "$lv" "$1" "$2" "$3" || return 1
	note "$lv: write_zeroes_max_bytes $(cat /sys/block/rraid0/queue/write_zeroes_max_bytes)" \
		"(members: $(cat /sys/block/$(kname "$1")/queue/write_zeroes_max_bytes))"
	dd if=/dev/urandom of=/tmp/pat bs=1M count=8 2>/dev/null
	dd if=/tmp/pat of=/dev/rraid0 bs=1M oflag=direct 2>/dev/null
	# [1 MiB + 196 KiB, +3 MiB + 68 KiB): starts and ends off chunk boundaries.
	off=$((1048576 + 200704)) len=$((3 * 1048576 + 69632))
	/rraid/blkzeroout /dev/rraid0 $off $len || { fail "BLKZEROOUT"; return 1; }
	dd if=/dev/rraid0 of=/tmp/after bs=1M count=8 iflag=direct 2>/dev/null
	cp /tmp/pat /tmp/want
	dd if=/dev/zero of=/tmp/want bs=4096 seek=$((off / 4096)) count=$((len / 4096)) conv=notrunc 2>/dev/null
	cmp /tmp/want /tmp/after || { fail "contents after BLKZEROOUT differ from expected"; return 1; }
	rm_array rraid0
}

t_run badinput-level-unknown bad_level
t_run badinput-chunk-malformed bad_chunk
t_run badinput-chunk-not-power-of-two bad_chunk_pow2
t_run badinput-chunk-out-of-range bad_chunk_range
t_run badinput-too-few-members bad_too_few
t_run badinput-member-twice bad_duplicate
t_run badinput-member-missing bad_missing_member
t_run badinput-member-in-rraid-array bad_member_in_array
t_run badinput-member-in-md-array bad_member_in_md
t_run badinput-member-mounted bad_member_mounted
t_run badinput-name-taken bad_name_taken
t_run badinput-name-malformed bad_name
t_run badinput-overlong bad_overlong
t_run badinput-garbage-bytes bad_garbage
t_run badinput-unknown-option bad_option
t_run badinput-remove-missing bad_remove_missing
t_run badinput-member-state-word bad_member_state
t_run create-accepted-spellings good_spellings
t_run create-two-arrays two_arrays
t_run remove-busy-while-open remove_busy_open
t_run remove-busy-while-mounted remove_busy_mounted
t_run rmmod-busy-while-array rmmod_busy
t_run module-ref-per-array module_refs
t_run holders-slaves-links holders_links
t_run create-remove-cycles create_remove_cycles
t_run insmod-rmmod-cycles insmod_rmmod_cycles
# For the debug kernel (make test-full, DEBUG=1) and RRAID_FULL=1.
if [ "${T_SCALE:-1}" -gt 1 ] || [ "${RRAID_FULL:-0}" = 1 ]; then
	t_run rmmod-after-opener-race rmmod_opener_race
fi
t_run queue-follows-virtio queue_virtio
t_run queue-follows-brd queue_brd
t_run queue-follows-nullb-fua queue_nullb_fua
t_run queue-block-size-max queue_block_size
t_run flush-reaches-members flush_members
t_run write-zeroes-raid0 zeroout "level=0 chunk=64K"
t_run write-zeroes-raid1 zeroout "level=1"
t_run discard-raid0-brd discard_brd "level=0 chunk=64K"
t_run discard-raid1-brd discard_brd "level=1"
t_summary
