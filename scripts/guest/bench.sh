#!/bin/sh
# Guest side of `make bench` and `scripts/bench-smoke` (run through scripts/vm-run by
# scripts/bench, which puts a preamble in front of this file: the BENCH_* settings, the job files
# in $B/jobs/*.fio and the plan in $B/plan, made by bench/tools/plan.py from the job files).
#
# One plan line per row (see plan.py): key job workload level members chunk bs qd jobs variant
# kind member_mib mbps degraded metric target minruns est vars smokegroup baseline slices sample
# md_gt.
# Rows come sorted by array configuration; each configuration is set up once: two identical sets
# of members (brd, or null_blk capped at `mbps` MiB/s), rraid over the first, md over the second,
# same level, member count and chunk. Then, for each row, the row's fio job runs on rraid and on
# md alternately (ABBA order), BENCH_RUNS times, BENCH_MORE times when the median ratio
# rraid/md lies within BENCH_NEAR percent of the row's target and the runs so far differ by more
# than BENCH_TIGHT percent. A level or configuration that rraid refuses with EINVAL is reported
# "n/a", never measured.
#
# Output protocol (parsed by scripts/bench; any other line is log):
#   @@INFO text                    environment
#   @@LEVELS l...                  levels rraid accepts (probed at start)
#   @@ESTIMATE seconds rows        estimate for the rows whose level exists
#   @@PROGRESS i n elapsed left key
#   @@CSV field,...                one measurement (results.csv line)
#   @@ROW key status runs median target note
#   @@SMOKE PASS|FAIL|SKIP job text
. "${RRAID_LIB:-/rraid/lib.sh}"
B=${B:-/tmp/bench}
MODE=${BENCH_MODE:-default}
BASE_RUNTIME=${BENCH_RUNTIME:-3}
TARGET_RUNTIME=${BENCH_TARGET_RUNTIME:-$BASE_RUNTIME}
BASE_RAMP=${BENCH_RAMP:-0}
RAMP=$BASE_RAMP
RUNS=${BENCH_RUNS:-3}
MORE=${BENCH_MORE:-5}
NEAR=${BENCH_NEAR:-5}
TIGHT=${BENCH_TIGHT:-2}
RULE=${BENCH_RULE:-near}
FILL=${BENCH_FILL:-1}
NCPU=$(nproc)
HZ=100
LOG=$B/log
mkdir -p "$B"
: >"$LOG"

info() { echo "@@INFO $*"; }
# clean TEXT: a CSV-safe note (no commas, no newlines).
clean() {
	[ -n "$*" ] || return 0
	case "$*" in
	*,*) printf '%s' "$*" | tr ',' ';' | cut -c1-200 ;;
	*) printf '%s' "$*" | cut -c1-200 ;;
	esac
}

# --- measurements ----------------------------------------------------------------------------

# The snapshot helper that fio runs right before and after each measured section
# (exec_prerun/exec_postrun): non-idle CPU jiffies of all CPUs (user nice system irq softirq
# steal, /proc/stat) and the sectors the measured disk moved (/sys/block/X/stat); for md on
# RAID 4/5/6 it also sets group_thread_cnt (0 for impl md, vCPUs for md-gt).
cat >"$B/snap" <<'SNAP'
#!/bin/sh
# snap pre|post NAME KNAME [GROUP_THREAD_CNT]  (shell builtins only: it runs twice per measurement)
[ -n "$4" ] && echo "$4" >/sys/block/md0/md/group_thread_cnt
read -r c us ni sy id io irq sirq st rest </proc/stat
read -r r1 r2 rs r4 w1 w2 ws rest <"/sys/block/$3/stat"
echo "$1 $2 $((us + ni + sy + irq + sirq + st)) $((rs + ws))" >>/tmp/bench/snaps
SNAP
chmod +x "$B/snap"

# csv IMPL RUN MBS IOPS P50 P99 CPU STATUS NOTE [VARIANT]: one results.csv line for the current row.
csv() {
	echo "@@CSV $R_KEY,$R_LEVEL,$R_MEMBERS,$R_CHUNK,$R_WORKLOAD,${10:-$R_VARIANT},$R_BS,$R_QD,$R_JOBS,$1,$2,$3,$4,$5,$6,$7,$8,$(clean "$9")"
}

