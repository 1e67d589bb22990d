"""serve() in the canary design: the inclusion mask, MCMCAUDIT_CANARIES,
the "scores" handshake, and the multi-run requests unchanged."""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
import unittest.mock

import mcmcaudit as ma
import samplers

PROGRAM = textwrap.dedent('''
    import sys
    from mcmcaudit import protocol as mp

    def run(seed, side, rows, canaries=None):
        # A release: the number of training rows and the sum of their labels.
        rel = [[float(len(rows)), float(sum(r[-1] for r in rows))]]
        if canaries is None:
            return rel
        # Scores: each canary's first feature, plus the seed's parity.
        return [[c[0] + seed % 2 for c in canaries]]

    mp.serve(run, dim=2, releases=["final"], scores=len(sys.argv) > 1)
''')


def session(requests, scores=False, env=None):
    """Run PROGRAM, send the requests, return its stdout lines as JSON."""
    args = [sys.executable, "-c", PROGRAM] + (["--scores"] if scores else [])
    full = dict(os.environ, **(env or {}))
    out = subprocess.run(args, input="".join(json.dumps(r) + "\n" for r in requests),
                         capture_output=True, text=True, env=full, timeout=120)
    if out.returncode != 0:
        raise AssertionError("exit %d: %s" % (out.returncode, out.stderr))
    return [json.loads(l) for l in out.stdout.splitlines() if l.strip()]


class TestCanaries(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.env = {}
        for key, name, rows in (("MCMCAUDIT_D", "D.csv", [[0.5, 1], [0.25, 0]]),
                                ("MCMCAUDIT_CANARIES", "C.csv", [[10, 1], [20, 1], [30, 0]])):
            path = os.path.join(self.dir, name)
            with open(path, "w") as f:
                f.write("x1,y\n" + "".join("%r,%r\n" % tuple(r) for r in rows))
            self.env[key] = path

    def test_releases_train_on_d_plus_included(self):
        lines = session([{"trial": 0, "side": "D", "seed": 4, "canaries": "011"},
                         {"trial": 1, "side": "D", "seed": 4}], env=self.env)
        self.assertNotIn("scores", lines[0])
        # D (2 rows, labels 1 + 0) plus canaries 1 and 2 (labels 1 + 0).
        self.assertEqual(lines[1], {"trial": 0, "releases": [[4.0, 2.0]]})
        # The multi-run request, as before: D alone.
        self.assertEqual(lines[2], {"trial": 1, "releases": [[2.0, 1.0]]})

    def test_scores(self):
        lines = session([{"trial": 3, "side": "D", "seed": 5, "canaries": "100"}], scores=True, env=self.env)
        self.assertEqual(lines[0]["scores"], True)
        self.assertEqual(lines[1], {"trial": 3, "scores": [[11.0, 21.0, 31.0]]})

    def test_mask_of_the_wrong_length_is_a_trial_error(self):
        lines = session([{"trial": 0, "side": "D", "seed": 1, "canaries": "01"}], env=self.env)
        self.assertIn("error", lines[1])
        self.assertIn("2 characters for 3 canaries", lines[1]["error"])


# The one-run design from audit(): ULA on Bayesian logistic regression in 40 dimensions, 10 records and 200
# random canaries, of which the seed includes about half: with more parameters than records, one canary moves
# the state enough to be told apart (at this seed ε_lb is 0.64 at the last release, 0.40 at the first).
DIM = 40
MODEL = {"logistic": {"dim": DIM, "alpha": 1}}
DATA = {"synthetic_logistic": {"n": 10, "theta_star": [0.5, -0.5] * (DIM // 2), "x_scale": 1, "seed": 5}}
CANARIES = ma.Canaries(count=200, kind="random", guesses=20)
RELEASES = ["iteration 100", "iteration 200"]


class TestOneRunAudit(unittest.TestCase):
    def _audit(self, **kw):
        with tempfile.TemporaryDirectory() as tmp, unittest.mock.patch.dict(os.environ, {"XDG_CACHE_HOME": tmp}):
            return ma.audit(samplers.ula_logistic, dim=DIM, releases=RELEASES, model=MODEL, data=DATA, seed=31,
                            progress=False, **kw)

    def _assert_report_is_the_json(self, rep):
        doc = rep.to_dict()["report"]
        points = doc["points"]
        head = points[doc["headline"]]
        self.assertEqual(rep.epsilon_lb, doc["epsilon"]["epsilon"])
        self.assertEqual(rep.epsilon_lb, head["one_run"]["epsilon"])
        self.assertEqual(rep.mu_lb, head["one_run_fdp"].get("mu", 0.0))
        self.assertEqual(rep.guesses, head["one_run"]["guesses"])
        self.assertEqual(rep.headline, head["point"]["label"])
        self.assertEqual(rep.epsilon_lb_per_release, {p["point"]["label"]: p["one_run"]["epsilon"] for p in points})
        self.assertEqual(rep.mu_lb_per_release, {p["point"]["label"]: p["one_run_fdp"].get("mu", 0.0) for p in points})
        self.assertEqual(set(rep.epsilon_lb_per_release), set(RELEASES))
        self.assertEqual([r.ceiling for r in rep.releases], [p["ceiling"]["epsilon"] for p in points])

    def test_canaries_with_data_and_no_neighbour_or_trials(self):
        rep = self._audit(canaries=CANARIES, claim=ma.EpsilonDelta(epsilon=10, delta=1e-5))
        self._assert_report_is_the_json(rep)
        # Bounds that are not the zeros of a report read wrong.
        self.assertGreater(rep.epsilon_lb, 0)
        self.assertGreater(rep.mu_lb, 0)
        self.assertTrue(all(e > 0 for e in rep.epsilon_lb_per_release.values()), rep.epsilon_lb_per_release)
        self.assertEqual(rep.guesses["canaries"], 200)
        self.assertEqual(rep.guesses["guesses"], 20)
        self.assertEqual(rep.claims, ["claimed (10, 1e-05)-DP"])
        self.assertIn(rep.verdict, ("not refuted", "VIOLATION"))
        self.assertIn("<html", rep.html.lower())

    def test_scores_from_the_function_equal_the_tools(self):
        # The same audit with the function scoring the canaries (scores=True), and with the dict form: its
        # scores are the log-likelihoods the tool computes from the releases, so the guesses are the same.
        by_tool = self._audit(canaries={"count": 200, "kind": "random", "guesses": 20}, html=False)
        by_function = self._audit(canaries=CANARIES, scores=True, html=False)
        self._assert_report_is_the_json(by_function)
        self.assertEqual(by_function.guesses, by_tool.guesses)
        self.assertEqual(by_function.epsilon_lb_per_release, by_tool.epsilon_lb_per_release)

    def test_runs_only_arguments_refused(self):
        for kw in ({"neighbour": {"adjacency": "add-one", "record": {"x": [0] * DIM, "y": 0}}},
                   {"split": (0.5, 0.5)}, {"attacks": ["threshold"]}):
            with self.assertRaises(ValueError) as cm:
                ma.audit(samplers.ula_logistic, dim=DIM, releases=RELEASES, model=MODEL, data=DATA,
                         canaries=ma.Canaries(count=10), **kw)
            self.assertIn(next(iter(kw)), str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            ma.audit(samplers.ula_logistic, dim=DIM, releases=RELEASES, model=MODEL, data=DATA, design="canaries")
        self.assertIn("Canaries(count=", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
