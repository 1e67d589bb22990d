"""Precomputed samples from NumPy arrays: mcmcaudit.analyze against `audit analyze` on CSV files."""

import os
import tempfile
import unittest

import numpy as np

import mcmcaudit as ma
import util

TRUTH_EPS = 4.377178  # ε(1e-5) of 1-GDP (Dong, Roth & Su 2019, Cor. 2.13), as testdata/gaussian-mechanism.yaml quotes


class TestAnalyze(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Two release points per run: "null" has the same law on both sides,
        # "shift" is N(0, 1) against N(1, 1) (exactly 1-GDP).
        rng = np.random.default_rng(2024)
        n = 400
        cls.d = np.stack([rng.standard_normal((n, 1)), rng.standard_normal((n, 1))], axis=1)
        cls.dp = np.stack([rng.standard_normal((n, 1)), 1.0 + rng.standard_normal((n, 1))], axis=1)

    def test_arrays_match_cli_on_csv(self):
        rep = ma.analyze(self.d, self.dp, points=["null", "shift"], seed=9, claim={"gdp": 1.0})
        self.assertEqual([r.label for r in rep.releases], ["null", "shift"])
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for name, a in (("D.csv", self.d), ("DPRIME.csv", self.dp)):
                p = os.path.join(tmp, name)
                with open(p, "w") as f:
                    for row in a.reshape(len(a), -1):
                        f.write(",".join(repr(float(v)) for v in row) + "\n")
                paths.append(p)
            ref = util.cli_json("analyze", paths[0], paths[1], "--points", "null,shift", "--seed", "9",
                                "--claim-gdp", "1", "--json", "-")["report"]
        for got, want in zip(rep.releases, ref["points"]):
            self.assertEqual((got.fp, got.negatives, got.fn, got.positives),
                             tuple(want["region"]["counts"][k] for k in ("fp", "negatives", "fn", "positives")))
            self.assertEqual(got.epsilon_lb, want["region"]["epsilon"])
            self.assertEqual(got.mu_lb, want["gdp"].get("mu", 0.0))  # the JSON leaves out a μ of 0
            # Valid: no bound above the truth (ε = 0 for "null").
            self.assertLessEqual(got.epsilon_lb, TRUTH_EPS)
            self.assertLessEqual(got.mu_lb, 1.0)
            # The row's ε_lb is eq. 12 on its counts (SciPy), at the report's test confidence.
            self.assertAlmostEqual(got.epsilon_lb, util.region_bound(got.fp, got.negatives, got.fn, got.positives,
                                                                     rep.delta, rep.test_confidence), delta=1e-9)
        self.assertEqual(rep.verdict, ref["verdict"])
        self.assertEqual(rep.verdict, "not refuted")
        self.assertEqual(rep.runs, 800)
        self.assertGreater(rep.epsilon_lb_per_release["shift"], 0)
        self.assertIn("<html", rep.html.lower())
        self.assertIn("srcdoc=", rep._repr_html_())

    def test_refuted_claim_is_a_report_not_an_exception(self):
        # N(0, 1) against N(1, 1) is 1-GDP: a claim of 0.2-GDP is false and,
        # with 200 evaluation runs per side at this separation, refuted.
        rep = ma.analyze(self.d[:, 1], self.dp[:, 1], seed=9, claim={"gdp": 0.2})
        self.assertEqual(rep.verdict, "VIOLATION")
        self.assertTrue(rep.violation)
        self.assertEqual(rep.exit_code, 1)

    def test_bad_samples_raise(self):
        bad = self.d[:, 1].copy()
        bad[3, 0] = np.nan
        with self.assertRaises(ma.AuditError) as cm:
            ma.analyze(bad, self.dp[:, 1])
        self.assertEqual(cm.exception.exit_code, 2)
        self.assertTrue(cm.exception.message.startswith("audit analyze: "), cm.exception.message)


if __name__ == "__main__":
    unittest.main()
