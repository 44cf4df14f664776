#!/bin/sh
# Go vs PyTorch on the reference configurations, in one run per Go build: for every
# configuration and architecture, cmd/bench times Go (train, eval, sample), writes the fresh
# model with its batch to a checkpoint, and runs bench/torch_ref.py on it, which checks the
# loss at step 0 and after one training step against Go's and times the same programs in
# PyTorch. It prints the tables (median ms, tokens/s, GFLOP/s, allocations, heap, Go/PyTorch
# ratios, loss checks) and keeps every record in OUT/*.jsonl. It exits non-zero when a loss
# differs by more than 1e-4.
#
#   bench/compare.sh [OUT]                 # default OUT: out/bench
#   REPS=20 WARMUP_REPS=3 CONFIGS=P1,P2 ARCHS=dp,l2 bench/compare.sh
#   ROUNDS=3 bench/compare.sh out/bench    # 3 rounds, then medians over them
#
# With ROUNDS=N > 1 each round writes OUT/round-I/, and `bench -pool` pools them into
# OUT/pooled.txt and OUT/pooled.jsonl: Go's median per build over the rounds, PyTorch's
# over all its runs, the ratios and their range within rounds.
#
# Run it from the repository root on an idle machine. The PyTorch side needs Debian's
# interpreter with python3-torch (apt-get install python3-torch); the OpenBLAS build needs
# libopenblas-dev (it is skipped when the library is missing). PyTorch runs with 2 intra-op
# threads, 1 inter-op thread, OPENBLAS_NUM_THREADS=2 and OMP_WAIT_POLICY=PASSIVE (see
# bench/torch_ref.py; TORCH_FLAGS overrides, e.g. "-torch-threads 1 -torch-blas-threads 2").
set -eu

OUT=${1:-out/bench}
REPS=${REPS:-10}
WARMUP_REPS=${WARMUP_REPS:-2}
CONFIGS=${CONFIGS:-P1,P2,P3}
ARCHS=${ARCHS:-dp,l2,invertible-l2}
ROUNDS=${ROUNDS:-1}
PYTHON=${PYTHON:-/usr/bin/python3}
TORCH_FLAGS=${TORCH_FLAGS:-}

if ! "$PYTHON" -c 'import torch, numpy' 2>/dev/null; then
	echo "compare.sh: $PYTHON cannot import torch: apt-get install python3-torch" >&2
	exit 1
fi
mkdir -p "$OUT"
common="-configs $CONFIGS -archs $ARCHS -reps $REPS -warmup-reps $WARMUP_REPS -torch -python $PYTHON $TORCH_FLAGS"

# build NAME [BUILD FLAGS]: build cmd/bench as OUT/bench-NAME.
build() {
	name=$1
	shift
	go build "$@" -o "$OUT/bench-$name" ./cmd/bench
}

# run NAME DIR: run OUT/bench-NAME, keep its table and records in DIR, and remember a
# failure (tee would hide its exit status).
status=0
run() {
	mkdir -p "$2"
	# shellcheck disable=SC2086
	{ "$OUT/bench-$1" $common -out "$2/$1.jsonl" || echo "$?" >"$2/$1.failed"; } | tee "$2/$1.txt"
	if [ -e "$2/$1.failed" ]; then
		rm -f "$2/$1.failed"
		status=1
	fi
}

builds=gonum
build gonum
if [ -e /usr/lib/x86_64-linux-gnu/libopenblas.so ] || ldconfig -p 2>/dev/null | grep -q 'libopenblas\.so '; then
	builds="gonum openblas"
	build openblas -tags openblas
else
	echo "compare.sh: no libopenblas.so (apt-get install libopenblas-dev): skipping the OpenBLAS build" >&2
fi
if [ "$ROUNDS" -le 1 ]; then
	for b in $builds; do run "$b" "$OUT"; done
	exit $status
fi
i=1
while [ "$i" -le "$ROUNDS" ]; do
	for b in $builds; do run "$b" "$OUT/round-$i"; done
	i=$((i + 1))
done
"$OUT/bench-gonum" -pool -out "$OUT/pooled.jsonl" "$OUT"/round-*/*.jsonl | tee "$OUT/pooled.txt"
exit $status
