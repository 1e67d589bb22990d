# Reference values for the add/remove accountants of the (Poisson-)subsampled
# Gaussian, computed independently of the Go code (docs/derivations/pld.md,
# §6.1). One step of the mechanism (clip C = 1, noise multiplier z, rate q)
# has two dominating pairs under add/remove adjacency:
#   remove: P = (1-q) N(0, z^2) + q N(1, z^2),  Q = N(0, z^2)
#   add:    P = N(0, z^2),  Q = (1-q) N(0, z^2) + q N(1, z^2)
# (q = 1: the Gaussian mechanism of sensitivity 1, both directions alike).
# For each direction the privacy loss L = ln(P/Q)(X), X ~ P, is a monotone
# function of X, so P(L > l) is a normal tail at the inverse of the loss.
# delta(eps) = E[(1 - e^{eps - L})_+] + P(L = +inf) is non-decreasing in L,
# and the law of a sum of independent losses is stochastically monotone in
# each summand's law. Rounding every step's loss UP to a grid of width h
# (mass above the grid to +inf) therefore gives an upper bound on delta(eps)
# of the T-fold composition, rounding DOWN (mass below the grid dropped) a
# lower bound; the two differ by at most a shift of T*h in the composed
# loss. The composition is a circular FFT on a window of +-W around the
# composed mean. eps(delta) is bracketed by bisection on the two curves and
# the larger direction is taken. This is the simple rounding of Meiser &
# Mohammadi 2018, not the connect-the-dots discretisation the Go code uses.
#
# Run: /usr/bin/python3 addremove_bracket.py   (prints the Go table rows)
import math
import sys

import numpy as np
from scipy.special import log_ndtr, ndtr


def inverse_remove(q, z, l):
    """x with ln(1 - q + q e^{(x - 1/2)/z^2}) = l, for l > ln(1 - q)."""
    if q == 1:
        return z * z * l + 0.5
    v = np.expm1(l) + q
    with np.errstate(divide="ignore", invalid="ignore"):
        x = z * z * (np.log(v) - math.log(q)) + 0.5
    return np.where(v > 0, x, -np.inf)


def survival(q, z, direction, l):
    """P(L > l) for the loss of the given direction, X ~ P."""
    if direction == "remove":
        x = inverse_remove(q, z, l)
        # P(X > x) under (1-q)N(0) + qN(1).
        return (1 - q) * ndtr(-x / z) + q * ndtr(-(x - 1) / z)
    # add: L = -ln(1 - q + q e^{(X - 1/2)/z^2}), X ~ N(0); L > l <=> X < x(-l).
    x = inverse_remove(q, z, -l)
    return ndtr(x / z)


def loss_range(q, z, tail=1e-28):
    """A grid range [lo, hi] outside which each direction has < tail mass."""
    k = math.sqrt(-2 * math.log(tail)) + 1
    def lrem(x):
        if q == 1:
            return (x - 0.5) / (z * z)
        return math.log1p(q * math.expm1((x - 0.5) / (z * z)))
    hi = lrem(k * z + 1)
    lo = -hi
    return lo, hi


def step_arrays(q, z, direction, h, lo, hi):
    j0, j1 = math.floor(lo / h), math.ceil(hi / h)
    grid = np.arange(j0, j1 + 1) * h
    s = survival(q, z, direction, grid)
    cells = np.maximum(s[:-1] - s[1:], 0.0)  # mass of (l_j, l_{j+1}]
    up = np.zeros(len(grid))
    up[1:] = cells
    up[0] += 1 - s[0]  # below the grid: rounded up to its bottom
    inf_up = s[-1]  # above the grid: +inf
    down = np.zeros(len(grid))
    down[:-1] = cells
    down[-1] += s[-1]  # above the grid: rounded down to its top
    return j0, up, inf_up, down