# impl_dev IMPL: the device an implementation is measured on.
impl_dev() {
	case $1 in
	rraid) echo $RDEV ;;
	md | md-gt) echo $MDEV ;;
	member) echo "$BASE" ;;
	esac
}

# batch FROM TO: measures runs FROM..TO of the current row in one fio invocation (fio's start-up
# costs over a second under TCG): one stonewalled section per run and implementation, in ABBA
# order (odd runs rraid first), each bracketed by snap. Prints the CSV lines and appends each
# run's metric to $B/val.IMPL. Returns 1 when fio failed or a figure is missing or zero.
batch() {
	bf=$B/batch.fio
	# the job file's [global] part, then its job section's body (none for sliced jobs). Its
	# `filename=` stays out: each section names its own device, and fio adds a section's file
	# to the global one's instead of replacing it (md's sections then read rraid0 as well).
	awk '/^\[/ { sec = $0 } (sec == "" || sec == "[global]") && !/^filename=/' "$B/jobs/$R_JOB.fio" >"$bf"
	awk '/^\[/ { sec = $0; next } sec != "" && sec != "[global]"' "$B/jobs/$R_JOB.fio" >"$B/body"
	printf 'thread=1\n' >>"$bf"
	: >"$B/snaps"
	run=$1
	while [ "$run" -le "$2" ]; do
		if [ $((run % 2)) -eq 1 ]; then order="rraid $IMPLS_MD"; else order="$IMPLS_MD rraid"; fi
		[ -n "$BASE" ] && order="$order member"
		for impl in $order; do
			dev=$(impl_dev $impl)
			kn=$(kname "$dev")
			sz=${SIZE_MIB}M
			[ $impl = member ] && sz=$(($(dev_bytes "$dev") >> 20))M
			gt=
			[ $impl = md ] && [ "$IMPLS_MD" != md ] && gt=0
			[ $impl = md-gt ] && gt=$NCPU
			name=m-$impl-$run
			if [ "$R_SLICES" -gt 0 ]; then
				sl=0
				while [ $sl -lt "$R_SLICES" ]; do
					printf '\n[%s-s%02d]\nfilename=%s\noffset=%dM\nstonewall\n' "$name" $sl "$dev" $((sl * SLICE_MIB)) >>"$bf"
					[ $sl -eq 0 ] && echo "exec_prerun=$B/snap pre $name $kn $gt" >>"$bf"
					[ $sl -eq $((R_SLICES - 1)) ] && echo "exec_postrun=$B/snap post $name $kn" >>"$bf"
					sl=$((sl + 1))
				done
			else
				{ printf '\n[%s]\n' "$name"; cat "$B/body"
				  printf 'filename=%s\nsize=%s\nstonewall\n' "$dev" "$sz"
				  echo "exec_prerun=$B/snap pre $name $kn $gt"
				  echo "exec_postrun=$B/snap post $name $kn"; } >>"$bf"
			fi
		done
		run=$((run + 1))
	done
	# Percentiles of the whole latency, submission included (lat, not clat): a request mapped
	# in the submitter's context (md's bio path, rraid's inline path) is done before io_submit
	# returns, and its clat is only the reaping, about 2 us for either driver.
	(cd "$B" && DEV=$RDEV fio "$bf" --output-format=terse --terse-version=3 --percentile_list=50:99 \
		--lat_percentiles=1 --clat_percentiles=0 >"$B/terse" 2>"$B/fio.err")
	b_rc=$?
	if [ $b_rc -ne 0 ] || ! grep -q '^3;' "$B/terse"; then
		b_note="fio exit $b_rc: $(grep -v '^$' "$B/fio.err" | head -3 | tr '\n' ' ')"
		csv rraid "$1" "" "" "" "" "" error "$b_note"
		echo "bench: $R_KEY: $b_note"
		return 1
	fi
	# Terse v3: 3 job name, 6 read KiB, 7 read KiB/s, 8 read IOPS, 9 read ms, 18 and 19 read lat
	# p50 and p99 (usec, in --percentile_list's order); 47..50, 59 and 60 the same for writes. One
	# line per section; for a mixed job the slower direction's percentiles.
	awk -F';' -v hz=$HZ -v sf="$B/snaps" '
		FILENAME == sf { split($0, f, " "); snap[f[1] " " f[2]] = f[3] " " f[4]; next }
		$1 == "3" && $2 ~ /^fio/ {
			name = $3; slice = ""
			if (match(name, /-s[0-9][0-9]$/)) { slice = substr(name, RSTART + 2); name = substr(name, 1, RSTART - 1) }
			split($18, a, "="); split($59, b, "="); h = a[2] + 0; if (b[2] + 0 > h) h = b[2] + 0
			split($19, a, "="); split($60, b, "="); p = a[2] + 0; if (b[2] + 0 > p) p = b[2] + 0
			if (!(name in seen)) { seen[name] = 1; order[++n] = name }
			kb[name] += $6 + $47; ms[name] += $9 + $50; bw[name] += $7 + $48; io[name] += $8 + $49
			if (h > p50[name]) p50[name] = h
			if (p > p99[name]) p99[name] = p
			cnt[name]++
			if (slice != "") printf "S %s %s %.1f %d %d %d\n", name, slice, ($7 + $48) * 1024 / 1e6, $8 + $49, h, p
		}
		END {
			for (i = 1; i <= n; i++) {
				nm = order[i]
				if (cnt[nm] > 1 && ms[nm] > 0) bw[nm] = kb[nm] / (ms[nm] / 1000)
				split(snap["pre " nm], s0, " "); split(snap["post " nm], s1, " ")
				gib = (s1[2] - s0[2]) * 512 / 1073741824
				cpu = (gib > 0 && s1[1] != "") ? sprintf("%.3f", (s1[1] - s0[1]) / hz / gib) : "-"
				printf "M %s %.1f %d %d %d %s\n", nm, bw[nm] * 1024 / 1e6, io[nm], p50[nm], p99[nm], cpu
			}
		}' "$B/snaps" "$B/terse" >"$B/parsed"
	if [ "${BENCH_DEBUG:-0}" = 1 ]; then
		for f in batch.fio terse snaps parsed fio.err; do echo "--- $f"; cat "$B/$f"; done
	fi
	b_bad=0
	while read -r kind nm f1 f2 f3 f4 f5; do
		impl=${nm#m-}
		run=${impl##*-}
		impl=${impl%-*}
		if [ "$kind" = S ]; then
			csv "$impl" "$run" "$f2" "$f3" "$f4" "$f5" "" ok "" "slice=$f1"
			continue
		fi
		[ "$f5" = - ] && f5=
		case $R_METRIC in iops) val=$f2 ;; lat) val="$f3 $f4" ;; *) val=$f1 ;; esac
		st=ok note=
		if echo "$val" | awk '{ for (i = 1; i <= NF; i++) if ($i + 0 <= 0) exit 0; exit 1 }'; then
			st=error note="zero $R_METRIC"
			b_bad=1
		fi
		csv "$impl" "$run" "$f1" "$f2" "$f3" "$f4" "$f5" "$st" "$note"
		echo "$run $val" >>"$B/val.$impl"
	done <"$B/parsed"
	# every implementation must have a figure for every run
	for impl in rraid $IMPLS_MD ${BASE:+member}; do
		[ "$(awk -v a="$1" -v b="$2" '$1 >= a && $1 <= b' "$B/val.$impl" 2>/dev/null | wc -l)" -eq $(($2 - $1 + 1)) ] ||
			{ csv "$impl" "$1" "" "" "" "" "" error "figure missing"; b_bad=1; }
	done
	[ $b_bad -eq 0 ]
}

