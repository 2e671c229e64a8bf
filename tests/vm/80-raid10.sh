#!/bin/sh
# VM tests, RAID 10: md's near, far and offset layouts (n2, n3, f2, o2) over odd and even member
# counts and chunks 4K, 64K and 512K, each with its attributes and queue limits, fio verify
# (random and sequential, 4K..1M, QD 1 and 32), then md assembled over the same members reads
# the same bytes and md's `check` finds no mismatch, and rraid reads what md wrote; spellings and
# defaults; every single member failed (and pairs that leave a copy of everything) with writes
# while degraded, md from the survivors reading the same; a pair holding both copies refused; a
# member whose writes fail goes faulty; a write error on the last copy breaks the array; read
# errors repaired from the far copy (dm-dust); read balancing with assume-clean and first-copy
# reads without it; bad input.
#
# Every test that hands the members to md lets mdadm create an md array over them first
# (--metadata=1.0: superblock at the end, data from sector 0), stops it, and creates rraid with
# size= equal to md's component_size. Members are zeroed first (BLKZEROOUT), so that the copies
# of what no test writes agree for md's check. RRAID_FULL=1 adds more geometries (n3, f3, o3,
# 2..5 members), more degraded layouts and ext4.
# vm-run: --disks 5 --disk-size 32M
. "${RRAID_LIB:-/rraid/lib.sh}"

FULL=${RRAID_FULL:-0}

# --- geometry ----------------------------------------------------------------------------------

# lay_num LAYOUT: md's number of an mdadm -p name.
lay_num() {
	case $1 in
	n2) echo 258 ;;
	n3) echo 259 ;;
	f2) echo 513 ;;
	f3) echo 769 ;;
	o2) echo 66049 ;;
	o3) echo 66305 ;;
	*) echo "?" ;;
	esac
}

# geo LAYOUT N CHUNK_K: sets lays (mdadm's name), lay (md's number), near (near copies), n, ck
# (KiB), cb (bytes), stripe (io_opt: a row of chunks over the members near copies leave) and
# members (the first N disks).
geo() {
	lays=$1 n=$2 ck=$3
	lay=$(lay_num "$lays")
	case $lays in n*) near=${lays#n} ;; *) near=1 ;; esac
	cb=$((ck * 1024))
	if [ $((n % near)) = 0 ]; then stripe=$((cb * n / near)); else stripe=$((cb * n)); fi
	members=$(first "$n" $DISKS)
	echo "geometry: RAID 10 layout $lays ($lay) $n members chunk ${ck}K"
}

