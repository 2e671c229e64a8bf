# Guest-side test library for rraid's VM suite; sourced by tests/vm/*.sh, demo and bench.
# Runs under busybox sh in the guest (scripts/guest/init sets DISKS, RRAID_KO and RRAID_LIB).
#
# A test group is a file of functions plus `t_run NAME FUNCTION [ARGS...]` lines, ending with
# `t_summary`. For each test t_run
#   - clears dmesg, runs the function in a subshell with its output going to a log,
#   - tears down whatever the test left (mounts, rraid arrays, md arrays, dm devices, brd,
#     null_blk) and fails the test if that teardown fails,
#   - fails the test if dmesg holds BUG, WARNING, Oops, panic, refcount_t or similar,
#   - prints the reasons and the log's tail, then exactly `PASS: NAME` or `FAIL: NAME`,
#   - bounds test + teardown by T_TIMEOUT seconds (default 180, times T_SCALE, which the debug
#     kernel's runs set to 3; 30 s after a kernel Oops); a
#     test past it is reported as FAIL with the kernel log's tail, and the group ends there
#     (the stuck task cannot be killed); scripts/vm-test counts the tests never run as failed.
# A function fails by calling `fail REASON` (which returns 1; write `... || return 1` or
# `fail ...; return 1`) or by returning non-zero. t_summary prints `N passed, N failed` and
# returns non-zero when a test failed or none ran.
#
# With RRAID_LIST=1 (scripts/vm-test on the host) t_run only prints the names it would run.
# With RRAID_FILTER=WORD only tests whose name contains WORD run. RRAID_SKIP="NAME ..." skips
# tests already reported by an earlier boot (scripts/vm-test resuming after a crash).

RRAID_SYS=/sys/kernel/rraid
RRAID_KO="${RRAID_KO:-/rraid/rraid.ko}"
SYSFS_WRITE="${SYSFS_WRITE:-/rraid/sysfs-write}"
T_PASSED=0
T_FAILED=0
T_DIR=/tmp/rraid-t
T_LOG=$T_DIR/log
T_REASONS=$T_DIR/reasons
T_MNT=/mnt/rraid-t

# Patterns of kernel log lines that fail any test; lines rraid prints itself ("rraid: ...") are
# exempt, since bad-input tests make it echo arbitrary user bytes.
DMESG_BAD='BUG|WARNING|Oops|[Pp]anic|refcount_t|general protection|UBSAN|INFO: task .* blocked|stack-protector|list_add corruption|list_del corruption|bad page state|kernel NULL pointer'

# --- reporting -------------------------------------------------------------------------------

# fail REASON: records why the current test fails; returns 1.
fail() {
	echo "$*" >>"$T_REASONS"
	echo "FAILED: $*"
	return 1
}

# note TEXT: a line printed under the test's PASS/FAIL line's predecessor (figures, details).
note() {
	echo "  note: $*" >>"$T_DIR/notes"
}

# t_run NAME FUNCTION [ARGS...]
t_run() {
	t_name=$1
	shift
	if [ -n "${RRAID_FILTER:-}" ]; then
		case "$t_name" in
		*"$RRAID_FILTER"*) ;;
		*) return 0 ;;
		esac
	fi
	if [ "${RRAID_LIST:-0}" = 1 ]; then
		echo "$t_name"
		return 0
	fi
	case " ${RRAID_SKIP:-} " in
	*" $t_name "*) return 0 ;;
	esac
	mkdir -p "$T_DIR" "$T_MNT"
	: >"$T_LOG"
	: >"$T_REASONS"
	: >"$T_DIR/notes"
	dmesg_mark "begin $t_name"
	t_start=$(date +%s)
	# A watchdog bounds the test plus its teardown. Past T_TIMEOUT the test is stuck (usually in
	# the kernel, where it cannot be killed): report it, end the group, let the boot end.
	t_timed_out=0
	trap 't_timed_out=1' USR1
	t_watchdog $$ &
	t_dog=$!
	("$@") >>"$T_LOG" 2>&1 &
	t_wait $!
	rc=$?
	[ $t_timed_out -eq 1 ] || [ $rc -eq 0 ] || [ -s "$T_REASONS" ] ||
		echo "test function returned $rc" >>"$T_REASONS"
	if [ $t_timed_out -eq 0 ]; then
		t_teardown >>"$T_LOG" 2>&1 &
		t_wait $! || echo "teardown failed (see log)" >>"$T_REASONS"
	fi
	kill $t_dog 2>/dev/null
	trap - USR1
	if [ $t_timed_out -eq 1 ]; then
		echo "stuck: not done after $(t_limit)s (T_TIMEOUT x T_SCALE) or 30s after a kernel Oops;" \
			"the group stops here" >>"$T_REASONS"
		dmesg | grep -v '^rraid:' | grep -E "$DMESG_BAD" | head -3 | sed 's/^/    dmesg: /' >>"$T_REASONS"
		dmesg | tail -80 | sed 's/^/  dmesg| /' >>"$T_LOG"
		tail -100 "$T_LOG" | sed 's/^/  log| /'
		sed 's/^/  reason: /' "$T_REASONS"
		echo "FAIL: $t_name"
		T_FAILED=$((T_FAILED + 1))
		T_STUCK=1
		t_summary
		exit 1
	fi
	# Lockdep switches itself off after its first report; a test that runs after that has its
	# locking unchecked, so it cannot pass.
	if grep -q 'debug_locks: *0' /proc/lockdep_stats 2>/dev/null; then
		echo "lockdep is off (it reported earlier in this boot): locking not checked" >>"$T_REASONS"
	fi
	bad=$(dmesg | grep -v '^rraid:' | grep -E "$DMESG_BAD" | head -5)
	if [ -n "$bad" ]; then
		echo "dmesg holds kernel errors:" >>"$T_REASONS"
		echo "$bad" | sed 's/^/    /' >>"$T_REASONS"
		dmesg | tail -60 | sed 's/^/  dmesg| /' >>"$T_LOG"
	fi
	t_secs=$(($(date +%s) - t_start))
	cat "$T_DIR/notes"
	if [ -s "$T_REASONS" ]; then
		tail -25 "$T_LOG" | sed 's/^/  log| /'
		sed 's/^/  reason: /' "$T_REASONS"
		echo "FAIL: $t_name"
		T_FAILED=$((T_FAILED + 1))
	else
		echo "  (${t_secs}s)"
		echo "PASS: $t_name"
		T_PASSED=$((T_PASSED + 1))
	fi
	return 0
}

