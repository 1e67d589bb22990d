"""Heller & Fetaya's counterexample (2023, §IV.B, Lemmas A.2-A.3) for the
NumPy peers: exact moments of cyclic batch-1 SGLD on D1 = n copies of
(x_h, c x_h) and on D2, where one copy is replaced by (x_h/2, c x_h/2), at
epoch boundaries, written as offsets from D1's mean.

D1 after K epochs: N(mu_K, v_K). D2 with the special record at position r:
N(mu_K - d_r, V_r) with u = lambda^(n-r), d_r = D0 + D1 u, V_r = V0 + V1 u^2.
Between release epochs the fluctuation around the mean is a Gaussian AR(1)
(factor1/var1 on D1; factor2 and var_const + var_slope u^2 on D2).
"""
import math

import numpy as np

# The parameters of testdata/fig1-exact.yaml and of `audit curve --c 2e7
# --eta-scale 1` (the Fig. 1 caption of Heller & Fetaya).
FIG1 = dict(n=17864389, alpha=2.0, beta=1.0, xh=1.8, c=2.0e7, eta_scale=1.0)


class Counterexample:
    def __init__(self, n, alpha, beta, xh, c, eta_scale):
        self.n, self.alpha, self.beta, self.xh, self.c = n, alpha, beta, xh, c
        nx2b = n * xh * xh * beta
        s = alpha + nx2b
        eta = eta_scale / (s * s)
        self.s, self.eta = s, eta
        half = eta * s / 2                       # 1 - lambda
        self.L = -math.log1p(-half)              # -ln lambda
        lam = 1 - half
        self.lam_diff = 0.75 * (eta / 2) * nx2b  # lambda_hat - lambda
        self.lam_hat = lam + self.lam_diff
        self.lam = lam
        self.d_log = math.log1p(self.lam_diff / lam)
        l_hat = -math.log1p(-(eta / 2) * (alpha + nx2b / 4))
        self.ln_a = -l_hat - (n - 1) * self.L    # ln A, A = lambda_hat lambda^(n-1)
        self.one_m_lam2 = half * (2 - half)
        self.m_inf = nx2b * c / s
        self.e1 = 0.75 * (eta / 2) * nx2b * c * alpha / s

    def moments(self, K):
        """Var of D1 and D0, D1, V0, V1 of D2 after K epochs."""
        K = float(K)
        ln_lnk = -self.n * K * self.L
        lnk = math.exp(ln_lnk)
        var = lnk * lnk / self.alpha - self.eta * math.expm1(2 * ln_lnk) / self.one_m_lam2
        ak = math.exp(K * self.ln_a)
        d0 = self.m_inf * ak * -math.expm1(-K * self.d_log)
        d1 = self.e1 * -math.expm1(K * self.ln_a) / -math.expm1(self.ln_a)
        one_m_a2k = -math.expm1(2 * K * self.ln_a)
        v0 = ak * ak / self.alpha + self.eta * one_m_a2k / self.one_m_lam2
        v1 = (self.eta * self.lam_diff * (self.lam_hat + self.lam) / self.one_m_lam2
              * one_m_a2k / -math.expm1(2 * self.ln_a))
        return var, d0, d1, v0, v1

    def transition(self, D):
        """AR(1) of the fluctuation over D epochs."""
        D = float(D)
        ln_lnd = -self.n * D * self.L
        f1 = math.exp(ln_lnd)
        var1 = -self.eta * math.expm1(2 * ln_lnd) / self.one_m_lam2
        f2 = math.exp(D * self.ln_a)
        one_m_a2d = -math.expm1(2 * D * self.ln_a)
        vc = self.eta * one_m_a2d / self.one_m_lam2
        vs = (self.eta * self.lam_diff * (self.lam_hat + self.lam) / self.one_m_lam2
              * one_m_a2d / -math.expm1(2 * self.ln_a))
        return f1, var1, f2, vc, vs

    def u_of_index(self, k):
        """u = lambda^k for k = n - r in [0, n-1] (array)."""
        return np.exp(-np.asarray(k, dtype=np.float64) * self.L)
