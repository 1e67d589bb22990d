"""NumPy peer of `audit curve --c 2e7 --eta-scale 1` (Heller & Fetaya's
Fig. 1 parameters, epochs 1..70): the four lower bounds on the epsilon of
releasing cyclic SGLD's iterate, at delta = 1e-3, for P = N(0, v) (D1) and
Q = (1/n) sum_k N(-d_k, V_k) (D2, one component per position of the
special record, n = 17,864,389):

  chernoff   ln(1/2 - delta) - ln((1/n) sum_k exp(-z_k^2/2)), z_k = d_k/sqrt(V_k)
             (Chernoff bound of Lemma IV.5 in place of Q(theta > mu))
  tail       ln(1/2 - delta) - ln Q(tau > 0), Q(tau > 0) = (1/n) sum_k Phi(-z_k)
  threshold  the best half-line {tau > t} or {tau < t}, either dataset first:
             max ln(A(S) - delta) - ln B(S)
  profile    the best level set {ln p/q > e} or {ln p/q < -e} (Neyman-Pearson:
             the exact privacy profile, ln p - ln q being concave here)

Every probability of Q that enters a reported number is a direct sum over
all n components, in vectorised chunks. The best t and the best level are
located first on a sub-sampled mixture (block midpoints, 1 component in
16384, weighted by block size), then their events are evaluated exactly.
Epochs are spread over the CPUs (the tool also uses every CPU).

Usage: /usr/bin/python3 bench/curves_peer.py [--epochs 1:70] [--tool-json curve.json]
"""
import argparse
import concurrent.futures as cf
import json
import math
import os
import time

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import log_ndtr, logsumexp, ndtr

from cex import FIG1, Counterexample

DELTA = 1e-3
CHUNK = 1 << 21
STRIDE = 16384
LN_HALF_M_DELTA = math.log(0.5 - DELTA)
_U = None  # per process: the u_k of every chunk


def eps_from(ln_a, ln_b):
    """ln(A - delta) - ln B, the largest eps with A >= e^eps B + delta."""
    if not ln_a > math.log(DELTA):
        return -math.inf
    return ln_a + math.log1p(-math.exp(math.log(DELTA) - ln_a)) - ln_b


class Mixture:
    def __init__(self, ce, K):
        self.ce = ce
        self.v, self.d0, self.d1, self.v0, self.v1 = ce.moments(K)
        self.sd = math.sqrt(self.v)
        # Sub-sampled surrogate: block midpoints, weights = block sizes / n.
        starts = np.arange(0, ce.n, STRIDE)
        ends = np.minimum(starts + STRIDE, ce.n)
        self.su = ce.u_of_index((starts + ends - 1) / 2)
        self.lw = np.log((ends - starts) / ce.n)
        self.sm, self.ss = self.comp(self.su)

    def comp(self, u):
        return -(self.d0 + self.d1 * u), np.sqrt(self.v0 + self.v1 * u * u)

    def chunks(self):
        global _U
        n = self.ce.n
        if _U is None:   # u_k = lambda^k does not depend on the epoch
            _U = [self.ce.u_of_index(np.arange(lo, min(lo + CHUNK, n))) for lo in range(0, n, CHUNK)]
        for u in _U:
            yield self.comp(u)

    # Surrogate log masses and density.
    def s_log_tail(self, t, upper):
        t = np.atleast_1d(t)[:, None]
        w = (t - self.sm) / self.ss
        with np.errstate(divide="ignore"):
            return np.log(ndtr(-w if upper else w) @ np.exp(self.lw))

    def s_log_interval(self, a, b):
        wa, wb = (a - self.sm) / self.ss, (b - self.sm) / self.ss
        return safe_log(float(np.dot(np.exp(self.lw), interval_mass(wa, wb))))

    def s_log_q(self, t):
        w = (t - self.sm) / self.ss
        return float(logsumexp(-w * w / 2 - np.log(self.ss) + self.lw)) - 0.5 * math.log(2 * math.pi)

    def ell(self, t):
        return -t * t / (2 * self.v) - math.log(self.sd) - 0.5 * math.log(2 * math.pi) - self.s_log_q(t)

    def p_log_tail(self, t, upper):
        return float(log_ndtr(-t / self.sd if upper else t / self.sd))

    def p_log_interval(self, a, b):
        return safe_log(float(interval_mass(np.array([a / self.sd]), np.array([b / self.sd]))[0]))

    def p_log_out(self, a, b):
        return safe_log(float(ndtr(a / self.sd) + ndtr(-b / self.sd)))

    def s_log_out(self, a, b):
        wa, wb = (a - self.sm) / self.ss, (b - self.sm) / self.ss
        return safe_log(float(np.dot(np.exp(self.lw), ndtr(wa) + ndtr(-wb))))


