# Independent reference profiles for the PLD tests: T-fold hockey-stick
# divergences by numerical integration over the densities (scipy quad),
# without any discretisation of the loss: δ_1(e) = P(X > x_e) − e^e·Q(X > x_e)
# at the loss threshold x_e (brentq), δ_T(ε) = E_P[δ_{T−1}(ε − L)] by
# adaptive quad. T = 3 is slow (tens of minutes per value); pld_vectorised.py
# gives the same T = 2 values on the antipodal pair to 15 digits, faster.
# Run: /usr/bin/python3 hockey_stick_quadrature.py [config …]
import numpy as np
from scipy import integrate, optimize
from scipy.stats import norm
import sys

class Pair:
    """P, Q densities on the line, loss L = ln p/q increasing in x."""
    def __init__(s, logp, logq, cdfP, cdfQ, sfP, sfQ, lo=-60, hi=60):
        s.logp, s.logq, s.sfP, s.sfQ = logp, logq, sfP, sfQ
        s.cdfP, s.cdfQ = cdfP, cdfQ
        s.lo, s.hi = lo, hi
    def L(s, x): return s.logp(x) - s.logq(x)
    def xof(s, e):
        f = lambda x: s.L(x) - e
        a, b = s.lo, s.hi
        if f(a) > 0: return -np.inf
        if f(b) < 0: return np.inf
        return optimize.brentq(f, a, b, xtol=1e-15, rtol=1e-15, maxiter=500)
    def d1(s, e):
        # E_P[(1 - e^{e-L})_+] = P(x > x_e) - e^e Q(x > x_e), any real e
        x = s.xof(e)
        if x == np.inf: return 0.0
        if x == -np.inf: return 1 - np.exp(e)
        return max(s.sfP(x) - np.exp(e)*s.sfQ(x), 0.0)

def mix(q, z, s):
    lp = lambda x: np.logaddexp(np.log1p(-q)+norm.logpdf(x,0,z), np.log(q)+norm.logpdf(x,s,z)) if q < 1 else norm.logpdf(x,s,z)
    lq = lambda x: norm.logpdf(x,0,z)
    sfP = lambda x: (1-q)*norm.sf(x,0,z)+q*norm.sf(x,s,z)
    sfQ = lambda x: norm.sf(x,0,z)
    cdfP = lambda x: (1-q)*norm.cdf(x,0,z)+q*norm.cdf(x,s,z)
    cdfQ = lambda x: norm.cdf(x,0,z)
    return Pair(lp, lq, cdfP, cdfQ, sfP, sfQ, lo=-40*z-5, hi=40*z+5)
def swap(pr):
    # (Q, P): loss -L(x) decreasing in x: reparametrise y = -x
    lp = lambda y: pr.logq(-y); lq = lambda y: pr.logp(-y)
    # P'(Y > y) = Q(X < -y), Q'(Y > y) = P(X < -y)
    sfP = lambda y: pr.cdfQ(-y); sfQ = lambda y: pr.cdfP(-y)
    return Pair(lp, lq, None, None, sfP, sfQ, lo=-pr.hi, hi=-pr.lo)
def anti(q, z):
    lp = lambda x: np.logaddexp(np.log1p(-q)+norm.logpdf(x,0,z), np.log(q)+norm.logpdf(x,1,z)) if q<1 else norm.logpdf(x,1,z)
    lq = lambda x: np.logaddexp(np.log1p(-q)+norm.logpdf(x,0,z), np.log(q)+norm.logpdf(x,-1,z)) if q<1 else norm.logpdf(x,-1,z)
    sfP = lambda x: (1-q)*norm.sf(x,0,z)+q*norm.sf(x,1,z)
    sfQ = lambda x: (1-q)*norm.sf(x,0,z)+q*norm.sf(x,-1,z)
    return Pair(lp, lq, None, None, sfP, sfQ, lo=-40*z-5, hi=40*z+5)