# median FILE: median of the numbers in FILE.
median() {
	sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) exit 1
		if (NR % 2) printf "%.4f\n", v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# --- array configurations --------------------------------------------------------------------

CFG=
CFG_STATE=none # ok | na | error
CFG_NOTE=
RDEV=/dev/rraid0
MDEV=/dev/md0

teardown() {
	for d in /sys/block/rraid*; do
		[ -e "$d" ] || continue
		r=$(sysw /sys/kernel/rraid/remove "${d##*/}")
		[ "$r" = OK ] || echo "bench: remove ${d##*/}: $r"
	done
	for d in /sys/block/md*; do
		[ -e "$d" ] || continue
		mdadm --stop "/dev/${d##*/}" >/dev/null 2>&1 || echo "bench: mdadm --stop ${d##*/} failed"
	done
	if [ -d /sys/kernel/config/nullb ]; then
		for d in /sys/kernel/config/nullb/bn*; do
			[ -d "$d" ] || continue
			echo 0 >"$d/power" 2>/dev/null
			rmdir "$d"
		done
	fi
	# md releases its members a little after mdadm --stop returns: retry the unload for 5 s.
	for m in brd null_blk; do
		t=0
		while [ -d /sys/module/$m ] && [ $t -lt 25 ]; do
			modprobe -r $m 2>/dev/null || sleep 0.2
			t=$((t + 1))
		done
		[ -d /sys/module/$m ] && { echo "bench: modprobe -r $m failed"; return 1; }
	done
	return 0
}