def safe_log(x):
    return math.log(x) if x > 0 else -math.inf


def interval_mass(wa, wb):
    """Phi(wb) - Phi(wa) for standardised ends, without cancellation."""
    right = wa > 0
    return np.where(right, ndtr(-wa) - ndtr(-wb), ndtr(wb) - ndtr(wa))


def exact_passes(m, t_thr, upper, set_kind, a, b):
    """Direct sums over all n components: chernoff and tail terms, the
    threshold half-line's Q mass and the profile event's Q mass."""
    n = m.ce.n
    lse_ch = -math.inf
    tail = thr = prof = 0.0
    for mean, sd in m.chunks():
        z = -mean / sd                       # d_k / sqrt(V_k)
        ch = np.exp(-z * z / 2).sum()
        if ch > 0:
            lse_ch = np.logaddexp(lse_ch, math.log(ch))
        else:                                # every term underflows
            lse_ch = np.logaddexp(lse_ch, logsumexp(-z * z / 2))
        tail += ndtr(-z).sum()
        w = (t_thr - mean) / sd
        thr += ndtr(-w if upper else w).sum()
        if set_kind == "in":                 # (a, b)
            prof += interval_mass((a - mean) / sd, (b - mean) / sd).sum()
        else:                                # (-inf, a) U (b, inf)
            if a > -math.inf:
                prof += ndtr((a - mean) / sd).sum()
            if b < math.inf:
                prof += ndtr((mean - b) / sd).sum()
    ln_n = math.log(n)
    return (float(lse_ch) - ln_n, math.log(tail) - ln_n,
            math.log(thr) - ln_n if thr > 0 else -math.inf,
            math.log(prof) - ln_n if prof > 0 else -math.inf)


def best_threshold(m):
    """(eps, t, upper, d1_first) of the best half-line on the surrogate."""
    dmax = m.d0 + m.d1
    sdmax = float(m.ss.max())
    lo, hi = min(-12 * m.sd, -dmax - 12 * sdmax), 12 * max(m.sd, sdmax)
    grid = np.unique(np.r_[np.linspace(lo, hi, 1200), np.linspace(-12 * m.sd, 12 * m.sd, 300), 0.0])
    best = (-math.inf, 0.0, True, True)
    for upper in (True, False):
        lq = m.s_log_tail(grid, upper)
        lp = log_ndtr(-grid / m.sd if upper else grid / m.sd)
        for d1_first in (True, False):
            la, lb = (lp, lq) if d1_first else (lq, lp)
            with np.errstate(invalid="ignore", divide="ignore"):
                v = np.where(la > math.log(DELTA), la + np.log1p(-np.exp(math.log(DELTA) - la)) - lb, -np.inf)
            i = int(np.argmax(v))
            if not np.isfinite(v[i]):
                continue

            def f(t):
                la_ = m.p_log_tail(t, upper) if d1_first else float(m.s_log_tail(t, upper)[0])
                lb_ = float(m.s_log_tail(t, upper)[0]) if d1_first else m.p_log_tail(t, upper)
                return -eps_from(la_, lb_)
            a, b = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
            r = minimize_scalar(f, bounds=(a, b), method="bounded", options={"xatol": 1e-10 * (b - a)})
            t, e = (r.x, -r.fun) if -r.fun > v[i] else (grid[i], v[i])
            if e > best[0]:
                best = (e, t, upper, d1_first)
    return best


