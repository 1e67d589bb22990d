#!/usr/bin/env python3
"""The Gaussian mechanism on a sum query, exactly mu-GDP on the audited pair.

Records have one feature x (then a label, ignored). The mechanism releases

    q(D) + N(0, sigma^2),   q(D) = sum_i x_i,

and for two datasets whose sums differ by Delta = |q(D') - q(D)| the two
output laws are N(q, sigma^2) and N(q', sigma^2): the pair is exactly
mu-GDP with mu = Delta / sigma (Dong, Roth & Su 2019, "Gaussian
Differential Privacy", Theorem 2.7). So sigma = Delta / mu makes the pair
exactly mu-GDP for the --mu given. --mu 0 releases q(D) + N(0, Delta^2) on
both sides: the two laws are equal, as if D' = D.

Run under mcmcaudit (D and D' from MCMCAUDIT_D / MCMCAUDIT_DPRIME), or
`--standalone N` to time N trials in a plain loop. Without the environment
variables, the records of testdata/gaussian-mechanism.yaml are used.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcmcaudit_protocol as mp  # noqa: E402

# testdata/gaussian-mechanism.yaml: D = {0.3, -0.2, 0}; D' replaces record
# 2 by 1, so Delta = 1.
DEFAULT_D = [[0.3, 0.0], [-0.2, 0.0], [0.0, 0.0]]
DEFAULT_DPRIME = [[0.3, 0.0], [-0.2, 0.0], [1.0, 0.0]]


def query(rows):
    """The sum of the single feature of every record."""
    a = np.asarray(rows, dtype=np.float64)
    if a.ndim != 2 or a.shape[1] != 2:
        raise ValueError("gaussian.py: records must have exactly one feature and a label, got %d columns" % (a.shape[1] if a.ndim == 2 else 0))
    return float(a[:, 0].sum())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mu", type=float, default=1.0, help="GDP parameter of the pair (>= 0; 0: the same law on both sides)")
    ap.add_argument("--standalone", type=int, metavar="N", help="time N trials in a plain loop instead of serving")
    args = ap.parse_args()
    if not (args.mu >= 0 and np.isfinite(args.mu)):
        ap.error("--mu: must be finite and >= 0, got %g" % args.mu)

    data = mp.load_datasets(query)
    if data[mp.SIDE_D] is None or data[mp.SIDE_DPRIME] is None:
        if os.environ.get(mp.ENV_D) or os.environ.get(mp.ENV_DPRIME):
            ap.error("both %s and %s must be set" % (mp.ENV_D, mp.ENV_DPRIME))
        data = {mp.SIDE_D: query(DEFAULT_D), mp.SIDE_DPRIME: query(DEFAULT_DPRIME)}
    delta = abs(data[mp.SIDE_DPRIME] - data[mp.SIDE_D])
    if args.mu > 0:
        if delta == 0:
            ap.error("--mu: D and D' have the same sum, so no sigma gives mu = %g; use --mu 0" % args.mu)
        sigma = delta / args.mu
    else:
        sigma = delta if delta > 0 else 1.0
        data = {mp.SIDE_D: data[mp.SIDE_D], mp.SIDE_DPRIME: data[mp.SIDE_D]}
    sys.stderr.write("gaussian.py: q(D) = %r, q(D') = %r, sigma = %r (mu = %g)\n" % (data[mp.SIDE_D], data[mp.SIDE_DPRIME], sigma, args.mu))

    def run(seed, side, q):
        rng = np.random.default_rng(seed)
        return [[q + sigma * rng.standard_normal()]]

    if args.standalone is not None:
        mp.standalone(run, args.standalone, data, dim=1, releases=["release"])
        return
    mp.serve(run, dim=1, releases=["release"], data=data)


if __name__ == "__main__":
    main()
