# 2-D hockey-stick divergences of realisable one-step replace-one pairs,
# brute force over the plane (scipy dblquad), to check the dominating pairs
# (reference values of TestPLDDominance2D; docs/derivations/pld.md, §2.2–2.3).
# Run: /usr/bin/python3 dominance_2d.py poisson|wor
import numpy as np
from scipy import integrate
from scipy.stats import multivariate_normal as mvn
def phi(x, y, c, z):
    return np.exp(-((x-c[0])**2 + (y-c[1])**2)/(2*z*z))/(2*np.pi*z*z)
def hs(pc, qc, w, z, alpha):
    # P = sum w_k phi(c_k), Q likewise; H_alpha = int (p - alpha q)_+
    f = lambda y, x: max(sum(wk*phi(x, y, c, z) for wk, c in zip(w, pc)) - alpha*sum(wk*phi(x, y, c, z) for wk, c in zip(w, qc)), 0.0)
    R = 9*z + 3
    tot = 0.0
    edges = [-R, -2, 0, 2, R]
    for i in range(4):
        for j in range(4):
            tot += integrate.dblquad(f, edges[i], edges[i+1], edges[j], edges[j+1], epsabs=1e-13, epsrel=1e-10)[0]
    return tot
def unit(deg): return (np.cos(np.radians(deg)), np.sin(np.radians(deg)))
import sys
which = sys.argv[1]
if which == "poisson":
    q, z = 0.2, 0.8
    for e in [0.5, 1.5]:
        a = np.exp(e)
        for name, u, v in [("180", (1,0), (-1,0)), ("150", (1,0), unit(150)), ("120", (1,0), unit(120)), ("90", (1,0), unit(90)), ("60", (1,0), unit(60)),
                           ("v=0", (1,0), (0,0)), ("v=-0.5", (1,0), (-0.5,0)), ("u=0.7,v=-0.7@(30deg)", (0.7,0), (0.7*unit(210)[0], 0.7*unit(210)[1]))]:
            val = hs([(0,0), u], [(0,0), v], [1-q, q], z, a)
            print("poisson", e, name, "%.12g" % val, flush=True)
else:
    q, z = 0.1, 1.5
    s3 = np.sqrt(3)
    for e in [0.5, 1.5]:
        a = np.exp(e)
        # P = (1-q) phi(g_j) + q phi(g_i), Q = (1-q) phi(g_j) + q phi(g'_i)
        # three clipped gradients in the unit disc (C = 1): g_j, g_i, g'_i
        tri = [unit(90), unit(210), unit(330)]  # inscribed equilateral, side sqrt(3)
        for name, gj, gi, gpi in [("bbg", (-1,0), (1,0), (-1,0)), ("equilateral", tri[0], tri[1], tri[2]),
                                  ("anti", (0,0), (1,0), (-1,0)), ("gj-centre", (0,0), (1,0), unit(120)),
                                  ("bbg-rev", (-1,0), (-1,0), (1,0))]:
            val = hs([gj, gi], [gj, gpi], [1-q, q], z, a)
            print("wor", e, name, "%.12g" % val, flush=True)
