#!/usr/bin/env python3
"""ULA on Bayesian logistic regression, in NumPy, audited in ONE run.

The canary (one-run) design of mcmcaudit (Steinke, Nasr & Jagielski 2023):
the tool writes m canary records to the CSV file named by
MCMCAUDIT_CANARIES and asks for one run with an inclusion mask ("canaries":
"0110..."); mcmcaudit_protocol.serve hands this program D's records followed
by the included canaries. The sampler is the unadjusted Langevin algorithm
(Bertazzi et al. 2025, eq. 12) with the full gradient,

    theta <- theta - gamma * grad U(theta) + sqrt(2 gamma) * z,  z ~ N(0, I),
    U(theta) = alpha/2 |theta|^2 - sum_i ln p(y_i | x_i, theta),
    p(y = 1 | x, theta) = sigmoid(theta . x),  labels y in {0, 1},

releasing the state after every --every iterations.

Without --scores the program answers with its releases and the tool scores
them with the scenario's model (each canary's log-likelihood under theta).
With --scores its handshake says "scores": true and it answers, per release,
with every canary's log-likelihood of its own label itself: the same
numbers, computed here.
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
        raise ValueError("canaries.py: records must have at least one feature and a label")
    X, y = a[:, :-1].copy(), a[:, -1].copy()
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("canaries.py: labels must be 0 or 1")
    return X, y


def ula(X, y, gamma, alpha, iterations, every, rng):
    """ULA from theta = 0; the states after iterations every, 2 every, ..."""
    theta = np.zeros(X.shape[1])
    out = []
    for t in range(iterations):
        grad = alpha * theta - X.T @ (y - 1 / (1 + np.exp(-(X @ theta))))
        theta = theta - gamma * grad + np.sqrt(2 * gamma) * rng.standard_normal(theta.shape[0])
        if (t + 1) % every == 0:
            out.append(theta.copy())
    return np.array(out)


def loglik(theta, X, y):
    """ln p(y | x, theta) of every record: -log(1 + exp(-s z)), s = +1 for y = 1, -1 for y = 0."""
    z = X @ theta
    return -np.logaddexp(0.0, -np.where(y == 1, z, -z))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dim", type=int, required=True, help="number of features (= parameters)")
    ap.add_argument("--gamma", type=float, default=0.01)
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--every", type=int, default=100)
    ap.add_argument("--scores", action="store_true", help="answer with the canaries' scores")
    a = ap.parse_args()
    labels = ["iteration %d" % k for k in range(a.every, a.iterations + 1, a.every)]

    def run(seed, side, data, canaries=None):
        X, y = data
        states = ula(X, y, a.gamma, a.alpha, a.iterations, a.every, mp.numpy_generator(seed))
        if canaries is None:
            return states
        cX, cy = canaries
        return np.array([loglik(th, cX, cy) for th in states])

    mp.serve(run, dim=a.dim, releases=labels, load=load, scores=a.scores)


if __name__ == "__main__":
    main()
