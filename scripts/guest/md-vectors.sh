#!/bin/sh
# Captures md's RAID 4/5/6 layouts as reference vectors for the host tests (tests/layout.rs).
#
#   scripts/vm-run scripts/guest/md-vectors.sh --disks 8 --disk-size 2M |
#     grep -v '^md-vectors:' | tr -d '\r' >tests/data/md-raid456.txt
#
# About 35 minutes under TCG on a shared 2-core host (set RRAID_VM_TIMEOUT=5400 to be safe).
# For each level, layout and member count it creates an md array with mdadm (metadata 1.0:
# superblock at the end, data at member sector 0; chunk 4K = one 4K block; --assume-clean, no
# bitmap), writes every array block with a tag naming its block number, and reads the members
# directly to find, for each of the first 2*M stripes, which array chunk each member holds. The
# member md itself reads an array chunk from (its read counter) must be the member holding its
# tag; the members left are parity. For RAID 6 it then writes, for each data index k, the first
# 2*M stripes with data chunk k = 0x01 bytes and the others zero: P reads 0x01, Q reads g^i
# (GF(2^8), polynomial 0x11d), where i is the Q coefficient index of the member holding chunk k.
#
# Output (stdout; progress lines start with "md-vectors:"):
#   default LEVEL LAYOUT          /sys/block/md0/md/layout of an array made without --layout
#   map LEVEL LAYOUT M STRIPE C0 .. C(M-1)   per member: the array chunk it holds, or P / Q
#   q LEVEL LAYOUT M STRIPE Q0 .. Q(M-1)     per member: its Q coefficient index, - for P and Q
. "${RRAID_LIB:-/rraid/lib.sh}"

say() { echo "md-vectors: $*"; }
die() {
	say "FAILED: $*"
	[ -s /tmp/mdadm.log ] && sed 's/^/md-vectors: mdadm| /' /tmp/mdadm.log
	dmesg | tail -20 | sed 's/^/md-vectors: dmesg| /'
	exit 1
}

set -- $DISKS
[ $# -ge 8 ] || die "needs 8 member disks, got: $DISKS"
modprobe raid456 || die "modprobe raid456"

BLK=4096
# z / o: one zero block, one block of 0x01 bytes.
dd if=/dev/zero of=/tmp/z bs=$BLK count=1 2>/dev/null
tr '\000' '\001' </tmp/z >/tmp/o

# GF(2^8) logarithms: log_V=i where g^i = V (V in lower-case hex, two digits).
x=1
i=0
while [ $i -lt 255 ]; do
	eval "log_$(printf %02x $x)=$i"
	x=$((x << 1))
	[ $x -lt 256 ] || x=$((x ^ 0x11d))
	i=$((i + 1))
done

# tag B: the first 16 bytes of array block B (the rest of the block is spaces). The second
# field is not linear in B, so an XOR of tags (P) never passes for a tag by accident.
tag() {
	printf 'B%07d-%07d' "$1" $((($1 * 7919 + 13) % 10000000))
}

# head16 DEV BLOCK: the first 16 bytes of block BLOCK of DEV, as 16 hex bytes.
head16() {
	dd if="$1" bs=16 count=1 skip=$(($2 * BLK / 16)) 2>/dev/null | od -An -tx1
}

# reads_of I: sets r to the completed reads of member I (no subshell: forks are slow under TCG).
reads_of() {
	eval "read r _ </sys/block/\$kn_$1/stat"
}

layout_name() {
	case $1 in
	0) echo left-asymmetric ;;
	1) echo right-asymmetric ;;
	2) echo left-symmetric ;;
	3) echo right-symmetric ;;
	4) echo parity-first ;;
	5) echo parity-last ;;
	esac
}

