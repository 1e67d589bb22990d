#!/usr/bin/env python3
"""Heller & Fetaya section V in PyTorch: SGLD training of a small Bayesian MLP
on the 8x8 handwritten digits, with one release per epoch.

The model: h = tanh(W1 x + b1), p(y | x, theta) = softmax(W2 h + b2)_y, with
the prior theta ~ N(0, I / alpha) on every weight and bias (the layout of
mcmcaudit's built-in `mlp` model). Training is SGLD as in Heller & Fetaya,
"Can Stochastic Gradient Langevin Dynamics Provide Differential Privacy for
Deep Learning?", eq. (3):

    theta <- theta + (eta/2) (grad ln p(theta) + (n/b) sum_{i in batch} grad ln p(y_i | x_i, theta))
                   + sqrt(eta) xi,   xi ~ N(0, I),

with the data reshuffled every epoch and cut into consecutive batches of b
(the last, shorter batch of an epoch scaled by n/|batch|), or visited in one
fixed order (--scheme cyclic). After every epoch it releases the four
class probabilities of section V for the canary (x*, y*) and the record
(x0, y0) it replaced:

    p(y* | x*), p(y0 | x*), p(y* | x0), p(y0 | x0)      (dim 4)

and reports, in `info.correct`, how many test records that epoch's theta
classifies correctly (the tool turns the counts into the test accuracy).

Inputs, from the tool: MCMCAUDIT_D and MCMCAUDIT_DPRIME (CSV: 64 features
scaled to [0, 1], then the label 0..9), MCMCAUDIT_CANARY (JSON: index, x0,
y0, x_star, y_star) and, optionally, MCMCAUDIT_TEST (the held-out test set,
same CSV layout). `--standalone N` trains N models in a plain loop and
prints the time per run, per epoch and per batch; without the environment
variables it builds its own split and a crude canary from the bundled
testdata/digits.csv.gz (as `--demo-data` does when serving).

A trial is a deterministic function of (seed, side): every random number
comes from NumPy's PCG64 seeded with the full 64-bit seed (PyTorch 1.13's
CPU generator keeps only the low 32 bits of a seed), PyTorch runs on one
thread (the pool of processes provides the parallelism), and deterministic
algorithms are enforced.
"""

import argparse
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import mcmcaudit_protocol as mp  # noqa: E402

FEATURES, CLASSES = 64, 10


def fail(msg):
    sys.stderr.write("digits_sgld.py: %s\n" % msg)
    sys.exit(2)


def to_tensors(rows):
    """(X, y) tensors from CSV rows: FEATURES features, then a label in 0..CLASSES-1."""
    a = np.asarray(rows, dtype=np.float64)
    if a.ndim != 2 or a.shape[1] != FEATURES + 1:
        raise ValueError("records must have %d features and a label, got %d columns" % (FEATURES, a.shape[1] if a.ndim == 2 else 0))
    y = a[:, -1]
    if not np.all((y == np.round(y)) & (y >= 0) & (y < CLASSES)):
        raise ValueError("labels must be integers in [0, %d)" % CLASSES)
    return torch.from_numpy(a[:, :-1].copy()), torch.from_numpy(y.astype(np.int64))


class MLP:
    """Shapes and flat layout of theta: W1 (H x D) row by row, b1 (H), W2 (K x H), b2 (K)."""

    def __init__(self, hidden):
        self.hidden = hidden
        self.shapes = [(hidden, FEATURES), (hidden,), (CLASSES, hidden), (CLASSES,)]
        self.sizes = [int(np.prod(s)) for s in self.shapes]
        self.dim = sum(self.sizes)

    def logits(self, theta, X):
        W1, b1, W2, b2 = (t.view(s) for t, s in zip(theta.split(self.sizes), self.shapes))
        return torch.tanh(X @ W1.T + b1) @ W2.T + b2