# range PREFIX FROM COUNT: "PREFIX<FROM> PREFIX<FROM+1> ..."
range() {
	r_i=$2 r_out=
	while [ "$r_i" -lt $(($2 + $3)) ]; do
		r_out="$r_out $1$r_i"
		r_i=$((r_i + 1))
	done
	echo $r_out
}

# members KIND N MIB MBPS SIZES BASELINE: sets RMEM, MMEM (and BASE) to N members each.
members() {
	mb_kind=$1 mb_n=$2 mb_mib=$3 mb_mbps=$4 mb_sizes=$5 mb_base=$6
	BASE=
	case $mb_kind in
	brd)
		modprobe brd rd_nr=$((2 * mb_n)) rd_size=$((mb_mib * 1024)) || { CFG_NOTE="modprobe brd"; return 1; }
		RMEM=$(range /dev/ram 0 "$mb_n")
		MMEM=$(range /dev/ram "$mb_n" "$mb_n")
		;;
	nullb)
		if [ "$mb_sizes" = - ]; then
			nb=$((2 * mb_n))
			[ "$mb_base" = member ] && nb=$((nb + 1))
			gb=$(((mb_mib + 1023) / 1024))
			modprobe null_blk nr_devices=$nb gb=$gb mbps="$mb_mbps" queue_mode=2 ||
				{ CFG_NOTE="modprobe null_blk"; return 1; }
			o=0
			[ "$mb_base" = member ] && { BASE=/dev/nullb0; o=1; }
			RMEM=$(range /dev/nullb $o "$mb_n")
			MMEM=$(range /dev/nullb $((o + mb_n)) "$mb_n")
		else
			# Unequal members: null_blk's configfs, one device per member, sizes in MiB.
			modprobe null_blk nr_devices=0 || { CFG_NOTE="modprobe null_blk"; return 1; }
			grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config ||
				{ CFG_NOTE="mount configfs"; return 1; }
			RMEM= MMEM= i=0
			for set in r m; do
				for sz in $(echo "$mb_sizes" | tr x ' '); do
					d=/sys/kernel/config/nullb/bn$i
					mkdir "$d" && echo "$sz" >"$d/size" && echo "$mb_mbps" >"$d/mbps" &&
						echo 2 >"$d/queue_mode" && echo 1 >"$d/power" ||
						{ CFG_NOTE="null_blk configfs device bn$i"; return 1; }
					[ -b /dev/bn$i ] || { CFG_NOTE="/dev/bn$i missing"; return 1; }
					if [ $set = r ]; then RMEM="$RMEM /dev/bn$i"; else MMEM="$MMEM /dev/bn$i"; fi
					i=$((i + 1))
				done
			done
		fi
		;;
	*) CFG_NOTE="unknown member kind $mb_kind"; return 1 ;;
	esac
	for d in $RMEM $MMEM $BASE; do
		[ -b "$d" ] || { CFG_NOTE="member $d missing"; return 1; }
	done
}

# md_make LEVEL CHUNK MEMBERS...: md over the members with md's defaults.
md_make() {
	mm_l=$1 mm_c=${2%K}
	shift 2
	modprobe raid0 2>/dev/null
	case $mm_l in
	0)
		[ -w /sys/module/raid0/parameters/default_layout ] &&
			echo 2 >/sys/module/raid0/parameters/default_layout
		mdadm --build $MDEV --level=0 --chunk="$mm_c" --raid-devices=$# "$@" ;;
	1) modprobe raid1 && mdadm --build $MDEV --level=1 --assume-clean --raid-devices=$# "$@" ;;
	4 | 5 | 6) modprobe raid456 && mdadm --create $MDEV --run --assume-clean --metadata=1.0 \
		--bitmap=none --level="$mm_l" --chunk="$mm_c" --raid-devices=$# "$@" ;;
	10) modprobe raid10 && mdadm --create $MDEV --run --assume-clean --metadata=1.0 \
		--bitmap=none --level=10 --chunk="$mm_c" --raid-devices=$# "$@" ;;
	esac >>"$LOG" 2>&1
}

