#!/bin/sh
# Guest side of `make bench-bitmap`: what the write-intent bitmap costs, rraid against md in one
# boot. For each configuration (RAID 1 over 2 members; RAID 5 over 4, 64K chunks), four arrays
# over four identical sets of memory-backed null_blk members (brd counts no I/O; null_blk's
# statistics give the member writes), all with v1.2 superblocks, written over their first
# BENCH_MEMBER_MIB: rraid without and with an
# internal bitmap (chunk BENCH_BITMAP_CHUNK, default 1M), md the same. 4K random writes at QD 32
# run on each array in turn, BENCH_RUNS rounds (default 5), the order rotated each round. Per
# array: the median IOPS and the spread (min-max), and the member writes per array write
# (member write counters over the array's); the bitmap's own writes per data write are the
# difference between the with and without arrays. Then a perf profile of rraid with its bitmap.
. "${RRAID_LIB:-/rraid/lib.sh}"
RUNS=${BENCH_RUNS:-5}
RT=${BENCH_RUNTIME:-4}
MIB=${BENCH_MEMBER_MIB:-128}
BMC=${BENCH_BITMAP_CHUNK:-1M}
LOG=/tmp/bench-bitmap.log
: >"$LOG"

# wios DEV: write I/Os completed (/sys/block/X/stat field 5).
wios() { awk '{print $5}' "/sys/block/$(kname "$1")/stat"; }

# sum_wios DEV...: the members' write I/Os, summed.
sum_wios() {
	s=0
	for d in "$@"; do s=$((s + $(wios "$d"))); done
	echo $s
}

# run_fio DEV: IOPS of one 4K random-write QD 32 run.
run_fio() {
	fio --name=bm --filename="$1" --ioengine=libaio --direct=1 --rw=randwrite --bs=4k \
		--iodepth=32 --time_based=1 --runtime="$RT" --ramp_time=1 --norandommap=1 --size=${MIB}M \
		--randrepeat=0 --group_reporting=1 --minimal 2>>"$LOG" | awk -F';' '{print $49}'
}

# median N...: the median of the numbers.
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

