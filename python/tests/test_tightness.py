"""Report.tightness reads the report-level tightness of the JSON (no binary needed)."""

import math
import unittest

from mcmcaudit.report import Report


def _report(**extra):
    p = {"point": {"label": "final"}, "attacks": [{"attack": "threshold"}], "best": 0,
         "region": {"epsilon": 2.5, "delta": 1e-5, "confidence": 0.95}, "gdp": {"mu": 0.9, "epsilon": 4.0},
         "ceiling": {"epsilon": 9.0}}
    r = {"name": "m", "points": [p], "headline": 0, "epsilon": p["region"], "confidence": 0.95, "delta": 1e-5,
         "verdict": "not refuted"}
    r.update(extra)
    return Report({"report": r})


class TightnessTest(unittest.TestCase):
    def test_all_pieces(self):
        t = {"epsilon": 0.5853, "epsilon_claim": "claimed 1-GDP", "mu": 0.9, "mu_claim": "claimed 1-GDP", "exact": 0.8}
        r = _report(claims=["claimed 1-GDP"], tightness=t)
        self.assertEqual(r.tightness, t)

    def test_pieces_left_out(self):
        r = _report(claims=["claimed (1, 0.01)-DP"], tightness={"epsilon": 0, "epsilon_claim": "claimed (1, 0.01)-DP"})
        self.assertEqual(r.tightness, {"epsilon": 0, "epsilon_claim": "claimed (1, 0.01)-DP"})
        self.assertNotIn("mu", r.tightness)

    def test_infinite_ratio(self):
        # A bound of ε = 0 exceeded: the tool writes the ratio as "+Inf".
        r = _report(claims=["claimed (0, 0)-DP"], tightness={"epsilon": "+Inf", "epsilon_claim": "claimed (0, 0)-DP"})
        self.assertTrue(math.isinf(r.tightness["epsilon"]))
        self.assertEqual(r.tightness["epsilon_claim"], "claimed (0, 0)-DP")

    def test_none_without_claims(self):
        self.assertIsNone(_report().tightness)


if __name__ == "__main__":
    unittest.main()
