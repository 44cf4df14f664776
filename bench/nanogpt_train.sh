#!/bin/sh
# The training step beside nanoGPT's own train.py on the same shape (P2: nanoGPT's CPU
# example for Tiny Shakespeare, 4 layers, 4 heads, width 128, context 64, batch 12), the
# two programs alternated in every round: train.py at one thread (PyTorch's fastest here),
# float32, no compile, the median of its per-iteration times over iterations 10-59; then
# `train -config configs/p2.toml -arch dp` on both cores, the median step over steps
# 20-99 (differences of metrics.jsonl's elapsed_s). Each round prints both and lipformer's
# step over nanoGPT's iteration; the end, the steal time over the rounds.
#
#   bench/nanogpt_train.sh NANOGPT_DIR [ROUNDS] [OUT]
#
# NANOGPT_DIR is a checkout of karpathy/nanoGPT; its data/shakespeare_char is written from
# DATA/tinyshakespeare/input.txt as its prepare.py would (which downloads it), the first
# 90% for training. OUT (default out/nanogpt-train) keeps both programs' logs and runs.
# Run it from the repository root on an idle machine.
set -eu

NANOGPT=$1
ROUNDS=${2:-5}
OUT=${3:-out/nanogpt-train}
PYTHON=${PYTHON:-/usr/bin/python3}
CORPUS=${CORPUS:-$(pwd)/DATA/tinyshakespeare/input.txt}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

go build -o "$OUT/train" ./cmd/train
"$PYTHON" - "$CORPUS" "$NANOGPT/data/shakespeare_char" <<'PY'
import os, pickle, sys
import numpy as np
text = open(sys.argv[1]).read()
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
n = len(text)
os.makedirs(sys.argv[2], exist_ok=True)
for name, part in (('train', text[:int(n * 0.9)]), ('val', text[int(n * 0.9):])):
    np.array([stoi[c] for c in part], dtype=np.uint16).tofile(os.path.join(sys.argv[2], name + '.bin'))
pickle.dump({'vocab_size': len(chars), 'itos': dict(enumerate(chars)), 'stoi': stoi},
            open(os.path.join(sys.argv[2], 'meta.pkl'), 'wb'))
PY

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
steal() { awk '/^cpu /{print $9, $2 + $4}' /proc/stat 2>/dev/null || echo "0 0"; }

echo "# bench/nanogpt_train.sh at $(git rev-parse --short HEAD), nanoGPT $(git -C "$NANOGPT" rev-parse --short HEAD), $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
s0=$(steal)
for r in $(seq 1 "$ROUNDS"); do
	(cd "$NANOGPT" && OMP_NUM_THREADS=1 "$PYTHON" train.py config/train_shakespeare_char.py --device=cpu --compile=False \
		--dtype=float32 --eval_iters=1 --eval_interval=100000 --log_interval=1 --block_size=64 --batch_size=12 \
		--n_layer=4 --n_head=4 --n_embd=128 --max_iters=60 --lr_decay_iters=2000 --dropout=0.0 \
		--out_dir="$OUT/nanogpt-out") >"$OUT/nanogpt-$r.log" 2>&1
	nano=$(sed -n 's/^iter \([0-9]*\): .*time \([0-9.]*\)ms.*/\1 \2/p' "$OUT/nanogpt-$r.log" | awk '$1 >= 10 && $1 <= 59 {print $2}' | median)
	rm -rf "$OUT/run-$r"
	"$OUT/train" -config configs/p2.toml -data-dir DATA -arch dp -steps 100 -warmup 10 -eval-every 1000 \
		-eval-bytes 4096 -sample 0 -out "$OUT/run-$r" >"$OUT/train-$r.log" 2>&1
	ours=$("$PYTHON" -c '
import json, sys
t = [json.loads(l) for l in open(sys.argv[1])]
e = {r["step"]: r["elapsed_s"] for r in t if r.get("kind") == "train" and "elapsed_s" in r}
print("\n".join(str(1e3 * (e[s] - e[s - 1])) for s in range(20, 100) if s in e and s - 1 in e))' "$OUT/run-$r/metrics.jsonl" | median)
	echo "$r $nano $ours" | awk '{printf "round %d: nanoGPT train.py (1 thread) %.1f ms/iter; lipformer %.1f ms/step (%.2f)\n", $1, $2, $3, $3 / $2}'
done
s1=$(steal)
echo "$s0 $s1" | awk '{printf "# steal %d jiffies against %d of user and system\n", $3 - $1, $4 - $2}'
