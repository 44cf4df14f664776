#!/usr/bin/python3
"""PyTorch reference of lipformer's byte-level language model, for speed and correctness.

It implements the model of model/ and layers/ exactly (docs/math.md, "The language model"):
token + learned position embeddings, blocks (pre-, post- or no LayerNorm; invertible blocks
without LayerNorm), a final LayerNorm and a linear head without bias (or the token table
transposed when the config ties them). Weights are stored as lipformer stores them, (In,
Out): a linear map is x @ W + b. Attention has no biases; head h uses columns h*d..(h+1)*d
of each (D, D) map.

  dp              P = softmax(q k^T / sqrt(d)), values x W^V
  l2              keys tied to queries, logits -||q_i - q_j||^2 / sqrt(d) computed as
                  (2 q_i.q_j - |q_i|^2 - |q_j|^2) / sqrt(d), values x W_eff with column block h of
                  W_eff = W^{Q,h} (W^{Q,h}^T W^{V,h}) / sqrt(d)  (= P X A_h W^{V,h}, ops/l2values.go)
  l2-untied       L2 logits with a separate key map, values x W^V
  contractive-l2  l2 whose output is times min(1, c / UB_inf) (ops/l2bound.go, N = context)
  invertible-l2   x + A(x), x + M(x) without LayerNorm: A contractive l2, M(x) = ELU(x W1/s1 + b1)
                  (c W2/s2) + b2 with s = u^T W v from persistent power-iteration vectors
  invertible-dp   dp attention with W^V / s_V and c W^O / s_O (the negative control)

The options of the certified recipes (spec.Model, spec.Model.WithCertifiedRecipe):

  l2_bound token2  contractive attention divides by the token-norm bound (ops/l2bound_tok2.go)
                   sqrt(sum_h k_h^2 s_h^2) sigma_N, k_h = 1 + 4 W_0(S_h / e), s_h = uq_h^T W^{Q,h} vq_h
                   and sigma_N = un^T N vn from the fixed buffers pow_uq, pow_vq, pow_un, pow_vn,
                   at the weights before the temperatures; kim (the default) is UB_inf above
  l2_bound product contractive attention divides by the product bound (ops/l2bound_product.go)
                   (4 sqrt(d) phiInv + 1) max_e sum_h ||W^{Q,h}^T||_inf sum_r |N_h[r, e]|, at the
                   weights after the temperatures as kim
  l2_temp          per-head log temperatures s_h: W^{Q,h} e^{s_h} and W^{V,h} e^{-2 s_h}
  l2_pos_bias      head h's logit of row i, column j <= i gains b_h[i - j], and S_h =
                   sum_{delta=1}^{N-1} e^{b_h[delta] - b_h[0]} (N - 1 without it)
  mlp_gain         M(x) = ELU(x e^g W1/s1 + b1) (c e^-g W2/s2) + b2, g learned from log(mlp_gain)
  mlp_blocks       m MLP sub-blocks x + M_k(x) per invertible block, mlp, mlp1, ..., each of
                   width hidden, or 4D/m when hidden is 0
  mix              k: first in each block x + X(x), X(x)_t = sum_delta a_delta x_{t-delta} W' + b,
                   a = softmax(taps) over delta < k, W' = c W/s (invertible) or W
  lip_k            K (invertible-l2 with token2, untied): the final LayerNorm becomes a ball norm
                   B(x) = u min(1, r/|u|), u = x - mean(x), r = sqrt(D) e^s, s the learned
                   lnf.logradius (ops.BallNorm), and the head g W/s_W with its own spectral
                   vectors and g = K / (1 + c)^(sub-blocks) (spec.Model.HeadGain)
  embed_radius     R (with lip_k): the token table's rows go through the ball norm of radius R
                   before the look-up (layers.Embedding.Radius)
  token_bytes      n > 1 (untied): the token table has a row per byte and the n - 1 bytes before it
                   in its sequence, (V + 1)^(n-1) V rows, a byte before the sequence's start
                   counting as 0 and byte b as b + 1 (spec.Model.TokenRow)

  norm ball        a ball norm B_k(x) = u min(1, r_k/|u|) before each branch: x + A(B1(x)),
                   x + M(B2(x)) (every MLP sub-block of an invertible block reads B2), with the
                   learned log radii n.ball1.logradius and n.ball2.logradius

A checkpoint whose config has any other option (dropout, a key the reference does not
know) is refused.

The MLP is Linear(D, F), exact GELU, Linear(F, D) with biases; LayerNorm eps 1e-5 (biased
variance); attention is causal with the diagonal always kept. The loss is the mean
cross-entropy over targets >= 0. Training is AdamW as train/adam.go: decoupled decay
p <- p (1 - lr wd) on the matrices of linear and attention maps (the token table only when
tied), bias corrections, eps added to sqrt(v_hat), temperatures, position biases and MLP
gains at SCALAR_LR times the learning rate, and with the option muon (bench -muon, train
--muon) Muon for the blocks' weight matrices as train/muon.go; the gradient is clipped to a global norm as
train.ClipGlobalNorm (scaled by clip/norm when norm > clip, no epsilon). The options'
power_iters power-iteration steps (0: one) of the spectral normalisations and token-norm
bounds run before each training step, as train.Stepper.

Threads are set deliberately (competing thread pools made PyTorch 2.3x slower).
Debian's torch 1.13 (BLAS_INFO=generic) calls the system libblas, OpenBLAS with its own
pthread pool, for every matrix product, unsplit; its other kernels use OpenMP. So:
torch.set_num_threads(--threads, default 2: the machine's cores, for OpenMP kernels),
torch.set_num_interop_threads(--interop-threads, default 1: the model is one chain of ops),
OPENBLAS_NUM_THREADS=--blas-threads (default 2, else every product runs on one core) and
OMP_WAIT_POLICY=--omp-wait-policy (default PASSIVE: OpenMP workers sleep instead of spinning
while OpenBLAS's threads need the cores), set before torch loads. The two pools then take
turns rather than fight. Other settings are worth a try on an idle machine (--threads 1
--blas-threads 2; --omp-wait-policy ACTIVE); every record says which were used.

Commands (all print JSON lines on stdout):
  loss  --ckpt F [--after-step]   step-0 loss of the checkpoint's batch (bench.inputs and
                                  bench.targets, written by package bench), and with --after-step
                                  the loss after one training step on it
  grads --ckpt F,... --out G,...  per checkpoint, the loss of its batch and the gradient of
                                  every parameter (no power iteration first, as a Go training
                                  program): G, a safetensors file of the gradients under the
                                  parameters' names, in the model's dtype, its metadata "parts"
                                  the largest part of each scale's gradient as JSON
                                  (LM.gradient_parts); prints the losses
  run   --ckpt F --steps N --warmup W --modes train,eval,sample [--after-step]
                                  the loss, then timings, each mode from the checkpoint's weights
  time  --configs P1,P2,P3 --archs dp,l2 --steps N --warmup W --seed S --dtype float32
                                  timings without Go: presets of model/presets.go, weights drawn as
                                  model.New draws them (from torch's generator)
  presets --archs ... --dtype ... the presets' model configs (model.TestTorchPresetsMatch)
  train --data FILE --model JSON --iters N [--batch --lr --min-lr --lr-warmup --beta2
        --weight-decay --clip --eval-every --seed]
                                  trains the reference on a text file as cmd/train does (the
                                  file's distinct bytes, 90% train / 10% validation by position,
                                  random windows, warm-up + cosine as train/schedule.go) and
                                  scores the validation split as train.Evaluate does: every
                                  byte but the first, in consecutive windows of the context.
                                  A control for cmd/train's results: same model, same recipe,
                                  PyTorch's kernels and generator.

Use Debian's interpreter with python3-torch: /usr/bin/python3 bench/torch_ref.py ...
"""

