#!/bin/sh
# Guest side of `make bench-rebuild` (scripts/bench-rebuild): rebuild of one member onto a
# spare, rraid against md with the same limits, in one boot, on brd members. For RAID 1 (2
# members), RAID 10 n2 (4) and RAID 5 (4, chunk 64K): idle, with both limits above the member
# bandwidth; and under a 4K random-read fio load (QD 16), with only sync_speed_max raised and
# sync_speed_min at md's default, against that load's p99 on the healthy array. Then a brd-to-brd
# `dd` copy (direct, 1 MiB) as the member bandwidth; for RAID 5/6, a fio run that reads the N-1
# survivors and writes one member at once (1 MiB, direct, one job each), what a rebuild has to
# move at the least; and RAID 10's degraded sequential read against healthy. Figures are emulated (TCG): compare rraid with md only.
. "${RRAID_LIB:-/rraid/lib.sh}"
MB=${BENCH_REBUILD_MB:-128}
die() { echo "bench-rebuild: FAILED: $*"; dmesg | tail -30; exit 1; }

[ -f "$RRAID_KO" ] || die "rraid.ko missing"
insmod "$RRAID_KO" || die "insmod"
modprobe raid1 && modprobe raid10 && modprobe raid456 || die "modprobe md"
modprobe brd rd_nr=12 rd_size=$((MB * 1024)) || die "modprobe brd"
for i in $(seq 0 11); do
	dd if=/dev/urandom of=/dev/ram$i bs=1M count=$MB 2>/dev/null || die "fill ram$i"
done
echo 200000 >/proc/sys/dev/raid/speed_limit_max

# now: seconds since boot, to the hundredth (busybox date has no %N).
now() { cut -d' ' -f1 /proc/uptime; }
secs() { echo "$1 $2" | awk '{printf "%.2f", $2 - $1}'; }

# wait_rebuilt SYSDIR: until the array is whole again and sync_action idle. (Idle alone can be
# read before the job has started: one boot timed a rebuild under load at 0.04 s that way.)
wait_rebuilt() {
	while [ "$(cat "$1/degraded")" != 0 ] || [ "$(cat "$1/sync_action")" != idle ]; do
		sleep 0.05
	done
}

# terse_p99: the read p99 completion latency (µs) of fio's terse (v3) output on stdin.
terse_p99() {
	tr ';' '\n' | sed -n 's/^99\.000000%=//p' | head -1
}

# p99 DEV SECS: fio 4K random read at QD 16 for SECS; prints its p99 completion latency in µs.
p99() {
	fio --name=rr --filename="$1" --ioengine=libaio --direct=1 --rw=randread --bs=4k \
		--iodepth=16 --time_based --runtime="$2" --output-format=terse --terse-version=3 \
		2>/dev/null | terse_p99
}

