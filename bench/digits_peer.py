"""NumPy peer of `audit run testdata/digits-sgld.yaml` (Heller & Fetaya 2023,
§V on the 8x8 digits): Bayesian multinomial logistic regression (prior
N(0, I/alpha), alpha = 0.1, weights and biases) trained by SGLD (eta = 0.01,
batches of 32, a fresh shuffle every epoch, 20 epochs, started from the
prior), 1000 runs of which about half on D and half on D', the state
released after every epoch.

D' replaces one training record by a canary: 20 models trained on D by the
same sampler pick the first training record (in data order) that all of
them classify as its label, and its features are moved to the nearest
point x* (within [0, 1]^64) that every model assigns to some other class y*
with a logit margin of 0.1, the nearest over y*. For affine logits that set
is an intersection of half-spaces, so x* solves a least-distance problem,
here by its reduction to non-negative least squares (Lawson & Hanson 1974,
Solving Least Squares Problems, ch. 23).

Attack: the features ln p(y*|x*), ln p(y0|x*), ln p(y*|x0), ln p(y0|x0) of
each release; least squares of the +-1 labels on the standardised features
(with intercept) fitted on the first half of the runs, the threshold of the
fitted score chosen there by an exhaustive scan for the Clopper-Pearson
region bound (Heller & Fetaya eq. 12), and the bound counted on the second
half. The test accuracy of the released models is reported per epoch.

All runs advance together: a step is a batched matrix product over the
1000 runs. The data split and random numbers are the peer's own, so its
numbers agree with the tool's up to sampling error.

Usage: /usr/bin/python3 bench/digits_peer.py [--runs R] [--tool-json out.json]
"""
import argparse
import gzip
import json
import math
import os
import time

import numpy as np
from scipy.optimize import nnls

import fig1_peer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALPHA, ETA, BATCH, EPOCHS, MODELS, MARGIN = 0.1, 0.01, 32, 20, 20, 0.1
DELTA, CONF = 1e-5, 0.95
K = 10


def load(rng):
    with gzip.open(os.path.join(ROOT, "testdata", "digits.csv.gz"), "rt") as f:
        a = np.loadtxt(f, delimiter=",")
    x, y = a[:, :64] / 16, a[:, 64].astype(int)
    test = np.zeros(len(y), bool)
    test[rng.permutation(len(y))[: round(0.2 * len(y))]] = True
    return x[~test], y[~test], x[test], y[test]


def with_bias(x):
    return np.concatenate([x, np.ones(x.shape[:-1] + (1,))], axis=-1)


def sgld(xs, ys, side, runs, rng, release=None):
    """SGLD for `runs` chains at once; xs, ys: (2, n, 65), (2, n) per side.
    Returns the final parameters (runs, 65, K); calls release(epoch, W)."""
    n = xs.shape[1]
    W = rng.standard_normal((runs, 65, K)) / math.sqrt(ALPHA)
    sq = math.sqrt(ETA)
    rr = np.arange(runs)[:, None]
    onehot = np.eye(K)
    for e in range(EPOCHS):
        perm = rng.permuted(np.tile(np.arange(n), (runs, 1)), axis=1)
        for s in range(0, n, BATCH):
            idx = perm[:, s:s + BATCH]
            xb = xs[side[:, None], idx]                   # (runs, b, 65)
            yb = ys[side[:, None], idx]
            logits = np.matmul(xb, W)                     # (runs, b, K)
            logits -= logits.max(axis=2, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=2, keepdims=True)
            r = onehot[yb] - p
            grad = np.matmul(xb.transpose(0, 2, 1), r) * (n / idx.shape[1]) - ALPHA * W
            W += (ETA / 2) * grad + sq * rng.standard_normal(W.shape)
        if release:
            release(e, W)
    return W


def least_distance(G, h):
    """min ||z|| subject to G z >= h, by NNLS on [G^T; h^T] u ~ (0, 1)."""
    m, d = G.shape
    E = np.vstack([G.T, h[None, :]])
    f = np.zeros(d + 1)
    f[d] = 1
    u, _ = nnls(E, f, maxiter=50 * m)
    r = E @ u - f
    if np.linalg.norm(r) < 1e-12:
        return None                                       # infeasible
    return -r[:d] / r[d]