import argparse
import json
import math
import os
import re
import statistics
import struct
import sys
import time

# The presets of model/presets.go; the other config fields are model.Default's.
PRESETS = {
    "P1": dict(layers=1, heads=4, width=256, hidden=1024, context=128, vocab=256, batch=16),
    "P2": dict(layers=4, heads=4, width=128, hidden=512, context=64, vocab=65, batch=12),
    "P3": dict(layers=6, heads=4, width=256, hidden=1024, context=256, vocab=256, batch=8),
    "tiny": dict(layers=2, heads=2, width=16, hidden=64, context=16, vocab=32, batch=4),
}
DEFAULTS = dict(dropout=0.0, norm="pre", lip_c=0.9, init_std=0.02, tie=False, balance_l2=False)
# train.DefaultOptions: the constant learning rate, Adam settings and clip of a timed step.
BENCH_OPTIONS = dict(lr=1e-3, beta1=0.9, beta2=0.99, eps=1e-8, weight_decay=0.1, clip=1.0, power_iters=8)
ARCHS = ["dp", "l2", "l2-untied", "contractive-l2", "invertible-l2", "invertible-dp"]
MODES = ["train", "eval", "sample"]


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["loss", "grads", "run", "time", "presets", "train"])
    ap.add_argument("--ckpt", help="a checkpoint written by package bench (loss, grads, run)")
    ap.add_argument("--out", help="grads: the safetensors files that receive the gradients, one per --ckpt (comma-separated)")
    ap.add_argument("--after-step", action="store_true", help="loss, run: also the loss after one training step")
    ap.add_argument("--configs", default="P1,P2,P3")
    ap.add_argument("--archs", default="dp,l2,invertible-l2")
    ap.add_argument("--modes", default="train,eval,sample")
    ap.add_argument("--steps", type=int, default=10, help="timed runs (the median is reported)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed runs before them")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    ap.add_argument("--interop-threads", type=int, default=1, help="torch.set_num_interop_threads")
    ap.add_argument("--blas-threads", type=int, default=2, help="OPENBLAS_NUM_THREADS")
    ap.add_argument("--omp-wait-policy", default="PASSIVE", choices=["PASSIVE", "ACTIVE"],
                    help="OMP_WAIT_POLICY: PASSIVE lets idle OpenMP workers sleep while OpenBLAS runs")
    ap.add_argument("--data", help="train: a text file")
    ap.add_argument("--model", default="{}", help="train: model config fields as JSON, over P2's")
    ap.add_argument("--iters", type=int, default=2000, help="train: optimizer steps")
    ap.add_argument("--batch", type=int, default=12, help="train: sequences per step")
    ap.add_argument("--lr", type=float, default=1e-3, help="train: peak learning rate")
    ap.add_argument("--min-lr", type=float, default=1e-4, help="train: final learning rate of the cosine")
    ap.add_argument("--lr-warmup", type=int, default=100, help="train: linear warm-up steps")
    ap.add_argument("--beta2", type=float, default=0.99, help="train: Adam beta2")
    ap.add_argument("--weight-decay", type=float, default=0.1, help="train: AdamW decay of matrices")
    ap.add_argument("--clip", type=float, default=1.0, help="train: global gradient-norm clip")
    ap.add_argument("--muon", type=float, default=0.0, help="train: Muon for the blocks' matrices at this times --lr (0: AdamW for all)")
    ap.add_argument("--power-iters", type=int, default=8, help="train: power-iteration steps before each training step (train -power-iters)")
    ap.add_argument("--eval-every", type=int, default=250, help="train: steps between validations")
    a = ap.parse_args(argv)
    if a.steps < 1 or a.warmup < 0 or min(a.threads, a.interop_threads, a.blas_threads) < 1:
        ap.error("want --steps >= 1, --warmup >= 0 and thread counts >= 1")
    if a.command == "train" and not a.data:
        ap.error("train needs --data")
    if a.command in ("loss", "grads", "run") and not a.ckpt:
        ap.error("%s needs --ckpt" % a.command)
    if a.command == "grads" and (not a.out or len(a.out.split(",")) != len(a.ckpt.split(","))):
        ap.error("grads needs an --out per --ckpt")
    return a


ARGS = parse_args(sys.argv[1:])
# Before torch loads OpenBLAS, which reads these once.
os.environ["OPENBLAS_NUM_THREADS"] = str(ARGS.blas_threads)
os.environ["OMP_NUM_THREADS"] = str(ARGS.threads)
os.environ["OMP_WAIT_POLICY"] = ARGS.omp_wait_policy

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(ARGS.threads)
torch.set_num_interop_threads(ARGS.interop_threads)


# ---------------------------------------------------------------- safetensors, by hand

ST_DTYPES = {"F32": "<f4", "F64": "<f8", "I32": "<i4", "I64": "<i8", "U8": "u1"}


def write_safetensors(path, arrays, meta):
    """Writes {name: numpy array} and the metadata {str: str} as a safetensors file."""
    names = {np.dtype(v).str: k for k, v in ST_DTYPES.items()}
    header, offset, blobs = {"__metadata__": meta}, 0, []
    for name, a in arrays.items():
        b = np.ascontiguousarray(a).tobytes()
        header[name] = dict(dtype=names[a.dtype.str], shape=list(a.shape), data_offsets=[offset, offset + len(b)])
        offset += len(b)
        blobs.append(b)
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))


