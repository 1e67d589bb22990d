# A second, independent implementation (NumPy/SciPy) of the two
# discretisations of docs/derivations/pld.md, §3, for the antipodal pair of
# the Poisson subsampled Gaussian under replace-one, with a plain circular
# FFT composition on a wide window and δ(ε) by direct summation. At a fine
# grid (h = 5e-4) it brackets the dominating pair's ε(δ) for digits-dp-sgld.
# Run: /usr/bin/python3 ctd_numpy.py
import numpy as np
from scipy.stats import norm
import math

class PoissonRO:
    """antipodal pair, sigma=z, C=1; positive-part survival fns"""
    def __init__(s,q,z): s.q,s.z=q,z; s.a = q*math.exp(-1/(2*z*z))/(1-q) if q<1 else None
    def x(s,l):
        z=s.z
        if s.q==1: return l*z*z/2
        return z*z*(l/2 + np.arcsinh(np.sinh(l/2)/s.a))
    def SP(s,l): x=s.x(l); return (1-s.q)*norm.sf(x/s.z)+s.q*norm.sf((x-1)/s.z)
    def FP(s,l): x=s.x(l); return (1-s.q)*norm.cdf(x/s.z)+s.q*norm.cdf((x-1)/s.z)
    def SQ(s,l): x=s.x(l); return (1-s.q)*norm.sf(x/s.z)+s.q*norm.sf((x+1)/s.z)
    def FQ(s,l): x=s.x(l); return (1-s.q)*norm.cdf(x/s.z)+s.q*norm.cdf((x+1)/s.z)

def cells(pair, h, jlo, jhi):
    # grid l_j = j h, j=jlo..jhi ; cells (l_{j-1}, l_j] for j=jlo+1..jhi
    l = np.arange(jlo, jhi+1)*h
    SP, FP, SQ, FQ = pair.SP(l), pair.FP(l), pair.SQ(l), pair.FQ(l)
    m = np.where(l[1:] > 0, SP[:-1]-SP[1:], FP[1:]-FP[:-1])
    n = np.where(l[1:] > 0, SQ[:-1]-SQ[1:], FQ[1:]-FQ[:-1])
    m = np.maximum(m,0); n=np.maximum(n,0)
    return l, m, n, FP[0], FQ[0], SP[-1], SQ[-1]

def pess(pair, h, jlo, jhi):
    l, m, n, lowP, lowQ, infP, infQ = cells(pair,h,jlo,jhi)
    Y = np.exp(-l)
    w = np.zeros(len(l))
    a = (n - m*Y[1:])/(Y[:-1]-Y[1:])
    a = np.clip(a, 0, m)
    w[:-1] += a; w[1:] += m-a
    w[0] += lowP
    return l, w, infP

def opt(pair, h, jlo, jhi):
    l, m, n, lowP, lowQ, infP, infQ = cells(pair,h,jlo,jhi)
    Y = np.exp(-l)
    K = len(m)  # cell k = (l_k, l_{k+1}], mean in [Y_{k+1}, Y_k]
    w = np.zeros(len(l))
    m = m.copy(); n = n.copy()
    # grid point j (index into l), cells above it: k<j (cell k has mean >= Y_{k+1}>=Y_j if k+1<=j)
    PM, PN = 0.0, 0.0
    k = 0  # next cell not yet added
    for j in range(len(l)):
        # add all cells k with k+1 <= j (means >= Y_j)
        while k < K and k+1 <= j:
            PM += m[k]; PN += n[k]; m[k]=0; n[k]=0; k+=1
        if PM <= 0: continue
        E = PN - Y[j]*PM
        if E < 0: # shouldn't happen
            E = 0
        kk = k
        while E > 0 and kk < K:
            D = Y[j]*m[kk] - n[kk]
            if D <= 0: kk+=1; continue
            if D >= E:
                th = E/D
                PM += th*m[kk]; PN += th*n[kk]; m[kk]*=(1-th); n[kk]*=(1-th); E = 0
            else:
                PM += m[kk]; PN += n[kk]; m[kk]=0; n[kk]=0; E -= D; kk+=1
        if E > 1e-300 and kk>=K:
            # cannot balance: place at floor
            lm = -math.log(PN/PM); jj = int(math.floor(lm/h + 1e-12)) - l[0]/h
            w[int(round(jj))] += PM; PM=PN=0; break
        w[j] += PM; PM=PN=0
    # tail above: place at top
    w[-1] += infP + PM
    return l, w, 0.0

def compose(l, w, inf, T, h, N):
    jlo = int(round(l[0]/h))
    arr = np.zeros(N)
    mean = np.sum(w*np.arange(len(w)))/w.sum()
    c = int(round(mean))
    pos = (np.arange(len(w)) - c) % N
    np.add.at(arr, pos, w)
    g = np.fft.irfft(np.fft.rfft(arr)**T, N)
    k = np.arange(N); k = np.where(k < N//2, k, k-N)
    idx = k + T*(c+jlo)
    o = np.argsort(idx)
    return idx[o]*h, np.maximum(g[o],0), 1-(1-inf)**T

def eps_at(ls, g, pinf, delta):
    def dl(e):
        s = ls>e
        return np.sum(g[s]*(-np.expm1(e-ls[s]))) + pinf
    a,b=0,40
    for _ in range(70):
        c=(a+b)/2
        if dl(c)>delta: a=c
        else: b=c
    return b
if __name__ == "__main__":
    q = 32/1438; z = 100*q; T = 900
    pr = PoissonRO(q, z)
    for h in [2e-3, 1e-3, 5e-4]:
        J = int(round(1.6/h))
        N = 1 << int(math.ceil(math.log2(14/h)))
        out = []
        for f in (pess, opt):
            l, w, inf = f(pr, h, -J, J)
            ls, g, pi = compose(l, w, inf, T, h, N)
            out.append(eps_at(ls, g, pi, 1e-5))
        print("h = %g: ε(1e-5) pessimistic %.6f, optimistic %.6f" % (h, out[0], out[1]))
