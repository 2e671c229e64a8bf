#!/bin/sh
# VM tests, RAID0: 2, 3 and 4 members x chunks 4K, 64K and 512K, each with its status
# attributes and queue limits, fio verify over the whole device, an ext4 round trip and
# mkfs.ext4's stride / stripe width; then unequal members, the default chunk, failing a RAID0
# member (refused), and a member returning errors (requests on it fail); then md's zones over
# members of three sizes: md reads what rraid wrote and rraid what md wrote, for both of md's
# layouts, fio verify, a discard across zone boundaries, bad layouts.
# vm-run: --disks 4 --disk-size 64M
. "${RRAID_LIB:-/rraid/lib.sh}"

chunk_bytes() {
	case $1 in
	*K) echo $((${1%K} * 1024)) ;;
	*M) echo $((${1%M} * 1048576)) ;;
	esac
}

# r0_status N CHUNK: attributes, size, slots and queue limits of a fresh array.
r0_status() {
	n=$1 c=$2
	members=$(first "$n" $DISKS)
	mk rraid0 "level=0 chunk=$c" $members || return 1
	cb=$(chunk_bytes "$c")
	expect_attr rraid0 level raid0 || return 1
	expect_attr rraid0 chunk_size "$cb" || return 1
	expect_attr rraid0 raid_disks "$n" || return 1
	expect_attr rraid0 array_state clean || return 1
	expect_attr rraid0 degraded 0 || return 1
	expect_attr rraid0 layout -1 || return 1
	msz=$(dev_bytes "$(nth 1 $DISKS)")
	comp=$((msz / cb * cb / 1024))
	expect_attr rraid0 component_size "$comp" || return 1
	size=$(dev_bytes /dev/rraid0)
	[ "$size" -eq $((n * comp * 1024)) ] ||
		{ fail "/dev/rraid0 is $size bytes, expected $n x $comp KiB"; return 1; }
	expect_slots -f rraid0 $members || return 1
	q=/sys/block/rraid0/queue
	[ "$(cat $q/minimum_io_size)" -eq "$cb" ] ||
		{ fail "minimum_io_size $(cat $q/minimum_io_size), expected chunk $cb"; return 1; }
	[ "$(cat $q/optimal_io_size)" -eq $((n * cb)) ] ||
		{ fail "optimal_io_size $(cat $q/optimal_io_size), expected $n x $cb"; return 1; }
	rm_array rraid0
}

r0_fio() {
	mk rraid0 "level=0 chunk=$2" $(first "$1" $DISKS) || return 1
	fio_verify /dev/rraid0 || return 1
	rm_array rraid0
}

r0_ext4() {
	mk rraid0 "level=0 chunk=$2" $(first "$1" $DISKS) || return 1
	ext4_check /dev/rraid0 || return 1
	rm_array rraid0
}

# r0_dumpe2fs N CHUNK: mkfs.ext4 (4K blocks) picks stride = chunk/4K and
# stripe width = stride x N from io_min/io_opt unaided. mke2fs leaves the stride unset when it
# would be 1 block (io_min not above the block size), so for 4K chunks it may be absent.
r0_dumpe2fs() {
	n=$1 c=$2
	mk rraid0 "level=0 chunk=$c" $(first "$n" $DISKS) || return 1
	mkfs.ext4 -F -q -b 4096 /dev/rraid0 || { fail "mkfs.ext4"; return 1; }
	dumpe2fs -h /dev/rraid0 >"$T_DIR/sb" 2>&1 || { fail "dumpe2fs -h"; return 1; }
	cat "$T_DIR/sb" | grep -i raid
	stride=$(sed -n 's/^RAID stride: *//p' "$T_DIR/sb")
	width=$(sed -n 's/^RAID stripe width: *//p' "$T_DIR/sb")
	want=$(($(chunk_bytes "$c") / 4096))
	if [ "$want" -eq 1 ] && [ -z "$stride" ]; then
		:
	elif [ "$stride" != "$want" ]; then
		fail "RAID stride '$stride', expected $want"
		return 1
	fi
	[ "$width" = $((want * n)) ] || { fail "RAID stripe width '$width', expected $((want * n))"; return 1; }
	rm_array rraid0
}