def read_safetensors(path):
    """Returns ({name: numpy array}, metadata) of a safetensors file."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    data = memoryview(raw)[8 + n:]
    out = {}
    for name, e in header.items():
        b, end = e["data_offsets"]
        out[name] = np.frombuffer(data[b:end], dtype=ST_DTYPES[e["dtype"]]).reshape(e["shape"]).copy()
    return out, meta


# ---------------------------------------------------------------- the model

def lambert_w0(x):
    """The principal branch of Lambert's W for x >= 0, by Halley's iteration."""
    if x == 0:
        return 0.0
    w = math.log1p(x) if x < 3 else math.log(x) - math.log(math.log(x))
    for _ in range(100):
        ew = math.exp(w)
        f = w * ew - x
        nxt = w - f / (ew * (w + 1) - (w + 2) * f / (2 * w + 2))
        if abs(nxt - w) <= 1e-15 * (1 + abs(nxt)):
            return nxt
        w = nxt
    return w


def phi_inv(n):
    """W_0((n-1)/e), lipschitz.PhiInv."""
    return lambert_w0((n - 1) / math.e)


class LambertW0(torch.autograd.Function):
    """W_0 of a tensor x >= 0, differentiable: W_0'(x) = W_0(x) / (x (1 + W_0(x))), 1 at x = 0
    (the derivative ops.L2BoundTok2 takes for the position bias, docs/math.md "Position bias")."""

    @staticmethod
    def forward(ctx, x):
        w = torch.tensor([lambert_w0(v) for v in x.detach().double().reshape(-1).tolist()],
                         dtype=torch.float64).reshape(x.shape).to(x.dtype)
        ctx.save_for_backward(x, w)
        return w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        safe = torch.where(x > 0, x, torch.ones_like(x))
        return g * torch.where(x > 0, w / (safe * (1 + w)), torch.ones_like(x))


def max_min(h):
    """kernel.MaxMin: each pair of adjacent entries of the last dimension sorted, the larger
    first (at a tie the first entry is the maximum, as its gradient routes)."""
    pairs = h.unflatten(-1, (-1, 2))
    first_max = pairs[..., 0] >= pairs[..., 1]
    hi = torch.where(first_max, pairs[..., 0], pairs[..., 1])
    lo = torch.where(first_max, pairs[..., 1], pairs[..., 0])
    return torch.stack((hi, lo), -1).flatten(-2)


def mlp_name(k):
    """layers.MLPName: MLP sub-block k of an invertible block is mlp, mlp1, mlp2, ..."""
    return "mlp" if k == 0 else "mlp%d" % k


# model.Config's JSON keys; a checkpoint with any other key is refused.
CONFIG_KEYS = {"arch", "layers", "heads", "width", "hidden", "context", "vocab", "dropout", "norm", "lip_c",
               "dtype", "init_std", "embed_std", "tie", "balance_l2", "l2_bound", "l2_temp", "l2_pos_bias",
               "mlp_gain", "mlp_blocks", "mix", "ball_radius", "lip_k", "embed_radius", "activation", "token_bytes"}
# layers.scalarLR: the learning-rate multiplier of attention's temperatures and position
# bias, of the MLP gain, of the mixing sub-block's taps and of a ball norm's log radius.
SCALAR_LR = 10
SCALAR_SUFFIXES = (".logtemp", ".posbias", ".loggain", ".taps", ".logradius")


def unsupported(cfg):
    """The options of cfg that the reference does not implement, as messages (none: [])."""
    bad = ["config key %r" % k for k in sorted(set(cfg) - CONFIG_KEYS)]
    if cfg.get("dropout", 0):
        bad.append("dropout %g (the reference has none)" % cfg["dropout"])
    if cfg.get("token_bytes", 0) > 1 and cfg.get("tie"):
        bad.append("token_bytes %d with a tied head" % cfg["token_bytes"])
    lip_k = cfg.get("lip_k", 0)
    if lip_k and (cfg["arch"] != "invertible-l2" or cfg.get("l2_bound", "kim") != "token2" or cfg.get("tie")):
        bad.append("lip_k %g with arch %s, l2_bound %s, tie %s (invertible-l2, token2, untied only)" % (
            lip_k, cfg["arch"], cfg.get("l2_bound", "kim"), cfg.get("tie", False)))
    if cfg.get("embed_radius", 0) and not lip_k:
        bad.append("embed_radius %g without lip_k" % cfg["embed_radius"])
    if cfg.get("activation", "") not in ("", "elu", "maxmin"):
        bad.append("activation %s (only elu and maxmin)" % cfg["activation"])
    contractive = cfg["arch"] in ("contractive-l2", "invertible-l2")
    if contractive and cfg.get("l2_bound", "kim") not in ("kim", "product", "token2"):
        bad.append("l2_bound %s (only kim, product and token2)" % cfg["l2_bound"])
    tied = cfg["arch"] in ("l2", "contractive-l2", "invertible-l2")
    for k in ("l2_temp", "l2_pos_bias"):
        if cfg.get(k) and not tied:
            bad.append("%s with arch %s (tied L2 only)" % (k, cfg["arch"]))
    if cfg.get("l2_pos_bias") and contractive and cfg.get("l2_bound", "kim") != "token2":
        bad.append("l2_pos_bias with l2_bound %s (a contractive layer with a bias divides by token2)" % cfg.get("l2_bound", "kim"))
    invertible = cfg["arch"].startswith("invertible-")
    if (cfg.get("mlp_gain", 0) or cfg.get("mlp_blocks", 0) > 1) and not invertible:
        bad.append("mlp_gain or mlp_blocks with arch %s (invertible only)" % cfg["arch"])
    return bad


class LM:
    """The language model as a set of named tensors and a functional forward pass."""

    def __init__(self, cfg, dtype):
        self.cfg = cfg
        self.dtype = dtype
        self.arch = cfg["arch"]
        if self.arch not in ARCHS:
            raise ValueError("arch %r, want one of %s" % (self.arch, ARCHS))
        bad = unsupported(cfg)
        if bad:
            raise ValueError("the reference does not implement: %s" % "; ".join(bad))
        self.L, self.H, self.D = cfg["layers"], cfg["heads"], cfg["width"]
        self.invertible = self.arch.startswith("invertible-")
        # spec.Model.MLPSubBlocks and HiddenWidth: 4D shared by the sub-blocks unless hidden is set.
        self.mlps = [mlp_name(k) for k in range(max(cfg.get("mlp_blocks", 0), 1))] if self.invertible else ["mlp"]
        self.F = cfg.get("hidden") or max(4 * self.D // len(self.mlps), 1)
        self.T, self.V = cfg["context"], cfg["vocab"]
        self.token_bytes = max(cfg.get("token_bytes", 0), 1)
        self.rows = (self.V + 1) ** (self.token_bytes - 1) * self.V  # spec.Model.TokenRows
        self.kind = {"dp": "dp", "invertible-dp": "dp", "l2-untied": "l2-untied"}.get(self.arch, "l2")
        # an invertible block has no LayerNorm: norm is "ball" (ball norms before its attention
        # and MLP branches) or "none"
        self.norm = cfg["norm"] if cfg["norm"] == "ball" or not self.invertible else "none"
        self.c = cfg["lip_c"]
        self.attn_c = self.c if self.arch in ("contractive-l2", "invertible-l2") else 0.0
        self.bound = cfg.get("l2_bound", "kim")
        self.tok2 = self.attn_c > 0 and self.bound == "token2"
        self.temp = bool(cfg.get("l2_temp", False))
        self.pos_bias = bool(cfg.get("l2_pos_bias", False))
        self.mlp_gain = cfg.get("mlp_gain", 0.0)
        self.mix = cfg.get("mix", 0)
        self.activation = cfg.get("activation", "") or "elu"
        self.tie = bool(cfg.get("tie", False))
        self.lip_k = cfg.get("lip_k", 0.0)
        self.embed_radius = cfg.get("embed_radius", 0.0)
        # spec.Model.SubBlocks and HeadGain: the head's norm that makes the whole map K-Lipschitz
        self.sub_blocks = self.L * ((1 if self.mix else 0) + 1 + len(self.mlps))
        self.head_gain = self.lip_k / (1 + self.c) ** self.sub_blocks if self.lip_k else 0.0
        self.phi = phi_inv(self.T)
        self.mask = torch.ones(self.T, self.T, dtype=torch.bool).tril()
        self.params = {}   # name -> leaf tensor with requires_grad
        self.buffers = {}  # name -> tensor (power-iteration vectors)
        self.parts = None  # a list while head_scale records its results (gradient_parts)

    # The names of model.Params and model.Buffers, in checkpoint order, with shapes.
    def param_shapes(self):
        D, F_, V, T, H = self.D, self.F, self.V, self.T, self.H
        s = [("tok", (self.rows, D)), ("pos", (T, D))]
        for i in range(self.L):
            n = "h%d" % i
            if self.mix:
                s += [(n + ".mix.taps", (self.mix,)), (n + ".mix.proj.w", (D, D)), (n + ".mix.proj.b", (D,))]
            s += [(n + ".attn.wq", (D, D))]
            if self.kind != "l2":
                s += [(n + ".attn.wk", (D, D))]
            s += [(n + ".attn.wv", (D, D))]
            if self.temp:
                s += [(n + ".attn.logtemp", (H,))]
            if self.pos_bias:
                s += [(n + ".attn.posbias", (H, T))]
            s += [(n + ".attn.wo", (D, D))]
            for mlp in self.mlps:
                m = n + "." + mlp
                s += [(m + ".fc.w", (D, F_)), (m + ".proj.w", (F_, D))]
                if self.mlp_gain > 0:
                    s += [(m + ".loggain", (1,))]
                s += [(m + ".fc.b", (F_,)), (m + ".proj.b", (D,))]
            if self.norm == "ball":
                s += [(n + ".ball1.logradius", (1,)), (n + ".ball2.logradius", (1,))]
            elif self.norm != "none":
                s += [(n + ".ln1.gain", (D,)), (n + ".ln1.bias", (D,)), (n + ".ln2.gain", (D,)), (n + ".ln2.bias", (D,))]
        if self.lip_k:
            s += [("lnf.logradius", (1,))]
        else:
            s += [("lnf.gain", (D,)), ("lnf.bias", (D,))]
        if not self.tie:
            s += [("head.w", (D, V))]
        return s

    def spectral_weights(self):
        """The spectrally normalised weights, whose vectors are buffers W.sn_u and W.sn_v."""
        ws = []
        if not self.invertible:
            return ws
        for i in range(self.L):
            n = "h%d" % i
            if self.kind == "dp":
                ws += [n + ".attn.wv", n + ".attn.wo"]
            if self.mix:
                ws += [n + ".mix.proj.w"]
            for mlp in self.mlps:
                ws += [n + "." + mlp + ".fc.w", n + "." + mlp + ".proj.w"]
        if self.lip_k:
            ws += ["head.w"]
        return ws

    def power_shapes(self):
        """layers.AttnPower: the buffers of each token-norm bound, pow_uq (H, D), pow_vq (H, d),
        pow_un and pow_vn (D), with shapes."""
        if not self.tok2:
            return []
        D, H = self.D, self.H
        s = []
        for i in range(self.L):
            n = "h%d.attn" % i
            s += [(n + ".pow_uq", (H, D)), (n + ".pow_vq", (H, D // H)), (n + ".pow_un", (D,)), (n + ".pow_vn", (D,))]
        return s

    def decays(self, name):
        """Whether AdamW decays the parameter (layers.Param.Decay): the matrices of linear and
        attention maps, and the token table when the head is tied to it."""
        if name == "tok":
            return self.tie
        return name.endswith((".w", ".wq", ".wk", ".wv", ".wo"))

    def lr_scale(self, name):
        """layers.Param.LRScale: SCALAR_LR for temperatures, position biases and MLP gains, else 1."""
        return SCALAR_LR if name.endswith(SCALAR_SUFFIXES) else 1

    def load(self, tensors):
        for name, shape in self.param_shapes():
            if name not in tensors:
                raise KeyError("checkpoint has no tensor %s" % name)
            a = tensors[name]
            if tuple(a.shape) != shape:
                raise ValueError("tensor %s is %s, want %s" % (name, a.shape, shape))
            self.params[name] = torch.tensor(a, dtype=self.dtype).requires_grad_()
        bufs = [(w + s, None) for w in self.spectral_weights() for s in (".sn_u", ".sn_v")] + self.power_shapes()
        for name, shape in bufs:
            if name not in tensors:
                raise KeyError("checkpoint has no buffer %s" % name)
            if shape is not None and tuple(tensors[name].shape) != shape:
                raise ValueError("buffer %s is %s, want %s" % (name, tensors[name].shape, shape))
            self.buffers[name] = torch.tensor(tensors[name], dtype=self.dtype)

    def init(self, gen):
        """Draws weights as model.New: N(0, std^2) (the embeddings embed_std when set), residual
        projections N(0, (std/sqrt(2L))^2) (in invertible blocks the attention's only), zero
        biases, temperatures and position biases, unit gains, MLP log gains log(mlp_gain);
        spectral vectors random unit and token-norm vectors constant unit, then 50
        power-iteration steps."""
        std = self.cfg["init_std"]
        proj = std / math.sqrt(2 * max(self.L, 1))
        for name, shape in self.param_shapes():
            if name.endswith(".gain"):
                t = torch.ones(shape, dtype=self.dtype)
            elif name.endswith((".b", ".bias", ".logtemp", ".posbias", ".taps")):
                t = torch.zeros(shape, dtype=self.dtype)
            elif name.endswith(".loggain"):
                t = torch.full(shape, math.log(self.mlp_gain), dtype=self.dtype)
            elif name.endswith(".logradius"):  # spec.Model.EffectiveBallRadius
                rho = self.cfg.get("ball_radius") or self.cfg.get("embed_std") or std
                t = torch.full(shape, math.log(rho), dtype=self.dtype)
            else:
                s = std
                if name in ("tok", "pos"):
                    s = self.cfg.get("embed_std") or std
                elif name.endswith(".attn.wo") or (name.endswith((".mlp.proj.w", ".mix.proj.w")) and not self.invertible):
                    s = proj
                t = torch.randn(shape, generator=gen, dtype=torch.float64).mul_(s).to(self.dtype)
            self.params[name] = t
        if self.cfg.get("balance_l2", False) and self.kind == "l2":
            self.balance_l2_values()
        for name in self.params:
            self.params[name].requires_grad_()
        for w in self.spectral_weights():
            rows, cols = self.params[w].shape
            for s, n in ((".sn_u", rows), (".sn_v", cols)):
                v = torch.randn(n, generator=gen, dtype=torch.float64)
                self.buffers[w + s] = (v / v.norm()).to(self.dtype)
        for name, shape in self.power_shapes():
            self.buffers[name] = torch.full(shape, 1 / math.sqrt(shape[-1]), dtype=self.dtype)
        self.power_iterate(50)

    def balance_l2_values(self):
        """layers.Attention.BalanceL2Values: scale each head's W^V so that
        ||A_h W^V_h||_F equals ||W^V_h||_F, A_h = W^Q_h W^Q_h^T / sqrt(d)."""
        for name in list(self.params):
            if not name.endswith(".attn.wq"):
                continue
            wq = self.params[name].double()
            wv_name = name[: -len("wq")] + "wv"
            wv = self.params[wv_name].double()
            d = wq.shape[1] // self.H
            for h in range(self.H):
                q, v = wq[:, h * d:(h + 1) * d], wv[:, h * d:(h + 1) * d]
                eff = (q @ (q.t() @ v)).norm() / math.sqrt(d)
                wv[:, h * d:(h + 1) * d] *= v.norm() / eff
            self.params[wv_name] = wv.to(self.dtype)

    def power_iterate(self, n):
        """model.PowerIterate: every spectral normalisation and token-norm bound."""
        with torch.no_grad():
            for w in self.spectral_weights():
                self.buffers[w + ".sn_u"], self.buffers[w + ".sn_v"] = self.power_steps(
                    self.params[w].double(), self.buffers[w + ".sn_u"], self.buffers[w + ".sn_v"], n)
            if self.tok2:
                for i in range(self.L):
                    self.power_iterate_attention("h%d.attn" % i, n)

    def power_steps(self, W, u, v, n):
        """n steps of powerIterateDense on W (float64) from u and v: u = W v / |W v|,
        v = W^T u / |W^T u|, in float64, returned in the model's dtype; a zero W v stops."""
        u, v = u.double(), v.double()
        for _ in range(n):
            wv = W @ v
            if wv.norm() == 0:
                break
            u = wv / wv.norm()
            wtu = W.t() @ u
            v = wtu / wtu.norm()
        return u.to(self.dtype), v.to(self.dtype)

    def power_iterate_attention(self, n, steps):
        """layers.Attention.PowerIterate: steps on every W^{Q,h} and on N (stacked_n) at the
        weights before the temperatures; weights that are not finite leave the vectors."""
        p, b = self.params, self.buffers
        wq, wv, wo = (p[n + s].detach().double() for s in (".wq", ".wv", ".wo"))
        if not all(torch.isfinite(w).all() for w in (wq, wv, wo)):
            return
        D, H = self.D, self.H
        d = D // H
        uq, vq = b[n + ".pow_uq"].clone(), b[n + ".pow_vq"].clone()
        for h in range(H):
            uq[h], vq[h] = self.power_steps(wq[:, h * d:(h + 1) * d], uq[h], vq[h], steps)
        b[n + ".pow_uq"], b[n + ".pow_vq"] = uq, vq
        b[n + ".pow_un"], b[n + ".pow_vn"] = self.power_steps(self.stacked_n(wq, wv, wo), b[n + ".pow_un"], b[n + ".pow_vn"], steps)

    def stacked_n(self, wq, wv, wo):
        """lipschitz.StackedN: N (D, D) whose row block h is M_h W^{O,h}, M_h = W^{Q,h}^T W^{V,h} / sqrt(d)."""
        D, H = self.D, self.H
        d = D // H
        m = torch.einsum("ihr,iht->hrt", wq.view(D, H, d), wv.view(D, H, d)) / math.sqrt(d)
        return torch.einsum("hrt,hte->hre", m, wo.view(H, d, D)).reshape(D, D)

    def spectral(self, w, c):
        """c W / (u^T W v), differentiable in W with u, v fixed (ops.SpectralNormalize)."""
        W = self.params[w]
        sigma = self.buffers[w + ".sn_u"] @ W @ self.buffers[w + ".sn_v"]
        return W * (c / sigma)

    def head_scale(self, w, s, power):
        """ops.HeadScale: column block h of w times exp(power s_h), s (H'). While self.parts is
        a list, the result is recorded in it for gradient_parts."""
        out = (w.view(w.shape[0], s.shape[0], -1) * torch.exp(power * s)[:, None]).reshape(w.shape)
        if self.parts is not None and out.requires_grad:
            out.retain_grad()
            self.parts.append((s, power, out))
        return out

    def gradient_parts(self):
        """{name: largest part} of the gradient of every scale s that head_scale recorded, after
        the backward pass: d loss / d s_h sums one part per weight W that s_h scales,
        power times the sum over column block h of (W e^{power s_h}) times its gradient. The
        parts cancel, W^Q's against W^V's for a temperature and W1's against W2's for a gain
        (exactly, where ELU is linear and b1 is 0), so the gradient can be far smaller than
        its parts and carry their rounding."""
        names = {id(t): n for n, t in self.params.items()}
        largest = {}
        for s, power, out in self.parts:
            if out.grad is None:  # the loss does not depend on it
                continue
            part = (power * (out.grad * out).double().view(out.shape[0], s.shape[0], -1).sum((0, 2))).abs().max().item()
            n = names[id(s)]
            largest[n] = max(largest.get(n, 0.0), part)
        return largest

    def ball_norm(self, x, s):
        """ops.BallNorm: each row centred, then scaled onto the ball of radius sqrt(D) e^s when
        it lies outside it."""
        u = x - x.mean(-1, keepdim=True)
        r = math.sqrt(self.D) * torch.exp(s)
        norm = u.norm(dim=-1, keepdim=True)
        return u * torch.where(norm > r, r / norm, torch.ones_like(norm))

    def layer_norm(self, x, name):
        return F.layer_norm(x, (self.D,), self.params[name + ".gain"], self.params[name + ".bias"], eps=1e-5)

    def l2_values(self, wq, wv):
        """ops.L2Values: column block h is W^{Q,h} (W^{Q,h}^T W^{V,h}) / sqrt(d)."""
        D, H = self.D, self.H
        d = D // H
        q, v = wq.view(D, H, d), wv.view(D, H, d)
        m = torch.einsum("ihd,ihe->hde", q, v)
        return (torch.einsum("ihd,hde->ihe", q, m) / math.sqrt(d)).reshape(D, D)

    def l2_bound_inf(self, wq, wv, wo):
        """ops.L2BoundInf: (4 phiInv + 1/sqrt(d)) ||W^O^T||_inf max_h(||W^{Q,h}||_inf ||W^{Q,h}^T||_inf) max_h ||W^{V,h}^T||_inf."""
        D, H = self.D, self.H
        d = D // H
        k = 4 * self.phi + 1 / math.sqrt(d)
        o = wo.abs().sum(0).max()
        v = wv.abs().sum(0).max()
        a = wq.abs().view(D, H, d)
        r = a.sum(2).max(0).values  # (H) largest row sum of each head's block
        s = a.sum(0).max(1).values  # (H) largest column sum of each head's block
        return k * o * (r * s).max() * v

    def l2_bound_product(self, wq, wv, wo):
        """ops.L2BoundInfProduct: (4 sqrt(d) phiInv + 1) max_e sum_h ||W^{Q,h}^T||_inf sum_r |N_h[r, e]|,
        with ||W^{Q,h}^T||_inf the largest column sum of |W^{Q,h}| and N_h the rows h d..(h+1) d of N."""
        D, H = self.D, self.H
        d = D // H
        k = 4 * math.sqrt(d) * self.phi + 1
        a = wq.abs().view(D, H, d).sum(0).max(1).values  # (H)
        n = self.stacked_n(wq, wv, wo).abs().view(H, d, D).sum(1)  # (H, D)
        return k * (a[:, None] * n).sum(0).max()

    def head_consts_tok2(self, n):
        """k_h = 1 + 4 W_0(S_h / e) (H), float64: S_h = N - 1, or with a position bias b
        S_h = sum_{delta=1}^{N-1} exp(b_h[delta] - b_h[0]) (lipschitz.BiasMass), N the context."""
        if not self.pos_bias:
            return torch.full((self.H,), 1 + 4 * self.phi, dtype=torch.float64)
        b = self.params[n + ".posbias"].double()[:, :self.T]
        mass = torch.exp(b[:, 1:] - b[:, :1]).sum(1)
        return 1 + 4 * LambertW0.apply(mass / math.e)

    def l2_bound_tok2(self, n, wq, wv, wo):
        """ops.L2BoundTok2 at the weights before the temperatures, accumulated in float64:
        sqrt(sum_h k_h^2 s_h^2) sigma_N with the estimates s_h = uq_h^T W^{Q,h} vq_h and
        sigma_N = un^T N vn from the fixed buffers."""
        D, H = self.D, self.H
        d = D // H
        uq, vq, un, vn = (self.buffers[n + ".pow_" + s].double() for s in ("uq", "vq", "un", "vn"))
        wq, wv, wo = wq.double(), wv.double(), wo.double()
        s = torch.einsum("hi,ihr,hr->h", uq, wq.view(D, H, d), vq)
        sigma = un @ self.stacked_n(wq, wv, wo) @ vn
        k = self.head_consts_tok2(n)
        return (torch.sqrt(((k * s) ** 2).sum()) * sigma).to(self.dtype)

    def pos_bias_logits(self, n, T):
        """The position bias of the logits (H, T, T): entry [h, i, j] is b_h[i - j] for j <= i
        (the entries above the diagonal are masked)."""
        ar = torch.arange(T)
        return self.params[n + ".posbias"][:, (ar[:, None] - ar[None, :]).clamp(min=0)]

    def attention(self, n, x, wv=None, wo=None):
        """Multihead causal attention of block n on x (B, T, D) (layers.Attention.Forward)."""
        p = self.params
        B, T, D = x.shape
        H = self.H
        d = D // H
        a = n + ".attn"
        wq = p[a + ".wq"]
        wv = p[a + ".wv"] if wv is None else wv
        wo = p[a + ".wo"] if wo is None else wo
        tq, tv = wq, wv
        if self.temp:  # W^{Q,h} e^{s_h}, W^{V,h} e^{-2 s_h}
            tq, tv = self.head_scale(wq, p[a + ".logtemp"], 1), self.head_scale(wv, p[a + ".logtemp"], -2)
        if self.kind == "l2":
            q, v = (x @ torch.cat([tq, self.l2_values(tq, tv)], 1)).split(D, -1)
            k = q
        else:
            q, k, v = (x @ torch.cat([wq, p[a + ".wk"], wv], 1)).split(D, -1)
        q, k, v = (t.reshape(B, T, H, d).transpose(1, 2) for t in (q, k, v))  # (B, H, T, d)
        s = 1 / math.sqrt(d)
        if self.kind == "dp":
            logits = (q @ k.transpose(-1, -2)) * s
        else:
            logits = (2 * s) * (q @ k.transpose(-1, -2)) - s * ((q * q).sum(-1)[..., :, None] + (k * k).sum(-1)[..., None, :])
        if self.pos_bias:
            logits = logits + self.pos_bias_logits(a, T)
        logits = logits.masked_fill(~self.mask[:T, :T], float("-inf"))
        out = (torch.softmax(logits, -1) @ v).transpose(1, 2).reshape(B, T, D) @ wo
        if self.attn_c > 0:
            if self.tok2:
                ub = self.l2_bound_tok2(a, wq, wv, wo)
            elif self.bound == "product":
                ub = self.l2_bound_product(tq, tv, wo)
            else:
                ub = self.l2_bound_inf(tq, tv, wo)
            out = out * torch.clamp(self.attn_c / ub, max=1.0)
        return out

    def mlp(self, n, x):
        p = self.params
        return F.gelu(x @ p[n + ".mlp.fc.w"] + p[n + ".mlp.fc.b"]) @ p[n + ".mlp.proj.w"] + p[n + ".mlp.proj.b"]

    def spectral_mlp(self, m, x):
        """layers.SpectralMLP m: act(x e^s W1/sigma1 + b1) (c e^-s W2/sigma2) + b2, act ELU or
        MaxMin, without the factors e^s and e^-s when the config has no mlp_gain."""
        p = self.params
        fc, proj = self.spectral(m + ".fc.w", 1.0), self.spectral(m + ".proj.w", self.c)
        if self.mlp_gain > 0:
            fc, proj = self.head_scale(fc, p[m + ".loggain"], 1), self.head_scale(proj, p[m + ".loggain"], -1)
        h = x @ fc + p[m + ".fc.b"]
        if self.activation == "maxmin":
            return max_min(h) @ proj + p[m + ".proj.b"]
        return F.elu(h) @ proj + p[m + ".proj.b"]

    def mixing(self, n, x):
        """layers.Mix of block n on x (B, T, D): the causal mix of softmax(taps) over the last k
        tokens, then W' (c W / sigma in an invertible block) and the bias."""
        p = self.params
        a = torch.softmax(p[n + ".mix.taps"], 0)
        T = x.shape[1]
        y = sum(a[d] * F.pad(x[:, :T - d], (0, 0, d, 0)) for d in range(min(self.mix, T)))
        w = self.spectral(n + ".mix.proj.w", self.c) if self.invertible else p[n + ".mix.proj.w"]
        return y @ w + p[n + ".mix.proj.b"]

    def residual(self, x, ln, f):
        """x + f(N(x)) (pre-LN, ball norm), N(x + f(x)) (post-LN) or x + f(x): ln names the
        sub-block's norm, n.ln1 or n.ln2, whose ball norm is n.ball1 or n.ball2."""
        if self.norm == "ball":
            return x + f(self.ball_norm(x, self.params[ln.replace(".ln", ".ball") + ".logradius"]))
        if self.norm == "pre":
            return x + f(self.layer_norm(x, ln))
        if self.norm == "post":
            return self.layer_norm(x + f(x), ln)
        return x + f(x)

    def logits(self, ids):
        """ids (B, T) int64 -> logits (B, T, V)."""
        p = self.params
        T = ids.shape[1]
        tok = p["tok"]
        if self.embed_radius:  # a constant radius: s = log(R / sqrt(D))
            tok = self.ball_norm(tok, torch.tensor(math.log(self.embed_radius / math.sqrt(self.D)), dtype=self.dtype))
        x = tok[self.token_rows(ids)] + p["pos"][:T]
        for i in range(self.L):
            n = "h%d" % i
            if self.mix:
                x = x + self.mixing(n, x)
            if self.invertible:
                ball = self.norm == "ball"
                a = self.ball_norm(x, self.params[n + ".ball1.logradius"]) if ball else x
                if self.kind == "dp":
                    wv, wo = self.spectral(n + ".attn.wv", 1.0), self.spectral(n + ".attn.wo", self.c)
                    x = x + self.attention(n, a, wv, wo)
                else:
                    x = x + self.attention(n, a)
                for mlp in self.mlps:
                    m = self.ball_norm(x, self.params[n + ".ball2.logradius"]) if ball else x
                    x = x + self.spectral_mlp(n + "." + mlp, m)
            else:
                x = self.residual(x, n + ".ln1", lambda y: self.attention(n, y))
                x = self.residual(x, n + ".ln2", lambda y: self.mlp(n, y))
        if self.lip_k:
            return self.ball_norm(x, p["lnf.logradius"]) @ self.spectral("head.w", self.head_gain)
        x = self.layer_norm(x, "lnf")
        return x @ (p["tok"].t() if self.tie else p["head.w"])

    def token_rows(self, ids):
        """spec.Model.TokenRow of every position of ids (B, T): its byte after its n - 1 bytes
        before, each + 1 and 0 before the sequence's start, as digits of base V + 1."""
        r = torch.zeros_like(ids)
        for k in range(self.token_bytes - 1, 0, -1):
            r = r * (self.V + 1) + F.pad(ids[:, :-k] + 1, (k, 0)) if k < ids.shape[1] else r * (self.V + 1)
        return r * self.V + ids

    def loss(self, ids, targets):
        t = targets.reshape(-1).clone()
        t[t < 0] = -1
        return F.cross_entropy(self.logits(ids).reshape(-1, self.V), t, ignore_index=-1)

    def grads(self, params):
        """The gradients of the parameters after a backward pass, zero for one the loss does
        not depend on (set as its grad, so that AdamW steps it as train.Adam does)."""
        for t in params:
            if t.grad is None:
                t.grad = torch.zeros_like(t)
        return [t.grad for t in params]

    def num_params(self):
        return sum(t.numel() for t in self.params.values())


class Muon:
    """Muon (train/muon.go) for the blocks' weight matrices: momentum m <- mu m + g, the
    Nesterov direction u = g + mu m scaled to Frobenius norm 1, five Newton-Schulz steps of
    Jordan et al.'s quintic on the wide orientation of u, and p <- (1 - lr wd) p - lr
    sqrt(max(1, cols/rows)) O for a weight applied as x p (rows = fan-in)."""

    MOMENTUM, A, B, C = 0.95, 3.4445, -4.7750, 2.0315

    def __init__(self, params, weight_decay):
        self.params = params
        self.wd = weight_decay
        self.m = [torch.zeros_like(t) for t in params]

    @torch.no_grad()
    def step(self, lr):
        for p, m in zip(self.params, self.m):
            rows, cols = p.shape
            m.mul_(self.MOMENTUM).add_(p.grad)
            u = p.grad + self.MOMENTUM * m
            x = u.t() if rows > cols else u
            x = x / (torch.linalg.norm(x) + 1e-7)
            for _ in range(5):
                a = x @ x.t()
                x = self.A * x + (self.C * (a @ a) + self.B * a) @ x
            o = x.t() if rows > cols else x
            p.mul_(1 - lr * self.wd).sub_(lr * math.sqrt(max(1.0, cols / rows)) * o)


class Trainer:
    """AdamW (train/adam.go) with global-norm clipping (train/clip.go): decayed matrices, the
    other parameters at the learning rate, and the scalars at SCALAR_LR times it; with
    opts["muon"] > 0 the blocks' weight matrices (model.Matrices: decayed, two dimensions,
    inside a block) take Muon at muon times the learning rate instead."""

    def __init__(self, lm, opts):
        self.lm = lm
        self.clip = opts["clip"]
        self.power_iters = max(1, opts.get("power_iters", 0))  # 0 means 1, as train.StepConfig
        self.muon_scale = opts.get("muon", 0)
        matrices = [n for n, t in lm.params.items()
                    if self.muon_scale > 0 and re.match(r"h\d+\.", n) and lm.decays(n) and t.dim() == 2]
        self.muon = Muon([lm.params[n] for n in matrices], opts["weight_decay"]) if matrices else None
        self.lr = opts["lr"]
        groups = {}
        for n, t in lm.params.items():
            if n not in matrices:
                groups.setdefault((lm.decays(n), lm.lr_scale(n)), []).append(t)
        self.params = [t for ts in groups.values() for t in ts] + [lm.params[n] for n in matrices]
        self.opt = torch.optim.AdamW([{"params": ts, "weight_decay": opts["weight_decay"] if decay else 0.0,
                                       "lr": opts["lr"] * scale, "lr_scale": scale}
                                      for (decay, scale), ts in groups.items()],
                                     lr=opts["lr"], betas=(opts["beta1"], opts["beta2"]), eps=opts["eps"])

    def set_lr(self, lr):
        """Sets the learning rate, times each group's scale."""
        self.lr = lr
        for g in self.opt.param_groups:
            g["lr"] = lr * g["lr_scale"]

    def step(self, ids, targets):
        self.lm.power_iterate(self.power_iters)
        for t in self.params:
            t.grad = None
        loss = self.lm.loss(ids, targets)
        loss.backward()
        grads = self.lm.grads(self.params)
        norm = torch.norm(torch.stack([g.norm() for g in grads])).item()
        if not math.isfinite(norm) or not math.isfinite(loss.item()):
            raise FloatingPointError("non-finite loss %g or gradient norm %g" % (loss.item(), norm))
        if self.clip > 0 and norm > self.clip:
            for g in grads:
                g.mul_(self.clip / norm)
        self.opt.step()
        if self.muon is not None:
            self.muon.step(self.lr * self.muon_scale)
        return loss.item()


# ---------------------------------------------------------------- timing

def blas_name():
    """The BLAS library loaded into the process (torch reports only BLAS_INFO=generic)."""
    libs = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                if "blas" in os.path.basename(path):
                    real = os.path.realpath(path)
                    libs.add(os.path.basename(os.path.dirname(real)) if "openblas-" in real else os.path.basename(real))
    except OSError:
        pass
    if not libs:
        m = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show())
        libs.add(m.group(1) if m else "unknown")
    return "torch/" + "+".join(sorted(libs))


