#!/usr/bin/env python3
"""ULA on Bayesian logistic regression, in NumPy, served to mcmcaudit.

The unadjusted Langevin algorithm of Bertazzi, Johnston, Roberts & Durmus
(2025), "Differential Privacy Guarantees of Markov Chain Monte Carlo
Algorithms", eq. (12), with the full gradient:

    theta <- theta - gamma * grad U_D(theta) + sqrt(2 gamma) * z,  z ~ N(0, I),
    U_D(theta) = alpha/2 |theta|^2 - sum_i ln p(y_i | x_i, theta),
    p(y = 1 | x, theta) = sigmoid(theta . x),  labels y in {0, 1},

so grad U_D(theta) = alpha theta - X^T (y - sigmoid(X theta)), one
matrix-vector product per step over all records. It releases the state
after every --release-every iterations (default: the final state only).

Run under mcmcaudit (D and D' from MCMCAUDIT_D / MCMCAUDIT_DPRIME: the
features, then the label in {0, 1}), or `--standalone N` to time N trials
in a plain loop (without the environment variables: 40 synthetic records,
D' with record 0 replaced by the outlier ([3, -2], 0)).
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcmcaudit_protocol as mp  # noqa: E402


def load(rows):
    """(X, y) from CSV rows: features, then the label in {0, 1}."""
    a = np.asarray(rows, dtype=np.float64)
    if a.ndim != 2 or a.shape[1] < 2:
        raise ValueError("ula_logistic.py: records must have at least one feature and a label")
    X, y = a[:, :-1].copy(), a[:, -1].copy()
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("ula_logistic.py: labels must be 0 or 1")
    return X, y


def synthetic(n=40, seed=5):
    """Standalone data: x ~ N(0, I_2), y ~ Bernoulli(sigmoid(x . [1.5, -1]))."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    y = (rng.random(n) < 1 / (1 + np.exp(-X @ np.array([1.5, -1.0])))).astype(np.float64)
    Xp, yp = X.copy(), y.copy()
    Xp[0], yp[0] = [3.0, -2.0], 0.0
    return {mp.SIDE_D: (X, y), mp.SIDE_DPRIME: (Xp, yp)}


def ula(X, y, theta0, gamma, alpha, iterations, every, rng):
    """Run ULA from theta0; return the states after iterations every, 2 every, ...

    With sigmoid(z) = 1/2 + tanh(z/2)/2 the step above reads

        theta <- (1 - gamma alpha) theta + gamma X^T (y - 1/2)
                 - (gamma/2) X^T tanh(X theta / 2) + sqrt(2 gamma) z,

    which is how it is computed: the constant term is folded into the
    noise, whose values for all the steps are drawn in one call (row t is
    step t's z), leaving six NumPy calls per step.
    """
    theta = np.array(theta0, dtype=np.float64)
    shift = gamma * (X.T @ (y - 0.5))
    drift = np.sqrt(2 * gamma) * rng.standard_normal((iterations, theta.shape[0])) + shift
    G = np.ascontiguousarray(0.5 * gamma * X.T)
    Xh = 0.5 * X
    a = 1 - gamma * alpha
    out = []
    for t in range(iterations):
        theta = a * theta - G @ np.tanh(Xh @ theta) + drift[t]
        if (t + 1) % every == 0:
            out.append(theta)
    return np.array(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gamma", type=float, default=0.02, help="step size (> 0)")
    ap.add_argument("--iterations", type=int, default=100, help="number of ULA steps (>= 1)")
    ap.add_argument("--alpha", type=float, default=1.0, help="prior precision (> 0)")
    ap.add_argument("--init", default="", help="comma-separated starting point (default: zeros)")
    ap.add_argument("--release-every", type=int, default=0, help="release every K iterations (0: the final state only)")
    ap.add_argument("--standalone", type=int, metavar="N", help="time N trials in a plain loop instead of serving")
    args = ap.parse_args()
    if not (args.gamma > 0 and np.isfinite(args.gamma)):
        ap.error("--gamma: must be finite and > 0, got %g" % args.gamma)
    if args.iterations < 1:
        ap.error("--iterations: must be >= 1, got %d" % args.iterations)
    if not (args.alpha > 0 and np.isfinite(args.alpha)):
        ap.error("--alpha: must be finite and > 0, got %g" % args.alpha)
    every = args.release_every or args.iterations
    if every < 1 or args.iterations % every != 0:
        ap.error("--release-every: must divide --iterations (%d), got %d" % (args.iterations, args.release_every))

    data = mp.load_datasets(load)
    if data[mp.SIDE_D] is None:
        data = synthetic()
    dim = data[mp.SIDE_D][0].shape[1]
    theta0 = np.zeros(dim)
    if args.init:
        theta0 = np.array([float(v) for v in args.init.split(",")])
        if theta0.shape != (dim,):
            ap.error("--init: must have %d values (the number of features), got %d" % (dim, theta0.shape[0]))
    labels = ["iteration %d" % t for t in range(every, args.iterations + 1, every)]

    def run(seed, side, d):
        X, y = d
        return ula(X, y, theta0, args.gamma, args.alpha, args.iterations, every, np.random.default_rng(seed))

    if args.standalone is not None:
        mp.standalone(run, args.standalone, data, dim=dim, releases=labels)
        return
    mp.serve(run, dim=dim, releases=labels, data=data)


if __name__ == "__main__":
    main()