# rraid_make LEVEL CHUNK SIZE_KIB MEMBERS...: prints OK or the errno of the create.
rraid_make() {
	rm_l=$1 rm_c=$2 rm_s=$3
	shift 3
	rm_line="rraid0 level=$rm_l"
	[ "$rm_c" != - ] && [ "$rm_l" != 1 ] && rm_line="$rm_line chunk=$rm_c"
	[ "$rm_l" != 0 ] && rm_line="$rm_line assume-clean"
	rm_r=EINVAL
	if [ -n "$rm_s" ]; then
		rm_r=$(sysw /sys/kernel/rraid/create "$rm_line metadata=none size=$rm_s $*")
	fi
	[ "$rm_r" = EINVAL ] && rm_r=$(sysw /sys/kernel/rraid/create "$rm_line metadata=none $*")
	echo "$rm_r"
}

# fail_members DEGRADED: fails members 2..DEGRADED+1 of both arrays.
fail_members() {
	i=0
	for d in $RMEM; do
		i=$((i + 1))
		[ $i -ge 2 ] && [ $i -le $(($1 + 1)) ] || continue
		r=$(sysw "/sys/block/rraid0/rraid/dev-$(kname "$d")/state" faulty)
		[ "$r" = OK ] || { CFG_NOTE="rraid refuses to fail $d: $r"; return 2; }
	done
	i=0
	for d in $MMEM; do
		i=$((i + 1))
		[ $i -ge 2 ] && [ $i -le $(($1 + 1)) ] || continue
		mdadm $MDEV --fail "$d" >>"$LOG" 2>&1 || { CFG_NOTE="mdadm --fail $d"; return 1; }
	done
}

# configure: sets up the row's configuration unless it is the current one. Sets CFG_STATE.
configure() {
	c="$R_KIND $R_LEVEL $R_MEMBERS $R_CHUNK $R_MIB $R_MBPS $R_DEGRADED $R_SIZES $R_BASELINE"
	[ "$c" = "$CFG" ] && return 0
	CFG=$c CFG_STATE=error CFG_NOTE=
	teardown || { CFG_NOTE="could not unload the previous members' module"; return 0; }
	members "$R_KIND" "$R_MEMBERS" "$R_MIB" "$R_MBPS" "$R_SIZES" "$R_BASELINE" || return 0
	md_make "$R_LEVEL" "$R_CHUNK" $MMEM || { CFG_NOTE="md level $R_LEVEL: mdadm failed (see log)"; return 0; }
	size=
	[ -r /sys/block/md0/md/component_size ] && case $R_LEVEL in 4 | 5 | 6 | 10)
		size=$(cat /sys/block/md0/md/component_size) ;; esac
	r=$(rraid_make "$R_LEVEL" "$R_CHUNK" "$size" $RMEM)
	case $r in
	OK) ;;
	EINVAL)
		CFG_STATE=na
		CFG_NOTE="rraid refuses level $R_LEVEL$([ "$R_CHUNK" != - ] && echo " chunk $R_CHUNK") over $R_MEMBERS members (EINVAL)"
		return 0 ;;
	*) CFG_NOTE="rraid create: $r"; return 0 ;;
	esac
	i=0
	while [ ! -b $RDEV ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	rs=$(dev_bytes $RDEV) ms=$(dev_bytes $MDEV)
	if [ "$R_SIZES" != - ] && [ "$rs" != "$ms" ]; then
		CFG_STATE=na
		CFG_NOTE="arrays differ in size over unequal members (rraid $((rs >> 20)) MiB; md $((ms >> 20)) MiB): rraid has no RAID 0 zones"
		return 0
	fi
	SIZE_B=$rs
	[ "$ms" -lt "$SIZE_B" ] && SIZE_B=$ms
	SIZE_MIB=$((SIZE_B >> 20))
	# stripe cache: md's default (256 stripe heads of 4 KiB per member), both sides; only
	# RAID 4/5/6 have one (rraid's file refuses a write on the other levels, as it should).
	case $R_LEVEL in 4 | 5 | 6)
		echo 256 >/sys/block/md0/md/stripe_cache_size
		echo 256 >/sys/block/rraid0/rraid/stripe_cache_size ;;
	esac
	if [ "$R_KIND" = brd ] && [ "$FILL" = 1 ]; then
		# brd allocates a page when it is first written: fill both arrays so reads hit memory.
		for d in $RDEV $MDEV; do
			fio --name=fill --filename=$d --ioengine=libaio --direct=1 --rw=write --bs=1M \
				--iodepth=8 --size=${SIZE_MIB}M >>"$LOG" 2>&1 || { CFG_NOTE="fill $d failed"; return 0; }
		done
	fi
	if [ "$R_DEGRADED" -gt 0 ]; then
		fail_members "$R_DEGRADED"
		case $? in
		0) ;;
		2) CFG_STATE=na; return 0 ;;
		*) return 0 ;;
		esac
	fi
	info "config: raid$R_LEVEL, $R_MEMBERS x $R_KIND ${R_MIB} MiB$([ "$R_MBPS" != 0 ] && echo " capped at $R_MBPS MiB/s")$([ "$R_CHUNK" != - ] && echo ", chunk $R_CHUNK")$([ "$R_DEGRADED" != 0 ] && echo ", $R_DEGRADED failed")$([ "$R_SIZES" != - ] && echo ", sizes $R_SIZES MiB"); array $SIZE_MIB MiB; rraid:$(echo $RMEM | sed 's,/dev/,,g') md:$(echo $MMEM | sed 's,/dev/,,g')$([ -n "$BASE" ] && echo " baseline:${BASE#/dev/}")"
	CFG_STATE=ok
}