# dmesg_mark TEXT: finishes any pending kernel log line (a line printed without its newline
# stays open until the next record), then clears the log, so that what follows is only what
# comes after. The mark itself ("vm-test: TEXT") goes to the console log only.
dmesg_mark() {
	echo "vm-test: $1" | cut -c1-120 >/dev/kmsg
	dmesg -c >/dev/null
}

# t_limit: the per-test time limit in seconds.
t_limit() {
	echo $((${T_TIMEOUT:-180} * ${T_SCALE:-1}))
}

# t_watchdog PID: sends PID SIGUSR1 after T_TIMEOUT seconds, or 30 s after an Oops/BUG shows
# up in dmesg (a crashed kernel thread usually leaves the test hanging for good).
t_watchdog() {
	local waited oops_at
	waited=0
	oops_at=
	while [ $waited -lt "$(t_limit)" ]; do
		sleep 5
		waited=$((waited + 5))
		if [ -z "$oops_at" ] && dmesg | grep -v '^rraid:' | grep -qE 'Oops|BUG:|Kernel panic'; then
			oops_at=$waited
		fi
		[ -n "$oops_at" ] && [ $((waited - oops_at)) -ge 30 ] && break
	done
	kill -USR1 "$1"
}

# t_wait PID: waits for PID; returns its status, or 255 when the watchdog fired first.
t_wait() {
	while :; do
		wait "$1"
		tw_rc=$?
		[ $t_timed_out -eq 1 ] && return 255
		# wait also returns (above 128) when a trapped signal arrives; then PID still runs.
		kill -0 "$1" 2>/dev/null || return $tw_rc
	done
}

# t_kmemleak: under the debug kernel, a scan after the group's tests finds no object that rraid
# allocated and lost. Two scans: kmemleak reports only objects unreferenced in both.
t_kmemleak() {
	echo scan >/sys/kernel/debug/kmemleak || { fail "kmemleak scan"; return 1; }
	sleep 6
	echo scan >/sys/kernel/debug/kmemleak || { fail "kmemleak scan"; return 1; }
	cat /sys/kernel/debug/kmemleak >"$T_DIR/kmemleak"
	n=$(grep -c '^unreferenced object' "$T_DIR/kmemleak")
	note "kmemleak: $n unreferenced objects in all"
	if grep -q 'rraid' "$T_DIR/kmemleak"; then
		grep -B2 -A25 'rraid' "$T_DIR/kmemleak" | head -60
		fail "kmemleak reports objects allocated by rraid"
		return 1
	fi
}

# t_summary: the group's closing line; non-zero when anything failed or nothing ran.
t_summary() {
	[ "${RRAID_LIST:-0}" = 1 ] && return 0
	# Guest-only check (not listed on the host): present only in the debug kernel.
	[ -e /sys/kernel/debug/kmemleak ] && [ -z "${T_STUCK:-}" ] && t_run kmemleak t_kmemleak
	echo "$T_PASSED passed, $T_FAILED failed"
	[ $T_FAILED -eq 0 ] && { [ $T_PASSED -gt 0 ] || [ -n "${RRAID_SKIP:-}" ]; }
}

# t_teardown: returns the machine to a clean state between tests (module stays loaded).
t_teardown() {
	local ok m d r
	ok=0
	for m in $(awk '$2 ~ /^\/mnt\// {print $2}' /proc/mounts | sort -r); do
		umount "$m" || { echo "teardown: cannot umount $m"; ok=1; }
	done
	for d in /sys/block/rraid*; do
		[ -e "$d" ] || continue
		r=$(rraid_remove "${d##*/}")
		[ "$r" = OK ] || { echo "teardown: remove ${d##*/}: $r"; ok=1; }
	done
	for d in /sys/block/md*; do
		[ -e "$d" ] || continue
		mdadm --stop "/dev/${d##*/}" >/dev/null 2>&1 || { echo "teardown: mdadm --stop ${d##*/}"; ok=1; }
	done
	nvmf_teardown || { echo "teardown: NVMe/TCP"; ok=1; }
	if [ -n "$(ls /dev/mapper 2>/dev/null | grep -v '^control$')" ]; then
		dmsetup remove_all || { echo "teardown: dmsetup remove_all"; ok=1; }
	fi
	# The system sync speed limits back to md's defaults.
	if [ -e "$RRAID_SYS/speed_limit_max" ]; then
		[ "$(sysw "$RRAID_SYS/speed_limit_min" 1000)" = OK ] &&
			[ "$(sysw "$RRAID_SYS/speed_limit_max" 200000)" = OK ] ||
			{ echo "teardown: cannot reset the sync speed limits"; ok=1; }
	fi
	for m in brd null_blk; do
		[ -d /sys/module/$m ] || continue
		modprobe -r $m || { echo "teardown: modprobe -r $m"; ok=1; }
	done
	return $ok
}

# --- sysfs control ---------------------------------------------------------------------------

# sysw FILE TEXT: one write() of "TEXT\n" to FILE; prints OK or the errno name (EINVAL, ...).
sysw() {
	printf '%s\n' "$2" | "$SYSFS_WRITE" "$1"
}

rraid_loaded() {
	[ -d /sys/module/rraid ]
}

# rraid_load: insmod $RRAID_KO unless loaded; fails the test when the module is absent.
rraid_load() {
	rraid_loaded && return 0
	[ -f "$RRAID_KO" ] || { fail "rraid.ko is not in the initramfs ($RRAID_KO): module not built"; return 1; }
	insmod "$RRAID_KO" || { fail "insmod $RRAID_KO failed"; return 1; }
	[ -d "$RRAID_SYS" ] || { fail "$RRAID_SYS missing after insmod"; return 1; }
}

# rraid_create LINE: prints OK or the errno name. A line without `metadata=` gets
# `metadata=${RRAID_META:-none}`: the groups before 45-meta address member sectors directly
# (data from sector 0, as `mdadm --build`); 45-meta and 46-crash test md's superblocks.
rraid_create() {
	case " $1 " in
	*" metadata="*) sysw "$RRAID_SYS/create" "$1" ;;
	*) sysw "$RRAID_SYS/create" "$1 metadata=${RRAID_META:-none}" ;;
	esac
}

# rraid_assemble LINE: prints OK or the errno name.
rraid_assemble() {
	sysw "$RRAID_SYS/assemble" "$1"
}

