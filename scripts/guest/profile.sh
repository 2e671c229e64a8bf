#!/bin/sh
# Guest side of `make profile` (scripts/profile): where the random I/O path spends its CPU, rraid
# against md in one boot. RAID0 (4 brd members, chunk 64K) and RAID1 (2 brd members) of each;
# for each array, random read and write (4K at QD 32 unless set below) under fio, with CPU time
# from /proc/stat (kernel time per I/O: system + irq + softirq), a perf cpu-clock profile of the
# kernel during the job, and from it the CPU time per I/O by part (block layer, driver, brd, the
# rest, idle). Figures are emulated (TCG): compare rraid with md only.
# PROFILE_LEVEL=5 or 6 profiles RAID 5 or 6 instead (4 brd members, chunk 64K; md with
# group_thread_cnt = vCPUs, its faster setting here). PROFILE_BS_KIB (4) and PROFILE_QD (32) set
# the jobs' block size in KiB and queue depth: at QD 1 every microsecond of a path is latency.
. "${RRAID_LIB:-/rraid/lib.sh}"
RUNTIME=${PROFILE_RUNTIME:-8}
BS_KIB=${PROFILE_BS_KIB:-4}
QD=${PROFILE_QD:-32}

die() { echo "profile: FAILED: $*"; dmesg | tail -30; exit 1; }

[ -f "$RRAID_KO" ] || die "rraid.ko missing"
command -v perf >/dev/null || die "perf missing from the initramfs"
insmod "$RRAID_KO" || die "insmod"
modprobe raid0 && modprobe raid1 || die "modprobe md"
modprobe brd rd_nr=12 rd_size=$((64 * 1024)) || die "modprobe brd"
echo 0 >/proc/sys/kernel/kptr_restrict
echo -1 >/proc/sys/kernel/perf_event_paranoid
DEVS="rraid0 md0 rraid1 md1"
case ${PROFILE_LEVEL:-} in
5 | 6)
	l=$PROFILE_LEVEL
	modprobe raid456 || die "modprobe raid456"
	mdadm --create /dev/md0 --run --assume-clean --metadata=1.0 --bitmap=none --level=$l \
		--chunk=64 --raid-devices=4 /dev/ram4 /dev/ram5 /dev/ram6 /dev/ram7 >/dev/null 2>&1 ||
		die "mdadm --create md0"
	nproc >/sys/block/md0/md/group_thread_cnt
	cs=$(cat /sys/block/md0/md/component_size)
	r=$(sysw /sys/kernel/rraid/create "rraid0 metadata=none level=$l chunk=64K size=$cs assume-clean /dev/ram0 /dev/ram1 /dev/ram2 /dev/ram3")
	[ "$r" = OK ] || die "create rraid0: $r"
	DEVS="rraid0 md0"
	;;
*)
	r=$(sysw /sys/kernel/rraid/create "rraid0 metadata=none level=0 chunk=64K /dev/ram0 /dev/ram1 /dev/ram2 /dev/ram3")
	[ "$r" = OK ] || die "create rraid0: $r"
	r=$(sysw /sys/kernel/rraid/create "rraid1 metadata=none level=1 assume-clean /dev/ram8 /dev/ram9")
	[ "$r" = OK ] || die "create rraid1: $r"
	mdadm --build /dev/md0 --level=0 --chunk=64 --raid-devices=4 /dev/ram4 /dev/ram5 /dev/ram6 /dev/ram7 \
		>/dev/null 2>&1 || die "mdadm --build md0"
	mdadm --build /dev/md1 --level=1 --assume-clean --raid-devices=2 /dev/ram10 /dev/ram11 \
		>/dev/null 2>&1 || die "mdadm --build md1"
	;;
esac
for dev in $DEVS; do
	dev=/dev/$dev
	fio --name=fill --filename=$dev --ioengine=libaio --direct=1 --rw=write --bs=1M --iodepth=8 \
		>/dev/null 2>&1 || die "fill $dev"
done

# cpu_ticks: busy jiffies of kernel work (system, irq, softirq) and all non-idle ones.
cpu_ticks() {
	awk '/^cpu / {print $4 + $7 + $8, $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat
}