# r0_unequal: md's zones: zone 0 stripes the three members up to the smallest (rounded down to
# the chunk), zone 1 the two larger ones over the rest; component_size is the smallest's share.
r0_unequal() {
	set -- $DISKS
	dm_linear small "$3" 50000 || return 1
	mk rraid0 "level=0 chunk=64K" "$1" "$2" /dev/mapper/small || return 1
	big=$(($(blockdev --getsz "$1") / 128 * 128)) small=$((50000 / 128 * 128))
	expect_attr rraid0 component_size $((small / 2)) || return 1
	expect_attr rraid0 layout 1 || return 1
	size=$(dev_bytes /dev/rraid0)
	[ "$size" -eq $(((2 * big + small) * 512)) ] ||
		{ fail "/dev/rraid0 is $size bytes, expected 2 x $big + $small sectors"; return 1; }
	dmesg | grep -q "rraid0: 2 zones over members of unequal size, layout original (1)" ||
		{ fail "no zones line in dmesg"; return 1; }
	fio_verify /dev/rraid0 || return 1
	rm_array rraid0
}

r0_default_chunk() {
	mk rraid0 "level=raid0" $(first 2 $DISKS) || return 1
	expect_attr rraid0 chunk_size 524288 || return 1
	expect_attr rraid0 level raid0 || return 1
	rm_array rraid0
}

# r0_fail_member: RAID0 cannot lose a member: "faulty" is refused with EBUSY, nothing changes
# and the array keeps working.
r0_fail_member() {
	set -- $DISKS
	mk rraid0 "level=0 chunk=64K" "$1" "$2" || return 1
	k=$(kname "$2")
	expect_err EBUSY "/sys/block/rraid0/rraid/dev-$k/state" faulty || return 1
	st=$(member_state rraid0 "$k")
	has_word "$st" faulty && { fail "dev-$k/state became '$st'"; return 1; }
	expect_attr rraid0 degraded 0 || return 1
	fio_verify /dev/rraid0 --size=16M || return 1
	rm_array rraid0
}

# r0_member_error: a member that fails every I/O fails the requests mapped to it (and only
# those); the array can still be removed.
r0_member_error() {
	set -- $DISKS
	dm_linear bad "$2" || return 1
	mk rraid0 "level=0 chunk=64K" "$1" /dev/mapper/bad || return 1
	dm_to_error bad || return 1
	# Chunk 0 lies on the healthy member, chunk 1 on the erroring one.
	dd if=/dev/rraid0 of=/dev/null bs=64K count=1 iflag=direct 2>/dev/null ||
		{ fail "read of chunk 0 (healthy member) failed"; return 1; }
	dd if=/dev/rraid0 of=/dev/null bs=64K skip=1 count=1 iflag=direct 2>/dev/null &&
		{ fail "read of chunk 1 (erroring member) succeeded"; return 1; }
	dd if=/dev/zero of=/dev/rraid0 bs=64K seek=1 count=1 oflag=direct 2>/dev/null &&
		{ fail "write of chunk 1 (erroring member) succeeded"; return 1; }
	dd if=/dev/zero of=/dev/rraid0 bs=64K count=1 oflag=direct 2>/dev/null ||
		{ fail "write of chunk 0 (healthy member) failed"; return 1; }
	# A request spanning both members fails as a whole.
	dd if=/dev/rraid0 of=/dev/null bs=128K count=1 iflag=direct 2>/dev/null &&
		{ fail "read spanning both members succeeded"; return 1; }
	rm_array rraid0
}

# make test: each member count and each chunk once (n2 4K, n3 64K, n4 512K); RRAID_FULL=1: all
# nine pairs.
for n in 2 3 4; do
	for c in 4K 64K 512K; do
		case "${RRAID_FULL:-0}:$n$c" in
		1:* | *:24K | *:364K | *:4512K) ;;
		*) continue ;;
		esac
		t_run "raid0-n$n-c$c-status" r0_status $n $c
		t_run "raid0-n$n-c$c-fio" r0_fio $n $c
		t_run "raid0-n$n-c$c-ext4" r0_ext4 $n $c
		t_run "raid0-n$n-c$c-dumpe2fs" r0_dumpe2fs $n $c
	done