# mk_geo SIZE_K [MEMBERS...]: rraid0 over the current geometry with size= and assume-clean.
mk_geo() {
	local s
	s=$1
	shift
	[ $# -gt 0 ] || set -- $members
	mk rraid0 "level=10 layout=$lays chunk=${ck}K size=$s assume-clean" "$@"
}

# r10_attrs COMP_K: rraid0's attributes and queue limits match the current geometry.
r10_attrs() {
	local q
	expect_attr rraid0 level raid10 || return 1
	expect_attr rraid0 layout "$lay" || return 1
	expect_attr rraid0 chunk_size "$cb" || return 1
	expect_attr rraid0 raid_disks "$n" || return 1
	expect_attr rraid0 component_size "$1" || return 1
	expect_attr rraid0 array_state clean || return 1
	expect_attr rraid0 degraded 0 || return 1
	expect_slots rraid0 $members || return 1
	q=/sys/block/rraid0/queue
	[ "$(cat $q/minimum_io_size)" -eq "$cb" ] ||
		{ fail "minimum_io_size $(cat $q/minimum_io_size), expected chunk $cb"; return 1; }
	[ "$(cat $q/optimal_io_size)" -eq "$stripe" ] ||
		{ fail "optimal_io_size $(cat $q/optimal_io_size), expected $stripe"; return 1; }
	[ "$(cat $q/discard_max_bytes)" = 0 ] || { fail "RAID 10 offers discard"; return 1; }
	[ "$(cat $q/write_zeroes_max_bytes)" = 0 ] || { fail "RAID 10 offers write-zeroes"; return 1; }
}

# --- md peers ------------------------------------------------------------------------------------

# md_prep SIZE_K [MEMBERS...]: zeroes the members, lets mdadm create /dev/md0 with the current
# geometry, records md_comp (component_size, KiB), md_lay and md_bytes, and stops it.
md_prep() {
	local s
	s=$1
	shift
	[ $# -gt 0 ] || set -- $members
	zero_members "$@" || return 1
	modprobe raid10 || { fail "modprobe raid10"; return 1; }
	mdadm --create /dev/md0 --run --assume-clean --metadata=1.0 --bitmap=none --level=10 \
		--layout="$lays" --chunk="$ck" --raid-devices="$n" --size="$s" "$@" </dev/null ||
		{ fail "mdadm --create -l10 -p $lays -c $ck -n $n --size $s $*"; return 1; }
	md_comp=$(cat /sys/block/md0/md/component_size)
	md_lay=$(cat /sys/block/md0/md/layout)
	md_bytes=$(dev_bytes /dev/md0)
	echo "md0: component_size $md_comp KiB, layout $md_lay, $md_bytes bytes"
	md_stop /dev/md0 || return 1
	[ "$md_lay" = "$lay" ] || { fail "md's layout for -p $lays is $md_lay, rraid's $lay"; return 1; }
}

# mk_like_md SIZE_K: md_prep, then rraid0 with md's component size; attributes, limits and
# size (in $size) match the geometry and md's array.
mk_like_md() {
	md_prep "$1" || return 1
	mk_geo "$md_comp" || return 1
	r10_attrs "$md_comp" || return 1
	size=$(dev_bytes /dev/rraid0)
	[ "$size" -eq "$md_bytes" ] || { fail "rraid0 is $size bytes, md0 was $md_bytes"; return 1; }
}

# --- configurations ----------------------------------------------------------------------------

# r10_cfg LAYOUT N CHUNK_K SIZE_K: attributes, fio suite; md over the same members reads the same
# bytes and its check finds no mismatch; md writes, rraid (reads balanced over the copies) reads
# the same bytes.
r10_cfg() {
	geo "$1" "$2" "$3"
	mk_like_md "$4" || return 1
	fio_suite /dev/rraid0 "$size" $((n * 100 + ck)) || return 1
	dev_save /dev/rraid0 "$size" || return 1
	rm_array rraid0 || return 1
	md_asm $members || return 1
	dev_cmp /dev/md0 /tmp/got 0 "$size" || { fail "md0 reads back differently from what rraid0 wrote"; return 1; }
	md_check0 || return 1
	fio_fill /dev/md0 --randseed=$((n + ck)) --bsrange=4k-1M --io_size=$((size < 8 << 20 ? size : 8 << 20)) ||
		return 1
	dev_save /dev/md0 "$size" || return 1
	md_stop /dev/md0 || return 1
	mk_geo "$md_comp" || return 1
	dev_cmp /dev/rraid0 /tmp/got 0 "$size" || { fail "rraid0 reads back differently from what md0 wrote"; return 1; }
}

# r10_spellings: level and layout spellings (mdadm's names and md's numbers), defaults (n2, chunk
# 512K), size= rounded as md rounds it.
r10_spellings() {
	set -- $DISKS
	rraid_load || return 1
	for spec in "level=10:258:524288" "level=raid10 layout=n2:258:524288" \
		"level=10 layout=n3 chunk=4K:259:4096" "level=10 layout=f2 chunk=64K:513:65536" \
		"level=10 layout=o2 chunk=1M:66049:1048576" "level=10 layout=513:513:524288" \
		"level=10 layout=66049 chunk=16K:66049:16384" "level=10 layout=f3:769:524288"; do
		opts=${spec%%:*}
		rest=${spec#*:}
		mk rraid0 "$opts size=8M" "$1" "$2" "$3" "$4" || return 1
		expect_attr rraid0 level raid10 || return 1
		expect_attr rraid0 layout "${rest%%:*}" || return 1
		expect_attr rraid0 chunk_size "${rest#*:}" || return 1
		rm_array rraid0 || return 1
	done
	# Sizes as md's: f2 over 3 with 33 chunks of 64K per member uses 32 (16 per far region).
	mk rraid0 "level=10 layout=f2 chunk=64K size=2112" "$1" "$2" "$3" || return 1
	expect_attr rraid0 component_size 2048 || return 1
	[ "$(dev_bytes /dev/rraid0)" -eq $((3 * 1024 * 1024)) ] ||
		{ fail "f2 over 3, size=2112: rraid0 is $(dev_bytes /dev/rraid0) bytes"; return 1; }
	rm_array rraid0 || return 1
	# n2 over 3 with 33 chunks: 49 chunks in the array (the last row has a free slot).
	mk rraid0 "level=10 chunk=64K size=2112" "$1" "$2" "$3" || return 1
	expect_attr rraid0 component_size 2112 || return 1
	[ "$(dev_bytes /dev/rraid0)" -eq $((49 * 65536)) ] ||
		{ fail "n2 over 3, size=2112: rraid0 is $(dev_bytes /dev/rraid0) bytes"; return 1; }
	rm_array rraid0
}

# --- degraded ------------------------------------------------------------------------------------

# deg_writes: writes of several shapes while degraded (needs 5 chunks): a 4K block, 8K across a
# chunk boundary, a whole chunk, 1K inside a page (512-byte sectors only), three chunks from an
# unaligned start.
deg_writes() {
	put /tmp/pat2 0 4096 || return 1
	put /tmp/pat2 $((cb - 4096)) 8192 || return 1
	put /tmp/pat2 "$cb" "$cb" || return 1
	if [ "$(cat /sys/block/rraid0/queue/logical_block_size)" = 512 ]; then
		put /tmp/pat2 $((2 * cb + 512)) 1024 || return 1
	fi
	put /tmp/pat2 $((2 * cb + 4096)) $((3 * cb)) || return 1
}

# deg_case SLOTS...: a fresh array, a pattern over all of it; the members in SLOTS fail one by
# one, each time everything reads back; writes while degraded read back.
deg_case() {
	mk_geo "$comp" || return 1
	size=$(dev_bytes /dev/rraid0)
	fill_pat "$size" || return 1
	k=0
	for s in "$@"; do
		fail_slot "$s" || return 1
		k=$((k + 1))
		expect_attr rraid0 degraded "$k" || return 1
		expect_attr rraid0 array_state clean || return 1
		dev_cmp /dev/rraid0 /tmp/exp 0 "$size" || { fail "slots $*: data wrong with $k failed"; return 1; }
	done
	deg_writes || return 1
	dev_cmp /dev/rraid0 /tmp/exp 0 "$size" || { fail "slots $* failed: data wrong after degraded writes"; return 1; }
}

# r10_degraded LAYOUT N CHUNK_K [PAIR...]: deg_case for every single failure, then for each
# PAIR ("a,b").
r10_degraded() {
	geo "$1" "$2" "$3"
	shift 3
	comp=$((ck * 32))
	pat /tmp/pat2 $((comp * 1024 * n)) || return 1
	s=0
	while [ $s -lt "$n" ]; do
		echo "--- slot $s fails"
		deg_case "$s" || return 1
		rm_array rraid0 || return 1
		s=$((s + 1))
	done
	for p in "$@"; do
		echo "--- slots ${p%,*} and ${p#*,} fail"
		deg_case "${p%,*}" "${p#*,}" || return 1
		rm_array rraid0 || return 1
	done
}

# r10_pair_md: n2 over 4 (mirror pairs 0+1 and 2+3): slots 0 and 2 fail, writes while degraded;
# failing slot 1 (the last copy of pair 0+1) is refused with EBUSY and changes nothing; md
# assembled from slots 1 and 3 alone reads what rraid read.
r10_pair_md() {
	geo n2 4 64
	md_prep 4096 || return 1
	comp=$md_comp
	pat /tmp/pat2 $((comp * 1024 * 2)) || return 1
	deg_case 0 2 || return 1
	k=$(kname "$(nth 2 $members)")
	r=$(sysw "/sys/block/rraid0/rraid/dev-$k/state" faulty)
	[ "$r" = EBUSY ] || { fail "failing slot 1 (last copy of its pair): $r, expected EBUSY"; return 1; }
	has_word "$(member_state rraid0 "$k")" in_sync || { fail "slot 1 not in_sync after the refusal"; return 1; }
	expect_attr rraid0 degraded 2 || return 1
	expect_attr rraid0 array_state clean || return 1
	dev_save /dev/rraid0 "$size" || return 1
	rm_array rraid0 || return 1
	md_asm $(without 0 2) || return 1
	dev_cmp /dev/md0 /tmp/got 0 "$size" || { fail "md from slots 1 and 3 reads differently from rraid0"; return 1; }
}

# r10_write_error: f2 over 3; the last member's I/O starts failing under fio verify: fio passes
# and the member ends up faulty.
r10_write_error() {
	geo f2 3 64
	set -- $members
	dm_linear e0 "$3" || return 1
	members="$1 $2 /dev/mapper/e0"
	mk_geo 8192 || return 1
	fio_fill /dev/rraid0 --size=8M || return 1
	dm_to_error e0 || return 1
	fio_verify /dev/rraid0 --size=8M || return 1
	st=$(member_state rraid0 "$(kname /dev/mapper/e0)")
	has_word "$st" faulty || { fail "erroring member is '$st', expected faulty"; return 1; }
	expect_attr rraid0 degraded 1 || return 1
}

# r10_last_copy: n2 over 4; slot 1 failed, then slot 0's writes fail: a write to a chunk of pair
# 0+1 ends in EIO (slot 0 holds its last copy, so md keeps it and the array is broken); the
# broken array refuses every write with EIO and still reads pair 2+3's chunks.
r10_last_copy() {
	geo n2 4 64
	set -- $members
	dm_linear e0 "$1" || return 1
	members="/dev/mapper/e0 $2 $3 $4"
	mk_geo 2048 || return 1
	size=$(dev_bytes /dev/rraid0)
	fill_pat "$size" || return 1
	fail_slot 1 || return 1
	dm_to_error e0 || return 1
	out=$(dd if=/tmp/pat1 of=/dev/rraid0 bs=4096 count=1 oflag=direct conv=notrunc 2>&1) &&
		{ fail "write to the last copy's member succeeded"; return 1; }
	echo "$out" | grep -qiE "Input/output error|I/O error" || { fail "write: '$out', expected EIO"; return 1; }
	expect_attr rraid0 array_state broken || return 1
	has_word "$(member_state rraid0 "$(kname /dev/mapper/e0)")" in_sync ||
		{ fail "the last copy's member was failed"; return 1; }
	out=$(dd if=/tmp/pat1 of=/dev/rraid0 bs=4096 count=1 oflag=direct,seek_bytes seek="$cb" conv=notrunc 2>&1) &&
		{ fail "write to a broken array succeeded"; return 1; }
	dev_cmp /dev/rraid0 /tmp/exp "$cb" "$cb" || { fail "chunk 1 (pair 2+3) reads back wrong"; return 1; }
}

# r10_read_repair: f2 over 3, dm-dust under slot 0, no assume-clean (reads go to the first copy,
# chunk c's on member c mod 3 in the first half, its far copy on the next member in the second).
# A bad block is rewritten from the far copy and read back: "read error corrected", dust says the
# write cleared it, the member stays in sync with the right data. A bad block whose rewrite fails
# too fails the member, and every byte still reads back.
r10_read_repair() {
	geo f2 3 64
	set -- $members
	modprobe dm-dust || { fail "modprobe dm-dust"; return 1; }
	dmsetup create dust0 --table "0 $(blockdev --getsz "$1") dust $1 0 512" ||
		{ fail "dmsetup create dust"; return 1; }
	[ -b /dev/mapper/dust0 ] || dmsetup mknodes dust0
	members="/dev/mapper/dust0 $2 $3"
	dk=$(kname /dev/mapper/dust0)
	# The resync crawls and is frozen at once: past its first window reads use the first copy.
	speed_sys 1 1 || return 1
	mk rraid0 "level=10 layout=f2 chunk=64K size=2048" $members || return 1
	[ "$(sysw /sys/block/rraid0/rraid/sync_action frozen)" = OK ] || { fail "frozen refused"; return 1; }
	size=$(dev_bytes /dev/rraid0)
	fill_pat "$size" || return 1
	dmsetup message dust0 0 enable || { fail "enable dust"; return 1; }
	dmesg_mark "repair read 1"
	# Member 0 sector 16: chunk 0, 8 KiB in.
	dust_read 16 8192 || return 1
	dmesg | grep -E 'rraid:|dust' | sed 's/^/    /'
	dmesg | grep -q "read error corrected" || { fail "no 'read error corrected' in dmesg"; return 1; }
	dmesg | grep -q "removed from badblocklist by write" || { fail "the bad block was not rewritten"; return 1; }
	dd if=/dev/mapper/dust0 of=/tmp/blk bs=4k skip=2 count=1 iflag=direct 2>/dev/null ||
		{ fail "member still fails the corrected block"; return 1; }
	dd if=/tmp/exp of=/tmp/blk-want bs=4k skip=2 count=1 2>/dev/null
	dev_cmp /tmp/blk /tmp/blk-want 0 4096 || { fail "member holds wrong data after the correction"; return 1; }
	has_word "$(member_state rraid0 "$dk")" in_sync || { fail "member not in_sync after a corrected error"; return 1; }
	# Member 0 sector 136: chunk 3's first copy (row 1 of member 0), 4 KiB in.
	dust_read 136 $((3 * cb + 4096)) 10 || return 1
	st=$(member_state rraid0 "$dk")
	has_word "$st" faulty || { fail "member is '$st' after its rewrite failed, expected faulty"; return 1; }
	expect_attr rraid0 degraded 1 || return 1
	dev_cmp /dev/rraid0 /tmp/exp 0 "$size" || { fail "array data differs after the member failed"; return 1; }
}

# r10_balance: n2 over 4 (first copies on slots 0 and 2). With assume-clean 4096 random reads
# reach every member, each at least 10% of them; without it, beyond the resync point (the resync
# slowed to 1 KiB/s and frozen at once; the reads from 8 MiB on), only the first copies'
# members.
r10_balance() {
	geo n2 4 64
	for mode in assume-clean first; do
		off=0
		if [ $mode = first ]; then
			speed_sys 1 1 || return 1
			mk rraid0 "level=10 chunk=64K size=16M" $members || return 1
			[ "$(sysw /sys/block/rraid0/rraid/sync_action frozen)" = OK ] || { fail "frozen refused"; return 1; }
			off=8M
		else
			mk_geo 16384 || return 1
		fi
		before=
		for d in $members; do before="$before $(reads_done "$d")"; done
		randread /dev/rraid0 --offset=$off || return 1
		dist=
		i=1
		for d in $members; do
			delta=$(($(reads_done "$d") - $(nth $i $before)))
			dist="$dist $(kname "$d")=$delta"
			if [ $mode = assume-clean ]; then
				[ "$delta" -ge 410 ] || { fail "reads not balanced:$dist"; return 1; }
			elif [ $((i % 2)) = 0 ]; then
				[ "$delta" = 0 ] || { fail "second copies read without assume-clean:$dist"; return 1; }
			fi
			i=$((i + 1))
		done
		note "$mode: member reads during 4096 random reads:$dist"
		rm_array rraid0 || return 1
	done
}

# r10_ext4 LAYOUT N CHUNK_K: (RRAID_FULL) ext4 round trip over whole members.
r10_ext4() {
	geo "$1" "$2" "$3"
	zero_members $members || return 1
	mk rraid0 "level=10 layout=$lays chunk=${ck}K assume-clean" $members || return 1
	ext4_check /dev/rraid0
}

# --- bad input -----------------------------------------------------------------------------------

r10_badinput() {
	set -- $DISKS
	rraid_load || return 1
	lines="level=10|layout=x2|$1|$2
		level=10|layout=n1|$1|$2|$3
		level=10|layout=n3|$1|$2
		level=10|layout=f2|$1
		level=10|layout=2|$1|$2
		level=10|layout=66050|$1|$2|$3|$4|$5
		level=10|layout=ls|$1|$2
		level=1|layout=n2|$1|$2
		level=10|chunk=2K|$1|$2"
	[ "$FULL" = 1 ] && lines="$lines
		level=10|layout=o3|$1|$2
		level=10|layout=f4|$1|$2|$3
		level=10|layout=n2f2|$1|$2|$3|$4
		level=10|layout=|$1|$2
		level=10|layout=524802|$1|$2|$3|$4
		level=10|layout=131586|$1|$2|$3|$4|$5
		level=10|size=1G|$1|$2
		level=10|chunk=48K|$1|$2"
	for line in $lines; do
		expect_create_err EINVAL "rraid0 $(echo "$line" | tr '|' ' ')" || return 1
	done
}

# --- the tests -----------------------------------------------------------------------------------

t_run raid10-badinput r10_badinput
t_run raid10-spellings r10_spellings
t_run raid10-n2-n4-c64K r10_cfg n2 4 64 4096
t_run raid10-n2-n3-c4K r10_cfg n2 3 4 2048
t_run raid10-n3-n4-c512K r10_cfg n3 4 512 4096
t_run raid10-f2-n3-c64K r10_cfg f2 3 64 4096
t_run raid10-f2-n5-c4K r10_cfg f2 5 4 2048
t_run raid10-o2-n5-c64K r10_cfg o2 5 64 4096
t_run raid10-o2-n2-c512K r10_cfg o2 2 512 4096
t_run raid10-n2-n4-degraded r10_degraded n2 4 64 0,2 1,3 0,3
t_run raid10-f2-n3-degraded r10_degraded f2 3 64
t_run raid10-o2-n4-degraded r10_degraded o2 4 4 0,2
t_run raid10-n3-n4-degraded r10_degraded n3 4 64 0,1 1,3
t_run raid10-n2-pair-refused-md r10_pair_md
t_run raid10-write-error-member-faulty r10_write_error
t_run raid10-write-error-last-copy r10_last_copy
t_run raid10-read-repair r10_read_repair
t_run raid10-read-balance r10_balance
if [ "$FULL" = 1 ]; then
	t_run raid10-n2-n2-c16K r10_cfg n2 2 16 4096
	t_run raid10-n2-n5-c512K r10_cfg n2 5 512 4096
	t_run raid10-n3-n3-c64K r10_cfg n3 3 64 4096
	t_run raid10-n3-n5-c4K r10_cfg n3 5 4 2048
	t_run raid10-f2-n2-c512K r10_cfg f2 2 512 4096
	t_run raid10-f2-n4-c16K r10_cfg f2 4 16 4096
	t_run raid10-o2-n3-c4K r10_cfg o2 3 4 2048
	t_run raid10-o2-n4-c64K r10_cfg o2 4 64 4096
	t_run raid10-f3-n4-c64K r10_cfg f3 4 64 4096
	t_run raid10-o3-n5-c16K r10_cfg o3 5 16 4096
	t_run raid10-n2-n5-degraded r10_degraded n2 5 64 0,2 1,4
	t_run raid10-f2-n5-degraded r10_degraded f2 5 16 0,2
	t_run raid10-o2-n5-degraded r10_degraded o2 5 64 1,3
	t_run raid10-ext4-n2 r10_ext4 n2 4 64
	t_run raid10-ext4-f2 r10_ext4 f2 3 512
fi
t_summary
