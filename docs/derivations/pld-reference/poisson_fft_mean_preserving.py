# A third implementation of the PLD of the Poisson subsampled Gaussian under
# replace-one (the antipodal pair of docs/derivations/pld.md, §2.2), for the
# configuration of closedform's ExampleSGM_PLD (q = 0.01, z = 1, T = 100 and
# 1000): the step's loss on a fine x grid (8e6 cells, mass by CDF
# differences, the loss at each cell's midpoint), each cell's mass split
# between the two neighbouring loss-grid points so that its mean loss is
# kept (second-order accurate, neither pessimistic nor optimistic), T-fold
# composition by one FFT power, δ(ε) by direct summation, ε(δ) by brentq.
# Two grid widths show the discretisation error. Reference values of
# TestPLDPoissonThirdImplementation.
# Run: /usr/bin/python3 poisson_fft_mean_preserving.py  (about a minute, 4 GB)
import numpy as np
from scipy.stats import norm
from scipy.optimize import brentq
q, z = 0.01, 1.0
xs = np.linspace(-15, 16, 8_000_001)
def cdfP(x): return (1-q)*norm.cdf(x/z) + q*norm.cdf((x-1)/z)
def L(x):
    lp = np.logaddexp(np.log1p(-q) + norm.logpdf(x/z), np.log(q) + norm.logpdf((x-1)/z))
    lq = np.logaddexp(np.log1p(-q) + norm.logpdf(x/z), np.log(q) + norm.logpdf((x+1)/z))
    return lp - lq
mass = np.diff(cdfP(xs)); lmid = L(0.5*(xs[1:]+xs[:-1]))
for h in (4e-4, 2e-4):
  lo = np.floor(lmid/h); w = lmid/h - lo; lo = lo.astype(int)
  nmin = lo.min()
  p = np.bincount(lo-nmin, weights=mass*(1-w), minlength=lo.max()-nmin+2)
  p += np.bincount(lo-nmin+1, weights=mass*w, minlength=len(p))[:len(p)]
  n = len(p)
  for T in (100, 1000):
    N = 1
    while N < T*(n-1)+1: N *= 2
    pT = np.maximum(np.fft.irfft(np.fft.rfft(p, N)**T, N)[:T*(n-1)+1], 0)
    ls = (np.arange(len(pT)) + T*nmin)*h
    def delta(eps):
        m = ls > eps
        return np.sum(pT[m]*(1-np.exp(eps-ls[m])))
    e = brentq(lambda e: delta(e) - 1e-5, 0.01, 20)
    print(f"h={h} T={T}: eps(1e-5) = {e:.7f}, delta(1) = {delta(1.0):.7g}")
