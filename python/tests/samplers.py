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
    """A slow trial (20 ms) releasing N(0, 1), for the interruption test; each trial adds a line to $SLOW_LOG.

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
    return [[ma.numpy_generator(seed).standard_normal()]]
