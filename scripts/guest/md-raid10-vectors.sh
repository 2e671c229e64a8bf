#!/bin/sh
# Captures md's RAID 10 placement as reference vectors for the host tests (tests/raid10.rs).
#
#   RRAID_NO_MODULE=1 scripts/vm-run scripts/guest/md-raid10-vectors.sh --disks 5 --disk-size 2M |
#     grep -v '^md10-vectors:' | tr -d '\r' >tests/data/md-raid10.txt
#
# A few minutes under TCG. For each layout (mdadm's -p n2, n3, f2, o2, f3, o3), member count and
# chunk (4K, 16K), it fills the members with 4 KiB "unused" lines, lets mdadm create an md
# array over them (--metadata=1.0: superblock at the end, data from member sector 0;
# --assume-clean, no bitmap, so md writes nothing into the data area), writes every 4 KiB array
# block through md as one 4096-byte text line naming its block number, then reads each member's
# data area (md's component_size) as lines: line R of member I is member block R. The size given
# to mdadm is an odd number of chunks, so far copies start in mid-member and the near layouts
# over an odd member count leave a slot of the last row unused.
#
# Output (stdout; progress lines start with "md10-vectors:"):
#   default NUMBER                       md's layout of an array mdadm made without -p
#   layout NAME NUMBER                   md's layout for mdadm's -p NAME
#   geom NAME NUMBER M CHUNK_K SIZE_K COMP_K ARRAY_K
#                                        mdadm --size=SIZE_K; md's component_size and array size
#   blk NAME NUMBER M CHUNK_K ROW C0 .. C(M-1)
#                                        per member: the array block (4 KiB) at member block ROW,
#                                        or - where md put nothing
. "${RRAID_LIB:-/rraid/lib.sh}"

say() { echo "md10-vectors: $*"; }
die() {
	say "FAILED: $*"
	[ -s /tmp/mdadm.log ] && sed 's/^/md10-vectors: mdadm| /' /tmp/mdadm.log
	dmesg | tail -20 | sed 's/^/md10-vectors: dmesg| /'
	exit 1
}

set -- $DISKS
[ $# -ge 5 ] || die "needs 5 member disks, got: $DISKS"
modprobe raid10 || die "modprobe raid10"

# 1 MiB of "unused" lines: 4095 'U' and a newline per 4 KiB block.
awk 'BEGIN { u = "U"; while (length(u) < 4095) u = u u; u = substr(u, 1, 4095)
	for (i = 0; i < 256; i++) print u }' >/tmp/unused
[ "$(stat -c %s /tmp/unused)" = 1048576 ] || die "making /tmp/unused"

# create NAME|- M CHUNK_K SIZE_K: md0 over the first M disks, which are prefilled.
create() {
	c_p=$1 c_m=$2 c_ck=$3 c_sz=$4
	members=$(first "$c_m" $DISKS)
	for dev in $members; do
		dd if=/tmp/unused of="$dev" bs=1M count=1 oflag=direct 2>/dev/null || die "prefilling $dev"
	done
	p_arg=
	[ "$c_p" = - ] || p_arg="--layout=$c_p"
	mdadm --create /dev/md0 --run --assume-clean --metadata=1.0 --bitmap=none --level=10 \
		$p_arg --chunk="$c_ck" --size="$c_sz" -n "$c_m" $members </dev/null >/tmp/mdadm.log 2>&1 ||
		die "mdadm --create -p $c_p -n $c_m -c $c_ck --size $c_sz"
	[ "$(cat /sys/block/md0/md/level)" = raid10 ] || die "md0 level $(cat /sys/block/md0/md/level)"
	[ "$(cat /sys/block/md0/md/chunk_size)" = $((c_ck * 1024)) ] ||
		die "md0 chunk_size $(cat /sys/block/md0/md/chunk_size)"
	for dev in $members; do
		off=$(cat "/sys/block/md0/md/dev-${dev##*/}/offset")
		[ "$off" = 0 ] || die "$dev: data offset $off, expected 0"
	done
	md_layout=$(cat /sys/block/md0/md/layout)
	comp=$(cat /sys/block/md0/md/component_size)
	arr=$(($(dev_bytes /dev/md0) / 1024))
}

