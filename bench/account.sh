#!/bin/sh
# Where the training step goes: profiles dp and the two certified recipes (bench -recipe) at
# each configuration on one core and on two, and prints bench/step_account.py's account of
# each configuration and core count (CPU ms per step by class: matrix products, attention,
# bounds, optimizer, graph machinery, ...). Every run's table, JSON record, profile and the
# hypervisor's steal time (from /proc/stat, where there is one) stay in OUT.
#
#   bench/account.sh [OUT]                      # default OUT: out/account
#   CONFIGS=P3 REPS=10 bench/account.sh out/p3
#
# Run it from the repository root on an idle machine; docs/performance.md, "Where each
# configuration's step goes", reads its output.
set -eu

OUT=${1:-out/account}
CONFIGS=${CONFIGS:-P2 P3}
ARCHS=${ARCHS:-dp contractive-l2 invertible-l2}
WARMUP=2
mkdir -p "$OUT"
go build -o "$OUT/bench" ./cmd/bench

cpu() { awk '/^cpu /{print $9, $2+$4}' /proc/stat 2>/dev/null || echo "0 0"; }

for c in $CONFIGS; do
	reps=${REPS:-}
	[ -n "$reps" ] || { [ "$c" = P3 ] && reps=10 || reps=60; }
	for cores in 1 2; do
		args=""
		for a in $ARCHS; do
			name="$c-$a-${cores}c"
			s0=$(cpu)
			GOMAXPROCS=$cores "$OUT/bench" -configs "$c" -archs "$a" -recipe -modes train -reps "$reps" \
				-warmup-reps $WARMUP -cpuprofile "$OUT/$name.prof" -out "$OUT/$name.jsonl" >"$OUT/$name.txt"
			s1=$(cpu)
			echo "$s0 $s1" | awk '{printf "# steal %.1f s against %.1f s of user and system time\n", ($3-$1)/100, ($4-$2)/100}' >>"$OUT/$name.txt"
			args="$args $a=$OUT/$name.prof:$((reps + WARMUP))"
		done
		echo "### $c, $cores core(s)"
		# shellcheck disable=SC2086
		python3 bench/step_account.py $args | tee "$OUT/$c-${cores}c-account.md"
		echo
	done
done