# rebuild IMPL LEVELSPEC N LOAD: builds IMPL's array over ram devices, fails member 1, adds a
# spare; prints "seconds p99" (p99 of the load during the rebuild, or - when idle).
rebuild() {
	impl=$1 spec=$2 n=$3 load=$4
	if [ "$impl" = rraid ]; then
		base=0
	else
		base=6
	fi
	devs=
	for i in $(seq 0 $((n - 1))); do devs="$devs /dev/ram$((base + i))"; done
	spare=/dev/ram$((base + n))
	if [ "$impl" = rraid ]; then
		r=$(sysw "$RRAID_SYS/create" "rraid0 metadata=none $spec assume-clean $devs")
		[ "$r" = OK ] || die "create rraid0 $spec: $r"
		dev=/dev/rraid0 sd=/sys/block/rraid0/rraid
		k=$(kname "$(nth 2 $devs)")
		sysw "$sd/dev-$k/state" faulty >/dev/null
		sysw "$sd/dev-$k/state" remove >/dev/null
	else
		mdadm --create /dev/md0 --run --assume-clean --metadata=1.0 --bitmap=none \
			$(echo "$spec" | sed 's/level=/--level=/; s/layout=/--layout=/; s/chunk=\([0-9]*\)K/--chunk=\1/') \
			--raid-devices=$n $devs </dev/null >/dev/null 2>&1 || die "mdadm --create $spec"
		dev=/dev/md0 sd=/sys/block/md0/md
		mdadm /dev/md0 --fail "$(nth 2 $devs)" --remove "$(nth 2 $devs)" >/dev/null 2>&1 ||
			die "mdadm --fail"
	fi
	if [ "$load" = idle ]; then
		echo 2000000 >"$sd/sync_speed_min"
		echo 2000000 >"$sd/sync_speed_max"
	else
		echo system >"$sd/sync_speed_min"
		echo 2000000 >"$sd/sync_speed_max"
	fi
	echo 0 >"$sd/../queue/read_ahead_kb" 2>/dev/null
	lat=-
	if [ "$load" = load ]; then
		# The load runs before the rebuild starts: fio takes a while to issue its first read
		# under TCG, and a rebuild timed from before that would be partly unloaded.
		fio --name=rr --filename="$dev" --ioengine=libaio --direct=1 --rw=randread --bs=4k \
			--iodepth=16 --time_based --runtime=600 --output-format=terse --terse-version=3 \
			--output=/tmp/load.out >/tmp/load.err 2>&1 &
		fpid=$!
		st=/sys/block/${dev#/dev/}/stat
		r0=$(awk '{print $1}' "$st")
		i=0
		while [ "$(awk '{print $1}' "$st")" -lt $((r0 + 1000)) ]; do
			[ $i -lt 300 ] || die "$impl $spec: the load does not read ($(head -c 300 /tmp/load.err))"
			sleep 0.05
			i=$((i + 1))
		done
	fi
	t0=$(now)
	if [ "$impl" = rraid ]; then
		sysw "$sd/new_dev" "$spare" >/dev/null
	else
		mdadm /dev/md0 --add "$spare" >/dev/null 2>&1 || die "mdadm --add"
	fi
	wait_rebuilt "$sd"
	t1=$(now)
	if [ "$load" = load ]; then
		kill -INT $fpid 2>/dev/null
		wait $fpid
		lat=$(terse_p99 </tmp/load.out)
		# No read finished (fio failed, or ended before the rebuild did): no figure.
		case $lat in
		"" | 0)
			echo "bench-rebuild: $impl $spec: the load reported no read latency: $(head -c 300 /tmp/load.err)" >&2
			lat=n/a
			;;
		esac
	fi
	if [ "$impl" = rraid ]; then
		sysw "$RRAID_SYS/remove" rraid0 >/dev/null
	else
		mdadm --stop /dev/md0 >/dev/null 2>&1
	fi
	echo "$(secs "$t0" "$t1") $lat"
}

# healthy IMPL SPEC N: p99 of the load on the healthy array (10 s).
healthy() {
	impl=$1 spec=$2 n=$3
	if [ "$impl" = rraid ]; then
		devs=$(for i in $(seq 0 $((n - 1))); do echo /dev/ram$i; done)
		sysw "$RRAID_SYS/create" "rraid0 metadata=none $spec assume-clean $(echo $devs)" >/dev/null
		p99 /dev/rraid0 10
		sysw "$RRAID_SYS/remove" rraid0 >/dev/null
	else
		devs=$(for i in $(seq 6 $((5 + n))); do echo /dev/ram$i; done)
		mdadm --create /dev/md0 --run --assume-clean --metadata=1.0 --bitmap=none \
			$(echo "$spec" | sed 's/level=/--level=/; s/layout=/--layout=/; s/chunk=\([0-9]*\)K/--chunk=\1/') \
			--raid-devices=$n $(echo $devs) </dev/null >/dev/null 2>&1 || die "mdadm --create"
		p99 /dev/md0 10
		mdadm --stop /dev/md0 >/dev/null 2>&1
	fi
}