def sgld(seed, data, net, args, probe, test):
    """One training run: the releases (one row of 4 per epoch) and the test records classified correctly."""
    rng = np.random.Generator(np.random.PCG64(seed))
    # Nothing below draws from PyTorch's generator, whose seed keeps only
    # 32 bits; seeding it anyway keeps a trial deterministic if a random
    # layer (dropout, say) is added.
    torch.manual_seed(seed)
    X, y = data
    n = X.shape[0]
    half, sd = args.eta / 2, math.sqrt(args.eta)
    shrink = 1 - half * args.alpha  # the prior's gradient -alpha theta, folded in
    theta = torch.from_numpy(rng.standard_normal(net.dim) / math.sqrt(args.alpha))
    order = rng.permutation(n)
    releases, correct = [], []
    for _ in range(args.epochs):
        if args.scheme == "reshuffle":
            order = rng.permutation(n)
        for start in range(0, n, args.batch):
            idx = torch.from_numpy(order[start:start + args.batch])
            th = theta.detach().requires_grad_(True)
            loglik = -F.cross_entropy(net.logits(th, X[idx]), y[idx], reduction="sum")
            (grad,) = torch.autograd.grad(loglik, th)
            xi = torch.from_numpy(rng.standard_normal(net.dim))
            # In place: th, which shares theta's storage, is no longer needed.
            theta.mul_(shrink).add_(grad, alpha=half * n / len(idx)).add_(xi, alpha=sd)
        with torch.no_grad():
            lp = F.log_softmax(net.logits(theta, probe["x"]), dim=1)
            feats = lp[probe["rows"], probe["cols"]]
            releases.append(feats if args.log_probs else feats.exp())
            if test is not None:
                correct.append(int((net.logits(theta, test[0]).argmax(dim=1) == test[1]).sum()))
    rel = torch.stack(releases)
    info = {"correct": correct} if test is not None else None
    return mp.Result(rel, info)


def make_probe(can):
    """The inputs x*, x0 and the (row, class) pairs of the four released probabilities."""
    x = torch.tensor([can["x_star"], can["x0"]], dtype=torch.float64)
    ys, y0 = can["y_star"], can["y0"]
    return {"x": x, "rows": torch.tensor([0, 0, 1, 1]), "cols": torch.tensor([ys, y0, ys, y0])}


def check_canary(can, data):
    """The canary must describe the pair: D[i] = (x0, y0), D'[i] = (x*, y0)."""
    for k in ("index", "x0", "y0", "x_star", "y_star"):
        if k not in can:
            fail("%s: missing %r" % (mp.ENV_CANARY, k))
    i = can["index"]
    if len(can["x0"]) != FEATURES or len(can["x_star"]) != FEATURES:
        fail("%s: x0 and x_star must have %d values" % (mp.ENV_CANARY, FEATURES))
    if not all(isinstance(can[k], int) and 0 <= can[k] < CLASSES for k in ("y0", "y_star")) or can["y0"] == can["y_star"]:
        fail("%s: y0 and y_star must be distinct classes in [0, %d)" % (mp.ENV_CANARY, CLASSES))
    (Xd, yd), (Xp, yp) = data[mp.SIDE_D], data[mp.SIDE_DPRIME]
    if not (isinstance(i, int) and 0 <= i < Xd.shape[0]) or Xd.shape != Xp.shape:
        fail("%s: index %r outside D, or D and D' differ in size" % (mp.ENV_CANARY, i))
    if not (torch.equal(Xd[i], torch.tensor(can["x0"], dtype=torch.float64)) and int(yd[i]) == can["y0"]
            and torch.equal(Xp[i], torch.tensor(can["x_star"], dtype=torch.float64)) and int(yp[i]) == can["y0"]):
        fail("%s: D's row %d must be (x0, y0) and D''s row %d must be (x_star, y0)" % (mp.ENV_CANARY, i, i))