# --- rows ------------------------------------------------------------------------------------

# run_row: measures the current row (R_* set): RUNS runs, MORE when the median ratio lies within
# NEAR percent of the row's target, unless the runs' ratios lie within TIGHT percent of each other
# (more runs would not move such a median by more than that). With RULE=gap (issue 19's), two
# more runs at a time, up to MORE, while the runs' spread is wider than the median's distance to
# the target. Sets ROW_STATUS, ROW_NOTE, med and run.
run_row() {
	rm -f "$B"/val.*
	# Every row starts from the run's settings: a job's own RAMP (IOMeter's 0) is exported below
	# and would otherwise hold for every later row.
	RUNTIME=$BASE_RUNTIME RAMP=$BASE_RAMP
	[ "$R_TARGET" != - ] && RUNTIME=$TARGET_RUNTIME
	BS=$R_BS
	# BS=stripe: one stripe's data, chunk x data members (RAID 4/5/6).
	if [ "$BS" = stripe ]; then
		case $R_LEVEL in 4 | 5) nd=$((R_MEMBERS - 1)) ;; 6) nd=$((R_MEMBERS - 2)) ;; *) nd=1 ;; esac
		case $R_CHUNK in *K) BS=$((${R_CHUNK%K} * nd))k ;; *M) BS=$((${R_CHUNK%M} * nd))m ;; *) BS=1m ;; esac
	fi
	export RUNTIME RAMP SIZE="${SIZE_MIB}M" BS QD="$R_QD" JOBS="$R_JOBS"
	REGION=$((SIZE_MIB / R_JOBS))M
	export REGION
	if [ "$R_VARS" != - ]; then
		for kv in $(echo "$R_VARS" | tr , ' '); do export "$kv"; done
	fi
	if [ "$R_SLICES" -gt 0 ]; then
		R_SLICES=${BENCH_SLICES:-$R_SLICES}
		export SAMPLE=${BENCH_SAMPLE:-$R_SAMPLE}
		SLICE_MIB=$((SIZE_B / R_SLICES / 1048576))
	fi
	IMPLS_MD=md
	[ "$R_MDGT" = 1 ] && [ -w /sys/block/md0/md/group_thread_cnt ] && IMPLS_MD="md md-gt"
	need=$R_MINRUNS
	done_runs=0 bad=0
	ROW_STATUS=ok ROW_NOTE=
	while [ $done_runs -lt "$need" ]; do
		batch $((done_runs + 1)) "$need" || { bad=1; break; }
		done_runs=$need
		# the ratio of each run: rraid over the better md figure of that run; for latency rows
		# (p50 p99) md's over rraid's, the worse of the two, so that >= 1 means rraid is no slower
		awk -v lat=$([ "$R_METRIC" = lat ] && echo 1 || echo 0) '
			FILENAME ~ /val\.rraid$/ { r[$1] = $2; r99[$1] = $3; next }
			lat { if (!($1 in m) || $2 < m[$1]) m[$1] = $2; if (!($1 in m99) || $3 < m99[$1]) m99[$1] = $3; next }
			{ if (!($1 in m) || $2 > m[$1]) m[$1] = $2 }
			END { for (k in r) {
				if (lat) { a = m[k] / r[k]; b = m99[k] / r99[k]; printf "%.4f\n", a < b ? a : b }
				else if (m[k] > 0) printf "%.4f\n", r[k] / m[k] } }' \
			"$B/val.rraid" "$B/val.md" $([ -f "$B/val.md-gt" ] && echo "$B/val.md-gt") >"$B/val.ratio"
		if [ "$R_TARGET" != - ] && [ "$need" -lt "$MORE" ]; then
			med=$(median "$B/val.ratio")
			spread=$(sort -n "$B/val.ratio" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print hi - lo }')
			if [ "$RULE" = gap ]; then
				if awk -v m="$med" -v t="$R_TARGET" -v s="$spread" 'BEGIN { d = m - t; if (d < 0) d = -d; exit !(s > d) }'; then
					need=$((need + 2))
					[ "$need" -gt "$MORE" ] && need=$MORE
					echo "bench: $R_KEY: runs spread wider than median ratio $med's distance to target $R_TARGET: $need runs"
				fi
			elif awk -v m="$med" -v t="$R_TARGET" -v n="$NEAR" -v s="$spread" -v w="$TIGHT" \
				'BEGIN { d = m / t - 1; if (d < 0) d = -d; exit !(d * 100 <= n && s * 100 > w * m) }'; then
				echo "bench: $R_KEY: median ratio $med within ${NEAR}% of target $R_TARGET, runs over ${TIGHT}% apart: $MORE runs"
				need=$MORE
			fi
		fi
	done
	run=$done_runs
	med=$(median "$B/val.ratio" 2>/dev/null)
	[ $bad -eq 1 ] && { ROW_STATUS=error; ROW_NOTE="fio failed or a figure is missing or zero (see the CSV notes)"; }
	[ -z "$med" ] && med=-
}

