#!/usr/bin/env python3
"""Where a training step's CPU time goes, from CPU profiles of cmd/bench.

    go run ./cmd/bench -configs P2 -archs dp -modes train -reps 60 -cpuprofile dp.prof
    python3 bench/step_account.py dp=dp.prof:62 [name=file.prof:steps ...] [-json]

steps is the number of training steps the profile covers: -reps plus -warmup-reps (2 by
default). Every sample of the profile is put in the first class below whose pattern one of
the frames of its stack matches; samples of the model's set-up (bench.Job.Workload and
model.New outside the timed training workload) are left out. The table gives each class in CPU
milliseconds per step, one column per profile: on one core that is the step's time; on
several it is the work of all of them, which the step's wall time can be told apart from.
"""
import json
import re
import subprocess
import sys

CLASSES = [
    ("polling: kernel.Parallel's workers and callers waiting for a part",
     r"kernel\.\(\*worker\)\.(await|wait)"),
    ("runtime: wake-ups, scheduling, GC",
     r"runtime\.(gcBgMarkWorker|gcAssist|mallocgc|futex|schedule|findRunnable|park_m|notesleep|stopm|mcall|usleep|osyield|wakep|startm|goready|newproc|bgsweep|bgscavenge)"),
    ("bounds: power iteration, token2, spectral norms, gains, contraction",
     r"powerIterate|PowerIterate|lipschitz\.|ops\.tok2|ops\.spectral(Scale|Grad|Kernel|Sigma)|\(\*spectralOp\)|contractOp|headScale|HeadScale|headFactors|ops\.l2(Product|Kim|Bound)|ops\.max(Col|Row)Sum|rawBound|float64sOf"),
    ("optimizer: AdamW, clipping, gradients' copies", r"lipformer/train\."),
    ("matrix products (attention's included)",
     r"internal/sgemm|serialBLAS|blas/gonum\.(dgemm|sgemm|Implementation\.[DS]gemm)|kernel\.(Gemm|Sgemm)|netlib|openblas|cblas"),
    ("attention: scores, softmax, their gradients",
     r"ops\.attn|ops\.rowColSums|ops\.subScaledRows|ops\.addLogitTerms|[Aa]ttention|SoftmaxRow|SquaredNorms|PairDots|expShift"),
    ("elementwise, norms, embedding, loss", r"lipformer/(kernel|ops)\."),
    ("graph machinery (Gorgonia)", r"gorgonia\.org"),
    ("other", r""),
]
SET_UP = re.compile(r"bench\.Job\.Workload|lipformer/model\.New\b")
SEP = "-----------+-------------------------------------------------------"
UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}


def account(path):
    """CPU seconds per class of the samples in the training step of one profile, and the
    seconds left out."""
    out = subprocess.run(["go", "tool", "pprof", "-traces", path], capture_output=True, text=True, check=True).stdout
    secs, outside = {name: 0.0 for name, _ in CLASSES}, 0.0
    for block in out.split(SEP)[1:]:
        lines = [l for l in block.split("\n") if l.strip()]
        m = re.match(r"\s*([\d.]+)(ns|us|µs|ms|s|m)\s+(.*)", lines[0]) if lines else None
        if not m:
            continue
        v = float(m.group(1)) * UNIT[m.group(2)]
        stack = "\n".join([m.group(3)] + lines[1:])
        if SET_UP.search(stack) and "trainWorkload" not in stack:
            outside += v
            continue
        for name, pat in CLASSES:
            if re.search(pat, stack):
                secs[name] += v
                break
    return secs, outside


def main(args):
    as_json = "-json" in args
    runs = []
    for a in (a for a in args if a != "-json"):
        name, _, rest = a.partition("=")
        path, _, steps = rest.rpartition(":")
        if not (name and path and steps.isdigit() and int(steps) > 0):
            sys.exit(f"step_account: argument {a!r}: want name=file.prof:steps")
        secs, outside = account(path)
        runs.append({"name": name, "profile": path, "steps": int(steps), "outside_s": outside,
                     "ms_per_step": {k: 1e3 * v / int(steps) for k, v in secs.items()}})
    if not runs:
        sys.exit(__doc__)
    if as_json:
        for r in runs:
            print(json.dumps(r))
        return
    print("| CPU ms per step | " + " | ".join(r["name"] for r in runs) + " |")
    print("|---|" + "---:|" * len(runs))
    for name, _ in CLASSES:
        if any(r["ms_per_step"][name] > 0 for r in runs):
            print(f"| {name} | " + " | ".join(f"{r['ms_per_step'][name]:.1f}" for r in runs) + " |")
    print("| **total** | " + " | ".join(f"**{sum(r['ms_per_step'].values()):.1f}**" for r in runs) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
