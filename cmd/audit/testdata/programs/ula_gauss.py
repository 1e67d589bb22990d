#!/usr/bin/env python3
"""ULA (Bertazzi et al. eq. 12) on the Gauss model x ~ N(theta, I), theta ~ N(0, prior_sd^2 I),
from theta = 0: the built-in sampler ula on model gauss, as a program, for the test that
compares their utility figures (program_utility_test.go).

Usage: ula_gauss.py GAMMA ITERATIONS AT MODE, AT a comma-separated list of iterations to
release, MODE one of labels ("iteration K" labels), handshake (labels "r1", "r2", ... and the
handshake's "iterations"), none (labels only: the iterations are unknown).
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "examples", "python"))
import mcmcaudit_protocol as mp  # noqa: E402

PRIOR_SD = 10.0


def main():
    gamma, iters = float(sys.argv[1]), int(sys.argv[2])
    at = [int(a) for a in sys.argv[3].split(",")]
    mode = sys.argv[4]
    data = mp.load_datasets(lambda rows: np.asarray(rows, dtype=np.float64)[:, :-1])

    def run(seed, side, x):
        rng = mp.numpy_generator(seed)
        n, s = x.shape[0], x.sum(axis=0)
        th = np.zeros(x.shape[1])
        out = []
        for k in range(1, iters + 1):
            grad = -th / PRIOR_SD**2 + (s - n * th)
            th = th + gamma * grad + np.sqrt(2 * gamma) * rng.standard_normal(th.shape)
            if k in at:
                out.append(th.tolist())
        return out

    if mode == "labels":
        mp.serve(run, dim=2, releases=["iteration %d" % k for k in at], data=data)
    elif mode == "handshake":
        mp.serve(run, dim=2, releases=["r%d" % (i + 1) for i in range(len(at))], data=data, iterations=at)
    else:
        mp.serve(run, dim=2, releases=["r%d" % (i + 1) for i in range(len(at))], data=data)


if __name__ == "__main__":
    main()
