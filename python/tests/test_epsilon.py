"""ε from counts: mcmcaudit.epsilon and epsilon_one_run against the CLI's JSON and SciPy."""

import unittest

import mcmcaudit as ma
import util


class TestEpsilon(unittest.TestCase):
    def test_counts_match_cli_and_scipy(self):
        for fp, neg, fn, pos, delta, conf in [(3, 500, 7, 500, 1e-5, 0.95), (40, 1000, 310, 1200, 1e-3, 0.9),
                                               (0, 200, 0, 250, 1e-5, 0.99)]:
            got = ma.epsilon(fp, neg, fn, pos, delta=delta, confidence=conf)
            ref = util.cli_json("epsilon", "--fp", str(fp), "--negatives", str(neg), "--fn", str(fn),
                                "--positives", str(pos), "--delta", repr(delta), "--confidence", repr(conf), "--json", "-")
            self.assertEqual(got.to_dict(), ref)
            self.assertEqual(got.epsilon_lb, ref["region"]["epsilon"])
            self.assertEqual(got.mu_lb, ref["gdp"]["mu"])
            self.assertEqual(got.ceiling, ref["ceiling"])
            self.assertEqual((got.confidence, got.delta), (conf, delta))
            # Independently: eq. 12 with SciPy's beta quantiles; the ceiling is eq. 12 at zero errors.
            self.assertAlmostEqual(got.epsilon_lb, util.region_bound(fp, neg, fn, pos, delta, conf), delta=1e-9)
            self.assertAlmostEqual(got.ceiling, util.region_bound(0, neg, 0, pos, delta, conf), delta=1e-9)

    def test_one_run(self):
        got = ma.epsilon_one_run(1000, 100, 95, delta=1e-5)
        ref = util.cli_json("epsilon", "--one-run", "--canaries", "1000", "--guesses", "100", "--correct", "95",
                            "--delta", "1e-05", "--json", "-")
        self.assertEqual(got.to_dict(), ref)
        self.assertTrue(got.one_run)
        # The values docs/reference.md quotes for this command, which
        # docs/derivations/one-run.md checks against jax_privacy to 1e-6.
        self.assertAlmostEqual(got.epsilon_lb, 2.1652, delta=5e-5)
        self.assertAlmostEqual(got.mu_lb, 0.7868, delta=5e-5)
        self.assertAlmostEqual(got.epsilon_if_gaussian, 3.3233, delta=5e-5)
        self.assertAlmostEqual(got.ceiling, 3.4654, delta=5e-5)

    def test_bad_counts_raise_audit_error(self):
        with self.assertRaises(ma.AuditError) as cm:
            ma.epsilon(600, 500, 7, 500)
        e = cm.exception
        self.assertEqual(e.exit_code, 2)
        self.assertTrue(e.message.startswith("audit epsilon: "), e.message)
        self.assertIn("--fp", e.message)
        self.assertNotIn("\n", e.message)


if __name__ == "__main__":
    unittest.main()
