"""NumPy peer of `audit run testdata/fig1-exact.yaml`: 10^6 exact draws of
cyclic SGLD on the counterexample at epochs 5, 10, ..., 70, then for each
release an exhaustive threshold scan on the training half (every split
between distinct scores, both orientations, for the Clopper-Pearson region
bound of Heller & Fetaya eq. 12 and for the GDP mu lower bound) and the
chosen rules' bounds on the evaluation half.

Usage: /usr/bin/python3 bench/fig1_peer.py [--runs N] [--seed S] [--tool-json out.json]
With --tool-json (from `audit run ... --json`) the tool's values are printed
beside the peer's; they come from other random draws, so they agree only up
to sampling error.
"""
import argparse
import json
import math
import time

import numpy as np
from scipy.special import ndtri
from scipy.stats import beta as beta_dist

from cex import FIG1, Counterexample

DELTA, CONF, EPOCHS, EVERY = 1e-3, 0.95, 70, 5


def cp_upper(k, n, a):
    """One-sided Clopper-Pearson upper bound for k successes of n at tail a."""
    if k >= n:
        return 1.0
    if k == 0:
        return -math.expm1(math.log(a) / n)
    return float(beta_dist.ppf(1 - a, k + 1, n - k))


def cp_upper_table(n, a):
    """One-sided Clopper-Pearson upper bounds for k = 0..n at tail a."""
    k = np.arange(n + 1, dtype=np.float64)
    u = np.empty(n + 1)
    u[1:n] = beta_dist.ppf(1 - a, k[1:n] + 1, n - k[1:n])
    u[0] = -math.expm1(math.log(a) / n)
    u[n] = 1.0
    return u


