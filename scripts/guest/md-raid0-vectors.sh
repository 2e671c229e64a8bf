#!/bin/sh
# Captures md's RAID 0 zone layouts as reference vectors for the host tests (tests/layout.rs).
#
#   scripts/vm-run scripts/guest/md-raid0-vectors.sh --disks 0 |
#     grep -v '^md-vectors:' | tr -d '\r' >tests/data/md-raid0.txt
#
# About a minute under TCG. For each geometry (member sizes in sectors, chunk) and each of md's
# layouts 1 and 2 (raid0.default_layout; `mdadm --build` has no superblock to carry one), it
# builds md over dm-linear maps of a brd disk, zeroed first, writes every 4K array block with a
# tag naming its block number, and reads each member back: the tags in member block order say
# which array block each member block holds (blocks md never wrote stay zero and give no tag).
# Tags are decimal with leading zeros, which busybox awk would read as octal: they are stripped.
#
# Output (stdout; progress lines start with "md-vectors:"):
#   geo ID CHUNK_SECTORS SIZE...      member sizes in sectors, in slot order
#   md ID LAYOUT SECTORS SHOWN        md's array size and what its layout file shows
#   member ID LAYOUT M B...           per member block (4K) of member M: the array block in it
. "${RRAID_LIB:-/rraid/lib.sh}"

say() { echo "md-vectors: $*"; }
die() {
	say "FAILED: $*"
	dmesg | tail -20 | sed 's/^/md-vectors: dmesg| /'
	exit 1
}

modprobe raid0 || die "modprobe raid0"
modprobe brd rd_nr=1 rd_size=16384 || die "modprobe brd"

# The tags of 512 array blocks: "B0000012" then newlines, 4K each.
head -c 4088 /dev/zero | tr '\000' '\n' >/tmp/fill
b=0
: >/tmp/tags
while [ $b -lt 512 ]; do
	printf 'B%07d' $b
	cat /tmp/fill
	b=$((b + 1))
done >/tmp/tags

echo "# md RAID 0 zones captured from Linux $(uname -r) md, $(mdadm --version 2>&1 | head -1),"
echo "# by scripts/guest/md-raid0-vectors.sh: mdadm --build over dm-linear members, layouts by"
echo "# raid0.default_layout. geo ID CHUNK SIZES (sectors); md ID LAYOUT SECTORS SHOWN (array size,"
echo "# md's layout file); member ID LAYOUT M then, per 4K member block, the 4K array block in it."

# geo ID CHUNK_SECTORS SIZE...: one geometry, both layouts.
geo() {
	id=$1 ck=$2
	shift 2
	echo "geo $id $ck $*"
	for lay in 1 2; do
		echo "$lay" >/sys/module/raid0/parameters/default_layout || die "default_layout $lay"
		off=0 i=0 devs=
		for s in "$@"; do
			dmsetup create "v$i" --table "0 $s linear /dev/ram0 $off" || die "dmsetup v$i"
			[ -b "/dev/mapper/v$i" ] || dmsetup mknodes "v$i"
			dd if=/dev/zero of="/dev/mapper/v$i" bs=512 count="$s" 2>/dev/null || die "zero v$i"
			devs="$devs /dev/mapper/v$i"
			off=$((off + s + 64))
			i=$((i + 1))
		done
		mdadm --build /dev/md0 --level=0 --chunk=$((ck / 2)) --raid-devices=$# $devs \
			>/tmp/mdadm.log 2>&1 || die "mdadm --build geo $id layout $lay: $(cat /tmp/mdadm.log)"
		sec=$(blockdev --getsz /dev/md0)
		echo "md $id $lay $sec $(cat /sys/block/md0/md/layout)"
		dd if=/tmp/tags of=/dev/md0 bs=4096 count=$((sec / 8)) oflag=direct 2>/dev/null ||
			die "write md0"
		mdadm --stop /dev/md0 >/dev/null 2>&1 || die "mdadm --stop"
		i=0
		for s in "$@"; do
			printf 'member %s %s %s' "$id" "$lay" "$i"
			tr -d '\000' <"/dev/mapper/v$i" | tr -s '\n' '\n' |
				awk '{ sub(/^B0*/, ""); printf " %s", ($0 == "" ? "0" : $0) } END { printf "\n" }'
			dmsetup remove "v$i" || die "dmsetup remove v$i"
			i=$((i + 1))
		done
		say "geo $id layout $lay: $sec sectors"
	done
}

# Chunk 4K unless said: sizes in sectors, some off the chunk, in any order.
geo 1 8 43 63 72
geo 2 8 72 40 56
geo 3 8 16 24 32 40 48
geo 4 8 24 56 56 24
geo 5 16 100 50 200 130
geo 6 8 40 41 47
geo 7 8 8 88 48 64 88 24
geo 8 32 101 224 159
geo 9 8 56 16 16 40 40 16 24
echo 0 >/sys/module/raid0/parameters/default_layout
