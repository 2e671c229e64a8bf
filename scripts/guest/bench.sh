#!/bin/sh
# Guest side of `make bench` (run by scripts/bench through scripts/vm-run): in one boot, the same
# fio jobs on rraid RAID0 over 4 brd members and on md raid0 (mdadm --build, no superblock) over
# 4 identical brd members with the same chunk. Jobs alternate between the two arrays, ROUNDS
# times, and each figure is the mean. Prints a table with the ratio rraid/md.
. "${RRAID_LIB:-/rraid/lib.sh}"
CHUNK_K=${BENCH_CHUNK_K:-512}
RD_MIB=${BENCH_RD_MIB:-128}
RUNTIME=${BENCH_RUNTIME:-8}
ROUNDS=${BENCH_ROUNDS:-2}

die() { echo "bench: FAILED: $*"; dmesg | tail -30; exit 1; }

[ -f "$RRAID_KO" ] || die "rraid.ko missing from the initramfs"
dmesg -c >/dev/null
insmod "$RRAID_KO" || die "insmod"
modprobe raid0 || die "modprobe raid0"
modprobe brd rd_nr=8 rd_size=$((RD_MIB * 1024)) || die "modprobe brd"
r=$(sysw /sys/kernel/rraid/create "rraid0 level=0 chunk=${CHUNK_K}K /dev/ram0 /dev/ram1 /dev/ram2 /dev/ram3")
[ "$r" = OK ] || die "create rraid0: $r"
mdadm --build /dev/md0 --level=0 --chunk=$CHUNK_K --raid-devices=4 /dev/ram4 /dev/ram5 /dev/ram6 /dev/ram7 \
	>/dev/null 2>&1 || die "mdadm --build"
[ "$(dev_bytes /dev/rraid0)" = "$(dev_bytes /dev/md0)" ] || die "array sizes differ"
echo "bench: Linux $(uname -r), $(nproc) vCPUs under QEMU TCG; 4 x brd ${RD_MIB} MiB per array, chunk ${CHUNK_K}K"
echo "bench: rraid0 = rraid RAID0 over ram0-3, md0 = md raid0 over ram4-7; fio libaio direct=1,"
echo "bench: ${RUNTIME}s per job, $ROUNDS rounds alternating arrays, mean shown"
echo "bench: figures are emulated (TCG): only the ratio means anything"

# Fill both arrays once, so that reads hit allocated brd pages on both.
for dev in /dev/rraid0 /dev/md0; do
	fio --name=fill --filename=$dev --ioengine=libaio --direct=1 --rw=write --bs=1M --iodepth=8 \
		>/dev/null 2>&1 || die "fill $dev"
done

# job NAME RW BS QD DEV: prints "KiB/s IOPS".
job() {
	fio --name="$1" --filename="$5" --ioengine=libaio --direct=1 --rw="$2" --bs="$3" --iodepth="$4" \
		--time_based --runtime="$RUNTIME" --ramp_time=1 --randrepeat=0 --norandommap \
		--output-format=terse --terse-version=3 >/tmp/b.terse 2>/tmp/b.err ||
		{ cat /tmp/b.err; die "fio $1 on $5"; }
	case $2 in
	*read) cut -d';' -f7,8 /tmp/b.terse | tr ';' ' ' ;;
	*) cut -d';' -f48,49 /tmp/b.terse | tr ';' ' ' ;;
	esac
}

printf '\n%-22s %14s %14s %8s\n' "job" "rraid" "md" "rraid/md"
for spec in "seq-read-1M-QD8:read:1M:8:MiB/s" "seq-write-1M-QD8:write:1M:8:MiB/s" \
	"rand-read-4K-QD32:randread:4k:32:IOPS" "rand-write-4K-QD32:randwrite:4k:32:IOPS"; do
	IFS=: read -r name rw bs qd unit <<J
$spec
J
	sr=0 sm=0 i=0
	while [ $i -lt "$ROUNDS" ]; do
		set -- $(job "$name" "$rw" "$bs" "$qd" /dev/rraid0)
		if [ "$unit" = IOPS ]; then sr=$((sr + $2)); else sr=$((sr + $1)); fi
		set -- $(job "$name" "$rw" "$bs" "$qd" /dev/md0)
		if [ "$unit" = IOPS ]; then sm=$((sm + $2)); else sm=$((sm + $1)); fi
		i=$((i + 1))
	done
	if [ "$unit" = IOPS ]; then
		vr=$((sr / ROUNDS)) vm=$((sm / ROUNDS))
	else
		vr=$((sr / ROUNDS / 1024)) vm=$((sm / ROUNDS / 1024))
	fi
	ratio=$(awk -v a="$sr" -v b="$sm" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
	printf '%-22s %8s %-5s %8s %-5s %8s\n' "$name" "$vr" "$unit" "$vm" "$unit" "$ratio"
done

r=$(sysw /sys/kernel/rraid/remove rraid0)
[ "$r" = OK ] || die "remove rraid0: $r"
mdadm --stop /dev/md0 >/dev/null 2>&1 || die "mdadm --stop"
bad=$(dmesg | grep -v '^rraid:' | grep -E "$DMESG_BAD")
[ -z "$bad" ] || { echo "$bad"; die "kernel log holds errors"; }
echo
echo "bench: kernel log clean"