def time_runs(fn, steps, warmup):
    for _ in range(warmup):
        fn()
    ds = []
    for _ in range(steps):
        t0 = time.perf_counter()
        fn()
        ds.append(time.perf_counter() - t0)
    return ds


def measure(lm, opts, ids, targets, mode, config, steps, warmup):
    """One JSON record with cmd/bench's fields: the median of the timed runs of a mode."""
    B, T = ids.shape
    last = {}
    if mode == "train":
        tr = Trainer(lm, opts)

        def fn():
            last["loss"] = tr.step(ids, targets)
    elif mode == "eval":
        def fn():
            with torch.no_grad():
                last["loss"] = lm.loss(ids, targets).item()
    elif mode == "sample":
        gen = torch.Generator().manual_seed(opts.get("seed", 1))
        prompt = ids[:1]
        B = 1

        def fn():  # model.Generate of one token: a batch-1 forward pass over the window
            with torch.no_grad():
                row = lm.logits(prompt)[0, T - 1]
                torch.multinomial(torch.softmax(row.double(), -1), 1, generator=gen).item()
    else:
        raise ValueError("mode %r" % mode)
    ds = time_runs(fn, steps, warmup)
    med = statistics.median(ds)
    rec = dict(impl="torch", config=config, arch=lm.arch, mode=mode, dtype=str(lm.dtype).replace("torch.", ""),
               backend=blas_name(), threads=torch.get_num_threads(), interop_threads=torch.get_num_interop_threads(),
               blas_threads=ARGS.blas_threads, omp_wait_policy=ARGS.omp_wait_policy, batch=B, context=T, params=lm.num_params(), steps=steps, warmup=warmup,
               ms_median=1e3 * med, ms_min=1e3 * min(ds), ms_max=1e3 * max(ds), positions=B * T,
               tokens_per_s=B * T / med, ns_per_token=1e9 * med / (B * T), generated_per_s=1 / med if mode == "sample" else 0,
               loss=last.get("loss", 0.0), torch_version=torch.__version__)
    if mode == "train":
        rec["power_iters"] = tr.power_iters
    return rec


