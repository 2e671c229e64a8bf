#!/bin/sh
# VM tests, cross-check against md: what rraid writes as RAID0 or RAID1 reads back identically
# through `mdadm --build` over the same members (same chunk; --assume-clean for RAID1, else md
# resyncs), byte for byte and by fio's verify headers (which hold each block's offset); and the
# other way round, what md wrote reads back identically through rraid.
# vm-run: --disks 4 --disk-size 32M
. "${RRAID_LIB:-/rraid/lib.sh}"

# xcheck LEVEL N CHUNK_K: rraid writes, md reads.
xcheck() {
	lvl=$1 n=$2 ck=$3
	members=$(first "$n" $DISKS)
	if [ "$lvl" = 0 ]; then spec="level=0 chunk=${ck}K"; else spec="level=1"; fi
	mk rraid0 "$spec" $members || return 1
	fio_fill /dev/rraid0 || return 1
	size=$(dev_bytes /dev/rraid0)
	want=$(sha_head /dev/rraid0 "$size")
	rm_array rraid0 || return 1
	md_build /dev/md0 "$lvl" "$ck" $members || return 1
	mdsize=$(dev_bytes /dev/md0)
	echo "rraid0 $size bytes, md0 $mdsize bytes"
	if [ "$lvl" = 0 ]; then
		[ "$mdsize" -eq "$size" ] || { fail "md0 is $mdsize bytes, rraid0 was $size"; return 1; }
	else
		[ "$mdsize" -ge "$size" ] || { fail "md0 is $mdsize bytes, smaller than rraid0's $size"; return 1; }
	fi
	got=$(sha_head /dev/md0 "$size")
	[ "$got" = "$want" ] || { fail "md0 reads back differently from what rraid0 wrote"; return 1; }
	fio_check /dev/md0 --size="$size" || return 1
	md_stop /dev/md0
}

# xcheck_rev LEVEL N CHUNK_K: md writes, rraid reads.
xcheck_rev() {
	lvl=$1 n=$2 ck=$3
	members=$(first "$n" $DISKS)
	md_build /dev/md0 "$lvl" "$ck" $members || return 1
	mdsize=$(dev_bytes /dev/md0)
	fio_fill /dev/md0 || return 1
	md_stop /dev/md0 || return 1
	if [ "$lvl" = 0 ]; then spec="level=0 chunk=${ck}K"; else spec="level=1 assume-clean"; fi
	mk rraid0 "$spec" $members || return 1
	size=$(dev_bytes /dev/rraid0)
	[ "$size" -le "$mdsize" ] || { fail "rraid0 is $size bytes, md0 was $mdsize"; return 1; }
	[ "$lvl" = 1 ] || [ "$size" -eq "$mdsize" ] || { fail "rraid0 is $size bytes, md0 was $mdsize"; return 1; }
	fio_check /dev/rraid0 --size="$size" || return 1
	rm_array rraid0 || return 1
	# md wrote the whole of md0; rraid0 must read the same bytes.
	md_build /dev/md0 "$lvl" "$ck" $members || return 1
	want=$(sha_head /dev/md0 "$size")
	md_stop /dev/md0 || return 1
	mk rraid0 "$spec" $members || return 1
	got=$(sha_head /dev/rraid0 "$size")
	[ "$got" = "$want" ] || { fail "rraid0 reads back differently from what md0 wrote"; return 1; }
	rm_array rraid0
}

t_run md-xcheck-raid0-n3-c64K xcheck 0 3 64
t_run md-xcheck-raid1-n2 xcheck 1 2 0
t_run md-reverse-raid0-n3-c4K xcheck_rev 0 3 4
t_run md-reverse-raid1-n2 xcheck_rev 1 2 0
# The other geometries (each test takes about half a minute here): RRAID_FULL=1. make test still
# has 4-member RAID 0 in md's vectors on the host (tests/data/md-raid0.txt) and 512K chunks on 4
# members in 10-raid0.
if [ "${RRAID_FULL:-0}" = 1 ]; then
	t_run md-xcheck-raid0-n4-c512K xcheck 0 4 512
	t_run md-xcheck-raid0-n2-c4K xcheck 0 2 4
	t_run md-xcheck-raid0-n4-c64K xcheck 0 4 64
	t_run md-xcheck-raid1-n3 xcheck 1 3 0
	t_run md-reverse-raid0-n4-c512K xcheck_rev 0 4 512
fi
t_summary