def standalone_inputs(path):
    """A stratified 80/20 split of the digits and a crude canary: x0 moved 60%
    of the way to the mean image of its nearest other class."""
    rows = np.asarray(mp.read_csv(path), dtype=np.float64)
    rows[:, :-1] /= 16
    rng = np.random.default_rng(1)
    test = np.zeros(len(rows), dtype=bool)
    for c in range(CLASSES):
        idx = np.flatnonzero(rows[:, -1] == c)
        test[rng.permutation(idx)[:round(0.2 * len(idx))]] = True
    train = rows[~test]
    x0, y0 = train[0, :-1], int(train[0, -1])
    means = {c: train[train[:, -1] == c, :-1].mean(axis=0) for c in range(CLASSES) if c != y0}
    ys = min(means, key=lambda c: np.sum((means[c] - x0) ** 2))
    xs = np.clip(x0 + 0.6 * (means[ys] - x0), 0, 1)
    prime = train.copy()
    prime[0, :-1] = xs
    can = {"index": 0, "x0": x0.tolist(), "y0": y0, "x_star": xs.tolist(), "y_star": ys}
    return {mp.SIDE_D: to_tensors(train), mp.SIDE_DPRIME: to_tensors(prime)}, can, to_tensors(rows[test])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hidden", type=int, default=16, help="hidden units H (>= 1)")
    ap.add_argument("--alpha", type=float, default=1.0, help="prior precision of every weight and bias (> 0)")
    ap.add_argument("--eta", type=float, default=0.001, help="SGLD step size eta (> 0): drift eta/2, noise variance eta")
    ap.add_argument("--batch", type=int, default=32, help="batch size b (>= 1)")
    ap.add_argument("--epochs", type=int, default=10, help="number of epochs, one release each (>= 1)")
    ap.add_argument("--scheme", choices=["reshuffle", "cyclic"], default="reshuffle", help="batch order")
    ap.add_argument("--log-probs", action="store_true", help="release log-probabilities instead of probabilities")
    ap.add_argument("--standalone", type=int, metavar="N", help="train N models in a plain loop and print timings")
    ap.add_argument("--demo-data", action="store_true",
                    help="serve on the split and crude canary --standalone builds (to time the protocol without the tool)")
    ap.add_argument("--digits", default=os.path.join(HERE, "..", "..", "testdata", "digits.csv.gz"),
                    help="the digits CSV for --standalone (without MCMCAUDIT_D) and --demo-data")
    args = ap.parse_args()
    if args.hidden < 1 or args.batch < 1 or args.epochs < 1:
        ap.error("--hidden, --batch and --epochs must be >= 1")
    for name in ("alpha", "eta"):
        v = getattr(args, name)
        if not (v > 0 and math.isfinite(v)):
            ap.error("--%s: must be finite and > 0, got %g" % (name, v))

    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    torch.use_deterministic_algorithms(True)

    test_rows = mp.env_rows(mp.ENV_TEST)
    test = to_tensors(test_rows) if test_rows is not None else None
    data = mp.load_datasets(to_tensors)
    can = mp.canary()
    if data[mp.SIDE_D] is None and (args.standalone is not None or args.demo_data):
        data, can, test = standalone_inputs(args.digits)
    if data[mp.SIDE_D] is None or data[mp.SIDE_DPRIME] is None:
        fail("%s and %s must name the datasets" % (mp.ENV_D, mp.ENV_DPRIME))
    if can is None:
        fail("%s must hold the canary (this example releases its class probabilities)" % mp.ENV_CANARY)
    check_canary(can, data)
    net = MLP(args.hidden)
    probe = make_probe(can)
    labels = ["epoch %d" % (e + 1) for e in range(args.epochs)]

    def run(seed, side, d):
        return sgld(seed, d, net, args, probe, test)

    if args.standalone is None:
        mp.serve(run, dim=4, releases=labels, data=data)
        return
    n = args.standalone
    batches = math.ceil(data[mp.SIDE_D][0].shape[0] / args.batch)
    accs = []
    begin, cpu = time.perf_counter(), time.process_time()
    for i in range(n):
        side = mp.SIDE_D if i % 2 == 0 else mp.SIDE_DPRIME
        res = run(i + 1, side, data[side])
        mp.check_releases(res, 4, len(labels))
        if res.info:
            accs.append(np.array(res.info["correct"]) / len(test[1]))
    took, cpu = time.perf_counter() - begin, time.process_time() - cpu
    per = took / max(n, 1)
    print("standalone: %d runs x %d epochs x %d batches (n = %d, b = %d, H = %d, %d parameters): "
          "%.3f s per run (CPU %.3f s), %.2f ms per epoch, %.1f us per batch"
          % (n, args.epochs, batches, data[mp.SIDE_D][0].shape[0], args.batch, args.hidden, net.dim,
             per, cpu / max(n, 1), 1e3 * per / args.epochs, 1e6 * per / (args.epochs * batches)))
    if accs:
        print("mean test accuracy by epoch: " + " ".join("%.3f" % a for a in np.mean(accs, axis=0)))


if __name__ == "__main__":
    main()
