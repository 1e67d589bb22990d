#!/usr/bin/python3
"""Reference values for the DP-Barker tests (mechanisms/barker_*_test.go).

Run with /usr/bin/python3 (scipy 1.10, mpmath) from the repository root:

    /usr/bin/python3 mechanisms/testdata/barker_refs.py vcor

Each section prints the constants that the Go tests compare against. The
computations use mpmath at 30 digits and do not share code with the Go side:
the V_cor components are parsed from mechanisms/barker_vcor_table.go.
"""
import re
import sys

import mpmath as mp

mp.mp.dps = 30


def vcor_table():
    src = open("mechanisms/barker_vcor_table.go").read()
    c = mp.mpf(re.search(r"const vcorTableC = (\S+)", src).group(1))

    def floats(name):
        body = re.search(name + r" = \[\]float64\{(.*?)\}", src, re.S).group(1)
        return [mp.mpf(x) for x in re.findall(r"[-+0-9.eE]+", body)]

    return c, floats("vcorTableMeans"), floats("vcorTableWeights")


def vcor():
    c, means, weights = vcor_table()
    s = mp.mpf("0.1")
    sd = mp.sqrt(c + s * s)
    tot = mp.fsum(weights)
    weights = [w / tot for w in weights]

    def g(x):  # density of N(0, C) + V_cor
        return mp.fsum(w * mp.npdf(x, m, sd) for m, w in zip(means, weights))

    def G(x):  # its CDF
        return mp.fsum(w * mp.ncdf((x - m) / sd) for m, w in zip(means, weights))

    def f(x):
        return mp.exp(-abs(x)) / (1 + mp.exp(-abs(x))) ** 2

    def F(x):
        return 1 / (1 + mp.exp(-x))

    d = lambda x: g(x) - f(x)
    # Sign changes of g - f: scan in double precision, refine in mpmath.
    roots = []
    lo, hi, step = -40.0, 40.0, 0.01
    x0, d0 = lo, d(lo)
    k = 1
    while x0 < hi:
        x1 = min(lo + k * step, hi)
        d1 = d(x1)
        if d0 != 0 and d1 != 0 and (d0 < 0) != (d1 < 0):
            roots.append(mp.findroot(d, (mp.mpf(x0), mp.mpf(x1)), solver="anderson"))
        x0, d0, k = x1, d1, k + 1
    cuts = [mp.mpf(lo)] + roots + [mp.mpf(hi)]
    tv = mp.fsum(abs(mp.quad(d, [a, b])) for a, b in zip(cuts, cuts[1:])) / 2
    ks = max(abs(G(r) - F(r)) for r in roots)
    print("roots:", len(roots))
    print("refVCorTV2 =", mp.nstr(tv, 20))
    print("refVCorKS2 =", mp.nstr(ks, 20))

    gap = lambda t: mp.pi * t / mp.sinh(mp.pi * t) - mp.exp(-c * t * t / 2)
    t0 = max((mp.mpf(i) / 200 for i in range(1, 4000)), key=gap)
    t = mp.findroot(lambda u: mp.diff(gap, u), t0)
    print("refVCorLowerBound =", mp.nstr(gap(t) / 2, 20), "at t =", mp.nstr(t, 10))


def lp():
    """The least total-variation error attainable on the V_cor grid of
    FitVCor at C = 2 (components N(+-j/10, 0.01), j = 0..120, evaluated at
    1001 points on [-25, 25]), by linear programming (scipy HiGHS): the
    chi-square fit of the Go code attains 0.00406, this optimum 0.00400."""
    import numpy as np
    from scipy.optimize import linprog
    from scipy.stats import logistic, norm

    c = 2.0
    m = np.arange(121) / 10
    x = np.linspace(-25, 25, 1001)
    h = x[1] - x[0]
    sd = np.sqrt(c + 0.01)
    a = np.stack([(norm.pdf(x, mj, sd) + norm.pdf(x, -mj, sd)) / 2 for mj in m], axis=1)
    f = logistic.pdf(x)
    k, nx = len(m), len(x)
    cost = np.concatenate([np.zeros(k), h * np.ones(2 * nx)]) / 2
    aeq = np.zeros((nx + 1, k + 2 * nx))
    aeq[:nx, :k] = a
    aeq[:nx, k : k + nx] = -np.eye(nx)
    aeq[:nx, k + nx :] = np.eye(nx)
    aeq[nx, :k] = 1
    res = linprog(cost, A_eq=aeq, b_eq=np.concatenate([f, [1]]), bounds=(0, None), method="highs")
    w = res.x[:k]
    xx = np.linspace(-40, 40, 800001)
    g = sum(wj * (norm.pdf(xx, mj, sd) + norm.pdf(xx, -mj, sd)) / 2 for mj, wj in zip(m, w))
    print("least TV on the grid (LP):", 0.5 * np.sum(np.abs(g - logistic.pdf(xx))) * (xx[1] - xx[0]))


def mixture():
    """Eq. 25 with sigma_x^2 = 2: log-likelihood and its gradient."""
    v = mp.mpf(2)

    def ll(t1, t2, x):
        return mp.log(mp.npdf(x, t1, mp.sqrt(v)) / 2 + mp.npdf(x, t1 + t2, mp.sqrt(v)) / 2)

    # Inputs as float64 values (what the Go test passes), not as decimals.
    for t1, t2, x in [(0, 1, 0.3), (-0.7, 2.5, 1.9), (3, -4, -20), (0.5, 0.5, 40)]:
        t1, t2, x = mp.mpf(t1), mp.mpf(t2), mp.mpf(x)
        g1 = mp.diff(lambda a: ll(a, t2, x), t1)
        g2 = mp.diff(lambda b: ll(t1, b, x), t2)
        print(mp.nstr(ll(t1, t2, x), 20), mp.nstr(g1, 20), mp.nstr(g2, 20))


if __name__ == "__main__":
    for section in sys.argv[1:] or ["vcor"]:
        globals()[section]()