# asm NAME DEVICES...: assembles NAME from its superblocks; /dev/NAME must appear.
asm() {
	local a_name r
	rraid_load || return 1
	a_name=$1
	shift
	r=$(rraid_assemble "$a_name $*")
	[ "$r" = OK ] || { fail "assemble '$a_name $*': $r"; return 1; }
	wait_bdev "/dev/$a_name" 50 || { fail "/dev/$a_name did not appear"; return 1; }
}

# sbv DEV FIELD: a field of `mdadm --examine DEV` ("Data Offset", "Events", ...), its value
# up to the first blank.
sbv() {
	mdadm --examine "$1" 2>/dev/null | sed -n "s/^ *$2 : \([^ ]*\).*/\1/p" | head -1
}

# rraid_remove NAME: prints OK or the errno name.
rraid_remove() {
	sysw "$RRAID_SYS/remove" "$1"
}

# mk NAME LEVEL_ARGS MEMBERS...: loads the module, creates an array, checks /dev/NAME appears.
#   mk rraid0 "level=0 chunk=64K" /dev/vdb /dev/vdc
# wait_bdev DEV TENTHS: waits up to TENTHS tenths of a second for block device DEV to appear.
wait_bdev() {
	local i
	i=0
	while [ ! -b "$1" ] && [ $i -lt "$2" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -b "$1" ]
}

mk() {
	local mk_name mk_args r
	rraid_load || return 1
	mk_name=$1 mk_args=$2
	shift 2
	r=$(rraid_create "$mk_name $mk_args $*")
	[ "$r" = OK ] || { fail "create '$mk_name $mk_args $*': $r"; return 1; }
	wait_bdev "/dev/$mk_name" 50 || { fail "/dev/$mk_name did not appear"; return 1; }
	[ -d "/sys/block/$mk_name/rraid" ] || { fail "/sys/block/$mk_name/rraid missing"; return 1; }
}

# rm_array NAME: removes an array, which must succeed.
rm_array() {
	local r
	r=$(rraid_remove "$1")
	[ "$r" = OK ] || { fail "remove $1: $r"; return 1; }
	[ ! -e "/sys/block/$1" ] || { fail "/sys/block/$1 still exists after remove"; return 1; }
}

# speed_sys MIN MAX: the system sync speed limits in KiB/s (md's dev.raid.speed_limit_*).
speed_sys() {
	rraid_load || return 1
	[ "$(sysw "$RRAID_SYS/speed_limit_min" "$1")" = OK ] || { fail "speed_limit_min $1 refused"; return 1; }
	[ "$(sysw "$RRAID_SYS/speed_limit_max" "$2")" = OK ] || { fail "speed_limit_max $2 refused"; return 1; }
}

# sync_wait NAME [SECS]: waits until NAME's sync_action is idle (at most SECS, default 120).
sync_wait() {
	local i lim
	lim=$((${2:-120} * 10))
	i=0
	while [ "$(attr "$1" sync_action)" != idle ]; do
		[ $i -ge $lim ] && {
			fail "$1: sync_action still '$(attr "$1" sync_action)' after ${2:-120}s ($(attr "$1" sync_completed))"
			return 1
		}
		sleep 0.1
		i=$((i + 1))
	done
}

# run_action NAME ACTION: starts a check or repair and waits for its end.
run_action() {
	[ "$(sysw "/sys/block/$1/rraid/sync_action" "$2")" = OK ] || { fail "sync_action $2 refused"; return 1; }
	sync_wait "$1" 60
}

# attr NAME FILE: a status attribute of an array (/sys/block/NAME/rraid/FILE).
attr() {
	cat "/sys/block/$1/rraid/$2"
}

# wait_attr NAME FILE VALUE TENTHS: waits up to TENTHS tenths of a second for the array's FILE
# to read VALUE; fails if it never does.
wait_attr() {
	local i
	i=0
	while [ "$(attr "$1" "$2")" != "$3" ] && [ $i -lt "$4" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ "$(attr "$1" "$2")" = "$3" ]
}

# expect_attr NAME FILE VALUE
expect_attr() {
	local v
	v=$(attr "$1" "$2" 2>&1)
	[ "$v" = "$3" ] || { fail "$1/rraid/$2 is '$v', expected '$3'"; return 1; }
}

# member_state NAME DEV: the state list of member DEV (kernel name, e.g. vdc or dm-0).
member_state() {
	cat "/sys/block/$1/rraid/dev-$2/state"
}

# has_word LIST WORD: comma-separated LIST contains WORD.
has_word() {
	case ",$1," in *",$2,"*) return 0 ;; esac
	return 1
}

# kname DEV: kernel name of a block device (/dev/mapper/x -> dm-0), found by its device number:
# without udev, dmsetup makes /dev/mapper/x a node of its own, not a link.
kname() {
	local kn
	kn=$(stat -L -c '%t %T' "$1" 2>/dev/null) || { basename "$1"; return; }
	set -- $kn
	basename "$(readlink "/sys/dev/block/$((0x$1)):$((0x$2))")"
}

# expect_slots [-f] NAME DEV...: the DEVs hold slots 0, 1, ... of array NAME in that order, each
# in_sync; with -f (a fresh array) none may be faulty either.
expect_slots() {
	local fresh= name i=0 d k st
	[ "$1" = -f ] && { fresh=1; shift; }
	name=$1
	shift
	for d in "$@"; do
		k=$(kname "$d")
		expect_attr "$name" "dev-$k/slot" "$i" || return 1
		st=$(member_state "$name" "$k")
		has_word "$st" in_sync || { fail "dev-$k/state is '$st', expected in_sync"; return 1; }
		[ -n "$fresh" ] && has_word "$st" faulty && { fail "dev-$k/state is '$st' on a fresh array"; return 1; }
		i=$((i + 1))
	done
	return 0
}

# dev_bytes DEV: size in bytes.
dev_bytes() {
	blockdev --getsize64 "$1"
}

# rraid_lines: number of kernel log lines from rraid since dmesg was last cleared.
rraid_lines() {
	dmesg | grep -c '^rraid:'
}

# nth N WORDS...: the Nth (1-based) of WORDS.
nth() {
	local n
	n=$1
	shift
	eval "echo \${$n}"
}

# first N WORDS...: the first N of WORDS.
first() {
	local n
	n=$1
	shift
	echo "$@" | cut -d' ' -f1-"$n"
}

# --- block statistics ------------------------------------------------------------------------