# create LEVEL LAYOUT|- M: mdadm --create /dev/md0 over the first M disks; checks level, chunk,
# data offset 0 and (when given) the layout.
create() {
	c_lvl=$1 c_lay=$2 c_m=$3
	members=$(first "$c_m" $DISKS)
	for dev in $members; do
		dd if=/dev/zero of="$dev" bs=1M count=2 oflag=direct 2>/dev/null || die "zeroing $dev"
	done
	lay_arg=
	[ "$c_lay" = - ] || lay_arg="--layout=$(layout_name "$c_lay")"
	mdadm --create /dev/md0 --run --assume-clean --metadata=1.0 --bitmap=none \
		--level="$c_lvl" $lay_arg --chunk=4 -n "$c_m" $members >/tmp/mdadm.log 2>&1 ||
		die "mdadm --create level $c_lvl layout $c_lay over $members"
	[ "$(cat /sys/block/md0/md/level)" = "raid$c_lvl" ] || die "md0 level $(cat /sys/block/md0/md/level)"
	[ "$(cat /sys/block/md0/md/chunk_size)" = $BLK ] || die "md0 chunk_size $(cat /sys/block/md0/md/chunk_size)"
	md_layout=$(cat /sys/block/md0/md/layout)
	[ "$c_lay" = - ] || [ "$md_layout" = "$c_lay" ] || die "md0 layout $md_layout, asked for $c_lay"
	i=0
	for dev in $members; do
		kn=${dev##*/}
		eval "kn_$i=$kn dev_$i=$dev"
		off=$(cat /sys/block/md0/md/dev-$kn/offset)
		[ "$off" = 0 ] || die "$dev: data offset $off, expected 0"
		i=$((i + 1))
	done
}

stop() {
	mdadm --stop /dev/md0 >/tmp/mdadm.log 2>&1 || die "mdadm --stop /dev/md0"
	for dev in $members; do
		mdadm --zero-superblock "$dev" >/tmp/mdadm.log 2>&1 || die "mdadm --zero-superblock $dev"
	done
}

# capture LEVEL LAYOUT|- M: prints the map (and for RAID 6 the q) lines of one array.
capture() {
	lvl=$1 m=$3
	if [ $lvl = 6 ]; then par=2; else par=1; fi
	d=$((m - par))
	create "$@"
	lay=$md_layout
	say "level $lvl layout $lay members $m"
	blocks=$(($(dev_bytes /dev/md0) / BLK))
	stripes=$((2 * m))
	[ $blocks -ge $((stripes * d)) ] || die "md0 has only $blocks blocks"

	# Tag every array block; written 1M at a time (whole stripes: a 4K write into a RAID 6
	# stripe is a read-modify-write, slow under TCG).
	b=0
	while [ $b -lt $blocks ]; do
		tag $b
		printf '%4080s' ''
		b=$((b + 1))
	done >/tmp/tags
	dd if=/tmp/tags of=/dev/md0 bs=1M oflag=direct conv=fsync 2>/dev/null || die "writing tags"
	rm -f /tmp/tags
	echo 3 >/proc/sys/vm/drop_caches

	# Which member holds which tag; then which member md reads each chunk from.
	s=0
	while [ $s -lt $stripes ]; do
		i=0
		while [ $i -lt $m ]; do
			eval "dev=\$dev_$i"
			t=$(dd if=$dev bs=16 count=1 skip=$((s * BLK / 16)) 2>/dev/null)
			eval "has_$i=x"
			case "$t" in
			B[0-9][0-9][0-9][0-9][0-9][0-9][0-9]-[0-9][0-9][0-9][0-9][0-9][0-9][0-9])
				c=${t#B}
				f=${c#*-}
				c=${c%-*}
				# Leading zeros off (they would make the numbers octal).
				while [ "${c#0}" != "$c" ] && [ ${#c} -gt 1 ]; do c=${c#0}; done
				while [ "${f#0}" != "$f" ] && [ ${#f} -gt 1 ]; do f=${f#0}; done
				[ "$f" = $(((c * 7919 + 13) % 10000000)) ] && eval "has_$i=$c"
				;;
			esac
			i=$((i + 1))
		done
		i=0
		while [ $i -lt $m ]; do
			eval "cell_$i=par"
			i=$((i + 1))
		done
		k=0
		while [ $k -lt $d ]; do
			c=$((s * d + k))
			i=0
			while [ $i -lt $m ]; do
				reads_of $i
				eval "before_$i=$r"
				i=$((i + 1))
			done
			dd if=/dev/md0 of=/dev/null bs=$BLK skip=$c count=1 iflag=direct 2>/dev/null ||
				die "reading md0 block $c"
			who=
			i=0
			while [ $i -lt $m ]; do
				reads_of $i
				eval "[ \$before_$i = $r ]" || who="$who $i"
				i=$((i + 1))
			done
			who=${who# }
			case "$who" in
			[0-9]) ;;
			*) die "stripe $s chunk $c: md read members '$who', expected one" ;;
			esac
			eval "h=\$has_$who"
			[ "$h" = "$c" ] || die "stripe $s chunk $c: md reads member $who, which holds '$h'"
			eval "cell_$who=$c"
			k=$((k + 1))
		done
		line="map $lvl $lay $m $s"
		pars=
		i=0
		while [ $i -lt $m ]; do
			eval "v=\$cell_$i"
			if [ $v = par ]; then
				pars="$pars $i"
				[ $lvl = 6 ] || v=P
			fi
			line="$line $v"
			i=$((i + 1))
		done
		[ $(echo $pars | wc -w) = $par ] || die "stripe $s: parity on members '$pars'"
		eval "line_$s=\"\$line\""
		eval "pars_$s=\"\$pars\""
		s=$((s + 1))
	done

	if [ $lvl != 6 ]; then
		s=0
		while [ $s -lt $stripes ]; do
			eval "echo \"\$line_$s\""
			s=$((s + 1))
		done
		stop
		return 0
	fi

	# RAID 6: for each data index k, chunk k of every stripe = 0x01 bytes, the others zero.
	k=0
	while [ $k -lt $d ]; do
		j=0
		while [ $j -lt $d ]; do
			if [ $j = $k ]; then cat /tmp/o; else cat /tmp/z; fi
			j=$((j + 1))
		done >/tmp/stripe
		s=0
		while [ $s -lt $stripes ]; do
			cat /tmp/stripe
			s=$((s + 1))
		done >/tmp/pass
		dd if=/tmp/pass of=/dev/md0 bs=1M oflag=direct conv=fsync 2>/dev/null || die "writing pass $k"
		echo 3 >/proc/sys/vm/drop_caches
		s=0
		while [ $s -lt $stripes ]; do
			eval "pars=\$pars_$s"
			for p in $pars; do
				eval "dev=\$dev_$p"
				v=$(head16 $dev $s)
				set -- $v
				b=$1
				[ "$*" = "$b $b $b $b $b $b $b $b $b $b $b $b $b $b $b $b" ] ||
					die "stripe $s member $p pass $k: '$v'"
				eval "val_${s}_${p}_$k=$b"
			done
			s=$((s + 1))
		done
		k=$((k + 1))
	done
	s=0
	while [ $s -lt $stripes ]; do
		eval "pars=\$pars_$s"
		eval "line=\$line_$s"
		# P reads 0x01 in every pass; Q reads g^i, not 0x01 for at least one of d >= 2 passes.
		pd= qd=
		for p in $pars; do
			k=0 ones=1
			while [ $k -lt $d ]; do
				eval "[ \$val_${s}_${p}_$k = 01 ]" || ones=0
				k=$((k + 1))
			done
			if [ $ones = 1 ]; then pd="$pd$p"; else qd="$qd$p"; fi
		done
		case "$pd $qd" in
		[0-9]\ [0-9]) ;;
		*) die "stripe $s: cannot tell P from Q on members $pars" ;;
		esac
		set -- $line
		shift 5
		out="map $lvl $lay $m $s"
		q="q $lvl $lay $m $s"
		i=0
		for cell in "$@"; do
			if [ $i = $pd ]; then
				out="$out P"
				q="$q -"
			elif [ $i = $qd ]; then
				out="$out Q"
				q="$q -"
			else
				out="$out $cell"
				eval "v=\$val_${s}_${qd}_$((cell - s * d))"
				eval "qi=\${log_$v:-}"
				[ -n "$qi" ] || die "stripe $s: Q byte $v is not a power of g"
				q="$q $qi"
			fi
			i=$((i + 1))
		done
		echo "$out"
		echo "$q"
		s=$((s + 1))
	done
	rm -f /tmp/stripe /tmp/pass
	stop
}

echo "# md RAID 4/5/6 layouts captured from Linux $(uname -r) md, $(mdadm --version 2>&1 | cut -d' ' -f1-3),"
echo "# by scripts/guest/md-vectors.sh: metadata 1.0 (data offset 0), chunk 4K."
echo "# default LEVEL LAYOUT: /sys/block/md0/md/layout of an array mdadm made without --layout."
echo "# map LEVEL LAYOUT M STRIPE then per member: the array chunk it holds in that stripe, P or Q."
echo "# q LEVEL LAYOUT M STRIPE then per member: its Q coefficient index (g^i), - for P and Q."
for lvl in 4 5 6; do
	create $lvl - 4
	echo "default $lvl $md_layout"
	stop
done
for m in 2 3 4 5 8; do
	capture 4 - $m
done
for lay in 0 1 2 3 4 5; do
	for m in 2 3 4 5 8; do
		capture 5 $lay $m
	done
done
for lay in 0 1 2 3 4 5; do
	for m in 4 5 6 8; do
		capture 6 $lay $m
	done
done
say "done"
