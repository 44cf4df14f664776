#!/bin/sh
# Sampling speed beside nanoGPT's own sample.py, on the same model shape (P2: 4 layers, 4
# heads, width 128, context 64, Tiny Shakespeare's 65 bytes): the seconds to generate N more
# bytes (the difference of a run of N + 100 and one of 100, which removes start-up and
# loading), for sample.py (one thread: PyTorch's fastest here) and for cmd/sample with both
# windows (slide: a full forward over the last T bytes per byte, as nanoGPT's generate does;
# shift: the key/value cache, `sample`'s default). Weights do not change the speed: sample.py
# gets a fresh model of the shape, cmd/sample the run given.
#
#   bench/nanogpt_sample.sh NANOGPT_DIR RUN [N] [ROUNDS]
#
# NANOGPT_DIR is a checkout of karpathy/nanoGPT (its sample.py imports tiktoken at the top;
# without tiktoken installed, make that import optional); RUN a dp run of the P2 shape (e.g.
# `train -config configs/shakespeare.toml -arch dp`). Run it from the repository root on an
# idle machine.
set -eu

NANOGPT=$1
RUN=$2
N=${3:-2000}
ROUNDS=${4:-3}
PYTHON=${PYTHON:-/usr/bin/python3}
CORPUS=${CORPUS:-$(pwd)/DATA/tinyshakespeare/input.txt}

go build -o /tmp/lipformer-sample ./cmd/sample
(
	cd "$NANOGPT"
	"$PYTHON" - "$CORPUS" <<'PY'
import os, pickle, sys, torch
from model import GPTConfig, GPT
chars = sorted(set(open(sys.argv[1]).read()))
args = dict(n_layer=4, n_head=4, n_embd=128, block_size=64, bias=False, vocab_size=len(chars), dropout=0.0)
torch.manual_seed(1)
model = GPT(GPTConfig(**args))
os.makedirs('out-p2', exist_ok=True)
torch.save({'model': model.state_dict(), 'model_args': args, 'config': {'dataset': 'shakespeare_char'}}, 'out-p2/ckpt.pt')
os.makedirs('data/shakespeare_char', exist_ok=True)
pickle.dump({'vocab_size': len(chars), 'stoi': {c: i for i, c in enumerate(chars)}, 'itos': dict(enumerate(chars))},
            open('data/shakespeare_char/meta.pkl', 'wb'))
PY
) >/dev/null 2>&1

# secs CMD...: wall seconds of CMD
secs() {
	s=$(date +%s.%N)
	"$@" >/dev/null 2>&1
	echo "$(date +%s.%N) - $s" | bc
}

# rate NAME SHORT LONG: bytes per second of the N extra bytes
rate() {
	printf '%s: %.0f bytes/s (%.2f s for %d bytes)\n' "$1" "$(echo "$N / ($3 - $2)" | bc -l)" "$(echo "$3 - $2" | bc -l)" "$N"
}

echo "# bench/nanogpt_sample.sh at $(git rev-parse --short HEAD), $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
	echo "== round $r"
	nano() { (cd "$NANOGPT" && OMP_NUM_THREADS=1 "$PYTHON" sample.py --init_from=resume --out_dir=out-p2 --device=cpu \
		--dtype=float32 --compile=False --num_samples=1 --max_new_tokens="$1" --top_k=40); }
	rate "nanoGPT sample.py, 1 thread" "$(secs nano 100)" "$(secs nano $((N + 100)))"
	for w in slide shift; do
		go_() { /tmp/lipformer-sample -ckpt "$RUN" -n "$1" -window "$w" -top-k 40; }
		rate "cmd/sample -window $w" "$(secs go_ 100)" "$(secs go_ $((N + 100)))"
	done
done