def compose(j0, w, T, h, half_window):
    """T-fold convolution of w (index i <-> loss (j0 + i) h) on a circular
    window of +-half_window cells around the composed mean."""
    if T == 1:
        return (j0 + np.arange(len(w))) * h, w
    mean = float(np.sum(w * np.arange(len(w))) / np.sum(w))
    c = int(round(mean))
    n = 1 << int(math.ceil(math.log2(2 * half_window + len(w))))
    arr = np.zeros(n)
    arr[(np.arange(len(w)) - c) % n] = w  # distinct: n > len(w)
    g = np.fft.irfft(np.fft.rfft(arr) ** T, n)
    k = np.arange(n)
    k = np.where(k < n // 2, k, k - n)
    return (k + T * (c + j0)) * h, np.maximum(g, 0.0)


def eps_at(ls, g, pinf, delta):
    """Smallest eps >= 0 (to 1e-12) with delta(eps) <= delta, delta(eps) =
    sum over L > eps of g (1 - e^{eps - L}) + pinf, by bisection on suffix
    sums over the sorted losses."""
    keep = (ls > 0) & (g > 0)
    ls, g = ls[keep], g[keep]
    o = np.argsort(ls)
    ls, g = ls[o], g[o]
    sg = np.cumsum(g[::-1])[::-1]
    se = np.cumsum((g * np.exp(-ls))[::-1])[::-1]

    def d(e):
        k = np.searchsorted(ls, e, side="right")
        if k >= len(ls):
            return pinf
        return max(float(sg[k] - math.exp(e) * se[k]), 0.0) + pinf

    if d(0.0) <= delta:
        return 0.0
    a, b = 0.0, 1.0
    while d(b) > delta:
        a, b = b, 2 * b
    for _ in range(80):
        c = (a + b) / 2
        if d(c) > delta:
            a = c
        else:
            b = c
    return b


def bracket(q, z, T, delta, h):
    lo, hi = loss_range(q, z)
    lower, upper = 0.0, 0.0
    for direction in ("remove", "add"):
        j0, up, inf_up, down = step_arrays(q, z, direction, h, lo, hi)
        sd = math.sqrt(T * float(np.sum(up * ((j0 + np.arange(len(up))) * h) ** 2)))
        half = int(min((40 * sd + 5) / h, 1 << 23))
        ls, g = compose(j0, up, T, h, half)
        upper = max(upper, eps_at(ls, g, 1 - (1 - inf_up) ** T, delta))
        ls, g = compose(j0, down, T, h, half)
        lower = max(lower, eps_at(ls, g, 0.0, delta))
    return lower, upper


ROWS = [
    # q, z, T, delta
    (1.0, 1.0, 1, 1e-5), (1.0, 2.0, 10, 1e-5), (1.0, 4.0, 100, 1e-6), (1.0, 8.0 / 3, 4, 1e-5),
    (1.0, 0.5, 1, 1e-3),
    (0.5, 1.0, 1, 1e-5), (0.5, 2.0, 20, 1e-5),
    (0.2, 1.0, 10, 1e-5), (0.2, 2.0, 50, 1e-6), (0.2, 0.8, 1, 1e-5),
    (0.1, 1.0, 100, 1e-5), (0.1, 1.5, 30, 1e-3),
    (0.05, 1.0, 100, 1e-5), (0.05, 0.7, 10, 1e-5), (0.05, 2.0, 200, 1e-6),
    (0.01, 1.0, 100, 1e-5), (0.01, 1.0, 1000, 1e-5), (0.01, 0.6, 50, 1e-5), (0.01, 2.0, 1000, 1e-6),
    (32 / 1438, 2.2253129346314324, 900, 1e-5),
    (0.001, 1.0, 1000, 1e-5), (0.001, 0.5, 100, 1e-5),
]

if __name__ == "__main__":
    rows = ROWS if len(sys.argv) == 1 else [ROWS[int(a)] for a in sys.argv[1:]]
    for q, z, T, delta in rows:
        lo, hi = loss_range(q, z)
        # Bracket width ~ T h in loss: aim at 2e-5 T-summed, within the cell budget.
        h = max(min(2e-5, 2e-4 / T), (hi - lo) / 4e6)
        a, b = bracket(q, z, T, delta, h)
        print("\t{%r, %r, %d, %g, %.9g, %.9g}, // h = %.3g" % (q, z, T, delta, a, b, h), flush=True)