bench_config() {
	lvl=$1 n=$2 chunk=$3
	modprobe null_blk nr_devices=$((4 * n)) gb=1 memory_backed=1 queue_mode=2 ||
		{ echo "modprobe null_blk failed"; return 1; }
	i=0
	for set in rn rb mn mb; do
		m=
		for j in $(seq 1 "$n"); do m="$m /dev/nullb$i"; i=$((i + 1)); done
		eval "MEM_$set=\"$m\""
	done
	co=
	[ "$lvl" = 5 ] && co="chunk=$chunk"
	mdc=
	[ "$lvl" = 5 ] && mdc="--chunk=${chunk%K}"
	rraid_load || return 1
	r=$(sysw /sys/kernel/rraid/create "rraid0 level=$lvl $co metadata=1.2 assume-clean $MEM_rn")
	[ "$r" = OK ] || { echo "rraid create (no bitmap): $r"; return 1; }
	r=$(sysw /sys/kernel/rraid/create "rraid1 level=$lvl $co metadata=1.2 bitmap=internal bitmap_chunk=$BMC assume-clean $MEM_rb")
	[ "$r" = OK ] || { echo "rraid create (bitmap): $r"; return 1; }
	md_mods
	mdadm --create /dev/md0 --run --assume-clean --metadata=1.2 --level="$lvl" $mdc \
		--raid-devices="$n" --bitmap=none $MEM_mn </dev/null >>"$LOG" 2>&1 || { echo "mdadm md0 failed"; return 1; }
	mdadm --create /dev/md1 --run --assume-clean --metadata=1.2 --level="$lvl" $mdc \
		--raid-devices="$n" --bitmap=internal --bitmap-chunk="$BMC" $MEM_mb </dev/null >>"$LOG" 2>&1 ||
		{ echo "mdadm md1 failed"; return 1; }
	names="rraid0 rraid1 md0 md1"
	for a in $names; do eval "IOPS_$a=; MW_$a=0; AW_$a=0"; done
	round=0
	while [ $round -lt "$RUNS" ]; do
		# Rotate the order each round: no array always runs first or last.
		order=$(echo $names $names | cut -d' ' -f$((round % 4 + 1))-$((round % 4 + 4)))
		for a in $order; do
			case $a in rraid0) m=$MEM_rn ;; rraid1) m=$MEM_rb ;; md0) m=$MEM_mn ;; md1) m=$MEM_mb ;; esac
			a0=$(wios /dev/$a) m0=$(sum_wios $m)
			v=$(run_fio /dev/$a)
			a1=$(wios /dev/$a) m1=$(sum_wios $m)
			eval "IOPS_$a=\"\$IOPS_$a $v\"; MW_$a=\$((MW_$a + m1 - m0)); AW_$a=\$((AW_$a + a1 - a0))"
		done
		round=$((round + 1))
	done
	echo
	echo "RAID $lvl, $n members$([ "$lvl" = 5 ] && echo ", chunk $chunk"), bitmap chunk $BMC, 4K random write QD 32, $RUNS runs of ${RT} s"
	echo
	echo "| array | bitmap | IOPS median | min-max | member writes per array write |"
	echo "|---|---|---|---|---|"
	for a in $names; do
		eval "vals=\$IOPS_$a; mw=\$MW_$a; aw=\$AW_$a"
		med=$(median $vals)
		mn=$(median $(printf '%s\n' $vals | sort -n | head -1))
		mx=$(printf '%s\n' $vals | sort -n | tail -1)
		bm=none
		case $a in rraid1 | md1) bm=internal ;; esac
		per=$(awk -v m="$mw" -v a="$aw" 'BEGIN {printf "%.4f", (a > 0) ? m / a : 0}')
		eval "MED_$a=$med PER_$a=$per"
		echo "| $a | $bm | $med | $mn-$mx | $per |"
	done
	echo
	awk -v r0="$MED_rraid0" -v r1="$MED_rraid1" -v m0="$MED_md0" -v m1="$MED_md1" \
		-v pr0="$PER_rraid0" -v pr1="$PER_rraid1" -v pm0="$PER_md0" -v pm1="$PER_md1" 'BEGIN {
		printf "rraid with bitmap / without: %.3f; md with / without: %.3f; rraid / md with bitmap: %.3f\n", r1 / r0, m1 / m0, r1 / m1
		printf "bitmap writes per data write (member writes, with minus without): rraid %.4f, md %.4f\n", pr1 - pr0, pm1 - pm0
	}'
	# Where rraid's time goes with its bitmap: kernel symbols of one more run.
	if command -v perf >/dev/null 2>&1; then
		perf record -a -g -o /tmp/bm.perf -- sh -c "$(printf 'fio --name=p --filename=/dev/rraid1 --ioengine=libaio --direct=1 --rw=randwrite --bs=4k --iodepth=32 --time_based=1 --runtime=%s --norandommap=1 --size=%sM >/dev/null' "$RT" "$MIB")" >>"$LOG" 2>&1
		echo
		echo "perf, rraid1 (bitmap), top kernel symbols (self):"
		perf report -i /tmp/bm.perf --no-children --sort symbol --stdio 2>/dev/null |
			grep -E '^ +[0-9.]+%' | head -15 | awk '{printf "    %s %s\n", $1, substr($3, 1, 110)}'
		echo "  rraid's bitmap symbols:"
		perf report -i /tmp/bm.perf --no-children --sort symbol --stdio 2>/dev/null |
			grep -E '^ +[0-9.]+%' | grep 'rraid.*[Bb]itmap' | head -8 | awk '{printf "    %s %s\n", $1, substr($3, 1, 110)}'
	fi
	rraid_remove rraid0 >/dev/null
	rraid_remove rraid1 >/dev/null
	mdadm --stop /dev/md0 /dev/md1 >>"$LOG" 2>&1
	modprobe -r null_blk
}

echo "load average: $(cat /proc/loadavg)"
bench_config 1 2 - || exit 1
bench_config 5 4 64K || exit 1