def pld_expect(pr, f, sym=False):
    """E over the PLD under P of f(L); sym: the symmetrisation of pr."""
    pts = [0.0]
    if not sym:
        g = lambda x: np.exp(pr.logp(x)) * f(pr.L(x))
        return sum(integrate.quad(g, a, b, epsabs=1e-15, epsrel=1e-11, limit=400)[0]
                   for a, b in [(pr.lo, -3), (-3, 0), (0, 3), (3, pr.hi)])
    x0 = pr.xof(0.0)
    gp = lambda x: np.exp(pr.logp(x)) * f(pr.L(x))
    gq = lambda x: np.exp(pr.logq(x)) * f(-pr.L(x))
    tot = 0.0
    for a, b in [(x0, x0+3), (x0+3, pr.hi)]:
        tot += integrate.quad(gp, a, b, epsabs=1e-15, epsrel=1e-11, limit=400)[0]
        tot += integrate.quad(gq, a, b, epsabs=1e-15, epsrel=1e-11, limit=400)[0]
    atom = 1 - pr.sfP(x0) - pr.sfQ(x0)
    return tot + atom * f(0.0)

def d1sym(pr, e):
    # symmetrised pair, any real e: E_{w*}[(1-e^{e-L})_+] in closed form:
    # positive part (x > x0, loss L(x)), mirrored part (x > x0, loss -L(x),
    # P*-density q(x)), atom at 0.
    x0 = pr.xof(0.0)
    ee = np.exp(e)
    if e >= 0:
        xe = pr.xof(e)
        return max(pr.sfP(xe) - ee*pr.sfQ(xe), 0.0)
    xm = pr.xof(-e)  # -L(x) > e  <=>  x < xm
    pos = pr.sfP(x0) - ee*pr.sfQ(x0)
    neg = (pr.sfQ(x0) - pr.sfQ(xm)) - ee*(pr.sfP(x0) - pr.sfP(xm))
    atom = 1 - pr.sfP(x0) - pr.sfQ(x0)
    return max(pos, 0) + max(neg, 0) + atom*(1 - ee)

def delta(pr, T, eps, sym=False):
    if T == 1:
        return d1sym(pr, eps) if sym else pr.d1(eps)
    inner = (lambda e: d1sym(pr, e)) if sym else pr.d1
    if T == 2:
        return pld_expect(pr, lambda l: inner(eps - l), sym)
    if T == 3:
        return pld_expect(pr, lambda l: pld_expect(pr, lambda l2: inner(eps - l - l2), sym), sym)

if __name__ == "__main__":
    cfgs = [
      ("poisson-ro", lambda: [anti(0.2, 0.8)], False, [(1,[0.5,1.5,3]),(2,[0.5,1.5,3]),(3,[1,2])]),
      ("poisson-ro-digits", lambda: [anti(0.02225, 2.2253)], False, [(1,[0.05,0.2]),(2,[0.05,0.2]),(3,[0.1])]),
      ("wor-ro", lambda: [mix(0.1, 1.5, 2)], True, [(1,[0.5,1.5,3]),(2,[0.5,1.5,3]),(3,[1,2])]),
      ("poisson-ar", lambda: [mix(0.1, 1.0, 1), swap(mix(0.1, 1.0, 1))], False, [(1,[0.2,0.6,1.2]),(2,[0.2,0.6,1.2]),(3,[0.5,1])]),
      ("wor-ar", lambda: [mix(0.05, 2.0, 2), swap(mix(0.05, 2.0, 2))], False, [(1,[0.2,0.6]),(2,[0.2,0.6]),(3,[0.5])]),
    ]
    which = sys.argv[1:] 
    for name, mk, sym, runs in cfgs:
        if which and name not in which: continue
        prs = mk()
        for T, epss in runs:
            for e in epss:
                vals = [delta(pr, T, e, sym) for pr in prs]
                print(name, T, e, "%.17g" % max(vals), ["%.6g" % v for v in vals], flush=True)