# reads_done DEV / writes_done DEV: completed reads / writes of a disk (/sys/block/X/stat).
reads_done() {
	awk '{print $1}' "/sys/block/$(kname "$1")/stat"
}
writes_done() {
	awk '{print $5}' "/sys/block/$(kname "$1")/stat"
}
# flushes_done DEV: completed flush requests of a disk.
flushes_done() {
	awk '{print $16}' "/sys/block/$(kname "$1")/stat"
}

# --- md peers --------------------------------------------------------------------------------

# md_build MD LEVEL CHUNK_KIB MEMBERS...: an md array without superblock over the members.
md_build() {
	local md lvl ch
	md=$1 lvl=$2 ch=$3
	shift 3
	case $lvl in
	0) modprobe raid0 || { fail "modprobe raid0"; return 1; }
	   mdadm --build "$md" --level=0 --chunk="$ch" --raid-devices=$# "$@" ;;
	1) modprobe raid1 || { fail "modprobe raid1"; return 1; }
	   mdadm --build "$md" --level=1 --assume-clean --raid-devices=$# "$@" ;;
	esac || { fail "mdadm --build $md level $lvl over $*"; return 1; }
	[ -b "$md" ] || { fail "$md missing after mdadm --build"; return 1; }
}

md_stop() {
	mdadm --stop "$1" || { fail "mdadm --stop $1"; return 1; }
}

# md_asm MEMBERS...: assembles /dev/md0 from its superblocks (fewer members: degraded).
md_asm() {
	md_mods
	mdadm --assemble /dev/md0 --run "$@" </dev/null || { fail "mdadm --assemble /dev/md0 $*"; return 1; }
	[ -b /dev/md0 ] || { fail "/dev/md0 missing after assemble"; return 1; }
}

# md_mods: loads md's personalities (built as modules), for mdadm's create and assemble.
md_mods() {
	modprobe raid1 2>/dev/null
	modprobe raid456 2>/dev/null
	modprobe raid10 2>/dev/null
	return 0
}

# md_idle: waits (at most 150 s) until md0 runs no sync action.
md_idle() {
	local i
	i=0
	while [ "$(cat /sys/block/md0/md/sync_action)" != idle ]; do
		[ $i -lt 1500 ] || { fail "md0 still runs '$(cat /sys/block/md0/md/sync_action)' after 150 s"; return 1; }
		sleep 0.1
		i=$((i + 1))
	done
}

# md_check0: md's `check` over md0 runs to its end and finds mismatch_cnt 0.
md_check0() {
	local mc
	echo 500000 >/proc/sys/dev/raid/speed_limit_min
	md_idle || return 1
	echo check >/sys/block/md0/md/sync_action || { fail "echo check > md0 sync_action"; return 1; }
	md_idle || return 1
	[ "$(cat /sys/block/md0/md/last_sync_action)" = check ] ||
		{ fail "md0 last_sync_action '$(cat /sys/block/md0/md/last_sync_action)': check did not run"; return 1; }
	mc=$(cat /sys/block/md0/md/mismatch_cnt)
	echo "md check: mismatch_cnt $mc"
	[ "$mc" = 0 ] || { fail "md check over rraid's members: mismatch_cnt $mc"; return 1; }
}

# --- I/O checks ------------------------------------------------------------------------------

FIO_COMMON="--ioengine=libaio --direct=1 --group_reporting --randrepeat=1 --verify=crc32c --verify_fatal=1"

# bio_trace_on DEV...: records the bios queued to DEVs (tracepoint block_bio_queue), each line
# ending in the submitting task's name: who sent a member bio, fio itself or a worker.
bio_trace_on() {
	local tr f d mm
	tr=/sys/kernel/tracing
	[ -e $tr/trace ] || mount -t tracefs nodev $tr || { fail "mount tracefs"; return 1; }
	[ -d $tr/events/block/block_bio_queue ] || { fail "no block_bio_queue tracepoint"; return 1; }
	echo 0 >$tr/tracing_on
	echo 16384 >$tr/buffer_size_kb
	echo >$tr/trace
	f=
	for d in "$@"; do
		mm=$(stat -L -c '%t %T' "$d") || { fail "stat $d"; return 1; }
		set -- $mm
		f="${f:+$f || }dev == $(((0x$1 << 20) | 0x$2))"
	done
	echo "$f" >$tr/events/block/block_bio_queue/filter || { fail "trace filter '$f'"; return 1; }
	echo 1 >$tr/events/block/block_bio_queue/enable
	echo 1 >$tr/tracing_on
}

# bio_trace_off FILE: stops the trace and saves its lines: DEV RWBS SECTOR LEN TASK.
bio_trace_off() {
	local tr
	tr=/sys/kernel/tracing
	echo 0 >$tr/tracing_on
	echo 0 >$tr/events/block/block_bio_queue/enable
	echo 0 >$tr/events/block/block_bio_queue/filter
	sed -n 's/.*block_bio_queue: \([0-9,]*\) \([A-Z]*\) \([0-9]*\) + \([0-9]*\) \[\(.*\)\]$/\1 \2 \3 \4 \5/p' \
		$tr/trace >"$1"
	grep -q "Lost events\|LOST" $tr/trace && note "trace lost events"
	echo >$tr/trace
}

# fio_verify DEV [FIO_ARGS...]: random writes of 4K..256K over the whole device, then reads
# every block back and checks its crc32c.
fio_verify() {
	local dev
	dev=$1
	shift
	fio --name=verify --filename="$dev" $FIO_COMMON --rw=randwrite --bsrange=4k-256k \
		--iodepth=16 --do_verify=1 "$@" || { fail "fio verify on $dev failed"; return 1; }
}

# fio_fill DEV [FIO_ARGS...]: the same writes as fio_verify, without the read-back.
fio_fill() {
	local dev
	dev=$1
	shift
	fio --name=verify --filename="$dev" $FIO_COMMON --rw=randwrite --bsrange=4k-256k \
		--iodepth=16 --do_verify=0 "$@" || { fail "fio write on $dev failed"; return 1; }
}

# fio_check DEV [FIO_ARGS...]: verifies, read-only, what fio_fill wrote.
fio_check() {
	local dev
	dev=$1
	shift
	fio --name=verify --filename="$dev" $FIO_COMMON --rw=randwrite --bsrange=4k-256k \
		--iodepth=16 --verify_only "$@" || { fail "fio verify-only on $dev failed"; return 1; }
}

# FIO_MB: MiB per fio_suite job (4 under RRAID_FULL=1).
FIO_MB=1
[ "${RRAID_FULL:-0}" = 1 ] && FIO_MB=4

