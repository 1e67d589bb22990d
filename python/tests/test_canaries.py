"""serve() in the canary design: the inclusion mask, MCMCAUDIT_CANARIES,
the "scores" handshake, and the multi-run requests unchanged."""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

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


if __name__ == "__main__":
    unittest.main()
