"""Samplers the tests audit: importable, as the audit runs them in other processes."""

import os
import time

import numpy as np

import mcmcaudit as ma


def total(rows):
    """The sum of the records' first column: the query of the Gaussian mechanism."""
    return float(np.asarray(rows, dtype=np.float64)[:, 0].sum())


def gaussian(seed, side, q):
    """q + N(0, 1): exactly 1-GDP on datasets whose sums differ by 1 (Dong, Roth & Su 2019, Thm 2.7)."""
    return [[q + ma.numpy_generator(seed).standard_normal()]]


def slow(seed, side, data):
    """A slow trial (20 ms) releasing mean(data) + N(0, 1) (N(0, 1) without data), for the interruption test; each
    trial adds a line to $SLOW_LOG.

    With $SLOW_GATE set, a trial that finds $SLOW_HOLD_AFTER lines or more in the log waits (at most 120 s)
    until the file $SLOW_GATE exists: the test interrupts the run while its trials are held, so the run cannot
    end before the interruption however the machine's load schedules it.
    """
    time.sleep(0.02)
    log = os.environ.get("SLOW_LOG")
    if log:
        with open(log, "a") as f:
            f.write("%d %s\n" % (seed, side))
        gate = os.environ.get("SLOW_GATE")
        if gate:
            with open(log) as f:
                held = len(f.readlines()) >= int(os.environ.get("SLOW_HOLD_AFTER", "0"))
            deadline = time.time() + 120
            while held and not os.path.exists(gate) and time.time() < deadline:
                time.sleep(0.01)
    shift = 0.0 if data is None else float(np.mean(np.asarray(data, dtype=np.float64)))
    return [[shift + ma.numpy_generator(seed).standard_normal()]]


def shifted(seed, side, data):
    """mean(data) + N(0, 1): a sampler that gets its dataset from the audit (d=, d_prime=)."""
    return [[float(np.mean(np.asarray(data, dtype=np.float64))) + ma.numpy_generator(seed).standard_normal()]]


def ula_logistic(seed, side, rows, canaries=None):
    """The unadjusted Langevin algorithm (Bertazzi et al. 2025, eq. 12) on Bayesian logistic regression with prior
    N(0, I), step 0.05, from theta = 0, releasing the state after iterations 100 and 200.

    rows: records (features, then the label in {0, 1}). In the canary design with scores, `canaries` holds every
    canary's row and the answer is each canary's log-likelihood of its label under each released state.
    """
    a = np.asarray(rows, dtype=np.float64)
    X, y = a[:, :-1], a[:, -1]
    rng = ma.numpy_generator(seed)
    theta = np.zeros(X.shape[1])
    out = []
    for t in range(200):
        grad = theta - X.T @ (y - 1 / (1 + np.exp(-(X @ theta))))
        theta = theta - 0.05 * grad + np.sqrt(0.1) * rng.standard_normal(theta.shape[0])
        if (t + 1) % 100 == 0:
            out.append(theta.copy())
    if canaries is None:
        return out
    c = np.asarray(canaries, dtype=np.float64)
    cX, cy = c[:, :-1], c[:, -1]
    return [-np.logaddexp(0.0, -np.where(cy == 1, cX @ th, -(cX @ th))) for th in out]
