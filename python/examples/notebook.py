# A notebook, written as a script with one "# %%" marker per cell (the form
# Jupyter, VS Code and jupytext open as a notebook). Run it as it is:
#   python3 notebook.py
# In a notebook, the last expression of a cell is displayed: `report` shows
# the HTML report inline; here the script prints what a cell would show.

# %% The sampler lives in a module beside the notebook: gaussian_sampler.py.
import numpy as np

import mcmcaudit as ma
import gaussian_sampler

D = np.array([[0.3, 0.0], [-0.2, 0.0], [0.0, 0.0]])        # records: x, then a label
D_PRIME = np.array([[0.3, 0.0], [-0.2, 0.0], [1.0, 0.0]])  # record 2 replaced: the sums differ by 1

# %% Audit it: 400 trials on D and D', a claim of 1-GDP (the truth, sigma = 1).
report = ma.audit(gaussian_sampler.run, dim=1, releases=["release"], d=D, d_prime=D_PRIME,
                  load=gaussian_sampler.total, trials=400, seed=11, claim={"gdp": 1.0})
print(repr(report))
print("epsilon_lb %.4f (confidence %g, %d evaluation runs), mu_lb %.4f, verdict %s"
      % (report.epsilon_lb, report.confidence, report.eval_runs, report.mu_lb, report.verdict))
html = report._repr_html_()  # what Jupyter displays for `report`
print("HTML report: %d characters" % len(html))

# %% The same test on samples made elsewhere: 300 runs per side of N(0, 1) and N(1, 1).
rng = np.random.default_rng(5)
samples_d = rng.standard_normal((300, 1))
samples_dprime = 1.0 + rng.standard_normal((300, 1))
offline = ma.analyze(samples_d, samples_dprime, claim={"gdp": 1.0}, seed=3)
print(repr(offline))

# %% And epsilon from the error counts alone.
print(repr(ma.epsilon(fp=offline.fp, negatives=offline.negatives, fn=offline.fn, positives=offline.positives)))