def region(a, b):
    """Heller & Fetaya eq. 11 at rates a (FPR) and b (FNR), clamped at 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        n1, n2 = 1 - DELTA - a, 1 - DELTA - b
        t1 = np.where(n1 > 0, np.log(np.maximum(n1, 1e-300)) - np.log(b), -np.inf)
        t2 = np.where(n2 > 0, np.log(np.maximum(n2, 1e-300)) - np.log(a), -np.inf)
    return np.maximum(0, np.maximum(t1, t2))


def gdp_mu(a, b):
    with np.errstate(invalid="ignore"):
        mu = -ndtri(a) - ndtri(b)
    return np.where(mu > 0, mu, 0.0)


class ScanTables:
    """Everything the threshold scan needs of the training half's
    Clopper-Pearson bounds, computed once for all releases: for the
    negatives (FPR side, n = neg) and positives (FNR side, n = pos) the log
    of the bound u, the log of 1 - delta - u (-inf where that is <= 0) and
    ndtri(u). Eq. 11 at (a, b) is then max(la1[i] - lb[j], lb1[j] - la[i])
    and the GDP mu -za[i] - zb[j], with no transcendental per candidate."""

    def __init__(self, neg, pos, a):
        self.neg, self.pos = neg, pos
        with np.errstate(divide="ignore", invalid="ignore"):
            for name, n in (("n", neg), ("p", pos)):
                u = cp_upper_table(n, a)
                rest = 1 - DELTA - u
                setattr(self, "l" + name, np.log(u))
                setattr(self, "l1" + name, np.where(rest > 0, np.log(np.maximum(rest, 1e-300)), -np.inf))
                setattr(self, "z" + name, ndtri(u))


def choose(s, lab, T):
    """Best threshold rule on (s, lab) for both objectives: (thr, orient,
    value), value clamped at 0 as eq. 11 and the GDP mu are."""
    o = np.argsort(s)                   # ties are merged below: no need for a stable sort
    ss = s[o]
    last = np.empty(len(ss), bool)
    np.not_equal(ss[1:], ss[:-1], out=last[:-1])
    last[-1] = True
    ends = np.flatnonzero(last)
    pb = np.zeros(len(ends) + 1, np.int64)
    pb[1:] = np.cumsum(lab[o], dtype=np.int64)[ends]   # positives at or below each distinct score
    nb = np.zeros_like(pb)
    np.subtract(ends + 1, pb[1:], out=nb[1:])            # negatives likewise
    g = ss[last]
    mids = np.r_[-np.inf, g[:-1] + (g[1:] - g[:-1]) / 2, np.inf]
    # D' predicted above the split: FPR index neg - nb, FNR index pb; below:
    # FPR index nb, FNR index pos - pb.
    up_a, up_b, dn_a, dn_b = T.neg - nb, pb, nb, T.pos - pb
    res = []
    for v_up, v_dn in (
        (np.maximum(T.l1n[up_a] - T.lp[up_b], T.l1p[up_b] - T.ln[up_a]),
         np.maximum(T.l1n[dn_a] - T.lp[dn_b], T.l1p[dn_b] - T.ln[dn_a])),
        (-T.zn[up_a] - T.zp[up_b], -T.zn[dn_a] - T.zp[dn_b]),
    ):
        i, j = int(np.argmax(v_up)), int(np.argmax(v_dn))
        best = (mids[i], 1, v_up[i]) if v_up[i] >= v_dn[j] else (mids[j], -1, v_dn[j])
        res.append((best[0], best[1], max(0.0, float(best[2]))))
    return res


def counts(s, lab, thr, orient):
    p = orient * (s - thr) > 0
    return int((p & ~lab).sum()), int((~p & lab).sum())


def eval_bounds(fp, fn, neg, pos, a):
    """Eq. 11 and the GDP mu at the evaluation half's bounds (two scalars)."""
    ua, ub = cp_upper(fp, neg, a), cp_upper(fn, pos, a)
    return float(region(ua, ub)), float(gdp_mu(ua, ub))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=48)
    ap.add_argument("--tool-json")
    args = ap.parse_args()
    t0 = time.perf_counter()
    ce = Counterexample(**FIG1)
    rng = np.random.default_rng(args.seed)
    # Every run's side is a fair coin and only the counts of each half
    # matter to a threshold rule, so the runs are laid out by side: the D1
    # runs (training ones first) in one array, the D2 runs in another, and
    # each side's update touches only its own runs.
    ntr = args.runs // 2
    pos = int(rng.binomial(ntr, 0.5))
    pos_e = int(rng.binomial(args.runs - ntr, 0.5))
    neg, neg_e = ntr - pos, args.runs - ntr - pos_e
    sd0 = 1 / math.sqrt(ce.alpha)
    fl1 = rng.standard_normal(neg + neg_e)
    fl1 *= sd0
    u = ce.u_of_index(rng.integers(0, ce.n, pos + pos_e))
    u2 = u * u
    fl2 = rng.standard_normal(pos + pos_e)
    fl2 *= sd0
    a = (1 - CONF) / 2
    T = ScanTables(neg, pos, a)
    lab = np.r_[np.zeros(neg, bool), np.ones(pos, bool)]
    lab_e = np.r_[np.zeros(neg_e, bool), np.ones(pos_e, bool)]
    s, s_e = np.empty(ntr), np.empty(args.runs - ntr)
    z1, z2, sd2 = np.empty(len(fl1)), np.empty(len(fl2)), np.empty(len(fl2))
    rows, prev = [], 0
    for K in range(EVERY, EPOCHS + 1, EVERY):
        f1, var1, f2, vc, vs = ce.transition(K - prev)
        _, d0, d1, _, _ = ce.moments(K)
        prev = K
        # D1: fl <- f1 fl + sqrt(var1) z; the release is fl (offset from mu_K).
        rng.standard_normal(out=z1)
        z1 *= math.sqrt(var1)
        fl1 *= f1
        fl1 += z1
        # D2: fl <- f2 fl + sqrt(vc + vs u^2) z; the release is fl - (d0 + d1 u).
        rng.standard_normal(out=z2)
        np.multiply(u2, vs, out=sd2)
        sd2 += vc
        np.sqrt(sd2, out=sd2)
        z2 *= sd2
        fl2 *= f2
        fl2 += z2
        np.multiply(u, -d1, out=sd2)
        sd2 -= d0
        sd2 += fl2
        s[:neg], s[neg:] = fl1[:neg], sd2[:pos]
        s_e[:neg_e], s_e[neg_e:] = fl1[neg:], sd2[pos:]
        (tr, orr, vr), (tg, og, vg) = choose(s, lab, T)
        er, _ = eval_bounds(*counts(s_e, lab_e, tr, orr), neg_e, pos_e, a)
        _, mg = eval_bounds(*counts(s_e, lab_e, tg, og), neg_e, pos_e, a)
        rows.append((K, vr, er, vg, mg))
    elapsed = time.perf_counter() - t0
    tool = None
    if args.tool_json:
        rep = json.load(open(args.tool_json))["report"]
        tool = [(p["attacks"][0]["selection"]["epsilon"], p["attacks"][0]["region"]["epsilon"],
                 p["attacks"][0]["gdp"].get("mu", 0.0)) for p in rep["points"]]
    print(f"fig1 peer: {args.runs} runs, {len(rows)} releases, {elapsed:.2f} s")
    print(f"{'epoch':>5} {'scan(train)':>11} {'eps_lb':>8} {'mu_lb':>7}" +
          (f" | {'tool scan':>9} {'tool eps_lb':>11} {'tool mu_lb':>10}" if tool else ""))
    for j, (K, vr, er, vg, mg) in enumerate(rows):
        line = f"{K:5d} {vr:11.4f} {er:8.4f} {mg:7.4f}"
        if tool:
            line += f" | {tool[j][0]:9.4f} {tool[j][1]:11.4f} {tool[j][2]:10.4f}"
        print(line)
    if tool:
        d = max(abs(r[2] - t[1]) for r, t in zip(rows, tool))
        print(f"largest |eps_lb peer - tool| = {d:.3f} (other random draws; near the ceiling a bound moves by ~1 when an error count goes from 0 to 3)")


if __name__ == "__main__":
    main()