def craft(models, x, y):
    """The canary: (index, x*, y*) as described in the module doc."""
    pred = np.argmax(with_bias(x)[None] @ models, axis=2)   # (M, n)
    agreed = np.where((pred == y[None]).all(axis=0))[0]
    for i in agreed:
        x0, y0 = x[i], y[i]
        best = None
        for t in range(K):
            if t == y0:
                continue
            # f_t - f_j >= margin for every model and j != t, on z = x - x0,
            # and 0 <= x0 + z <= 1.
            rows, rhs = [], []
            for Wm in models:
                w, b = Wm[:64].T, Wm[64]                  # (K, 64), (K,)
                for j in range(K):
                    if j != t:
                        g = w[t] - w[j]
                        rows.append(g)
                        rhs.append(MARGIN - (g @ x0 + b[t] - b[j]))
            G = np.vstack([np.array(rows), np.eye(64), -np.eye(64)])
            h = np.r_[rhs, -x0, x0 - 1]
            z = least_distance(G, h)
            if z is None:
                continue
            if best is None or np.linalg.norm(z) < best[0]:
                best = (np.linalg.norm(z), np.clip(x0 + z, 0, 1), t)
        if best is not None:
            return i, best[1], best[2], best[0]
    raise SystemExit("no canary could be crafted")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--tool-json")
    args = ap.parse_args()
    t0 = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    x, y, xt, yt = load(rng)
    n = len(y)
    xs = np.stack([with_bias(x), with_bias(x)])
    ys = np.stack([y, y])
    # The canary, from 20 models trained on D.
    models = sgld(xs, ys, np.zeros(MODELS, int), MODELS, rng)
    ci, xstar, ystar, norm = craft(models, x, y)
    x0, y0 = x[ci], y[ci]
    xs[1, ci, :64] = xstar
    t_canary = time.perf_counter() - t0
    # The audited runs.
    R = args.runs
    side = (rng.random(R) < 0.5).astype(int)              # 1: D'
    feats = np.empty((EPOCHS, R, 4))
    correct = np.zeros(EPOCHS)
    probe = with_bias(np.stack([xstar, x0]))              # (2, 65)
    xtb = with_bias(xt)

    def release(e, W):
        lg = np.einsum("pf,rfk->rpk", probe, W)
        lg = lg - lg.max(axis=2, keepdims=True)
        lp = lg - np.log(np.exp(lg).sum(axis=2, keepdims=True))
        feats[e] = np.stack([lp[:, 0, ystar], lp[:, 0, y0], lp[:, 1, ystar], lp[:, 1, y0]], axis=1)
        correct[e] = (np.argmax(xtb[None] @ W, axis=2) == yt[None]).sum()

    sgld(xs, ys, side, R, rng, release)
    t_runs = time.perf_counter() - t0
    # The attack per release.
    lab = side.astype(bool)
    ntr = R // 2
    lt, le = lab[:ntr], lab[ntr:]
    a = (1 - CONF) / 2
    fig1_peer.DELTA = DELTA
    T = fig1_peer.ScanTables(int((~lt).sum()), int(lt.sum()), a)
    rows = []
    for e in range(EPOCHS):
        F = feats[e]
        mu, sd = F[:ntr].mean(axis=0), F[:ntr].std(axis=0)
        sd[sd == 0] = 1
        Z = np.c_[np.ones(R), (F - mu) / sd]
        coef, *_ = np.linalg.lstsq(Z[:ntr], np.where(lt, 1.0, -1.0), rcond=None)
        s = Z @ coef
        (thr, o, vsel), _ = fig1_peer.choose(s[:ntr], lt, T)
        fp, fn = fig1_peer.counts(s[ntr:], le, thr, o)
        eps, _ = fig1_peer.eval_bounds(fp, fn, int((~le).sum()), int(le.sum()), a)
        rows.append((e + 1, vsel, eps, correct[e] / (R * len(yt))))
    elapsed = time.perf_counter() - t0
    print(f"digits peer: {R} runs x {EPOCHS} epochs ({n} training records, batches of {BATCH}), "
          f"{elapsed:.2f} s (canary {t_canary:.2f} s, runs {t_runs - t_canary:.2f} s)")
    print(f"canary: training record {ci}, label {y0} -> class {ystar}, |x* - x0| = {norm:.3f}")
    tool = None
    if args.tool_json:
        rep = json.load(open(args.tool_json))["report"]
        tool = [(p["attacks"][0]["selection"]["epsilon"], p["attacks"][0]["region"]["epsilon"], p.get("test_accuracy"))
                for p in rep["points"]]
    print(f"{'epoch':>5} {'eps(train)':>10} {'eps_lb':>8} {'test acc':>8}" +
          (f" | {'tool eps(train)':>15} {'tool eps_lb':>11} {'tool acc':>8}" if tool else ""))
    for j, (e, vs, ev, acc) in enumerate(rows):
        line = f"{e:5d} {vs:10.4f} {ev:8.4f} {acc:8.4f}"
        if tool:
            ta = tool[j][2]
            line += f" | {tool[j][0]:15.4f} {tool[j][1]:11.4f} {ta if ta is None else f'{ta:8.4f}'}"
        print(line)


if __name__ == "__main__":
    main()
