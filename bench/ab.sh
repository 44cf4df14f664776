#!/bin/sh
# Two builds of cmd/bench, A and B, alternated as tightly as the machine allows: in every
# round, for every architecture, A then B time the same training step. A virtual machine's
# speed drifts by up to a third within minutes, so a comparison made of runs minutes apart
# measures the drift; here the two builds of a pair run seconds apart. Each run's steal
# time (jiffies, /proc/stat) is printed beside its median, and the records are kept.
#
#   bench/ab.sh A B OUT ROUNDS ARCHS [bench flags...]
#   go build -o /tmp/bench.a ./cmd/bench   # at the old commit
#   go build -o /tmp/bench.b ./cmd/bench   # at the new one
#   bench/ab.sh /tmp/bench.a /tmp/bench.b out/ab 5 dp,invertible-l2 -configs P2 -recipe -reps 25
#
# It times the training step; a -modes among the flags (eval or sample, one mode) overrides
# that, as the later of two flags does.
#
# OUT gets a.jsonl and b.jsonl (bench's records, one per run, in order) and summary.txt (a
# line per run: round, architecture, build, steal, median ms), then the medians over the
# rounds and the median of the per-round ratios B/A.
set -eu

if [ $# -lt 5 ]; then
	echo "usage: bench/ab.sh A B OUT ROUNDS ARCHS [bench flags...]" >&2
	exit 2
fi
A=$1 B=$2 OUT=$3 ROUNDS=$4 ARCHS=$5
shift 5
mkdir -p "$OUT"
: >"$OUT/a.jsonl"
: >"$OUT/b.jsonl"
: >"$OUT/summary.txt"
steal() { awk 'NR == 1 { print $9 }' /proc/stat; }
for r in $(seq 1 "$ROUNDS"); do
	for arch in $(echo "$ARCHS" | tr , ' '); do
		for build in a b; do
			bin=$A
			[ "$build" = b ] && bin=$B
			s0=$(steal)
			rec=$("$bin" -archs "$arch" -modes train -json "$@" | grep '"impl":"go"' | head -1)
			s1=$(steal)
			echo "$rec" >>"$OUT/$build.jsonl"
			ms=$(echo "$rec" | sed 's/.*"ms_median":\([0-9.e+-]*\).*/\1/')
			echo "$r $arch $build steal=$((s1 - s0)) ms=$ms" | tee -a "$OUT/summary.txt"
		done
	done
done
awk '{ split($5, m, "="); k = $2 " " $3; v[k, ++n[k]] = m[2]; if ($3 == "b") ratio[$2, ++nr[$2]] = m[2] / prev; prev = m[2] }
function median(arr, key, cnt,    i, j, t, a) {
	for (i = 1; i <= cnt; i++) a[i] = arr[key, i]
	for (i = 1; i <= cnt; i++) for (j = i + 1; j <= cnt; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return cnt % 2 ? a[(cnt + 1) / 2] : (a[cnt / 2] + a[cnt / 2 + 1]) / 2
}
END {
	for (k in n) { split(k, p, " "); if (p[2] == "a") printf "%s: median ms A %.2f, B %.2f, B/A per round median %.3f\n", p[1], median(v, k, n[k]), median(v, p[1] " b", n[p[1] " b"]), median(ratio, p[1], nr[p[1]]) }
}' "$OUT/summary.txt" | sort | tee -a "$OUT/summary.txt"
