#!/bin/sh
# VM tests, RAID0: 2, 3 and 4 members x chunks 4K, 64K and 512K, each with its status
# attributes and queue limits, fio verify over the whole device, an ext4 round trip and
# mkfs.ext4's stride / stripe width; then unequal members, the default chunk, failing a RAID0
# member (refused), and a member returning errors (requests on it fail).
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
	msz=$(dev_bytes "$(nth 1 $DISKS)")
	comp=$((msz / cb * cb / 1024))
	expect_attr rraid0 component_size "$comp" || return 1
	size=$(dev_bytes /dev/rraid0)
	[ "$size" -eq $((n * comp * 1024)) ] ||
		{ fail "/dev/rraid0 is $size bytes, expected $n x $comp KiB"; return 1; }
	i=0
	for d in $members; do
		k=$(kname "$d")
		expect_attr rraid0 "dev-$k/slot" "$i" || return 1
		st=$(member_state rraid0 "$k")
		has_word "$st" in_sync || { fail "dev-$k/state is '$st', expected in_sync"; return 1; }
		has_word "$st" faulty && { fail "dev-$k/state is '$st' on a fresh array"; return 1; }
		i=$((i + 1))
	done
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

# r0_unequal: the array uses the smallest member's size, rounded down to the chunk.
r0_unequal() {
	set -- $DISKS
	dm_linear small "$3" 50000 || return 1
	mk rraid0 "level=0 chunk=64K" "$1" "$2" /dev/mapper/small || return 1
	comp=$((50000 * 512 / 65536 * 64))
	expect_attr rraid0 component_size "$comp" || return 1
	size=$(dev_bytes /dev/rraid0)
	[ "$size" -eq $((3 * comp * 1024)) ] ||
		{ fail "/dev/rraid0 is $size bytes, expected 3 x $comp KiB"; return 1; }
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

for n in 2 3 4; do
	for c in 4K 64K 512K; do
		t_run "raid0-n$n-c$c-status" r0_status $n $c
		t_run "raid0-n$n-c$c-fio" r0_fio $n $c
		t_run "raid0-n$n-c$c-ext4" r0_ext4 $n $c
		t_run "raid0-n$n-c$c-dumpe2fs" r0_dumpe2fs $n $c
	done
done
t_run raid0-unequal-members r0_unequal
t_run raid0-default-chunk r0_default_chunk
t_run raid0-fail-member-ebusy r0_fail_member
t_run raid0-member-error-fails-io r0_member_error
t_summary