def best_profile(m):
    """(eps, kind, a, b, d1_first) of the best level set on the surrogate:
    kind "in" is the interval (a, b), "out" its complement."""
    dmax = m.d0 + m.d1
    sdmax = float(m.ss.max())
    lo, hi = min(-12 * m.sd, -dmax - 12 * sdmax), 12 * max(m.sd, sdmax)
    r = minimize_scalar(lambda t: -m.ell(t), bounds=(lo, hi), method="bounded", options={"xatol": 1e-12 * (hi - lo)})
    tm, lmax = r.x, -r.fun
    l_lo, l_hi = m.ell(lo), m.ell(hi)

    def ends(level):
        a = brentq(lambda t: m.ell(t) - level, lo, tm, xtol=1e-12 * m.sd) if l_lo < level else -math.inf
        b = brentq(lambda t: m.ell(t) - level, tm, hi, xtol=1e-12 * m.sd) if l_hi < level else math.inf
        return a, b

    best = (-math.inf, "in", 0.0, 0.0, True)
    for d1_first in (True, False):
        def F(e):
            level = e if d1_first else -e
            if not lmax > level:
                return -math.inf, None
            a, b = ends(level)
            if d1_first:
                return eps_from(m.p_log_interval(a, b), m.s_log_interval(a, b)), ("in", a, b)
            return eps_from(m.s_log_out(a, b), m.p_log_out(a, b)), ("out", a, b)
        top = lmax if d1_first else max(-min(l_lo, l_hi), 0)
        if not top > 0:
            continue
        r = minimize_scalar(lambda e: -F(e)[0] if np.isfinite(F(e)[0]) else 1e300,
                            bounds=(0, top), method="bounded", options={"xatol": 1e-10 * top})
        e, ev = F(r.x)
        if ev is not None and e > best[0]:
            best = (e, ev[0], ev[1], ev[2], d1_first)
    return best


def epoch_row(K):
    ce = Counterexample(**FIG1)
    m = Mixture(ce, K)
    eps_t, t, upper, d1_thr = best_threshold(m)
    eps_p, kind, a, b, d1_prof = best_profile(m)
    lch, ltail, lthr, lprof = exact_passes(m, t, upper, kind, a, b)
    chern = max(0.0, LN_HALF_M_DELTA - lch)
    tail = max(0.0, LN_HALF_M_DELTA - ltail)
    lp = m.p_log_tail(t, upper)
    thr = max(0.0, eps_from(lp, lthr) if d1_thr else eps_from(lthr, lp))
    if kind == "in":
        prof = eps_from(m.p_log_interval(a, b), lprof)
    else:
        prof = eps_from(lprof, m.p_log_out(a, b))
    # Every half-line is an event too: the profile is never below it.
    return K, chern, tail, thr, max(0.0, prof, thr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", default="1:70")
    ap.add_argument("--tool-json")
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    args = ap.parse_args()
    e0, e1 = map(int, args.epochs.split(":"))
    t0 = time.perf_counter()
    with cf.ProcessPoolExecutor(args.workers) as ex:
        rows = list(ex.map(epoch_row, range(e0, e1 + 1)))
    elapsed = time.perf_counter() - t0
    tool = {}
    if args.tool_json:
        for r in json.load(open(args.tool_json))["rows"]:
            tool[r["epoch"]] = [float(r[k]) for k in ("eps_chernoff", "eps_tail", "eps_threshold", "eps_profile")]
    print(f"curves peer: epochs {e0}..{e1}, n = {FIG1['n']}, {elapsed:.2f} s")
    print(f"{'epoch':>5} {'chernoff':>9} {'tail':>9} {'threshold':>9} {'profile':>9}" +
          (" | tool: chernoff tail threshold profile" if tool else ""))
    worst = 0.0
    for K, *v in rows:
        line = f"{K:5d} " + " ".join(f"{x:9.4f}" for x in v)
        if K in tool:
            line += " | " + " ".join(f"{x:.4f}" for x in tool[K])
            worst = max(worst, max(abs(a - b) / max(1.0, abs(b)) for a, b in zip(v, tool[K])))
        print(line)
    if tool:
        print(f"largest relative difference from the tool: {worst:.2e}")


if __name__ == "__main__":
    main()
