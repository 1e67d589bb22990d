"""A sampler to audit from a notebook: the Gaussian mechanism on a sum query.

It lives in a module of its own because the audit runs it in other
processes, which import it (in a notebook, write it with a cell starting
`%%writefile gaussian_sampler.py`). Its data is the mapping that `load`
returns: the sum q of the records' first column. The release
q + sigma * N(0, 1) on two datasets whose sums differ by 1 is exactly
(1/sigma)-GDP (Dong, Roth & Su 2019, Theorem 2.7).
"""

import numpy as np

import mcmcaudit as ma

SIGMA = 1.0


def total(rows):
    """The sum of the first column of the records (the query)."""
    return float(np.asarray(rows, dtype=np.float64)[:, 0].sum())


def run(seed, side, q):
    """One trial: the query plus Gaussian noise, every random number from `seed`."""
    rng = ma.numpy_generator(seed)
    return [[q + SIGMA * rng.standard_normal()]]