hz=100
[ -n "$(getconf CLK_TCK 2>/dev/null)" ] && hz=$(getconf CLK_TCK)
printf '%-8s %-10s %10s %14s %14s\n' array job IOPS "kernel us/IO" "busy us/IO"
for dev in $DEVS; do
	for rw in randread randwrite; do
		set -- $(cpu_ticks)
		k0=$1 b0=$2
		perf record -a -e cpu-clock -F 997 -g -o /tmp/perf.$dev.$rw -- sleep $((RUNTIME - 1)) \
			>/dev/null 2>&1 &
		pp=$!
		fio --name=p --filename=/dev/$dev --ioengine=libaio --direct=1 --rw=$rw --bs=${BS_KIB}k \
			--iodepth=$QD --time_based --runtime=$RUNTIME --randrepeat=0 --norandommap \
			--output-format=terse --terse-version=3 >/tmp/p.terse 2>/tmp/p.err ||
			{ cat /tmp/p.err; die "fio $rw on $dev"; }
		wait $pp
		set -- $(cpu_ticks)
		k1=$1 b1=$2
		# Terse v3: total KiB and IOPS of reads in fields 6 and 8, of writes in 47 and 49.
		case $rw in
		randread) kib=$(cut -d';' -f6 /tmp/p.terse) iops=$(cut -d';' -f8 /tmp/p.terse) ;;
		*) kib=$(cut -d';' -f47 /tmp/p.terse) iops=$(cut -d';' -f49 /tmp/p.terse) ;;
		esac
		ios=$((kib / BS_KIB))
		[ "$ios" -gt 0 ] || die "fio $rw on $dev moved nothing"
		echo "$ios" >/tmp/ios.$dev.$rw
		awk -v k=$((k1 - k0)) -v b=$((b1 - b0)) -v n="$ios" -v hz="$hz" -v d=$dev -v j=$rw -v i="$iops" \
			'BEGIN { printf "%-8s %-10s %10d %14.1f %14.1f\n", d, j, i, k * 1e6 / hz / n, b * 1e6 / hz / n }'
	done
done
# Where each I/O's CPU time goes, from the profiles' self time per symbol: the block layer
# (blk_*, sbitmap_*: for rraid, blk-mq's request, which bio-based md does not have), the
# driver's own code (rraid's symbols; md's md_*, raid*, r5*, its xor_* and raid6_* parity),
# the brd members' copies, the rest (fio, the syscalls, bio and page handling) and idle. perf
# records RUNTIME - 1 of fio's RUNTIME seconds at 997 Hz on each CPU.
# Symbols of the block layer (for rraid, blk-mq's request) and of the driver itself (rraid's;
# md's core, levels and parity).
BLOCK_RE='^_*blk_|^sbitmap'
DRIVER_RE='rraid|^(md_|raid0|raid1|raid5|raid6|raid10|r5|r10|ops_run|handle_stripe|xor_|async_)'
# by_part DEV RW: "part samples symbol" for each symbol of the job's profile, read from perf's
# report once and kept for the table and the lists below.
by_part() {
	[ -s /tmp/parts.$1.$2 ] || part_of_symbols $1 $2 >/tmp/parts.$1.$2
	cat /tmp/parts.$1.$2
}
part_of_symbols() {
	perf report -i /tmp/perf.$1.$2 --no-children --sort sym -g none -n --stdio 2>/dev/null |
		grep -v '^#' | grep '%' |
		awk -v bre="$BLOCK_RE" -v dre="$DRIVER_RE" '
		{ s = $NF
		  if (s ~ /halt|default_idle|cpu_idle/) c = "idle"
		  else if (s ~ dre) c = "driver"
		  else if (s ~ bre) c = "block"
		  else if (s ~ /^brd_/) c = "brd"
		  else c = "other"
		  print c, $2, s }'
}
# us_per_io DEV RW: the factor from samples to µs per I/O.
us_per_io() {
	awk -v ios="$(cat /tmp/ios.$1.$2)" -v rt="$RUNTIME" 'BEGIN { print 1e6 / 997 / (ios * (rt - 1) / rt) }'
}
echo
echo "== CPU time per I/O by part (${BS_KIB}K, QD $QD), in µs (perf cpu-clock self time over fio's I/Os)"
printf '%-8s %-10s %8s %8s %8s %8s %8s\n' array job block driver brd other idle
for dev in $DEVS; do
	for rw in randread randwrite; do
		by_part $dev $rw | awk -v k="$(us_per_io $dev $rw)" -v d=$dev -v j=$rw '
			{ t[$1] += $2 }
			END { printf "%-8s %-10s %8.1f %8.1f %8.1f %8.1f %8.1f\n", d, j, t["block"] * k, t["driver"] * k, t["brd"] * k, t["other"] * k, t["idle"] * k }'
	done
done
# Each part's share by symbol, in µs per I/O: which part of a request (tag, plug flush, start,
# time stamps, end), of the driver's own path and of the rest (scheduling, bios, syscalls) costs
# what.
for part in block driver other; do
	for dev in $DEVS; do
		for rw in randread randwrite; do
			echo
			echo "== $dev $rw: $part symbols, µs per I/O"
			by_part $dev $rw | awk -v k="$(us_per_io $dev $rw)" -v part=$part \
				'$1 == part { printf "%8.2f  %s\n", $2 * k, $3 }' | sort -rn | head -12
		done
	done
done
for dev in $DEVS; do
	for rw in randread randwrite; do
		echo
		echo "== $dev $rw: kernel symbols by self time (perf cpu-clock, all CPUs)"
		perf report -i /tmp/perf.$dev.$rw --no-children --sort sym -g none --percent-limit 0.7 --stdio 2>/dev/null |
			grep -v '^#' | grep -v '^$' | grep '%' | head -25
	done
done
bad=$(dmesg | grep -v '^rraid:' | grep -vi 'command line' | grep -E "$DMESG_BAD")
[ -z "$bad" ] || { echo "$bad"; die "kernel log holds errors"; }
