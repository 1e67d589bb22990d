#!/usr/bin/python3
"""Reference values for the one-run bounds at small confidences
(stats/onerun_confidence_test.go).

Run from the repository root with mpmath (1.3):

    python3 stats/testdata/onerun_refs.py

It shares no code with the Go side. With mpmath at 400 digits it writes the
two tests of docs/derivations/one-run.md as they are stated there — the
p-value of Steinke, Nasr & Jagielski 2023 in jax_privacy's form, from the
binomial pmf summed term by term, and the "audit with cap" test of
Mahloujifar, Melis & Chaudhuri 2024 with ρ, η and α = 1 − confidence kept
to 400 digits — and solves each crossing by bisection to 2⁻⁷⁰ of its
bracket. The last block is the all-correct case at large r in closed form:
1 − q^r = confidence, i.e. ε = −ln(expm1(−log1p(−confidence)/r)).
"""
from mpmath import mp, mpf, binomial, exp, ncdf, sqrt, erfinv, log, expm1, log1p

mp.dps = 400


def pvalue(m, r, v, eps, delta):
    q = 1 / (1 + exp(-eps))
    pmf = [binomial(r, k) * q**k * (1 - q) ** (r - k) for k in range(r + 1)]
    beta = sum(pmf[v:])
    if delta == 0 or v == 0:
        return beta
    best = max(sum(pmf[v - i:v]) / i for i in range(1, v + 1))
    return min(mpf(1), beta + 2 * m * delta * best)


def norm_quantile(p):
    return sqrt(2) * erfinv(2 * p - 1)


def fdp_test(m, r, v, mu, alpha):
    rho, eta = alpha * v / m, alpha * (r - v) / m
    for i in range(v - 1, -1, -1):
        new = max(eta, ncdf(norm_quantile(rho) - mu) if rho < 1 else mpf(1))
        if new == eta:
            break
        rho, eta = min(rho + mpf(i) / (r - i) * (new - eta), mpf(1)), new
    return rho + eta - mpf(r) / m


def crossing(f, hi):
    if not f(mpf(0)) > 0:
        return mpf(0)
    lo = mpf(0)
    for _ in range(70):
        mid = (lo + hi) / 2
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return lo


CASES = [(10, 10, 10), (1000, 100, 95), (1000, 10, 10), (100, 100, 60), (1, 1, 1), (10, 10, 0), (50, 20, 12)]
CONFIDENCES = ["0.3", "0.01", "1e-06", "1e-20", "1e-100", "1e-300"]

if __name__ == "__main__":
    for m, r, v in CASES:
        for delta in ["0", "1e-05"]:
            for conf in CONFIDENCES:
                alpha = 1 - mpf(conf)
                eps = crossing(lambda t: alpha - pvalue(m, r, v, t, mpf(delta)), mpf(1024))
                mu = crossing(lambda t: fdp_test(m, r, v, t, alpha), mpf(256))
                print(f"{{{m}, {r}, {v}, {delta}, {conf}, {mp.nstr(eps, 17)}, {mp.nstr(mu, 17)}}},", flush=True)
    for r in [200000, 10000000]:
        for conf in ["0.3", "1e-300"]:
            eps = -log(expm1(-log1p(-mpf(conf)) / r))
            print(f"{{{r}, {r}, {r}, 0, {conf}, {mp.nstr(eps, 17)}, -1}},", flush=True)