# fio_suite DEV BYTES SEED: one fio (each start costs seconds under TCG) with four jobs at
# once, each in its own quarter of the device (the quarters share stripes where they meet),
# each verifying what it wrote: random 4K..1M at QD 32, sequential 4K..1M at QD 1 and at QD 32,
# random 4K at QD 1.
fio_suite() {
	local q
	q=$(($2 / 4 / 4096 * 4096))
	fio --filename="$1" $FIO_COMMON --do_verify=1 --size="$q" \
		--name=rand-qd32 --rw=randwrite --bsrange=4k-1M --iodepth=32 \
		--io_size=$((q < 2 * FIO_MB << 20 ? q : 2 * FIO_MB << 20)) --randseed="$3" \
		--name=seq-qd1 --offset="$q" --rw=write --bsrange=4k-1M --iodepth=1 \
		--size=$((q < FIO_MB << 20 ? q : FIO_MB << 20)) --randseed=$(($3 + 1)) \
		--name=seq-qd32 --offset=$((2 * q)) --rw=write --bsrange=4k-1M --iodepth=32 \
		--size=$((q < FIO_MB << 20 ? q : FIO_MB << 20)) --randseed=$(($3 + 2)) \
		--name=rand4k-qd1 --offset=$((3 * q)) --rw=randwrite --bs=4k --iodepth=1 \
		--io_size=$((FIO_MB * 128))K --randseed=$(($3 + 3)) ||
		{ fail "fio verify (random/sequential, QD 1/32) on $1"; return 1; }
}

# randread DEV [FIO_ARGS...]: 4096 random 4K direct reads (fio's output in $T_DIR/rr.out).
randread() {
	local dev
	dev=$1
	shift
	fio --name=rr --filename="$dev" --ioengine=libaio --direct=1 --rw=randread --bs=4k \
		--iodepth=16 --io_size=16M --randrepeat=1 "$@" >"$T_DIR/rr.out" 2>&1 ||
		{ cat "$T_DIR/rr.out"; fail "fio randread on $dev"; return 1; }
}

# ext4_check DEV: mkfs.ext4, mount, write files and checksum them, umount, e2fsck -fn,
# remount, compare checksums, umount.
ext4_check() {
	local dev i kib j
	dev=$1
	mkfs.ext4 -F -q -b 4096 "$dev" || { fail "mkfs.ext4 $dev"; return 1; }
	mount -t ext4 "$dev" "$T_MNT" || { fail "mount $dev"; return 1; }
	mkdir -p "$T_MNT/d/e"
	i=0
	for kib in 1 3 64 100 511 1024 2049 4096 8191; do
		dd if=/dev/urandom of="$T_MNT/f$i" bs=1024 count=$kib 2>/dev/null ||
			{ fail "write f$i"; return 1; }
		i=$((i + 1))
	done
	for j in $(seq 1 64); do
		head -c $((j * 97)) /dev/urandom >"$T_MNT/d/e/small$j" || { fail "write small$j"; return 1; }
	done
	cp -a /rraid "$T_MNT/d/rraid-copy" || { fail "copy a tree"; return 1; }
	(cd "$T_MNT" && find . -type f ! -name lost+found | sort | xargs sha256sum) >"$T_DIR/sums" ||
		{ fail "sha256sum"; return 1; }
	umount "$T_MNT" || { fail "umount"; return 1; }
	e2fsck -fn "$dev" || { fail "e2fsck -fn $dev not clean"; return 1; }
	mount -t ext4 "$dev" "$T_MNT" || { fail "remount $dev"; return 1; }
	(cd "$T_MNT" && sha256sum -c "$T_DIR/sums" >/dev/null) ||
		{ fail "checksums differ after remount"; return 1; }
	umount "$T_MNT" || { fail "umount after remount"; return 1; }
}

# sha_head DEV BYTES: sha256 of the first BYTES of DEV.
sha_head() {
	head -c "$2" "$1" | sha256sum | cut -d' ' -f1
}

# zero DEV...: overwrites whole devices with zeroes (members that must start out identical).
zero() {
	local z zb
	for z in "$@"; do
		zb=$(dev_bytes "$z")
		if [ $((zb % 1048576)) -eq 0 ]; then
			dd if=/dev/zero of="$z" bs=1M count=$((zb / 1048576)) oflag=direct 2>/dev/null
		else
			dd if=/dev/zero of="$z" bs=4096 count=$((zb / 4096)) oflag=direct 2>/dev/null
		fi || { fail "zeroing $z"; return 1; }
	done
}

# --- array data (uring-write, blkcmp, blkzeroout) -------------------------------------------
# Under TCG /dev/urandom is slow to read, fio slow to start (it loads 80 MiB of libraries), and
# pipes and cmp are slow: data is made by pat, written by uring-write (which also keeps the
# test's image of the array, /tmp/exp) and compared by blkcmp, which says where it differs.

UWRITE="${UWRITE:-/rraid/uring-write}"

# zero_members DEV...: BLKZEROOUT over whole members (fast on virtio: QEMU zeroes the file).
zero_members() {
	local d
	for d in "$@"; do
		/rraid/blkzeroout "$d" 0 "$(dev_bytes "$d")" || { fail "zeroing $d"; return 1; }
	done
}

# pat FILE BYTES: random bytes, no two 4K blocks alike within 64 MiB: one MiB from
# /dev/urandom, repeated with a rotation of its own per MiB (i x 151 KiB + i x 64 bytes: distinct
# modulo 4K for i < 64).
pat() {
	local i r
	head -c 1048576 /dev/urandom >/tmp/pat-base || { fail "reading /dev/urandom"; return 1; }
	: >"$1"
	i=0
	while [ $((i * 1048576)) -lt "$2" ]; do
		r=$(((i * 151 * 1024 + i * 64) % 1048576))
		dd if=/tmp/pat-base bs=64k iflag=skip_bytes skip=$r 2>/dev/null >>"$1"
		dd if=/tmp/pat-base bs=64k iflag=count_bytes count=$r 2>/dev/null >>"$1"
		i=$((i + 1))
	done
	truncate -s "$2" "$1"
	[ "$(stat -c %s "$1")" -eq "$2" ] || { fail "making $1"; return 1; }
}

# dev_cmp A B OFF LEN: A's bytes [OFF, OFF+LEN) equal B's (devices read with O_DIRECT); blkcmp
# prints where they differ.
dev_cmp() {
	/rraid/blkcmp "$1" "$2" "$3" "$4"
}

