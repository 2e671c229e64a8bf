#!/bin/sh
# VM tests, RAID 4/5/6: about a dozen geometries covering every layout (0-5 on RAID 5 and 6, and
# RAID 4), 2..8 members and chunks 4K, 64K and 512K, each with its attributes and queue limits,
# fio verify (random and sequential, 4K..1M, QD 1 and 32), then md assembled over the same
# members reads the same bytes and md's `check` finds no mismatch; disjoint 4K writers inside
# the same few stripes; the smallest stripe cache under 4 writers at QD 32; member reads that
# show read-modify-write, reconstruct-write and gathered full stripes; ext4 with stride and
# stripe width; every single failure of a 4-member RAID 5 and every pair of a 5-member RAID 6
# with writes while degraded; members failing under I/O; failing past the tolerance (EBUSY,
# broken, EIO); read errors repaired (dm-dust); md as an oracle both ways on random geometry
# (RRAID_SEED); injected allocation failures; bad input.
#
# Every test that hands the members to md first lets mdadm create an md array over them
# (--metadata=1.0: the superblock sits at the end of each member, the data starts at sector 0),
# stops it, and creates rraid with size= equal to md's component_size. Members are zeroed first
# (BLKZEROOUT), so the parity of what no test writes is consistent for md's check.
# RRAID_FULL=1 adds every layout x member count, more oracle rounds, more degraded layouts and a
# few more geometries.
# vm-run: --disks 8 --disk-size 32M
. "${RRAID_LIB:-/rraid/lib.sh}"

FULL=${RRAID_FULL:-0}

# --- geometry ----------------------------------------------------------------------------------

# lay_num LAYOUT: md's number of a layout as rraid spells it ("-": RAID 4, parity last).
lay_num() {
	case $1 in
	la | left-asymmetric) echo 0 ;;
	ra | right-asymmetric) echo 1 ;;
	ls | left-symmetric) echo 2 ;;
	rs | right-symmetric) echo 3 ;;
	parity-first) echo 4 ;;
	parity-last | -) echo 5 ;;
	*) echo "?" ;;
	esac
}

# lay_md NUMBER: mdadm's name of layout NUMBER.
lay_md() {
	nth $(($1 + 1)) left-asymmetric right-asymmetric left-symmetric right-symmetric \
		parity-first parity-last
}

# geo LEVEL LAYOUT N CHUNK_K: sets lvl, lays (rraid's spelling, "-" on RAID 4), lay (md's
# number), n, ck (KiB), cb (bytes), np (parity members), nd (data members), stripe (data bytes
# of a full stripe) and members (the first N disks).
geo() {
	lvl=$1 lays=$2 n=$3 ck=$4
	lay=$(lay_num "$lays")
	cb=$((ck * 1024))
	np=1
	[ "$lvl" = 6 ] && np=2
	nd=$((n - np))
	stripe=$((cb * nd))
	members=$(first "$n" $DISKS)
	echo "geometry: RAID $lvl layout $lays ($lay) $n members chunk ${ck}K, full stripe $stripe bytes"
}

# rspec: the create options of the current geometry (without size= and assume-clean).
rspec() {
	if [ "$lvl" = 4 ]; then
		echo "level=4 chunk=${ck}K"
	else
		echo "level=$lvl layout=$lays chunk=${ck}K"
	fi
}