def emit(rec):
    print(json.dumps(rec), flush=True)


# ---------------------------------------------------------------- commands

def from_checkpoint(path):
    tensors, meta = read_safetensors(path)
    cfg = json.loads(meta["lipformer.config"])
    dtype = {"float32": torch.float32, "float64": torch.float64}[cfg["dtype"]]
    lm = LM(cfg, dtype)
    lm.load(tensors)
    if "bench.inputs" not in tensors:
        raise KeyError("%s has no bench.inputs: write it with cmd/bench -torch -keep DIR" % path)
    ids = torch.from_numpy(tensors["bench.inputs"].astype(np.int64))
    targets = torch.from_numpy(tensors["bench.targets"].astype(np.int64))
    opts = dict(BENCH_OPTIONS)
    opts.update(json.loads(meta.get("bench.options", "{}")))
    return lm, ids, targets, opts, meta.get("bench.config", os.path.basename(path))


def preset_config(name, arch, dtype):
    p = dict(PRESETS[name])
    batch = p.pop("batch")
    cfg = dict(arch=arch, dtype=dtype, **p, **DEFAULTS)
    return cfg, batch


def loss_record(lm, ids, targets, opts, config, after_step):
    """The loss of the batch, and with after_step the loss after one training step on it."""
    with torch.no_grad():
        rec = dict(impl="torch", config=config, arch=lm.arch, mode="loss", loss=lm.loss(ids, targets).item())
    if after_step:
        Trainer(lm, opts).step(ids, targets)
        with torch.no_grad():
            rec["loss_after_step"] = lm.loss(ids, targets).item()
    return rec