# dev_save DEV BYTES: DEV's first BYTES into /tmp/got (O_DIRECT).
dev_save() {
	dd if="$1" of=/tmp/got bs=1M iflag=direct,count_bytes count="$2" 2>/dev/null &&
		[ "$(stat -c %s /tmp/got)" -eq "$2" ] || { fail "reading $2 bytes of $1"; return 1; }
}

# put SRC OFF LEN: one O_DIRECT write of SRC's bytes [OFF, OFF+LEN) to rraid0 at OFF, mirrored
# into the expected image /tmp/exp.
put() {
	$UWRITE -m /tmp/exp /dev/rraid0 "$1" "$2:$3" || { fail "write $3 bytes at $2"; return 1; }
}

# write_pat [BS]: /tmp/pat1 over the start of rraid0 in O_DIRECT writes of BS bytes (default
# 1 MiB; a full stripe on parity levels); /tmp/exp becomes a copy of it.
write_pat() {
	dd if=/tmp/pat1 of=/dev/rraid0 bs="${1:-1M}" oflag=direct 2>/dev/null ||
		{ fail "writing the pattern"; return 1; }
	cp /tmp/pat1 /tmp/exp
}

# fill_pat BYTES [BS]: a fresh pattern (pat /tmp/pat1 BYTES) over the first BYTES of rraid0,
# written by write_pat BS.
fill_pat() {
	pat /tmp/pat1 "$1" || return 1
	write_pat "${2:-}"
}

# dust_read MEMBER_BLOCK ARRAY_OFF [WR_FAILS]: makes 512-byte block MEMBER_BLOCK of dm-dust
# dust0 bad (WR_FAILS: writes fail that often before one clears it) and reads the 4K at
# ARRAY_OFF of rraid0, whose data (or first copy) lies there; the data is right.
dust_read() {
	dmsetup message dust0 0 addbadblock "$1" ${3:-} || { fail "addbadblock $1"; return 1; }
	dd if=/dev/mapper/dust0 of=/dev/null bs=4k skip=$(($1 / 8)) count=1 iflag=direct 2>/dev/null &&
		{ fail "dust member reads its bad block $1 without error: the test cannot fail"; return 1; }
	dev_cmp /dev/rraid0 /tmp/exp "$2" 4096 || { fail "read over bad block $1 returned wrong data"; return 1; }
}

# --- members by slot ($members: the array's members in slot order) ---------------------------

# fail_slot SLOT: marks the member in SLOT of rraid0 faulty through sysfs; must be accepted.
fail_slot() {
	local k r st
	k=$(kname "$(nth $(($1 + 1)) $members)")
	r=$(sysw "/sys/block/rraid0/rraid/dev-$k/state" faulty)
	[ "$r" = OK ] || { fail "echo faulty > dev-$k/state (slot $1): $r"; return 1; }
	st=$(member_state rraid0 "$k")
	has_word "$st" faulty || { fail "dev-$k/state is '$st' after faulty"; return 1; }
}

# without SLOTS...: the members not in SLOTS (0-based), in slot order.
without() {
	local i d out
	i=0 out=
	for d in $members; do
		case " $* " in
		*" $i "*) ;;
		*) out="$out $d" ;;
		esac
		i=$((i + 1))
	done
	echo $out
}

# --- device mapper ---------------------------------------------------------------------------

# dm_linear NAME DEV [SECTORS]: /dev/mapper/NAME, a linear map of DEV's first SECTORS.
dm_linear() {
	local sec
	sec=${3:-$(blockdev --getsz "$2")}
	dmsetup create "$1" --table "0 $sec linear $2 0" || { fail "dmsetup create $1"; return 1; }
	[ -b "/dev/mapper/$1" ] || dmsetup mknodes "$1"
	[ -b "/dev/mapper/$1" ] || { fail "/dev/mapper/$1 missing"; return 1; }
}

# dm_to_error NAME: swaps NAME's table for the error target: every I/O to it fails from now on.
dm_to_error() {
	local sec
	sec=$(blockdev --getsz "/dev/mapper/$1")
	dmsetup load "$1" --table "0 $sec error" || { fail "dmsetup load $1 error"; return 1; }
	dmsetup resume "$1" || { fail "dmsetup resume $1"; return 1; }
	dmsetup table "$1" | grep -q ' error' || { fail "$1 table is not error"; return 1; }
}

# --- write-intent bitmap and member I/O counts ----------------------------------------------

# bmx DEV FIELD: a field of `mdadm -X DEV`, its value up to the first blank.
bmx() {
	mdadm -X "$1" 2>/dev/null | sed -n "s/^ *$2 : \([^ ]*\).*/\1/p" | head -1
}

# bm_dirty DEV: the dirty bits `mdadm -X DEV` counts.
bm_dirty() {
	mdadm -X "$1" 2>/dev/null | sed -n 's/^ *Bitmap : [0-9]* bits (chunks), \([0-9]*\) dirty.*/\1/p'
}

# bm_bits DEV: the bits (chunks) `mdadm -X DEV` counts.
bm_bits() {
	mdadm -X "$1" 2>/dev/null | sed -n 's/^ *Bitmap : \([0-9]*\) bits.*/\1/p'
}

# rsect DEV / wsect DEV: sectors read / written by a disk (/sys/block/X/stat).
rsect() {
	awk '{print $3}' "/sys/block/$(kname "$1")/stat"
}
wsect() {
	awk '{print $7}' "/sys/block/$(kname "$1")/stat"
}

# bm_fast NAME: the bitmap daemon every second, so bits clear within seconds.
bm_fast() {
	[ "$(sysw "/sys/block/$1/rraid/bitmap/time_base" 1)" = OK ] || { fail "bitmap/time_base 1 refused"; return 1; }
}

# --- remote members: NVMe over TCP to "hosts" in network namespaces -----------------------------
# Host H (a, b, ...) is network namespace rr-H, joined to the initial namespace (the initiator,
# where nvme-tcp opens its sockets) by veth pair rrH (here, 10.9.N.1) / rrH-t (there, 10.9.N.2).
# It runs the kernel's NVMe target: subsystem nqn.2026-12.io.rraid:H, one namespace per disk,
# on TCP port 4420 of its own address. nvmet's configuration is global (configfs): the port's
# listening socket is made in the namespace of whoever links the subsystem into the port, so
# that link is made with nsenter into rr-H.

NVMET=/sys/kernel/config/nvmet

