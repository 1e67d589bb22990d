"""Report reads the bounds of either design from the same per-release shape (no binary needed)."""

import json
import os
import unittest

from mcmcaudit.report import Report


def _estimate(eps, mu=None, guesses=None, counts=None):
    e = {"kind": "lower-bound", "estimator": "e", "delta": 1e-5, "confidence": 0.95, "epsilon": eps}
    if mu is not None:
        e["mu"] = mu
    if guesses is not None:
        e["guesses"] = guesses
    if counts is not None:
        e["counts"] = counts
    return e


class ReportShapeTest(unittest.TestCase):
    def test_one_run_report_has_bounds(self):
        g = {"canaries": 200, "guesses": 40, "correct": 32}
        points = [{"point": {"label": "epoch %d" % k, "iteration": k}, "attacks": [{"attack": "canary score ranking"}],
                   "best_one_run": 0, "one_run": _estimate(0.1 * k, guesses=g),
                   "one_run_fdp": _estimate(0.2 * k, mu=0.05 * k, guesses=g),
                   "ceiling": _estimate(2.5, guesses=g)} for k in (1, 2)]
        doc = {"report": {"name": "c", "points": points, "headline": 1, "epsilon": points[1]["one_run"],
                          "confidence": 0.95, "delta": 1e-5, "verdict": "no claim"}}
        r = Report(doc)
        self.assertEqual(r.epsilon_lb, 0.2)
        self.assertEqual(r.mu_lb, 0.1)
        self.assertEqual(r.epsilon_lb_per_release, {"epoch 1": 0.1, "epoch 2": 0.2})
        self.assertEqual(r.mu_lb_per_release, {"epoch 1": 0.05, "epoch 2": 0.1})
        self.assertEqual(r.guesses, g)
        self.assertEqual(r.releases[0].attack, "canary score ranking")
        self.assertIn("32/40 guesses correct", repr(r))

    def test_multi_run_report_unchanged(self):
        c = {"fp": 1, "negatives": 10, "fn": 2, "positives": 10}
        p = {"point": {"label": "final"}, "attacks": [{"attack": "linear"}], "best": 0,
             "region": _estimate(0.7, counts=c), "gdp": _estimate(0.9, mu=0.3, counts=c), "ceiling": _estimate(3.0)}
        r = Report({"report": {"name": "m", "points": [p], "headline": 0, "epsilon": p["region"], "confidence": 0.95,
                               "delta": 1e-5, "verdict": "no claim"}})
        self.assertEqual((r.epsilon_lb, r.mu_lb, r.fp, r.guesses), (0.7, 0.3, 1, None))
        self.assertEqual(r.epsilon_lb_per_release, {"final": 0.7})
        self.assertEqual(r.claim_tests, [])

    def test_headline_on_another_estimator(self):
        # An audit that leaves the region bound out: its first estimator's bound is epsilon_lb.
        c = {"fp": 3, "negatives": 10, "fn": 1, "positives": 10}
        p = {"point": {"label": "final"}, "attacks": [{"attack": "threshold"}, {"attack": "linear"}],
             "best_gdp": 1, "gdp": _estimate(1.25, mu=0.4, counts=c), "ceiling": _estimate(3.0)}
        r = Report({"report": {"name": "g", "points": [p], "headline": 0, "epsilon": p["gdp"], "confidence": 0.95,
                               "delta": 1e-5, "verdict": "no claim"}})
        self.assertEqual(r.epsilon_lb_per_release, {"final": 1.25})
        self.assertEqual((r.releases[0].attack, r.releases[0].fp, r.mu_lb), ("linear", 3, 0.4))

    def test_claim_tests(self):
        ct = {"name": "claimed (1, 1e-05)-DP", "covered": True, "point": 0, "release": "final", "attack": "threshold",
              "rule": "region", "refutation": {"refuted": True, "epsilon": 1, "delta": 1e-5}}
        r = Report({"report": {"name": "m", "points": [], "claims": [ct["name"]], "claim_tests": [ct],
                               "verdict": "VIOLATION"}})
        self.assertEqual(r.claim_tests[0]["refutation"]["refuted"], True)
        self.assertTrue(r.violation)

    def test_stored_one_run_report(self):
        # A report the binary wrote (examples/mnist, the canary design).
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "mnist",
                            "lenet5-report.json")
        with open(path) as f:
            doc = json.load(f)
        r = Report(doc)
        last = doc["report"]["points"][-1]
        self.assertEqual(len(r.releases), len(doc["report"]["points"]))
        self.assertEqual(r.headline, last["point"]["label"])
        self.assertEqual(r.epsilon_lb, last["one_run"]["epsilon"])
        self.assertEqual(r.mu_lb, last["one_run_fdp"]["mu"])
        self.assertEqual(r.guesses, last["one_run"]["guesses"])
        self.assertGreater(r.epsilon_lb, 0)
        self.assertEqual(set(r.epsilon_lb_per_release), {p["point"]["label"] for p in doc["report"]["points"]})
        self.assertEqual(r.releases[-1].ceiling, last["ceiling"]["epsilon"])
        self.assertEqual(r.releases[-1].attack, "canary score ranking")


if __name__ == "__main__":
    unittest.main()