done
# --- md's zones -------------------------------------------------------------------------------
# Members of three sizes: dm-linear maps of 8230, 16400 and 32768 sectors over three brd disks
# (brd frees discarded pages, which then read back as zeroes). With chunk 16K (32 sectors) md
# rounds them to 257, 512 and 1024 chunks: zone 0 is 3 x 257 chunks over all three, zone 1
# 2 x 255 chunks over the two larger, zone 2 512 chunks on the largest. Zone 1 starts at array
# chunk 771, odd, so md's two layouts differ there (the original one starts its rows at the
# zone's second member).
Z_CK=16
Z_SECTORS=$(((771 + 510 + 512) * 32))
Z_END0=$((771 * 32 * 512))
Z_END1=$(((771 + 510) * 32 * 512))
ZM="/dev/mapper/z0 /dev/mapper/z1 /dev/mapper/z2"

z_members() {
	modprobe brd rd_nr=3 rd_size=16384 || { fail "modprobe brd"; return 1; }
	dm_linear z0 /dev/ram0 8230 && dm_linear z1 /dev/ram1 16400 && dm_linear z2 /dev/ram2
}

# z_md_layout N: md's raid0.default_layout, the layout md gives a multi-zone array without one.
z_md_layout() {
	modprobe raid0 || { fail "modprobe raid0"; return 1; }
	echo "$1" >/sys/module/raid0/parameters/default_layout ||
		{ fail "raid0.default_layout=$1"; return 1; }
}

# z_pattern FILE: the array's size of random bytes.
z_pattern() {
	dd if=/dev/urandom of="$1" bs=16K count=$((Z_SECTORS / 32)) 2>/dev/null || { fail "pattern"; return 1; }
}

# z_mk LAYOUT: rraid0 over the three members.
z_mk() {
	mk rraid0 "level=0 chunk=${Z_CK}K layout=$1" $ZM || return 1
	size=$(dev_bytes /dev/rraid0)
	[ "$size" -eq $((Z_SECTORS * 512)) ] ||
		{ fail "/dev/rraid0 is $size bytes, expected $Z_SECTORS sectors (sum of md's zones)"; return 1; }
}

# z_md LAYOUT_NUMBER LAYOUT_NAME: rraid writes, md (default_layout NUMBER) reads the same
# bytes; md writes, rraid reads them; same capacity.
z_md() {
	num=$1 lay=$2
	z_members || return 1
	z_mk "$lay" || return 1
	expect_attr rraid0 layout "$num" || return 1
	expect_attr rraid0 component_size $((257 * 16)) || return 1
	z_pattern "$T_DIR/a" || return 1
	dd if="$T_DIR/a" of=/dev/rraid0 bs=1M oflag=direct 2>/dev/null || { fail "write rraid0"; return 1; }
	rm_array rraid0 || return 1
	# md refuses a multi-zone RAID 0 without a layout: md sees zones here.
	z_md_layout 0 || return 1
	mdadm --build /dev/md0 --level=0 --chunk=$Z_CK --raid-devices=3 $ZM 2>/dev/null &&
		{ fail "md built a multi-zone raid0 with default_layout 0"; return 1; }
	mdadm --stop /dev/md0 >/dev/null 2>&1
	z_md_layout "$num" || return 1
	md_build /dev/md0 0 $Z_CK $ZM || return 1
	mdsize=$(dev_bytes /dev/md0)
	[ "$mdsize" -eq "$size" ] || { fail "md0 is $mdsize bytes, rraid0 was $size"; return 1; }
	cmp "$T_DIR/a" /dev/md0 || { fail "md0 reads back differently from what rraid0 wrote"; return 1; }
	z_pattern "$T_DIR/b" || return 1
	dd if="$T_DIR/b" of=/dev/md0 bs=1M oflag=direct 2>/dev/null || { fail "write md0"; return 1; }
	md_stop /dev/md0 || return 1
	z_md_layout 0 || return 1
	z_mk "$lay" || return 1
	cmp "$T_DIR/b" /dev/rraid0 || { fail "rraid0 reads back differently from what md0 wrote"; return 1; }
	rm_array rraid0 || return 1
	# The other layout places zone 1's first chunk elsewhere.
	if [ "$num" = 1 ]; then other=alternate; else other=original; fi
	z_mk $other || return 1
	dd if=/dev/rraid0 of="$T_DIR/c" bs=16K skip=771 count=1 iflag=direct 2>/dev/null
	dd if="$T_DIR/b" of="$T_DIR/d" bs=16K skip=771 count=1 2>/dev/null
	cmp -s "$T_DIR/c" "$T_DIR/d" && { fail "layout $other reads zone 1 as layout $lay does"; return 1; }
	rm_array rraid0
}