# iproute2's and util-linux's tools by path: busybox's shell runs its own applets of these
# names (no netns, no netem) before it looks at PATH.
ip() { /sbin/ip "$@"; }
tc() { /sbin/tc "$@"; }
nsenter() { /bin/nsenter "$@"; }
# Fast failure, as the issue's connect: keep-alive 1 s, reconnect every 1 s, give up after 10 s.
NVMF_OPTS="keep_alive_tmo=1,reconnect_delay=1,ctrl_loss_tmo=10"

nvmf_nqn() { echo "nqn.2026-12.io.rraid:$1"; }

# nvmf_host H N DISKS...: host H (index N, 1..) exporting DISKS as namespaces 1, 2, ...
nvmf_host() {
	local h n nqn sub i d
	h=$1 n=$2
	shift 2
	modprobe nvmet-tcp || { fail "modprobe nvmet-tcp"; return 1; }
	modprobe nvme-tcp && modprobe veth || { fail "modprobe nvme-tcp veth"; return 1; }
	[ -d "$NVMET" ] || mount -t configfs none /sys/kernel/config || { fail "mount configfs"; return 1; }
	ip netns add "rr-$h" || { fail "ip netns add rr-$h"; return 1; }
	ip link add "rr$h" type veth peer name "rr$h-t" netns "rr-$h" || { fail "veth rr$h"; return 1; }
	ip addr add "10.9.$n.1/24" dev "rr$h" && ip link set "rr$h" up &&
		ip -n "rr-$h" addr add "10.9.$n.2/24" dev "rr$h-t" &&
		ip -n "rr-$h" link set "rr$h-t" up && ip -n "rr-$h" link set lo up ||
		{ fail "addresses of rr$h"; return 1; }
	nqn=$(nvmf_nqn "$h")
	sub="$NVMET/subsystems/$nqn"
	mkdir "$sub" && echo 1 >"$sub/attr_allow_any_host" || { fail "nvmet subsystem $nqn"; return 1; }
	i=1
	for d in "$@"; do
		mkdir "$sub/namespaces/$i" && echo "$d" >"$sub/namespaces/$i/device_path" &&
			echo 1 >"$sub/namespaces/$i/enable" || { fail "nvmet namespace $i of $h: $d"; return 1; }
		i=$((i + 1))
	done
	mkdir "$NVMET/ports/$n" && echo tcp >"$NVMET/ports/$n/addr_trtype" &&
		echo ipv4 >"$NVMET/ports/$n/addr_adrfam" &&
		echo "10.9.$n.2" >"$NVMET/ports/$n/addr_traddr" &&
		echo 4420 >"$NVMET/ports/$n/addr_trsvcid" || { fail "nvmet port $n"; return 1; }
	nsenter --net="/run/netns/rr-$h" ln -s "$sub" "$NVMET/ports/$n/subsystems/$nqn" ||
		{ fail "nvmet: linking $nqn into port $n in rr-$h"; return 1; }
}

# nvmf_connect H N FAST_IO_FAIL_TMO: connects to host H's subsystem (nvme-cli's connect,
# written to /dev/nvme-fabrics).
nvmf_connect() {
	local r
	r=$(printf 'transport=tcp,traddr=10.9.%s.2,trsvcid=4420,nqn=%s,%s,fast_io_fail_tmo=%s' 		"$2" "$(nvmf_nqn "$1")" "$NVMF_OPTS" "$3" | "$SYSFS_WRITE" /dev/nvme-fabrics)
	[ "$r" = OK ] || { fail "connect to $1: $r"; return 1; }
	nvmf_wait_ns "$1" 1 || return 1
}

# nvmf_ns H NSID: /dev/ of namespace NSID of host H's subsystem, found by its NQN (names
# depend on the order of connects and reconnects); nothing while it has none.
nvmf_ns() {
	local c b
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$(nvmf_nqn "$1")" ] || continue
		for b in "$c"/nvme*n*; do
			[ -e "$b/nsid" ] && [ "$(cat "$b/nsid")" = "$2" ] && { echo "/dev/${b##*/}"; return 0; }
		done
	done
	return 1
}

# nvmf_wait_ns H NSID: waits (20 s) for the namespace's block device.
nvmf_wait_ns() {
	local i
	i=0
	while [ $i -lt 200 ]; do
		d=$(nvmf_ns "$1" "$2") && [ -b "$d" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	fail "namespace $2 of $1 never appeared"
	return 1
}

# nvmf_ctrl_state H: the state of host H's controller (live, connecting, ...), or "gone".
nvmf_ctrl_state() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$(nvmf_nqn "$1")" ] && { cat "$c/state"; return 0; }
	done
	echo gone
}

# nvmf_cut H / nvmf_restore H: host H's link goes down / comes back (in its namespace).
nvmf_cut() {
	ip -n "rr-$1" link set "rr$1-t" down || { fail "cut rr$1"; return 1; }
}
nvmf_restore() {
	ip -n "rr-$1" link set "rr$1-t" up || { fail "restore rr$1"; return 1; }
}

# nvmf_teardown: every controller disconnected, the targets' configuration and the namespaces
# gone.
nvmf_teardown() {
	local c p s n ok
	ok=0
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/delete_controller" ] || continue
		echo 1 >"$c/delete_controller" 2>/dev/null || { echo "teardown: delete ${c##*/}"; ok=1; }
	done
	if [ -d "$NVMET" ]; then
		for p in "$NVMET"/ports/*; do
			[ -d "$p" ] || continue
			for s in "$p"/subsystems/*; do [ -L "$s" ] && rm "$s"; done
			rmdir "$p" || ok=1
		done
		for s in "$NVMET"/subsystems/*; do
			[ -d "$s" ] || continue
			for n in "$s"/namespaces/*; do
				[ -d "$n" ] || continue
				echo 0 >"$n/enable"
				rmdir "$n" || ok=1
			done
			rmdir "$s" || ok=1
		done
	fi
	for n in $(ip netns list 2>/dev/null | awk '{print $1}'); do
		ip netns del "$n" || ok=1
	done
	for n in $(ls /sys/class/net | grep '^rr'); do
		ip link del "$n" 2>/dev/null
	done
	return $ok
}

# fio_max_lat_ms OUTPUT_FILE: the largest completion latency fio reported, in ms.
fio_max_lat_ms() {
	awk '/^ *clat \((nsec|usec|msec)\):/ {
		u = $2; sub(/^\(/, "", u); sub(/\):$/, "", u)
		for (i = 3; i <= NF; i++) if ($i ~ /^max=/) { v = $i; sub(/^max=/, "", v); sub(/,$/, "", v) }
		f = (u == "nsec") ? 1e-6 : (u == "usec") ? 1e-3 : 1
		# fio shortens large values: 2272k.
		if (v ~ /k$/) { sub(/k$/, "", v); f *= 1e3 } else if (v ~ /M$/) { sub(/M$/, "", v); f *= 1e6 }
		if (v * f > m) m = v * f
	} END { printf "%d\n", m }' "$1"
}

# --- bad input -------------------------------------------------------------------------------

# snapshot: what a rejected control write must leave unchanged. A handful of processes, not one
# per disk and file: under TCG each costs tens of milliseconds and bad-input tests take many.
snapshot() {
	local a
	ls /sys/block
	ls /dev | grep rraid
	ls /sys/kernel/rraid 2>&1
	cat /sys/module/rraid/refcnt 2>&1
	ls /sys/block/*/holders
	for a in /sys/block/rraid*/rraid; do
		[ -d "$a" ] || continue
		# The member directories too: one whose state cannot be read still shows here.
		ls "$a"
		grep -H . "$a"/array_state "$a"/degraded "$a"/dev-*/state
	done
}