stop() {
	mdadm --stop /dev/md0 >/tmp/mdadm.log 2>&1 || die "mdadm --stop /dev/md0"
	for dev in $members; do
		mdadm --zero-superblock "$dev" >/tmp/mdadm.log 2>&1 || die "mdadm --zero-superblock $dev"
	done
}

# capture NAME M CHUNK_K: the geom and blk lines of one array.
capture() {
	name=$1 m=$2 ck=$3
	sz=$((ck * 33))
	[ "$ck" = 4 ] && sz=$((ck * 65))
	create "$name" "$m" "$ck" "$sz"
	say "-p $name ($md_layout) members $m chunk ${ck}K: component $comp KiB, array $arr KiB"
	echo "geom $name $md_layout $m $ck $sz $comp $arr"
	blocks=$((arr / 4))
	rows=$((comp / 4))
	# Block B: "B" + 7 digits + "-" + 7 digits not linear in B, padded to 4095, newline.
	awk -v n="$blocks" 'BEGIN { p = " "; while (length(p) < 4079) p = p p; p = substr(p, 1, 4079)
		for (b = 0; b < n; b++) printf "B%07d-%07d%s\n", b, (b * 7919 + 13) % 10000000, p }' >/tmp/tags
	dd if=/tmp/tags of=/dev/md0 bs=1M oflag=direct conv=fsync 2>/dev/null || die "writing tags"
	rm -f /tmp/tags
	files=
	i=0
	for dev in $members; do
		dd if="$dev" bs=4096 count="$rows" iflag=direct 2>/dev/null | cut -c1-16 >/tmp/m$i
		[ "$(wc -l </tmp/m$i)" = "$rows" ] || die "$dev: $(wc -l </tmp/m$i) lines, expected $rows"
		files="$files /tmp/m$i"
		i=$((i + 1))
	done
	awk -v pre="blk $name $md_layout $m $ck" '
		FNR == 1 { f++ }
		{
			v = "?"
			if ($0 == "UUUUUUUUUUUUUUUU") v = "-"
			else if ($0 ~ /^B[0-9]+-[0-9]+$/ && length($0) == 16) {
				# A leading 1: busybox awk reads "0000013" as octal.
				b = ("1" substr($0, 2, 7)) - 10000000
				c = ("1" substr($0, 10, 7)) - 10000000
				if (c == (b * 7919 + 13) % 10000000) v = b
			}
			cell[FNR - 1, f] = v
			if (FNR > rows) rows = FNR
		}
		END {
			for (r = 0; r < rows; r++) {
				line = pre " " r
				for (i = 1; i <= f; i++) line = line " " cell[r, i]
				print line
			}
		}' $files >/tmp/blk
	grep -q '?' /tmp/blk && die "-p $name n $m chunk $ck: a member block holds neither a tag nor the fill"
	cat /tmp/blk
	stop
}

echo "# md RAID 10 layouts captured from Linux $(uname -r) md, $(mdadm --version 2>&1 | cut -d' ' -f1-3),"
echo "# by scripts/guest/md-raid10-vectors.sh: metadata 1.0 (data offset 0), 4 KiB blocks."
echo "# default NUMBER: md's layout of an array mdadm made without -p."
echo "# layout NAME NUMBER: md's layout for mdadm's -p NAME."
echo "# geom NAME NUMBER M CHUNK_K SIZE_K COMP_K ARRAY_K: mdadm --size, md's component_size and size."
echo "# blk NAME NUMBER M CHUNK_K ROW then per member: the array block at member block ROW, or -."
create - 4 4 260
echo "default $md_layout"
stop
for p in n2 n3 f2 o2 f3 o3; do
	create "$p" 4 4 260
	echo "layout $p $md_layout"
	stop
done
for ck in 4 16; do
	for m in 2 3 4 5; do capture n2 $m $ck; done
	for m in 3 4 5; do capture n3 $m $ck; done
	for m in 2 3 4 5; do capture f2 $m $ck; done
	for m in 2 3 4 5; do capture o2 $m $ck; done
	for m in 3 4; do capture f3 $m $ck; done
	for m in 3 5; do capture o3 $m $ck; done
done
say "done"