# dmesg_check: the kernel log since the last clear holds no BUG/WARNING/Oops...
dmesg_check() {
	dmesg | grep -v '^rraid:' | grep -E "$DMESG_BAD" | head -3 | tr '\n' ' '
}

# --- main ------------------------------------------------------------------------------------

[ -f "$RRAID_KO" ] || { echo "bench: rraid.ko missing from the initramfs"; exit 1; }
dmesg -c >/dev/null
insmod "$RRAID_KO" || { echo "bench: insmod $RRAID_KO failed"; dmesg | tail; exit 1; }
for m in raid0 raid1 raid10 raid456; do modprobe $m 2>>"$LOG" || echo "bench: modprobe $m failed"; done
info "Linux $(uname -r), $NCPU vCPUs under QEMU TCG, $(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo) MiB; $(fio --version), mdadm $(mdadm --version 2>&1 | awk '{ print $3 }')"
if [ "$MODE" = smoke ]; then
	info "mode smoke: each job file once, fio libaio direct=1, ${BASE_RUNTIME}s on rraid and on md; figures mean nothing"
else
	more_when="$MORE when within ${NEAR}% of a target and over ${TIGHT}% apart"
	[ "$RULE" = gap ] && more_when="two more at a time, up to $MORE, while a row's spread is wider than its distance to the target"
	info "mode $MODE: fio libaio direct=1, ${BASE_RUNTIME}s per measurement (${TARGET_RUNTIME}s on rows with a target; +${RAMP}s ramp), $RUNS runs alternating rraid/md ($more_when); figures are emulated (TCG): only ratios in one boot mean anything"
fi

# Which levels does rraid accept? Try each level the plan names on small brd members.
LEVELS_OK=
modprobe brd rd_nr=4 rd_size=8192 || { echo "bench: modprobe brd failed"; exit 1; }
for l in $(awk '{ print $4 }' "$B/plan" | sort -un); do
	r=$(rraid_make "$l" 64K "" /dev/ram0 /dev/ram1 /dev/ram2 /dev/ram3)
	case $r in
	OK) LEVELS_OK="$LEVELS_OK $l"; sysw /sys/kernel/rraid/remove rraid0 >/dev/null ;;
	EINVAL) ;;
	*) echo "bench: probing level $l: create gave $r" ;;
	esac
