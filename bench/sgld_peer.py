"""NumPy peer of `audit run bench/sgld-linreg.yaml`: batch-1 SGLD on 1-D
Bayesian linear regression (prior N(0, 1/alpha), noise precision beta),
n = 1000 synthetic records, step eta = 1e-4, indices drawn with
replacement, 4000 runs of 10^4 steps (4*10^7 steps), half on D and half on
D' (record 0 replaced by (3, -3)), the final states thresholded.

A step is theta <- theta + (eta/2) grad log posterior + N(0, eta), with the
batch-1 gradient -alpha theta + n beta x_i (y_i - x_i theta) (Welling & Teh
2011, eq. 4), which is affine in theta: theta <- a_i theta + c_i + sqrt(eta) z
with a_i, c_i precomputed per record. One chain cannot be vectorised, so the
runs advance together: each step is a handful of array operations over all
4000 runs, with the random numbers of 256 steps drawn at once.

Usage: /usr/bin/python3 bench/sgld_peer.py [--runs R] [--steps S] [--tool-json out.json]
"""
import argparse
import json
import math
import time

import numpy as np

import fig1_peer

ALPHA, BETA, ETA, N = 1.0, 1.0, 1e-4, 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=4000)
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--tool-json")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    x = rng.standard_normal(N)
    y = 0.5 * x + rng.standard_normal(N) / math.sqrt(BETA)
    xp, yp = x.copy(), y.copy()
    xp[0], yp[0] = 3.0, -3.0
    R = args.runs
    side = np.arange(R) % 2 == 1                  # True: D'
    t0 = time.perf_counter()
    half = ETA / 2
    # Per-record coefficients, stacked so that record i of run r is row
    # i + N*side[r] of the table.
    X, Y = np.r_[x, xp], np.r_[y, yp]
    a_tab = 1 - half * (ALPHA + N * BETA * X * X)
    c_tab = half * N * BETA * X * Y
    off = np.where(side, N, 0)
    theta = rng.standard_normal(R) / math.sqrt(ALPHA)
    sq = math.sqrt(ETA)
    # Random numbers are drawn for blocks of steps at once.
    block = 256
    for s0 in range(0, args.steps, block):
        b = min(block, args.steps - s0)
        idx = rng.integers(0, N, size=(b, R)) + off
        z = rng.standard_normal((b, R))
        z *= sq
        for k in range(b):
            i = idx[k]
            theta *= a_tab[i]
            theta += c_tab[i]
            theta += z[k]
    elapsed = time.perf_counter() - t0
    steps = R * args.steps
    d_mean, dp_mean = theta[~side].mean(), theta[side].mean()
    print(f"sgld peer: {R} runs x {args.steps} steps = {steps:.3g} steps in {elapsed:.2f} s, "
          f"{elapsed / steps * 1e9:.1f} ns/step")
    # Posterior of Bayesian linear regression: precision alpha + beta sum x^2,
    # mean beta sum xy / precision (the chains should sit near it).
    for name, xs, ys, m in (("D", x, y, d_mean), ("D'", xp, yp, dp_mean)):
        prec = ALPHA + BETA * (xs * xs).sum()
        print(f"  final theta mean on {name:2s}: {m:.5f} (posterior mean {BETA * (xs * ys).sum() / prec:.5f})")
    # The audit's threshold attack on the final states (training half chooses
    # the rule, evaluation half counts; delta = 1e-5, confidence 0.95).
    fig1_peer.DELTA = 1e-5
    ntr = R // 2
    lt, le = side[:ntr], side[ntr:]
    a = 0.025
    T = fig1_peer.ScanTables(int((~lt).sum()), int(lt.sum()), a)
    (thr, o, _), _ = fig1_peer.choose(theta[:ntr], lt, T)
    fp, fn = fig1_peer.counts(theta[ntr:], le, thr, o)
    eps, _ = fig1_peer.eval_bounds(fp, fn, int((~le).sum()), int(le.sum()), a)
    line = f"  eps_lb peer {eps:.4f}"
    if args.tool_json:
        rep = json.load(open(args.tool_json))["report"]
        info = rep.get("sampler_info", {})
        line += f", tool {rep['points'][0]['attacks'][0]['region']['epsilon']:.4f} ({info.get('iterations')} steps)"
    print(line)


if __name__ == "__main__":
    main()
