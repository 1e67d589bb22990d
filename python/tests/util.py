"""Shared helpers of the tests: the audit binary, the repository, Clopper-Pearson bounds."""

import json
import os
import subprocess

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))


def binary():
    """The audit binary the package uses (run_tests.sh sets MCMCAUDIT_BIN)."""
    import mcmcaudit
    return mcmcaudit.find_binary()


def cli(*args):
    """Run the audit binary directly: (exit code, stdout, stderr)."""
    r = subprocess.run([binary()] + list(args), stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=REPO)
    return r.returncode, r.stdout, r.stderr


def cli_json(*args):
    code, out, err = cli(*args)
    if code not in (0, 1):
        raise AssertionError("audit %s: exit %d: %s" % (" ".join(args), code, err))
    return json.loads(out)


def cp_two_sided(k, n, level):
    """The two-sided Clopper-Pearson interval of a binomial rate, k of n, at `level` (SciPy's beta quantiles)."""
    from scipy.stats import beta
    a = 1 - level
    lo = 0.0 if k == 0 else beta.ppf(a / 2, k, n - k + 1)
    hi = 1.0 if k == n else beta.ppf(1 - a / 2, k + 1, n - k)
    return lo, hi


def cp_upper(k, n, alpha):
    """The one-sided Clopper-Pearson upper bound at level 1 - alpha (SciPy)."""
    from scipy.stats import beta
    return 1.0 if k == n else beta.ppf(1 - alpha, k + 1, n - k)


def region_bound(fp, neg, fn, pos, delta, confidence):
    """Heller & Fetaya eq. 12 with one-sided Clopper-Pearson upper bounds at alpha/2 each, computed here with SciPy.

    eps >= max{ln((1 - delta - FPR_ub)/FNR_ub), ln((1 - delta - FNR_ub)/FPR_ub)}, floored at 0.
    """
    import math
    a = 1 - confidence
    fpr, fnr = cp_upper(fp, neg, a / 2), cp_upper(fn, pos, a / 2)
    vals = [0.0]
    for num, den in ((1 - delta - fpr, fnr), (1 - delta - fnr, fpr)):
        if num > 0 and den > 0:
            vals.append(math.log(num / den))
    return max(vals)