def cmd_loss(a):
    lm, ids, targets, opts, config = from_checkpoint(a.ckpt)
    emit(loss_record(lm, ids, targets, opts, config, a.after_step))


def cmd_grads(a):
    for ckpt, out in zip(a.ckpt.split(","), a.out.split(",")):
        lm, ids, targets, _, config = from_checkpoint(ckpt)
        lm.parts = []
        loss = lm.loss(ids, targets)
        loss.backward()
        grads = dict(zip(lm.params, (g.detach().numpy() for g in lm.grads(lm.params.values()))))
        write_safetensors(out, grads, {"loss": repr(loss.item()), "parts": json.dumps(lm.gradient_parts())})
        emit(dict(impl="torch", config=config, arch=lm.arch, mode="grads", loss=loss.item()))


def cmd_run(a):
    lm, ids, targets, opts, config = from_checkpoint(a.ckpt)
    state = {n: t.detach().clone() for n, t in lm.params.items()}
    bufs = {n: t.clone() for n, t in lm.buffers.items()}
    emit(loss_record(lm, ids, targets, opts, config, a.after_step))
    for mode in [m for m in MODES if m in a.modes.split(",")]:
        with torch.no_grad():  # every mode starts from the checkpoint's weights
            for n, t in lm.params.items():
                t.copy_(state[n])
        lm.buffers = {n: t.clone() for n, t in bufs.items()}
        emit(measure(lm, opts, ids, targets, mode, config, a.steps, a.warmup))