# mk_geo SIZE_K [MEMBERS...]: creates rraid0 over the current geometry's members (or MEMBERS)
# with size=SIZE_K and assume-clean.
mk_geo() {
	local s
	s=$1
	shift
	[ $# -gt 0 ] || set -- $members
	mk rraid0 "$(rspec) size=$s assume-clean" "$@"
}

# --- md peers ------------------------------------------------------------------------------------

# md_prep [SIZE_K [MEMBERS...]]: zeroes the members, lets mdadm create /dev/md0 with the current
# geometry (--assume-clean --metadata=1.0, no bitmap; mdadm's default size without SIZE_K or
# with 0), records md_comp (component_size, KiB), md_lay (md's layout attribute) and md_bytes,
# and stops it again.
md_prep() {
	local s a
	s=${1:-0}
	[ $# -gt 0 ] && shift
	[ $# -gt 0 ] || set -- $members
	zero_members "$@" || return 1
	modprobe raid456 || { fail "modprobe raid456"; return 1; }
	a="--level=$lvl --chunk=$ck --raid-devices=$n"
	[ "$lvl" = 4 ] || a="$a --layout=$(lay_md "$lay")"
	[ "$s" -gt 0 ] && a="$a --size=$s"
	mdadm --create /dev/md0 --run --assume-clean --metadata=1.0 --bitmap=none $a "$@" </dev/null ||
		{ fail "mdadm --create $a $*"; return 1; }
	md_comp=$(cat /sys/block/md0/md/component_size)
	md_lay=$(cat /sys/block/md0/md/layout)
	md_bytes=$(dev_bytes /dev/md0)
	echo "md0: component_size $md_comp KiB, layout $md_lay, $md_bytes bytes"
	md_stop /dev/md0
}

# md_agrees BYTES: rraid0 is removed and md assembled over the same members reads the same
# first BYTES as rraid0 did, and md's check finds no mismatch.
md_agrees() {
	dev_save /dev/rraid0 "$1" || return 1
	rm_array rraid0 || return 1
	md_asm $members || return 1
	dev_cmp /dev/md0 /tmp/got 0 "$1" || { fail "md0 reads back differently from what rraid0 wrote"; return 1; }
	md_check0
}

# --- data helpers ------------------------------------------------------------------------------

# pat, put, fill_pat, dev_cmp and the like are lib.sh's (its "array data" section).

# put_batch SRC OFF LEN COUNT: COUNT writes (at most 64), one at a random place in each of COUNT
# equal slots of [OFF, OFF+LEN), 4K up to a slot long, all sent in one io_uring submission so
# that they are in flight together; mirrored into /tmp/exp. Draws from rnd (set rng first).
put_batch() {
	local slot i o l ranges
	slot=$(($3 / $4 / 4096 * 4096))
	ranges=
	i=0
	while [ $i -lt "$4" ]; do
		rnd $((slot / 4096))
		l=$(((r + 1) * 4096))
		rnd $(((slot - l) / 4096 + 1))
		o=$(($2 + i * slot + r * 4096))
		ranges="$ranges $o:$l"
		i=$((i + 1))
	done
	$UWRITE -m /tmp/exp /dev/rraid0 "$1" $ranges || { fail "uring-write of $4 ranges"; return 1; }
}

# stat_files DEV...: the members' /sys/block/X/stat files, for member_reads.
stat_files() {
	local d
	for d in "$@"; do
		echo "/sys/block/$(kname "$d")/stat"
	done
}

# member_reads STAT_FILE...: sectors read from the members (field 3 of each stat file), one each.
member_reads() {
	awk '{ printf "%s ", $3 }' "$@"
}

# reads_delta "BEFORE" "AFTER": the per-member differences, then their sum as the last word.
reads_delta() {
	echo "$1 / $2" | awk '{ n = (NF - 1) / 2; s = 0
		for (i = 1; i <= n; i++) { d = $(n + 1 + i) - $i; s += d; printf "%d ", d }
		print s }'
}

# --- status ------------------------------------------------------------------------------------

# r5_attrs COMP_K: rraid0's attributes and queue limits match the current geometry.
r5_attrs() {
	local v q
	expect_attr rraid0 level "raid$lvl" || return 1
	v=$(attr rraid0 layout)
	if [ "$lvl" = 4 ]; then
		# md's file reads what mdadm passed for level 4 (0); its parity is always last.
		[ "$v" = 0 ] || { fail "RAID 4 layout '$v', expected 0 (as md's)"; return 1; }
		[ -z "${md_lay:-}" ] || [ "$v" = "$md_lay" ] || { fail "layout '$v', md's reads $md_lay"; return 1; }
	else
		[ "$v" = "$lay" ] || { fail "layout '$v', expected $lay ($lays)"; return 1; }
		[ -z "${md_lay:-}" ] || [ "$v" = "$md_lay" ] || { fail "layout '$v', md's reads $md_lay"; return 1; }
	fi
	expect_attr rraid0 chunk_size "$cb" || return 1
	expect_attr rraid0 raid_disks "$n" || return 1
	expect_attr rraid0 component_size "$1" || return 1
	expect_attr rraid0 array_state clean || return 1
	expect_attr rraid0 degraded 0 || return 1
	expect_attr rraid0 stripe_cache_size 256 || return 1
	v=$(dev_bytes /dev/rraid0)
	[ "$v" -eq $(($1 * 1024 * nd)) ] || { fail "/dev/rraid0 is $v bytes, expected $1 KiB x $nd"; return 1; }
	expect_slots rraid0 $members || return 1
	q=/sys/block/rraid0/queue
	[ "$(cat $q/minimum_io_size)" -eq "$cb" ] ||
		{ fail "minimum_io_size $(cat $q/minimum_io_size), expected chunk $cb"; return 1; }
	[ "$(cat $q/optimal_io_size)" -eq "$stripe" ] ||
		{ fail "optimal_io_size $(cat $q/optimal_io_size), expected $cb x $nd"; return 1; }
}

# mk_like_md SIZE_K: md_prep, then rraid0 with md's component size, whose attributes, limits and
# size (in $size) must match the geometry and md's array.
mk_like_md() {
	md_prep "$1" || return 1
	mk_geo "$md_comp" || return 1
	r5_attrs "$md_comp" || return 1
	size=$(dev_bytes /dev/rraid0)
	[ "$size" -eq "$md_bytes" ] || { fail "rraid0 is $size bytes, md0 was $md_bytes"; return 1; }
}

# --- configurations ----------------------------------------------------------------------------

# r5_cfg LEVEL LAYOUT N CHUNK_K SIZE_K: attributes, fio suite, then md over the same members
# reads the same bytes and its check finds no mismatch.
r5_cfg() {
	geo "$1" "$2" "$3" "$4"
	mk_like_md "$5" || return 1
	fio_suite /dev/rraid0 "$size" $((n * 100 + ck)) || return 1
	md_agrees "$size"
}

# r5_matrix LEVEL LAYOUT: (RRAID_FULL) every member count, the chunk taking 4K, 64K and 512K in
# turn (so each layout meets each chunk with several member counts): one fio verify each, then
# md reads the same bytes and finds no mismatch.
r5_matrix() {
	l=$1 ly=$2
	lo=2
	[ "$l" = 6 ] && lo=4
	m=$lo
	while [ $m -le 8 ]; do
		c=$(nth $(((m + $(lay_num "$ly")) % 3 + 1)) 4 64 512)
		geo "$l" "$ly" "$m" "$c"
		md_prep $((c * 4 > 1024 ? c * 4 : 1024)) || return 1
		mk_geo "$md_comp" || return 1
		r5_attrs "$md_comp" || return 1
		fio_verify /dev/rraid0 --randseed=$((m * 1000 + c)) --bsrange=4k-1M --iodepth=32 \
			--io_size=$((md_bytes < 4 << 20 ? md_bytes : 4 << 20)) || return 1
		md_agrees "$md_bytes" || { fail "n=$m chunk ${c}K (above)"; return 1; }
		md_stop /dev/md0 || return 1
		m=$((m + 1))
	done
}

# r5_spellings: level and layout spellings, defaults (layout left-symmetric, chunk 512K) and
# size= with and without suffixes, rounded down to the chunk.
r5_spellings() {
	set -- $DISKS
	rraid_load || return 1
	for spec in "level=5:raid5:2:524288" "level=raid5 layout=la:raid5:0:524288" \
		"level=5 layout=left-asymmetric chunk=64K:raid5:0:65536" \
		"level=5 layout=right-asymmetric:raid5:1:524288" "level=raid5 layout=ra:raid5:1:524288" \
		"level=5 layout=left-symmetric:raid5:2:524288" "level=5 layout=3 chunk=4K:raid5:3:4096" \
		"level=5 layout=right-symmetric:raid5:3:524288" "level=5 layout=parity-first:raid5:4:524288" \
		"level=5 layout=parity-last chunk=1M:raid5:5:1048576" "level=6:raid6:2:524288" \
		"level=raid6 layout=la:raid6:0:524288" "level=6 layout=ra:raid6:1:524288" \
		"level=6 layout=rs:raid6:3:524288" "level=6 layout=parity-first:raid6:4:524288" \
		"level=6 layout=parity-last:raid6:5:524288" "level=4 chunk=64K:raid4:0:65536" \
		"level=raid4:raid4:0:524288" "level=4 layout=parity-last:raid4:0:524288" \
		"level=6 layout=0:raid6:0:524288" "level=5 layout=rs:raid5:3:524288"; do
		opts=${spec%%:*}
		rest=${spec#*:}
		want_lvl=${rest%%:*}
		rest=${rest#*:}
		want_lay=${rest%%:*}
		want_cb=${rest#*:}
		mk rraid0 "$opts size=8M assume-clean" "$1" "$2" "$3" "$4" || return 1
		expect_attr rraid0 level "$want_lvl" || return 1
		[ "$want_lay" = - ] || expect_attr rraid0 layout "$want_lay" || return 1
		expect_attr rraid0 chunk_size "$want_cb" || return 1
		rm_array rraid0 || return 1
	done
	# size= spellings, rounded down to the chunk (64K): KiB without suffix, K, M.
	msz=$(($(dev_bytes "$1") / 1024))
	for s in "1000:960" "8192:8192" "8192K:8192" "8M:8192" "3M:3072" "4097K:4096"; do
		mk rraid0 "level=5 chunk=64K size=${s%%:*} assume-clean" "$1" "$2" "$3" || return 1
		expect_attr rraid0 component_size "${s#*:}" || return 1
		[ "$(dev_bytes /dev/rraid0)" -eq $((${s#*:} * 1024 * 2)) ] ||
			{ fail "size=${s%%:*}: rraid0 is $(dev_bytes /dev/rraid0) bytes"; return 1; }
		rm_array rraid0 || return 1
	done
	# Without size=: the whole member, rounded down to the chunk.
	mk rraid0 "level=6 chunk=512K assume-clean" "$1" "$2" "$3" "$4" || return 1
	expect_attr rraid0 component_size $((msz / 512 * 512)) || return 1
}

# --- concurrency -------------------------------------------------------------------------------

# r5_conc LEVEL LAYOUT N CHUNK_K JOBS LOOPS [SLOTS...]: JOBS fio jobs write disjoint 4K blocks
# inside the first 4 full stripes at QD 32 (job i the blocks = i mod JOBS), each loop then
# verified while the other jobs go on writing the same stripes; afterwards md reads the same
# bytes and finds no mismatch. With SLOTS, those members fail first: blocks are reconstructed
# while others of their stripe are written, and md from the survivors reads the same bytes.
r5_conc() {
	geo "$1" "$2" "$3" "$4"
	j=$5 loops=$6
	shift 6
	md_prep 1024 || return 1
	mk_geo "$md_comp" || return 1
	for s in "$@"; do
		fail_slot "$s" || return 1
	done
	region=$((4 * stripe))
	[ $((region / 4096)) -ge "$j" ] || { fail "4 stripes hold fewer than $j blocks"; return 1; }
	jobs=
	i=0
	while [ $i -lt "$j" ]; do
		jobs="$jobs --name=j$i --offset=$((i * 4096)) --size=$((region - i * 4096)) --randseed=$((i + 7))"
		i=$((i + 1))
	done
	echo "$j jobs over $region bytes, $loops loops"
	fio --filename=/dev/rraid0 $FIO_COMMON --bs=4k --iodepth=32 --rw=write:$(((j - 1) * 4))k \
		--loops="$loops" --do_verify=1 $jobs ||
		{ fail "fio: $j writers of disjoint blocks in 4 stripes"; return 1; }
	[ $# -gt 0 ] || { md_agrees "$md_bytes"; return; }
	expect_attr rraid0 degraded $# || return 1
	dev_save /dev/rraid0 "$md_bytes" || return 1
	rm_array rraid0 || return 1
	md_asm $(without "$@") || return 1
	dev_cmp /dev/md0 /tmp/got 0 "$md_bytes" ||
		{ fail "md from the survivors reads differently from rraid0"; return 1; }
}

# r5_small_cache LEVEL N: stripe_cache_size 17 (md's smallest), fio verify with 4 writers at
# QD 32, 4K..1M; then the same while stripe_cache_size swings between 17 and 4096; md then reads
# the same bytes and finds no mismatch.
r5_small_cache() {
	rm -f /tmp/sc-answers /tmp/sc-stop
	geo "$1" ls "$2" 64
	md_prep 2048 || return 1
	mk_geo "$md_comp" || return 1
	expect_attr rraid0 stripe_cache_size 256 || return 1
	r=$(sysw /sys/block/rraid0/rraid/stripe_cache_size 17)
	[ "$r" = OK ] || { fail "stripe_cache_size 17: $r"; return 1; }
	expect_attr rraid0 stripe_cache_size 17 || return 1
	per=$((md_bytes / 4 / 65536 * 65536))
	fio --name=sc --filename=/dev/rraid0 $FIO_COMMON --rw=randwrite --bsrange=4k-1M --iodepth=32 \
		--numjobs=4 --offset_increment="$per" --size="$per" --do_verify=1 ||
		{ fail "fio verify, 4 writers x QD 32, stripe_cache_size 17"; return 1; }
	expect_attr rraid0 stripe_cache_size 17 || return 1
	(
		while [ ! -e /tmp/sc-stop ]; do
			for v in 4096 17 300 17; do
				sysw /sys/block/rraid0/rraid/stripe_cache_size "$v" >>/tmp/sc-answers
				sleep 0.2
			done
		done
	) &
	sw=$!
	fio --name=sc2 --filename=/dev/rraid0 $FIO_COMMON --rw=randwrite --bsrange=4k-1M --iodepth=32 \
		--numjobs=4 --offset_increment="$per" --size="$per" --do_verify=1 --randseed=99
	rc=$?
	touch /tmp/sc-stop
	wait $sw
	rm -f /tmp/sc-stop
	[ $rc -eq 0 ] || { fail "fio verify while stripe_cache_size changes"; return 1; }
	bad=$(grep -vc '^OK$' /tmp/sc-answers)
	[ "$bad" -eq 0 ] || { sort /tmp/sc-answers | uniq -c; fail "$bad stripe_cache_size writes refused under I/O"; return 1; }
	md_agrees "$md_bytes"
}

# r5_flush: fsync after a buffered write flushes every member (as RAID 0 and 1 do); an O_DIRECT
# RWF_DSYNC 4K write (FUA) reaches stable storage on its data and its parity member: each sees a
# flush (the virtio members have a write cache and no FUA, so FUA becomes a flush there).
r5_flush() {
	geo 5 ls 4 64
	mk_geo 1024 || return 1
	[ "$(cat /sys/block/rraid0/queue/write_cache)" = "write back" ] ||
		{ fail "rraid0 over write-back members is '$(cat /sys/block/rraid0/queue/write_cache)'"; return 1; }
	fl=$(for d in $members; do echo "/sys/block/$(kname "$d")/stat"; done)
	f0=$(awk '{ printf "%s ", $16 }' $fl)
	dd if=/dev/zero of=/dev/rraid0 bs=4k count=1 seek=3 conv=fsync,notrunc 2>/dev/null ||
		{ fail "dd conv=fsync"; return 1; }
	f1=$(awk '{ printf "%s ", $16 }' $fl)
	d=$(reads_delta "$f0" "$f1")
	echo "fsync: member flushes $f0 -> $f1 ($d)"
	for x in $(echo $d | awk '{ $NF = ""; print }'); do
		[ "$x" -gt 0 ] || { fail "fsync did not flush every member: flushes $f0 -> $f1"; return 1; }
	done
	# Stripe 5, data block 0: left-symmetric puts it on slot ls_disk 5 0, parity on ls_parity 5.
	ds=$(ls_disk 5 0)
	ps=$(ls_parity 5)
	pat /tmp/pat1 "$(dev_bytes /dev/rraid0)" || return 1
	f0=$(awk '{ printf "%s ", $16 }' $fl)
	$UWRITE -d /dev/rraid0 /tmp/pat1 $((5 * stripe)):4096 || { fail "RWF_DSYNC write"; return 1; }
	f1=$(awk '{ printf "%s ", $16 }' $fl)
	d=$(reads_delta "$f0" "$f1")
	echo "RWF_DSYNC 4K write (data slot $ds, parity slot $ps): member flushes $f0 -> $f1 ($d)"
	note "member flushes from one RWF_DSYNC 4K write (data slot $ds, parity slot $ps): $d"
	[ "$(nth $((ds + 1)) $d)" -gt 0 ] && [ "$(nth $((ps + 1)) $d)" -gt 0 ] ||
		{ fail "RWF_DSYNC write: data slot $ds and parity slot $ps not both flushed: $d"; return 1; }
}

# --- read-modify-write, reconstruct-write, gathering --------------------------------------------

# ls_disk STRIPE DATA_INDEX: the slot of a data block in md's left-symmetric RAID 5 layout.
ls_disk() {
	echo $(((n - 1 - $1 % n + 1 + $2) % n))
}

# ls_parity STRIPE: the parity slot of a stripe in left-symmetric RAID 5.
ls_parity() {
	echo $((n - 1 - $1 % n))
}

# r5_rmw: 8-member RAID 5 (left-symmetric, 64K chunks): aligned full-stripe writes read nothing
# from the members; an O_DIRECT 4K write to an untouched stripe reads 16 sectors in all, old data
# and old parity, 8 from each of their members. A 3-member RAID 5: the same write reads the
# other data block only (8 sectors: reconstruct-write is cheaper there). The data reads back and
# md finds no mismatch.
r5_rmw() {
	geo 5 ls 8 64
	sf=$(stat_files $members)
	md_prep 2048 || return 1
	mk_geo "$md_comp" || return 1
	size=$(dev_bytes /dev/rraid0)
	dd if=/dev/zero of=/tmp/exp bs=1M count=$((size / 1048576)) 2>/dev/null
	pat /tmp/pat1 "$size" || return 1
	# Stripes 0..3 in one write each of 1 and 2 full stripes, then stripes 4..5 in one.
	r0=$(member_reads $sf)
	put /tmp/pat1 0 "$stripe" || return 1
	put /tmp/pat1 "$stripe" $((2 * stripe)) || return 1
	put /tmp/pat1 $((3 * stripe)) $((3 * stripe)) || return 1
	r1=$(member_reads $sf)
	d=$(reads_delta "$r0" "$r1")
	echo "full-stripe writes: member sectors read $d"
	[ "$(echo $d | awk '{print $NF}')" = 0 ] ||
		{ fail "aligned full-stripe writes read from the members: $d"; return 1; }
	# One 4K block at the start of stripe 10: data slot ls_disk 10 0, parity ls_parity 10.
	ds=$(ls_disk 10 0)
	ps=$(ls_parity 10)
	r0=$(member_reads $sf)
	put /tmp/pat1 $((10 * stripe)) 4096 || return 1
	r1=$(member_reads $sf)
	d=$(reads_delta "$r0" "$r1")
	echo "4K write to stripe 10 (data slot $ds, parity slot $ps): member sectors read $d"
	note "RMW 4K write on 8-member RAID 5: sectors read per member $d"
	[ "$(echo $d | awk '{print $NF}')" = 16 ] ||
		{ fail "4K write to an uncached stripe read $(echo $d | awk '{print $NF}') sectors, expected 16 (old data + old parity)"; return 1; }
	[ "$(nth $((ds + 1)) $d)" = 8 ] && [ "$(nth $((ps + 1)) $d)" = 8 ] ||
		{ fail "the 16 sectors did not come from the data slot $ds and the parity slot $ps: $d"; return 1; }
	dev_cmp /dev/rraid0 /tmp/exp 0 "$size" || { fail "rraid0 differs from what was written"; return 1; }
	rm_array rraid0 || return 1
	md_asm $members || return 1
	dev_cmp /dev/md0 /tmp/exp 0 "$size" || { fail "md0 reads differently from what rraid0 wrote"; return 1; }
	md_check0 || return 1
	md_stop /dev/md0 || return 1
	# Reconstruct-write: 3 members, a 4K write needs 1 read (the other data block) against 2.
	geo 5 ls 3 64
	sf=$(stat_files $members)
	zero_members $members || return 1
	mk_geo 2048 || return 1
	pat /tmp/pat1 "$(dev_bytes /dev/rraid0)" || return 1
	dd if=/dev/zero of=/tmp/exp bs=4096 count=$(($(dev_bytes /dev/rraid0) / 4096)) 2>/dev/null
	r0=$(member_reads $sf)
	put /tmp/pat1 $((5 * stripe)) 4096 || return 1
	r1=$(member_reads $sf)
	d=$(reads_delta "$r0" "$r1")
	echo "4K write to stripe 5 of a 3-member RAID 5: member sectors read $d"
	[ "$(echo $d | awk '{print $NF}')" = 8 ] ||
		{ fail "4K write on 3-member RAID 5 read $(echo $d | awk '{print $NF}') sectors, expected 8 (reconstruct-write)"; return 1; }
	dev_cmp /dev/rraid0 /tmp/exp 0 "$(dev_bytes /dev/rraid0)" ||
		{ fail "rraid0 differs from what was written"; return 1; }
}

# r5_gather NOMERGES: two half-stripe O_DIRECT writes in one io_uring submission (8-member
# RAID 5, 64K chunks) read nothing from the members: they become one full-stripe write. With
# NOMERGES 2 the block layer does not merge them into one request, so rraid must gather them
# itself (md's plugged stripe handling does); then md also checks the parity written.
r5_gather() {
	geo 5 ls 8 64
	sf=$(stat_files $members)
	if [ "$1" = 0 ]; then
		zero_members $members || return 1
		mk_geo 2048 || return 1
	else
		md_prep 2048 || return 1
		mk_geo "$md_comp" || return 1
	fi
	echo "$1" >/sys/block/rraid0/queue/nomerges || { fail "nomerges $1"; return 1; }
	size=$(dev_bytes /dev/rraid0)
	dd if=/dev/zero of=/tmp/exp bs=1M count=$((size / 1048576)) 2>/dev/null
	pat /tmp/pat1 "$size" || return 1
	half=$((stripe / 2))
	bad=0
	for s in 3 7 12; do
		w0=$(writes_done /dev/rraid0)
		r0=$(member_reads $sf)
		$UWRITE -m /tmp/exp /dev/rraid0 /tmp/pat1 $((s * stripe)):$half $((s * stripe + half)):$half ||
			{ fail "uring-write to stripe $s"; return 1; }
		r1=$(member_reads $sf)
		w1=$(writes_done /dev/rraid0)
		d=$(reads_delta "$r0" "$r1")
		echo "stripe $s: two half-stripe writes ($((w1 - w0)) requests on rraid0): member sectors read $d"
		note "stripe $s: $((w1 - w0)) array write requests, member sectors read $(echo $d | awk '{print $NF}')"
		[ "$(echo $d | awk '{print $NF}')" = 0 ] || bad=$((bad + 1))
	done
	dev_cmp /dev/rraid0 /tmp/exp 0 "$size" || { fail "rraid0 differs from what was written"; return 1; }
	[ $bad -eq 0 ] || { fail "$bad of 3 pairs of half-stripe writes read from the members (not gathered)"; return 1; }
	[ "$1" = 0 ] && return 0
	rm_array rraid0 || return 1
	md_asm $members || return 1
	md_check0 || return 1
}

# --- ext4 ----------------------------------------------------------------------------------------

# r5_ext4 LEVEL N CHUNK_K: whole members (no size=): component_size is the member rounded down to
# the chunk; mkfs.ext4 picks stride = chunk/4K and stripe width = stride x data members; files
# with checksums, e2fsck -fn, remount.
r5_ext4() {
	geo "$1" ls "$2" "$3"
	mk rraid0 "$(rspec) assume-clean" $members || return 1
	msz=$(($(dev_bytes "$(nth 1 $members)") / 1024))
	expect_attr rraid0 component_size $((msz / ck * ck)) || return 1
	mkfs.ext4 -F -q -b 4096 /dev/rraid0 || { fail "mkfs.ext4"; return 1; }
	dumpe2fs -h /dev/rraid0 >"$T_DIR/sb" 2>&1 || { fail "dumpe2fs -h"; return 1; }
	grep -i raid "$T_DIR/sb"
	stride=$(sed -n 's/^RAID stride: *//p' "$T_DIR/sb")
	width=$(sed -n 's/^RAID stripe width: *//p' "$T_DIR/sb")
	[ "$stride" = $((ck / 4)) ] || { fail "RAID stride '$stride', expected $((ck / 4))"; return 1; }
	[ "$width" = $((ck / 4 * nd)) ] || { fail "RAID stripe width '$width', expected $((ck / 4 * nd))"; return 1; }
	ext4_check /dev/rraid0 || return 1
}

# --- degraded ------------------------------------------------------------------------------------

# deg_writes SRC: writes of many shapes while degraded (needs 8 stripes): a 4K block, 8K across
# a chunk boundary, a full stripe, 1K inside a page (512-byte sectors only), 16K across a stripe
# boundary, a whole chunk, two stripes from an unaligned start.
deg_writes() {
	put "$1" 0 4096 || return 1
	put "$1" $((cb - 4096)) 8192 || return 1
	put "$1" "$stripe" "$stripe" || return 1
	if [ "$(cat /sys/block/rraid0/queue/logical_block_size)" = 512 ]; then
		put "$1" $((2 * stripe + 512)) 1024 || return 1
	else
		put "$1" $((2 * stripe + 4096)) 4096 || return 1
	fi
	put "$1" $((3 * stripe - 8192)) 16384 || return 1
	put "$1" $((4 * stripe + cb)) "$cb" || return 1
	put "$1" $((5 * stripe + 4096)) $((2 * stripe)) || return 1
}

# deg_case SLOTS...: a fresh array over zeroed members with md's superblocks, /tmp/pat1 over all
# of it; the members in SLOTS fail one by one, each time everything reads back; writes of many
# shapes while degraded, everything reads back; 32 concurrent writes over the second half,
# everything reads back; md assembled from the surviving members alone reads what rraid read.
deg_case() {
	md_prep "$comp" || return 1
	mk_geo "$md_comp" || return 1
	size=$(dev_bytes /dev/rraid0)
	[ $((size / stripe)) -ge 16 ] || { fail "deg_case needs 16 stripes, has $((size / stripe))"; return 1; }
	write_pat "$stripe" || return 1
	k=0
	for s in "$@"; do
		fail_slot "$s" || return 1
		k=$((k + 1))
		expect_attr rraid0 degraded "$k" || return 1
		st=$(attr rraid0 array_state)
		[ "$st" = clean ] || [ "$st" = active ] ||
			{ fail "array_state '$st' with slots $* failed"; return 1; }
		dev_cmp /dev/rraid0 /tmp/exp 0 "$size" ||
			{ fail "slots $*: data reads back wrong with $k failed"; return 1; }
	done
	deg_writes /tmp/pat2 || return 1
	dev_cmp /dev/rraid0 /tmp/exp 0 "$size" ||
		{ fail "slots $* failed: data reads back wrong after degraded writes"; return 1; }
	half=$((size / stripe / 2 * stripe))
	rng=$((n * 100 + $1 * 10 + ${2:-0}))
	put_batch /tmp/pat2 "$half" $((size - half)) 32 || return 1
	dev_cmp /dev/rraid0 /tmp/exp 0 "$size" ||
		{ fail "slots $* failed: data reads back wrong after 32 concurrent writes"; return 1; }
	dev_save /dev/rraid0 "$size" || return 1
	rm_array rraid0 || return 1
	md_asm $(without "$@") || return 1
	dev_cmp /dev/md0 /tmp/got 0 "$size" ||
		{ fail "slots $* failed: md from the survivors reads differently from rraid0"; return 1; }
	md_stop /dev/md0
}

# r5_degraded LEVEL LAYOUT N CHUNK_K COMP_K: deg_case for every single failure (RAID 4/5) or
# every pair (RAID 6).
r5_degraded() {
	geo "$1" "$2" "$3" "$4"
	comp=$5
	pat /tmp/pat1 $((comp * 1024 * nd)) || return 1
	pat /tmp/pat2 $((comp * 1024 * nd)) || return 1
	a=0
	while [ $a -lt "$n" ]; do
		if [ "$lvl" = 6 ]; then
			b=$((a + 1))
			while [ $b -lt "$n" ]; do
				echo "--- slots $a and $b fail"
				deg_case "$a" "$b" || return 1
				b=$((b + 1))
			done
		else
			echo "--- slot $a fails"
			deg_case "$a" || return 1
		fi
		a=$((a + 1))
	done
}

# r5_fail_under_io LEVEL: 4 fio writers at QD 32 for 20 s, each verifying what it wrote every
# 32 blocks; while they run, members fail: on RAID 5 one whose I/O starts failing (dm error
# target: its write errors fail it), on RAID 6 first one through sysfs, then one whose I/O
# starts failing. fio passes; md from the survivors reads what rraid reads.
r5_fail_under_io() {
	geo "$1" ls 5 64
	set -- $members
	zero_members "$@" || return 1
	dm_linear e0 "$3" || return 1
	members="$1 $2 /dev/mapper/e0 $4 $5"
	md_prep 4096 $members || return 1
	mk_geo "$md_comp" || return 1
	per=$((md_bytes / 4 / 65536 * 65536))
	fio --name=fu --filename=/dev/rraid0 $FIO_COMMON --rw=randwrite --bsrange=4k-256k --iodepth=32 \
		--numjobs=4 --offset_increment="$per" --size="$per" --do_verify=1 --verify_backlog=32 \
		--time_based --runtime=20 &
	f=$!
	# fio takes seconds to start under TCG: wait for its first hundred writes.
	w0=$(writes_done /dev/rraid0)
	i=0
	while [ $(($(writes_done /dev/rraid0) - w0)) -lt 100 ] && kill -0 $f 2>/dev/null && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -0 $f 2>/dev/null || { wait $f; fail "fio ended before any member failed: the test shows nothing"; return 1; }
	if [ "$lvl" = 6 ]; then
		fail_slot 1 || { wait $f; return 1; }
		sleep 1
	fi
	dm_to_error e0 || { wait $f; return 1; }
	kill -0 $f 2>/dev/null || { wait $f; fail "fio ended before the member's I/O failed: the test shows nothing"; return 1; }
	wait $f || { fail "fio verify failed while members failed"; return 1; }
	ek=$(kname /dev/mapper/e0)
	st=$(member_state rraid0 "$ek")
	has_word "$st" faulty || { fail "member with failing I/O is '$st', expected faulty"; return 1; }
	expect_attr rraid0 degraded "$np" || return 1
	dev_save /dev/rraid0 "$md_bytes" || return 1
	rm_array rraid0 || return 1
	if [ "$lvl" = 6 ]; then s="0 3 4"; else s="0 1 3 4"; fi
	surv=
	for i in $s; do surv="$surv $(nth $((i + 1)) $members)"; done
	md_asm $surv || return 1
	dev_cmp /dev/md0 /tmp/got 0 "$md_bytes" ||
		{ fail "md from the survivors reads differently from rraid0"; return 1; }
}

# data_slot OFF: the slot holding the data at array byte OFF (left-symmetric RAID 5/6 as md's
# raid5_compute_sector, RAID 4 data on slots 0..nd-1).
data_slot() {
	local k s i pd
	k=$(($1 / cb))
	s=$((k / nd)) i=$((k % nd))
	pd=$((n - 1 - s % n))
	case $lvl in
	4) echo $i ;;
	5) echo $(((pd + 1 + i) % n)) ;;
	6) echo $(((pd + 2 + i) % n)) ;;
	esac
}

# r5_tolerance LEVEL N: failing one member more than the level tolerates: the write answers
# EBUSY, the member is faulty all the same, the array is broken. Writes end in EIO; reads are
# decided per block, as md's: a block on a surviving member reads back right, one on a failed
# member ends in EIO.
r5_tolerance() {
	geo "$1" ls "$2" 64
	mk_geo 1024 || return 1
	size=$(dev_bytes /dev/rraid0)
	fill_pat "$size" "$stripe" || return 1
	s=0
	while [ $s -lt "$np" ]; do
		fail_slot "$s" || return 1
		s=$((s + 1))
	done
	dev_cmp /dev/rraid0 /tmp/exp 0 "$size" || { fail "data wrong at the tolerance"; return 1; }
	k=$(kname "$(nth $((np + 1)) $members)")
	r=$(sysw "/sys/block/rraid0/rraid/dev-$k/state" faulty)
	[ "$r" = EBUSY ] || { fail "failing member $((np + 1)) of RAID $lvl: $r, expected EBUSY"; return 1; }
	st=$(member_state rraid0 "$k")
	has_word "$st" faulty || { fail "dev-$k/state is '$st' after the refused faulty, expected faulty"; return 1; }
	expect_attr rraid0 array_state broken || return 1
	dmesg | grep '^rraid:' | sed 's/^/    /'
	good=0 lost=0
	for off in 0 "$cb" $((2 * cb)) $((3 * stripe + 4096)) $((size - 4096)); do
		# Slots 0..np failed.
		if [ "$(data_slot "$off")" -gt "$np" ]; then
			dev_cmp /dev/rraid0 /tmp/exp "$off" 4096 ||
				{ fail "read at $off (slot $(data_slot "$off"), which survives) of a broken array"; return 1; }
			good=$((good + 1))
		else
			out=$(dd if=/dev/rraid0 of=/dev/null bs=4096 count=1 iflag=direct,skip_bytes skip="$off" 2>&1) &&
				{ fail "read at $off (slot $(data_slot "$off"), failed) of a broken array succeeded"; return 1; }
			echo "$out" | grep -qiE "Input/output error|I/O error" ||
				{ fail "read at $off of a broken array: '$out', expected EIO"; return 1; }
			lost=$((lost + 1))
		fi
		out=$(dd if=/tmp/pat1 of=/dev/rraid0 bs=4096 count=1 oflag=direct,seek_bytes seek="$off" conv=notrunc 2>&1) &&
			{ fail "write at $off of a broken array succeeded"; return 1; }
		echo "$out" | grep -qiE "Input/output error|I/O error" ||
			{ fail "write at $off of a broken array: '$out', expected EIO"; return 1; }
	done
	# RAID 4 keeps data on fixed slots: with slots 0..np failed, none may survive.
	want_good=1
	[ "$lvl" = 4 ] && [ $((np + 1)) -ge $nd ] && want_good=0
	[ $lost -gt 0 ] && [ $good -ge $want_good ] ||
		{ fail "reads of surviving blocks: $good, of lost ones: $lost; both must be tested"; return 1; }
	out=$(dd if=/tmp/pat1 of=/dev/rraid0 bs="$stripe" count=1 oflag=direct 2>&1) &&
		{ fail "full-stripe write to a broken array succeeded"; return 1; }
	rm_array rraid0
}

# --- read errors ---------------------------------------------------------------------------------

# r5_read_repair LEVEL: dm-dust under slot 1 (left-symmetric; chunk 0 of slot 1 holds data 1 on
# RAID 5 and data 0 on RAID 6). A bad block is reconstructed, rewritten and re-read: dmesg says
# "read error corrected", dust says the write cleared it, the member stays in sync and reads the
# right data. RAID 6 then also with another member failed (two blocks missing in the stripe).
# Last, a bad block whose rewrite fails: the member goes faulty, every byte still reads back.
r5_read_repair() {
	geo "$1" ls 5 64
	set -- $members
	modprobe dm-dust || { fail "modprobe dm-dust"; return 1; }
	dmsetup create dust0 --table "0 $(blockdev --getsz "$2") dust $2 0 512" ||
		{ fail "dmsetup create dust"; return 1; }
	[ -b /dev/mapper/dust0 ] || dmsetup mknodes dust0
	members="$1 /dev/mapper/dust0 $3 $4 $5"
	dk=$(kname /dev/mapper/dust0)
	mk_geo 1024 || return 1
	size=$(dev_bytes /dev/rraid0)
	fill_pat "$size" "$stripe" || return 1
	base=0
	[ "$lvl" = 5 ] && base=$cb
	dmsetup message dust0 0 enable || { fail "enable dust"; return 1; }
	dmesg_mark "repair read 1"
	dust_read 16 $((base + 8192)) || return 1
	dmesg | grep -E 'rraid:|dust' | sed 's/^/    /'
	dmesg | grep -q "read error corrected" || { fail "no 'read error corrected' in dmesg"; return 1; }
	dmesg | grep -q "removed from badblocklist by write" ||
		{ fail "the bad block was not rewritten on the member"; return 1; }
	dd if=/dev/mapper/dust0 of=/tmp/blk bs=4k skip=2 count=1 iflag=direct 2>/dev/null ||
		{ fail "member still fails the corrected block"; return 1; }
	dd if=/tmp/exp of=/tmp/blk-want bs=4k skip=$(((base + 8192) / 4096)) count=1 2>/dev/null
	dev_cmp /tmp/blk /tmp/blk-want 0 4096 || { fail "member holds wrong data after the correction"; return 1; }
	has_word "$(member_state rraid0 "$dk")" in_sync ||
		{ fail "member is '$(member_state rraid0 "$dk")' after a corrected read error"; return 1; }
	expect_attr rraid0 degraded 0 || return 1
	if [ "$lvl" = 6 ]; then
		fail_slot 3 || return 1
		dmesg_mark "repair read 2"
		dust_read 24 $((base + 12288)) || return 1
		dmesg | grep -q "read error corrected" ||
			{ fail "no 'read error corrected' with another member failed"; return 1; }
		has_word "$(member_state rraid0 "$dk")" in_sync ||
			{ fail "member is '$(member_state rraid0 "$dk")' after a corrected read error"; return 1; }
	fi
	# A block that also refuses its rewrite (wr_fail_cnt 10): the member must go faulty.
	dust_read 32 $((base + 16384)) 10 || return 1
	st=$(member_state rraid0 "$dk")
	has_word "$st" faulty || { fail "member is '$st' after its rewrite failed, expected faulty"; return 1; }
	expect_attr rraid0 degraded $((lvl == 6 ? 2 : 1)) || return 1
	dev_cmp /dev/rraid0 /tmp/exp 0 "$size" || { fail "array data differs after the member failed"; return 1; }
}

# --- md as oracle --------------------------------------------------------------------------------

# rnd N: sets r to a pseudo-random number in 0..N-1 from the seed in rng.
rnd() {
	rng=$(((rng * 1103515245 + 12345) % 2147483648))
	r=$(((rng / 65536) % $1))
}

# r5_oracle ROUND: random geometry from the seed (RRAID_SEED, else random; printed): rraid
# writes (fio verify), md assembled over the same members reads the same bytes and its check
# finds no mismatch; md writes, rraid reads the same bytes, also with as many members failed as
# the level tolerates.
r5_oracle() {
	rng=$((ORACLE_SEED + $1 * 7919))
	rnd 5
	case $r in 0) l=4 ;; 1 | 2) l=5 ;; *) l=6 ;; esac
	lo=2
	[ "$l" = 6 ] && lo=4
	rnd $((9 - lo))
	m=$((lo + r))
	rnd 6
	ly=$(nth $((r + 1)) la ra ls rs parity-first parity-last)
	[ "$l" = 4 ] && ly=-
	rnd 9
	c=$((4 << r))
	rnd 4
	if [ "$r" = 0 ]; then s=0; else rnd $((4096 / c + 1)); s=$((c * (r + 1))); fi
	sz=${s}K
	[ "$s" = 0 ] && sz="md's default"
	note "seed $ORACLE_SEED round $1: RAID $l layout $ly, $m members, chunk ${c}K, size $sz"
	echo "RRAID_SEED=$ORACLE_SEED round $1"
	geo "$l" "$ly" "$m" "$c"
	mk_like_md "$s" || return 1
	io=$((size < 24 << 20 ? size : 24 << 20))
	sd=$((ORACLE_SEED % 100000 + $1))
	fio_verify /dev/rraid0 --randseed="$sd" --bsrange=4k-1M --io_size="$io" || return 1
	md_agrees "$size" || return 1
	# md writes, rraid reads.
	fio_fill /dev/md0 --randseed=$((sd + 1)) --bsrange=4k-1M --io_size="$io" || return 1
	dev_save /dev/md0 "$size" || return 1
	md_stop /dev/md0 || return 1
	mk_geo "$md_comp" || return 1
	dev_cmp /dev/rraid0 /tmp/got 0 "$size" || { fail "rraid0 reads back differently from what md0 wrote"; return 1; }
	# The same bytes reconstructed: as many members fail as the level tolerates.
	rnd "$m"
	f1=$r
	fail_slot "$f1" || return 1
	f="$f1"
	if [ "$l" = 6 ]; then
		rnd $((m - 1))
		f2=$(((f1 + 1 + r) % m))
		fail_slot "$f2" || return 1
		f="$f1 $f2"
	fi
	dev_cmp /dev/rraid0 /tmp/got 0 "$size" ||
		{ fail "rraid0 with slots $f failed reads differently from what md0 wrote"; return 1; }
}

# --- bad input -----------------------------------------------------------------------------------

r5_badinput() {
	set -- $DISKS
	rraid_load || return 1
	m4="$1 $2 $3 $4"
	# Each refusal costs seconds (state snapshots before and after): the long list is RRAID_FULL's.
	lines="level=5|layout=bogus|chunk=64K|assume-clean|$1|$2|$3
		level=6|layout=ddf-zero-restart|assume-clean|$m4
		level=5|layout=ddf-N-continue|assume-clean|$m4
		level=6|layout=left-symmetric-6|assume-clean|$m4
		level=6|layout=8|assume-clean|$m4
		level=6|layout=16|assume-clean|$m4
		level=6|assume-clean|$1|$2|$3
		level=5|assume-clean|$1
		level=4|layout=ls|assume-clean|$m4
		level=6|chunk=64K|size=40000|assume-clean|$m4
		level=5|chunk=64K|size=32K|assume-clean|$1|$2|$3
		level=5|chunk=64K|size=12Q|assume-clean|$1|$2|$3"
	[ "$FULL" = 1 ] && lines="$lines
		level=5|layout=|assume-clean|$1|$2|$3
		level=6|layout=ddf-N-restart|assume-clean|$m4
		level=6|layout=ddf-N-continue|assume-clean|$m4
		level=5|layout=ddf-zero-restart|assume-clean|$m4
		level=6|layout=left-asymmetric-6|assume-clean|$m4
		level=6|layout=right-asymmetric-6|assume-clean|$m4
		level=6|layout=right-symmetric-6|assume-clean|$m4
		level=6|layout=parity-first-6|assume-clean|$m4
		level=6|layout=10|assume-clean|$m4
		level=6|layout=20|assume-clean|$m4
		level=5|layout=6|assume-clean|$m4
		level=5|layout=-1|assume-clean|$m4
		level=0|layout=ls|chunk=64K|$1|$2
		level=raid6|layout=ls|chunk=4K|assume-clean|$1|$2|$3
		level=4|assume-clean|$1
		level=raid5|layout=ls|$1|$2|$3
		level=5|chunk=64K|size=1G|assume-clean|$1|$2|$3
		level=5|chunk=64K|size=2048G|assume-clean|$1|$2|$3
		level=5|chunk=64K|size=99999999999999999999|assume-clean|$1|$2|$3
		level=5|chunk=64K|size=|assume-clean|$1|$2|$3
		level=5|chunk=64K|size=0|assume-clean|$1|$2|$3
		level=5|chunk=2K|assume-clean|$1|$2|$3
		level=6|chunk=32M|assume-clean|$m4
		level=5|chunk=48K|assume-clean|$1|$2|$3"
	for line in $lines; do
		expect_create_err EINVAL "rraid0 $(echo "$line" | tr '|' ' ')" || return 1
	done
	# stripe_cache_size: md's range 17..32768.
	mk rraid0 "level=5 chunk=64K size=4M assume-clean" $1 $2 $3 || return 1
	vals="16 32769 abc"
	[ "$FULL" = 1 ] && vals="$vals 0 -1 17x"
	for v in $vals; do
		expect_err EINVAL /sys/block/rraid0/rraid/stripe_cache_size "$v" || return 1
		expect_attr rraid0 stripe_cache_size 256 || return 1
	done
	for v in 17 32768 256; do
		r=$(sysw /sys/block/rraid0/rraid/stripe_cache_size "$v")
		[ "$r" = OK ] || { fail "stripe_cache_size $v: $r"; return 1; }
		expect_attr rraid0 stripe_cache_size "$v" || return 1
	done
	rm_array rraid0
}

# --- the tests -----------------------------------------------------------------------------------

if [ -z "${RRAID_SEED:-}" ]; then
	ORACLE_SEED=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
else
	ORACLE_SEED=$RRAID_SEED
fi
[ "${RRAID_LIST:-0}" = 1 ] || echo "raid5 oracle seed: $ORACLE_SEED (RRAID_SEED=$ORACLE_SEED repeats it)"

t_run raid5-badinput r5_badinput
t_run raid5-spellings r5_spellings
t_run raid5-la-n3-c64K r5_cfg 5 la 3 64 4096
t_run raid5-ra-n4-c4K r5_cfg 5 right-asymmetric 4 4 2048
t_run raid5-ls-n8-c512K r5_cfg 5 ls 8 512 4096
t_run raid5-rs-n5-c64K r5_cfg 5 right-symmetric 5 64 4096
t_run raid5-parity-first-n2-c4K r5_cfg 5 parity-first 2 4 4096
t_run raid5-parity-last-n6-c512K r5_cfg 5 parity-last 6 512 4096
t_run raid4-n7-c64K r5_cfg 4 - 7 64 4096
t_run raid6-la-n4-c512K r5_cfg 6 left-asymmetric 4 512 4096
t_run raid6-ra-n5-c4K r5_cfg 6 ra 5 4 2048
t_run raid6-ls-n8-c64K r5_cfg 6 left-symmetric 8 64 4096
t_run raid6-rs-n6-c4K r5_cfg 6 rs 6 4 2048
t_run raid6-parity-first-n7-c64K r5_cfg 6 parity-first 7 64 4096
t_run raid6-parity-last-n4-c64K r5_cfg 6 parity-last 4 64 4096
t_run raid5-conc-n3-c4K r5_conc 5 ls 3 4 8 20
t_run raid6-conc-n6-c64K r5_conc 6 ls 6 64 8 6
t_run raid5-conc-degraded-n4-c4K r5_conc 5 rs 4 4 6 15 2
t_run raid6-conc-degraded-n5-c4K r5_conc 6 la 5 4 6 15 0 3
t_run raid6-stripe-cache-17 r5_small_cache 6 5
t_run raid5-flush-fua r5_flush
t_run raid5-rmw-rcw-reads r5_rmw
t_run raid5-gather-uring r5_gather 0
t_run raid5-gather-uring-nomerges r5_gather 2
t_run raid5-ext4 r5_ext4 5 4 64
t_run raid6-ext4 r5_ext4 6 6 512
# Ten arrays in one test: a longer limit.
T_TIMEOUT=400
t_run raid5-degraded-every-single r5_degraded 5 ls 4 64 1024
t_run raid6-degraded-every-pair r5_degraded 6 ls 5 64 1024
T_TIMEOUT=180
t_run raid6-fail-under-io r5_fail_under_io 6
t_run raid5-past-tolerance r5_tolerance 5 4
t_run raid6-past-tolerance r5_tolerance 6 5
t_run raid5-read-repair r5_read_repair 5
t_run raid6-read-repair r5_read_repair 6
t_run raid5-md-oracle-1 r5_oracle 1
t_run raid5-md-oracle-2 r5_oracle 2
t_run raid5-failslab failslab_verify "level=5 chunk=64K assume-clean" $(first 4 $DISKS)
t_run raid6-failslab failslab_verify "level=6 chunk=64K assume-clean" $(first 4 $DISKS)
if [ "$FULL" = 1 ]; then
	t_run raid5-fail-under-io r5_fail_under_io 5
	t_run raid4-n2-c512K r5_cfg 4 - 2 512 4096
	t_run raid5-conc-n5-c4K r5_conc 5 la 5 4 8 20
	t_run raid6-conc-n4-c4K r5_conc 6 rs 4 4 8 20
	t_run raid5-stripe-cache-17 r5_small_cache 5 4
	t_run raid4-past-tolerance r5_tolerance 4 3
	T_TIMEOUT=900
	for ly in la ra ls rs parity-first parity-last; do
		t_run "raid5-matrix-$ly" r5_matrix 5 "$ly"
		t_run "raid6-matrix-$ly" r5_matrix 6 "$ly"
	done
	t_run raid4-matrix r5_matrix 4 -
	for ly in la rs parity-first; do
		t_run "raid5-degraded-every-single-$ly-n5" r5_degraded 5 "$ly" 5 64 1024
	done
	for ly in ra parity-last; do
		t_run "raid6-degraded-every-pair-$ly-n6" r5_degraded 6 "$ly" 6 4 256
	done
	T_TIMEOUT=180
	k=3
	while [ $k -le 12 ]; do
		t_run "raid5-md-oracle-$k" r5_oracle "$k"
		k=$((k + 1))
	done
fi
t_summary