done
modprobe -r brd
echo "@@LEVELS$LEVELS_OK"
level_ok() { case " $LEVELS_OK " in *" $1 "*) return 0 ;; esac; return 1; }

n=0 est_all=0
while read -r key job wl level rest; do
	set -- $rest
	n=$((n + 1))
	level_ok "$level" && est_all=$((est_all + ${14}))
done <"$B/plan"
echo "@@ESTIMATE $est_all $n"
t0=$(date +%s)
row_i=0 est_done=0 est_left=$est_all
SMOKE_DONE=
dmesg -c >/dev/null
while read -r R_KEY R_JOB R_WORKLOAD R_LEVEL R_MEMBERS R_CHUNK R_BS R_QD R_JOBS R_VARIANT R_KIND \
	R_MIB R_MBPS R_DEGRADED R_METRIC R_TARGET R_MINRUNS R_EST R_VARS R_SMOKE R_BASELINE \
	R_SLICES R_SAMPLE R_MDGT; do
	row_i=$((row_i + 1))
	if [ "$R_SMOKE" != - ]; then
		case " $SMOKE_DONE " in *" $R_SMOKE "*) continue ;; esac
	fi
	R_SIZES=-
	case ",$R_VARS," in *,SIZES=*) R_SIZES=$(echo ",$R_VARS," | sed 's/.*,SIZES=\([^,]*\),.*/\1/') ;; esac
	now=$(date +%s)
	el=$((now - t0))
	left=$est_left
	[ $est_done -gt 120 ] && left=$((est_left * el / est_done))
	echo "@@PROGRESS $row_i $n $el $left $R_KEY"
	if ! level_ok "$R_LEVEL"; then
		csv rraid 0 "" "" "" "" "" n/a "rraid has no RAID $R_LEVEL (create gives EINVAL)"
		echo "@@ROW $R_KEY n/a 0 - $R_TARGET rraid has no RAID $R_LEVEL"
		continue
	fi
	est_left=$((est_left - R_EST))
	est_done=$((est_done + R_EST))
	configure
	if [ "$CFG_STATE" != ok ]; then
		st=$CFG_STATE
		[ "$st" = na ] && st=n/a
		csv rraid 0 "" "" "" "" "" "$st" "$CFG_NOTE"
		echo "@@ROW $R_KEY $st 0 - $R_TARGET $(clean "$CFG_NOTE")"
		[ "$st" = error ] && echo "bench: $R_KEY: configuration failed: $CFG_NOTE" && tail -5 "$LOG"
		[ "$R_SMOKE" != - ] && [ "$st" = error ] && {
			echo "@@SMOKE FAIL $R_SMOKE $R_KEY: $CFG_NOTE"
			SMOKE_DONE="$SMOKE_DONE $R_SMOKE"
		}
		[ "$st" = error ] && CFG= # try afresh for the next row
		continue
	fi
	run_row
	bad=$(dmesg_check)
	dmesg -c >/dev/null
	if [ -n "$bad" ]; then
		ROW_STATUS=error
		ROW_NOTE="kernel log: $bad"
		csv rraid 0 "" "" "" "" "" error "kernel log: $bad"
	fi
	echo "@@ROW $R_KEY $ROW_STATUS $run $med $R_TARGET $(clean "$ROW_NOTE")"
	if [ "$R_SMOKE" != - ]; then
		if [ "$ROW_STATUS" = ok ]; then
			echo "@@SMOKE PASS $R_SMOKE $R_KEY rraid/md $med"
		else
			echo "@@SMOKE FAIL $R_SMOKE $R_KEY: $ROW_NOTE"
		fi
		SMOKE_DONE="$SMOKE_DONE $R_SMOKE"
	fi
	[ "$ROW_STATUS" = error ] && CFG= # set the configuration up afresh after a failure
done <"$B/plan"
teardown
if [ "$MODE" = smoke ]; then
	for g in $(awk '$20 != "-" { print $20 }' "$B/plan" | uniq); do
		case " $SMOKE_DONE " in *" $g "*) ;; *) echo "@@SMOKE SKIP $g no level it runs on exists in rraid" ;; esac
	done
fi
bad=$(dmesg_check)
[ -z "$bad" ] || { echo "bench: kernel log holds errors: $bad"; exit 1; }
echo "bench: done in $(($(date +%s) - t0)) s; kernel log clean"