def cmd_time(a):
    dtype = {"float32": torch.float32, "float64": torch.float64}[a.dtype]
    for name in a.configs.split(","):
        for arch in a.archs.split(","):
            cfg, batch = preset_config(name, arch, a.dtype)
            gen = torch.Generator().manual_seed(a.seed)
            lm = LM(cfg, dtype)
            lm.init(gen)
            ids = torch.randint(0, cfg["vocab"], (batch, cfg["context"] + 1), generator=gen)
            inputs, targets = ids[:, :-1].contiguous(), ids[:, 1:].contiguous()
            opts = dict(BENCH_OPTIONS, seed=a.seed)
            for mode in [m for m in MODES if m in a.modes.split(",")]:
                emit(measure(lm, opts, inputs, targets, mode, name, a.steps, a.warmup))


def cosine_lr(step, lr, min_lr, warmup, decay_iters):
    """train.NewCosine's LR: nanoGPT's linear warm-up then cosine decay to min_lr."""
    step = max(step, 0)
    if step < warmup:
        return lr * (step + 1) / (warmup + 1)
    if step > decay_iters:
        return min_lr
    ratio = (step - warmup) / (decay_iters - warmup)
    return min_lr + 0.5 * (1 + math.cos(math.pi * ratio)) * (lr - min_lr)