z_fio() {
	z_members || return 1
	z_mk "$1" || return 1
	fio_verify /dev/rraid0 || return 1
	rm_array rraid0
}

# z_discard LAYOUT: discards across the zone 0/1 and zone 1/2 boundaries, starting and ending
# inside chunks (4K-aligned, for brd), zero exactly those ranges and nothing else.
z_discard() {
	z_members || return 1
	z_mk "$1" || return 1
	[ "$(cat /sys/block/rraid0/queue/discard_max_bytes)" -gt 0 ] ||
		{ fail "no discard on rraid0 over dm-linear/brd"; return 1; }
	z_pattern "$T_DIR/a" || return 1
	dd if="$T_DIR/a" of=/dev/rraid0 bs=1M oflag=direct 2>/dev/null || { fail "fill"; return 1; }
	cp "$T_DIR/a" "$T_DIR/want"
	for r in "$((Z_END0 - 3 * 16384 - 4096)) $((5 * 16384 + 8192))" \
		"$((Z_END1 - 5 * 4096)) $((11 * 4096))"; do
		set -- $r
		blkdiscard -o "$1" -l "$2" /dev/rraid0 || { fail "blkdiscard -o $1 -l $2"; return 1; }
		dd if=/dev/zero of="$T_DIR/want" bs=4096 seek=$(($1 / 4096)) count=$(($2 / 4096)) \
			conv=notrunc 2>/dev/null
	done
	cmp "$T_DIR/want" /dev/rraid0 || { fail "contents after discard differ from expected"; return 1; }
	rm_array rraid0
}

# z_size: size= (md's component_size) cuts every member to it: one zone, whatever the layout.
z_size() {
	z_members || return 1
	mk rraid0 "level=0 chunk=${Z_CK}K layout=alternate size=4000K" $ZM || return 1
	expect_attr rraid0 component_size 4000 || return 1
	expect_attr rraid0 layout -1 || return 1
	size=$(dev_bytes /dev/rraid0)
	[ "$size" -eq $((3 * 4000 * 1024)) ] || { fail "/dev/rraid0 is $size bytes, expected 3 x 4000 KiB"; return 1; }
	dmesg | grep -q zones && { fail "create logged zones for one zone"; return 1; }
	rm_array rraid0
}

# z_bad_layout: layouts md has no name for, or for the wrong level, are refused.
z_bad_layout() {
	rraid_load || return 1
	set -- $DISKS
	for line in "level=0 layout=foo" "level=0 layout=0" "level=0 layout=3" "level=0 layout=-1" \
		"level=0 layout=dangerous" "level=0 layout=left-symmetric" "level=0 layout=" \
		"level=0 layout=Original" "level=0 layout=1 layout=2" "level=1 layout=original" \
		"level=5 layout=alternate assume-clean" "layout=original level=raid1"; do
		expect_create_err EINVAL "rraid0 $line chunk=64K $1 $2 $3" || return 1
	done
	# Accepted, and shown as md shows it: -1 with one zone.
	mk rraid0 "level=0 layout=alternate chunk=64K" "$1" "$2" || return 1
	expect_attr rraid0 layout -1 || return 1
	rm_array rraid0 || return 1
	mk rraid0 "layout=2 level=0 chunk=64K" "$1" "$2" || return 1
	rm_array rraid0
}

t_run raid0-unequal-members r0_unequal
t_run raid0-default-chunk r0_default_chunk
t_run raid0-fail-member-ebusy r0_fail_member
t_run raid0-member-error-fails-io r0_member_error
t_run raid0-zones-md-original z_md 1 original
t_run raid0-zones-md-alternate z_md 2 alternate
t_run raid0-zones-fio-original z_fio original
t_run raid0-zones-fio-alternate z_fio 2
t_run raid0-zones-discard-original z_discard 1
t_run raid0-zones-discard-alternate z_discard alternate
t_run raid0-zones-size-one-zone z_size
t_run raid0-zones-bad-layout z_bad_layout
t_summary