# bad_write ERRNO FILE DESC < DATA: one write() of DATA to FILE must fail with ERRNO (or with one
# of "EA|EB" where either answer is right), leave exactly one "rraid:" line in dmesg and change
# nothing (snapshot).
bad_write() {
	local bw_want bw_file bw_desc bw_got bw_lines
	bw_want=$1 bw_file=$2 bw_desc=$3
	snapshot >"$T_DIR/snap.before"
	dmesg_mark "bad_write $bw_desc"
	bw_got=$("$SYSFS_WRITE" "$bw_file")
	bw_lines=$(rraid_lines)
	snapshot >"$T_DIR/snap.after"
	echo "write $bw_desc to $bw_file: $bw_got; dmesg:"
	dmesg | grep '^rraid:' | sed 's/^/    /'
	case "|$bw_want|" in
	*"|$bw_got|"*) ;;
	*) fail "write $bw_desc to $bw_file: got $bw_got, expected $bw_want"; return 1 ;;
	esac
	[ "$bw_lines" -eq 1 ] ||
		{ fail "write $bw_desc to $bw_file: $bw_lines 'rraid:' lines in dmesg, expected 1"; return 1; }
	cmp -s "$T_DIR/snap.before" "$T_DIR/snap.after" || {
		diff "$T_DIR/snap.before" "$T_DIR/snap.after"
		fail "write $bw_desc to $bw_file changed state (see log)"
		return 1
	}
}

# expect_err ERRNO FILE TEXT: bad_write of "TEXT\n".
expect_err() {
	local d
	d="'$3'"
	[ ${#3} -le 80 ] || d="'$(printf '%s' "$3" | cut -c1-60)...' (${#3} bytes)"
	printf '%s\n' "$3" | bad_write "$1" "$2" "$d"
}

# expect_create_err ERRNO LINE: a create line that must be refused with ERRNO.
expect_create_err() {
	expect_err "$1" "$RRAID_SYS/create" "$2"
}

# --- fault injection -------------------------------------------------------------------------

# fi_range: require-start and require-end around rraid's text, from its symbols.
fi_range() {
	grep -E ' [tT] .*\[rraid\]$' /proc/kallsyms | cut -d' ' -f1 | sort | sed -n '1p;$p' | tr '\n' ' '
}

# fi_setup ATTR START END TIMES: aims fault injection ATTR (failslab, fail_page_alloc) at rraid.
fi_setup() {
	local d
	d=/sys/kernel/debug/$1
	[ -d "$d" ] || { fail "$d missing"; return 1; }
	echo "0x$2" >"$d/require-start" && echo "0x$3" >"$d/require-end" &&
		echo 32 >"$d/stacktrace-depth" && echo N >"$d/ignore-gfp-wait" &&
		echo 1 >"$d/verbose" && echo 1000 >"$d/verbose_ratelimit_burst" &&
		echo 1 >"$d/interval" && echo "$4" >"$d/times" && echo 0 >"$d/space" ||
		{ fail "configure $1"; return 1; }
	[ "$1" = fail_page_alloc ] && { echo 0 >"$d/min-order"; echo N >"$d/ignore-gfp-highmem"; }
	echo 20 >"$d/probability"
}

fi_off() {
	local a
	for a in failslab fail_page_alloc; do
		echo 0 >"/sys/kernel/debug/$a/probability" 2>/dev/null
	done
}

# failslab_verify SPEC MEMBERS...: creates rraid0 (mk rraid0 SPEC MEMBERS; at least 44 MiB),
# then writes and verified reads while 20% of the allocations made with rraid on the stack
# fail. Nothing hangs, nothing is lost; at least 20 failures must have been injected.
failslab_verify() {
	local fs_rc fs_end fs_forced
	mk rraid0 "$@" || return 1
	set -- $(fi_range)
	[ -n "$2" ] || { fail "no rraid text symbols in /proc/kallsyms"; return 1; }
	# The last function's end is not listed: 64 KiB past the last symbol covers it.
	fs_end=$(printf '%x' $((0x$2 + 65536)))
	fi_setup failslab "$1" "$fs_end" 400 || return 1
	fi_setup fail_page_alloc "$1" "$fs_end" 400 || return 1
	fio --name=fi --filename=/dev/rraid0 $FIO_COMMON --rw=randwrite --bsrange=4k-1M \
		--iodepth=32 --numjobs=2 --offset_increment=24M --size=20M --do_verify=1
	fs_rc=$?
	fi_off
	# Failures of allocations that may fail quietly (__GFP_NOWARN: mempools' first try,
	# queue_rq's GFP_NOWAIT bios) are not printed, but each takes one of `times`.
	fs_forced=$((800 - $(cat /sys/kernel/debug/failslab/times) - $(cat /sys/kernel/debug/fail_page_alloc/times)))
	note "forced allocation failures: $fs_forced, of which printed in dmesg: $(dmesg | grep -c 'FAULT_INJECTION: forcing a failure')"
	[ $fs_rc -eq 0 ] || { fail "fio verify under fault injection failed"; return 1; }
	[ "$fs_forced" -ge 20 ] ||
		{ fail "only $fs_forced forced failures; expected at least 20"; return 1; }
	fio_check /dev/rraid0 --size=20M --numjobs=2 --offset_increment=24M --bsrange=4k-1M --iodepth=32 ||
		return 1
}