def evaluate(lm, ids):
    """train.Evaluate: mean nats per byte over every byte of ids but the first, predicted in
    consecutive windows of the context length (a window's first byte sees no context)."""
    T, total, n = lm.T, 0.0, 0
    with torch.no_grad():
        for s in range(0, len(ids) - 1, T):
            w = ids[s:s + T + 1]
            x, y = w[:-1].unsqueeze(0), w[1:].unsqueeze(0)
            if x.shape[1] < T:  # the last window: pad the input, ignore the padded targets
                pad = T - x.shape[1]
                x = torch.cat([x, torch.zeros(1, pad, dtype=x.dtype)], 1)
                y = torch.cat([y, torch.full((1, pad), -1, dtype=y.dtype)], 1)
            k = int((y >= 0).sum())
            total += lm.loss(x, y).item() * k
            n += k
    return total / n


def cmd_train(a):
    raw = open(a.data, "rb").read()
    vocab = sorted(set(raw))
    index = {b: i for i, b in enumerate(vocab)}
    data = torch.tensor([index[b] for b in raw], dtype=torch.long)
    cut = int(0.9 * len(data))
    train, val = data[:cut], data[cut:]
    cfg, _ = preset_config("P2", "dp", "float32")
    cfg.update(json.loads(a.model))
    cfg["vocab"] = len(vocab)
    lm = LM(cfg, {"float32": torch.float32, "float64": torch.float64}[cfg["dtype"]])
    gen = torch.Generator().manual_seed(a.seed)
    lm.init(gen)
    opts = dict(lr=a.lr, beta1=0.9, beta2=a.beta2, eps=1e-8, weight_decay=a.weight_decay, clip=a.clip, muon=a.muon,
                power_iters=a.power_iters)
    tr = Trainer(lm, opts)
    T, began = lm.T, time.time()
    for step in range(a.iters):
        lr = cosine_lr(step, a.lr, a.min_lr, a.lr_warmup, a.iters)
        tr.set_lr(lr)
        starts = torch.randint(0, len(train) - T - 1, (a.batch,), generator=gen)
        w = torch.stack([train[s:s + T + 1] for s in starts.tolist()])
        loss = tr.step(w[:, :-1], w[:, 1:])
        last = step + 1 == a.iters
        if (step + 1) % a.eval_every == 0 or last:
            v = evaluate(lm, val)
            emit(dict(impl="torch", step=step + 1, loss=loss, lr=lr, val_loss=v, val_bpc=v / math.log(2),
                      elapsed_s=time.time() - began, config=cfg))


def cmd_presets(a):
    for name in PRESETS:
        for arch in a.archs.split(","):
            cfg, batch = preset_config(name, arch, a.dtype)
            emit(dict(name=name, arch=arch, batch=batch, config=cfg))


if __name__ == "__main__":
    {"loss": cmd_loss, "grads": cmd_grads, "run": cmd_run, "time": cmd_time, "presets": cmd_presets,
     "train": cmd_train}[ARGS.command](ARGS)
