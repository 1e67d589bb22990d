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
    """A slow trial (20 ms) releasing N(0, 1), for the interruption test; each trial adds a line to $SLOW_LOG."""
    time.sleep(0.02)
    log = os.environ.get("SLOW_LOG")
    if log:
        with open(log, "a") as f:
            f.write("%d %s\n" % (seed, side))
    return [[ma.numpy_generator(seed).standard_normal()]]
