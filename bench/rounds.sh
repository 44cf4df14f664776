#!/bin/sh
# Several builds of cmd/bench timed in alternation, as bench/ab.sh times two: in every
# round, for every architecture, each build times the same configuration, the builds'
# order rotated from round to round so that none always runs first. Each run's steal time
# (jiffies, /proc/stat) is printed beside its median, and the records are kept.
#
#   bench/rounds.sh OUT ROUNDS ARCHS BUILD... -- [bench flags...]
#   bench/rounds.sh out/spin 5 dp,invertible-l2 /tmp/bench.a /tmp/bench.b /tmp/bench.c -- \
#       -configs P2 -recipe -modes train -reps 25
#
# OUT gets records.jsonl (bench's records, one per run, in order) and summary.txt (a line
# per run: round, architecture, build, steal, median ms), then for every architecture and
# build the median over the rounds and the median and range of the per-round ratios to the
# first build.
set -eu

if [ $# -lt 5 ]; then
	echo "usage: bench/rounds.sh OUT ROUNDS ARCHS BUILD... -- [bench flags...]" >&2
	exit 2
fi
OUT=$1 ROUNDS=$2 ARCHS=$3
shift 3
builds=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
	builds="$builds $1"
	shift
done
[ $# -gt 0 ] && shift
nb=$(echo $builds | wc -w)
mkdir -p "$OUT"
: >"$OUT/records.jsonl"
: >"$OUT/summary.txt"

steal() { awk '/^cpu /{print $9}' /proc/stat 2>/dev/null || echo 0; }

for r in $(seq 1 "$ROUNDS"); do
	for a in $(echo "$ARCHS" | tr , ' '); do
		for k in $(seq 0 $((nb - 1))); do
			b=$(echo $builds | cut -d' ' -f$(((k + r) % nb + 1)))
			s0=$(steal)
			"$b" -archs "$a" "$@" -json | grep '^{' >"$OUT/last.json"
			s1=$(steal)
			cat "$OUT/last.json" >>"$OUT/records.jsonl"
			ms=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ms_median"])' "$OUT/last.json")
			echo "$r $a $b steal=$((s1 - s0)) ms=$ms" | tee -a "$OUT/summary.txt"
		done
	done
done
rm -f "$OUT/last.json"

python3 - "$OUT/summary.txt" $builds <<'PY' | tee -a "$OUT/summary.txt"
import collections, statistics, sys
ms = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r, a, b, _, m = line.split()
    ms[a, b][r] = float(m[3:])
first = sys.argv[2]
for a in sorted({a for a, _ in ms}):
    for b in sys.argv[2:]:
        ratios = [ms[a, b][r] / ms[a, first][r] for r in ms[a, b]]
        print(f"{a} {b}: median ms {statistics.median(ms[a, b].values()):.2f}, over {first} per round "
              f"median {statistics.median(ratios):.3f} ({min(ratios):.2f}-{max(ratios):.2f})")
PY
