#!/bin/sh
# VM tests, parity engine in the kernel (issue 3): the load-time self-test and selection run,
# sysfs shows every usable implementation with the chosen one in brackets, forcing each one
# works, and forcing anything else is refused. Under TCG the guest CPU has AVX2 but no AVX-512
# or GFNI; the expected set is derived from /proc/cpuinfo, not assumed.
# vm-run: --disks 0
. "${RRAID_LIB:-/rraid/lib.sh}"

P=/sys/kernel/rraid/parity

# fresh_load: a load whose dmesg this test sees from the start.
fresh_load() {
	if rraid_loaded; then
		rmmod rraid || { fail "rmmod rraid before a fresh load"; return 1; }
	fi
	dmesg -c >/dev/null
	rraid_load
}

cpu_has() {
	grep -m1 '^flags' /proc/cpuinfo | grep -qw "$1"
}

# The implementations this CPU must offer, slowest first (the order sysfs lists them in).
expected_impls() {
	local e
	e=scalar
	cpu_has avx2 && e="$e avx2x1 avx2x2 avx2x4"
	cpu_has avx512f && cpu_has avx512bw && cpu_has avx512vl && e="$e avx512x1 avx512x2 avx512x4"
	cpu_has avx512f && cpu_has avx512bw && cpu_has avx512vl && cpu_has gfni &&
		e="$e gfni512x1 gfni512x2 gfni512x4"
	echo "$e"
}

# listed OP: the names in $P/OP without brackets.
listed() {
	tr -d '[]' <"$P/$1"
}

# chosen OP: the bracketed name in $P/OP.
chosen() {
	tr ' ' '\n' <"$P/$1" | sed -n 's/^\[\(.*\)\]$/\1/p'
}

parity_selftest_and_selection() {
	fresh_load || return 1
	grep -q . /proc/cpuinfo || { fail "no /proc/cpuinfo"; return 1; }
	if dmesg | grep -q 'failed its self-test'; then
		dmesg | grep 'failed its self-test'
		fail "an implementation failed its self-test"
		return 1
	fi
	want=$(expected_impls)
	echo "cpu expects: $want"
	for op in xor gen rmw recov; do
		[ -f "$P/$op" ] || { fail "$P/$op missing"; return 1; }
		got=$(listed $op)
		echo "$op: $(cat $P/$op)"
		[ "$got" = "$want" ] || { fail "$op lists '$got', expected '$want'"; return 1; }
		n=$(grep -o '\[' "$P/$op" | wc -l)
		[ "$n" -eq 1 ] || { fail "$op has $n bracketed choices"; return 1; }
	done
	# The log names each choice with its speed, and it matches sysfs.
	for pair in "xor:xor: " "gen:pq: " "rmw:rmw: " "recov:recov: "; do
		op=${pair%%:*}
		prefix=${pair#*:}
		line=$(dmesg | grep "^rraid: $prefix" | tail -1)
		[ -n "$line" ] || { fail "no 'rraid: $prefix' line in dmesg"; return 1; }
		echo "$line"
		name=$(echo "${line#rraid: $prefix}" | cut -d' ' -f1)
		[ "$name" = "$(chosen $op)" ] || { fail "$op: dmesg chose $name, sysfs $(chosen $op)"; return 1; }
		echo "$line" | grep -Eq ' [0-9]+ MB/s$' || { fail "no MB/s figure in '$line'"; return 1; }
		note "$line"
	done
	# The fastest is not scalar where the CPU has vectors.
	if cpu_has avx2; then
		[ "$(chosen gen)" != scalar ] || { fail "gen chose scalar on a CPU with AVX2"; return 1; }
	fi
}

parity_force_each() {
	rraid_load || return 1
	for op in xor gen rmw recov; do
		orig=$(chosen $op)
		for name in $(listed $op); do
			r=$(sysw "$P/$op" "$name")
			[ "$r" = OK ] || { fail "forcing $op to $name: $r"; return 1; }
			[ "$(chosen $op)" = "$name" ] || { fail "$op shows $(chosen $op) after forcing $name"; return 1; }
		done
		r=$(sysw "$P/$op" "$orig")
		[ "$r" = OK ] || { fail "restoring $op to $orig: $r"; return 1; }
	done
}

parity_force_invalid() {
	rraid_load || return 1
	for op in xor gen rmw recov; do
		before=$(cat "$P/$op")
		expect_err EINVAL "$P/$op" bogus || return 1
		expect_err EINVAL "$P/$op" "" || return 1
		expect_err EINVAL "$P/$op" "avx2x4 avx2x2" || return 1
		printf 'avx2\001x4' | bad_write EINVAL "$P/$op" "garbage bytes" || return 1
		# Implementations this CPU cannot run are refused too.
		for name in gfni512x4 avx512x4 avx2x4; do
			case " $(listed $op) " in
			*" $name "*) ;;
			*) expect_err EINVAL "$P/$op" "$name" || return 1 ;;
			esac
		done
		[ "$(cat "$P/$op")" = "$before" ] || { fail "$op changed after refused writes"; return 1; }
	done
}

t_run parity_selftest_and_selection parity_selftest_and_selection
t_run parity_force_each parity_force_each
t_run parity_force_invalid parity_force_invalid
t_summary