t0=$(now)
dd if=/dev/ram0 of=/dev/ram11 bs=1M iflag=direct oflag=direct 2>/dev/null
copy=$(secs "$t0" "$(now)")
copy_mbs=$(echo "$MB $copy" | awk '{printf "%.0f", $1 / $2}')
echo "bench-rebuild: brd-to-brd dd copy of $MB MiB: ${copy}s, $copy_mbs MB/s"

# survivors N: seconds for fio to read N-1 members and write one, all at once (1 MiB, direct,
# one job per member): the least a parity rebuild of N members moves. From fio's own runtimes
# (the longest job), so that fio's start-up under TCG is not counted.
survivors() {
	sn=$1
	set -- --name=w --filename=/dev/ram11 --rw=write
	for i in $(seq 0 $((sn - 2))); do set -- "$@" --name=r$i --filename=/dev/ram$i --rw=read; done
	fio --ioengine=psync --direct=1 --bs=1M --size=${MB}M --group_reporting \
		--output-format=terse --terse-version=3 "$@" 2>/dev/null |
		awk -F';' '{r = $9 > $50 ? $9 : $50; printf "%.2f", r / 1000}'
}
surv=$(survivors 4)
echo "bench-rebuild: fio reading 3 members and writing one, $MB MiB each: ${surv}s"

echo "| array | rraid idle s | md idle s | rraid/md idle speed | rraid vs copy | rraid load s | md load s | rraid load/idle speed | p99 healthy µs rraid/md | p99 in rebuild µs rraid/md |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for cfg in "level=1:2" "level=10 layout=n2 chunk=64K:4" "level=5 chunk=64K:4" "level=6 chunk=64K:4"; do
	spec=${cfg%:*} n=${cfg##*:}
	# The copy a rebuild is held against: dd's for a mirror, the survivors' for parity.
	case $spec in
	level=[56]*) ref=$surv ;;
	*) ref=$copy ;;
	esac
	set -- $(rebuild rraid "$spec" "$n" idle); ri=$1
	set -- $(rebuild md "$spec" "$n" idle); mi=$1
	hr=$(healthy rraid "$spec" "$n"); hm=$(healthy md "$spec" "$n")
	set -- $(rebuild rraid "$spec" "$n" load); rl=$1 rp=$2
	set -- $(rebuild md "$spec" "$n" load); ml=$1 mp=$2
	echo "| $spec, $n members | $ri | $mi | $(echo "$mi $ri" | awk '{printf "%.2f", $1 / $2}') | $(echo "$ref $ri" | awk '{printf "%.2f", $1 / $2}') | $rl | $ml | $(echo "$ri $rl" | awk '{printf "%.2f", $1 / $2}') | $hr / $hm | $rp / $mp |"
done

# RAID 10 degraded sequential read against healthy (rraid).
seqread() {
	fio --name=sr --filename="$1" --ioengine=libaio --direct=1 --rw=read --bs=1M --iodepth=16 \
		--time_based --runtime=8 --output-format=terse --terse-version=3 2>/dev/null |
		awk -F';' '{print $7}'
}
sysw "$RRAID_SYS/create" "rraid0 metadata=none level=10 layout=n2 chunk=64K assume-clean /dev/ram0 /dev/ram1 /dev/ram2 /dev/ram3" >/dev/null
h=$(seqread /dev/rraid0)
sysw /sys/block/rraid0/rraid/dev-ram1/state faulty >/dev/null
d=$(seqread /dev/rraid0)
sysw "$RRAID_SYS/remove" rraid0 >/dev/null
echo "bench-rebuild: RAID 10 n2 over 4, sequential read 1M QD16: healthy $h KiB/s, degraded $d KiB/s, ratio $(echo "$d $h" | awk '{printf "%.2f", $1 / $2}')"
# (The pipeline's status would be sed's, true even with no line: test what it printed.)
bad=$(dmesg | grep -v '^rraid:' | grep -vi 'command line' | grep -E "$DMESG_BAD")
if [ -n "$bad" ]; then
	echo "$bad" | sed 's/^/bench-rebuild: dmesg: /'
	die "kernel errors in dmesg"
fi
echo "bench-rebuild: done"
