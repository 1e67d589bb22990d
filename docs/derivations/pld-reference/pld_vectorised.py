# T-fold hockey-stick divergences by Gauss-Legendre quadrature over the
# densities (vectorised), without any loss grid: δ_T(ε) = E[δ_1(ε − L_1 − … − L_{T−1})]
# with δ_1(e) = P(L > e) − e^e Q(L > e) in closed form at the exact threshold
# (found by bisection on the loss). Reference values of TestPLDQuadrature.
# Run: /usr/bin/python3 pld_vectorised.py 100 [config …]
import numpy as np
from scipy.stats import norm
import sys

def gl_nodes(a, b, panels, k=20):
    x, w = np.polynomial.legendre.leggauss(k)
    edges = np.linspace(a, b, panels + 1)
    xs = []; ws = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        xs.append((hi - lo) / 2 * x + (hi + lo) / 2); ws.append((hi - lo) / 2 * w)
    return np.concatenate(xs), np.concatenate(ws)

class Mix:
    """P = sum pw N(pm, z²), Q = sum qw N(qm, z²) on the line, loss increasing in x."""
    def __init__(s, pw, pm, qw, qm, z):
        s.pw, s.pm, s.qw, s.qm, s.z = np.asarray(pw), np.asarray(pm), np.asarray(qw), np.asarray(qm), z
    def logp(s, x): return np.logaddexp.reduce([np.log(w) + norm.logpdf(x, m, s.z) for w, m in zip(s.pw, s.pm) if w > 0], axis=0)
    def logq(s, x): return np.logaddexp.reduce([np.log(w) + norm.logpdf(x, m, s.z) for w, m in zip(s.qw, s.qm) if w > 0], axis=0)
    def L(s, x): return s.logp(x) - s.logq(x)
    def sfP(s, x): return sum(w * norm.sf(x, m, s.z) for w, m in zip(s.pw, s.pm))
    def sfQ(s, x): return sum(w * norm.sf(x, m, s.z) for w, m in zip(s.qw, s.qm))
    def xof(s, e):
        e = np.asarray(e, dtype=float)
        lo = np.full(e.shape, -60 * s.z - 10.0); hi = np.full(e.shape, 60 * s.z + 10.0)
        for _ in range(64):
            mid = (lo + hi) / 2
            up = s.L(mid) > e
            hi = np.where(up, mid, hi); lo = np.where(up, lo, mid)
        return (lo + hi) / 2
    def d1(s, e):
        x = s.xof(e)
        return np.maximum(s.sfP(x) - np.exp(e) * s.sfQ(x), 0.0)

class Sym:
    """The symmetrisation of a Mix pair (docs/derivations/pld.md, §2.1)."""
    def __init__(s, base): s.b = base; s.x0 = float(base.xof(np.array(0.0)))
    def d1(s, e):
        e = np.asarray(e, dtype=float); b = s.b; x0 = s.x0; ee = np.exp(e)
        xe = b.xof(np.abs(e))
        pos_hi = b.sfP(xe) - ee * b.sfQ(xe)              # e ≥ 0
        pos_lo = b.sfP(x0) - ee * b.sfQ(x0)              # e < 0: all positive losses
        neg = (b.sfQ(x0) - b.sfQ(xe)) - ee * (b.sfP(x0) - b.sfP(xe))   # e < 0: −L(x) > e ⇔ x < x_{−e}
        atom = 1 - b.sfP(x0) - b.sfQ(x0)
        return np.where(e >= 0, np.maximum(pos_hi, 0), np.maximum(pos_lo, 0) + np.maximum(neg, 0) + atom * (1 - ee))
    def support(s, n):
        """Quadrature of the PLD: (losses, weights)."""
        b = s.b; R = 12 * b.z + 4
        x, w = gl_nodes(s.x0, R, n)
        lp = b.L(x)
        ls = np.concatenate([lp, -lp, [0.0]])
        ws = np.concatenate([w * np.exp(b.logp(x)), w * np.exp(b.logq(x)), [1 - b.sfP(s.x0) - b.sfQ(s.x0)]])
        return ls, ws

def support(pr, n):
    if isinstance(pr, Sym): return pr.support(n)
    R = 12 * pr.z + 4
    x, w = gl_nodes(-R, R, n)
    return pr.L(x), w * np.exp(pr.logp(x))

def delta(pr, T, eps, n=100):
    if T == 1: return float(pr.d1(np.array(eps)))
    l, w = support(pr, n if T == 2 else 30)
    if T == 2: return float(np.sum(w * pr.d1(eps - l)))
    if T == 3:
        tot = 0.0
        for li, wi in zip(l, w):
            if wi > 0: tot += wi * np.sum(w * pr.d1(eps - li - l))
        return tot

def anti(q, z): return Mix([1 - q, q], [0, 1], [1 - q, q], [0, -1], z)
def mix(q, z, s): return Mix([1 - q, q], [0, s], [1], [0], z)
def swapped(q, z, s):  # (N(0), mix) reflected so that the loss increases in x
    return Mix([1], [0], [1 - q, q], [0, -s], z)

if __name__ == "__main__":
    cfgs = {
      "poisson-ro": ([anti(0.2, 0.8)], [(2, [0.5, 1.5, 3]), (3, [1, 2])]),
      "poisson-ro-digits": ([anti(32/1438, 100*32/1438)], [(2, [0.05, 0.2]), (3, [0.1, 0.3])]),
      "wor-ro": ([Sym(mix(0.1, 1.5, 2))], [(2, [0.5, 1.5, 3]), (3, [1, 2])]),
      "poisson-ar": ([mix(0.1, 1.0, 1), swapped(0.1, 1.0, 1)], [(1, [0.2, 0.6]), (2, [0.2, 0.6, 1.2]), (3, [0.5, 1])]),
      "wor-ar": ([mix(0.05, 2.0, 2), swapped(0.05, 2.0, 2)], [(1, [0.2, 0.6]), (2, [0.2, 0.6]), (3, [0.5])]),
    }
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    for name in sys.argv[2:] or cfgs:
        prs, runs = cfgs[name]
        for T, epss in runs:
            for e in epss:
                vals = [delta(pr, T, e, n) for pr in prs]
                print(name, T, e, "%.15g" % max(vals), ["%.6g" % v for v in vals], flush=True)
