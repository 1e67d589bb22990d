"""Audits of Python functions: the NumPy Gaussian mechanism against the CLI, errors, Ctrl-C."""

import contextlib
import csv
import io
import math
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
import unittest.mock

import mcmcaudit as ma
import samplers
import util

TRIALS = 600
TRUTH_EPS = 4.377178  # ε(1e-5) of 1-GDP, as testdata/gaussian-mechanism.yaml quotes
# The sections of testdata/gaussian-mechanism.yaml: D = {0.3, -0.2, 0}, D' replaces record 2 by 1.
MODEL = {"linreg": {"dim": 1, "alpha": 1, "beta": 1}}
DATA = {"records": [{"x": [0.3], "y": 0}, {"x": [-0.2], "y": 0}, {"x": [0], "y": 0}]}
NEIGHBOUR = {"adjacency": "replace-one", "index": 2, "record": {"x": [1], "y": 0}}


def _counts(e):
    c = e["counts"]
    return c["fp"], c["negatives"], c["fn"], c["positives"]


def _meets(k, n, k0, n0, level=0.999):
    """Whether the two-sided Clopper-Pearson intervals of k/n and k0/n0 meet."""
    lo, hi = util.cp_two_sided(k, n, level)
    lo0, hi0 = util.cp_two_sided(k0, n0, level)
    return lo <= hi0 and lo0 <= hi


class TestAuditGaussian(unittest.TestCase):
    def test_matches_cli_builtin_within_clopper_pearson(self):
        with tempfile.TemporaryDirectory() as tmp:
            prefix = os.path.join(tmp, "rel")
            rep = ma.audit(samplers.gaussian, dim=1, releases=["release"], model=MODEL, data=DATA, neighbour=NEIGHBOUR,
                           load=samplers.total, trials=TRIALS, seed=7, claim={"gdp": 1}, save_releases=prefix,
                           progress=False)
            # The program's evaluation runs (trial index >= train runs), by side.
            scores = []
            for suffix in ("-D.csv", "-DPRIME.csv"):
                with open(prefix + suffix) as f:
                    rows = list(csv.DictReader(f))
                col = [k for k in rows[0] if k != "trial"][0]
                scores.append([float(r[col]) for r in rows if int(r["trial"]) >= rep.train_runs])
        # The same scenario with the built-in gaussian_query (sigma 1), through the CLI.
        ref = util.cli_json("run", "testdata/gaussian-mechanism.yaml", "--trials", str(TRIALS), "--quiet",
                            "--no-checkpoint", "--json", "-")["report"]
        self.assertEqual(rep.runs, TRIALS)
        self.assertEqual(rep.eval_runs, ref["eval_runs"])
        self.assertEqual(rep.verdict, "not refuted")  # the claim is the truth
        self.assertEqual(rep.headline, "release")
        # Valid: neither bound above the truth.
        self.assertLessEqual(rep.epsilon_lb, TRUTH_EPS)
        self.assertLessEqual(rep.mu_lb, 1.0)
        self.assertEqual(rep.confidence, 0.95)
        self.assertEqual(rep.to_dict()["report"]["epsilon"]["epsilon"], rep.epsilon_lb)
        # The reported ε_lb is eq. 12 on the reported counts (SciPy).
        self.assertAlmostEqual(rep.epsilon_lb, util.region_bound(rep.fp, rep.negatives, rep.fn, rep.positives,
                                                                 rep.delta, rep.test_confidence), delta=1e-9)
        # The built-in run's rule, applied to the Python audit's evaluation
        # runs, gives error counts within Clopper-Pearson error of the
        # built-in's own (99.9% two-sided intervals meet), and an ε_lb within
        # the range eq. 12 takes over those intervals of the built-in's counts.
        pt = ref["points"][0]
        rule = pt["attacks"][pt["best"]]["rule"]
        pos = lambda s: rule["orientation"] * (s - float(rule["threshold"])) > 0  # noqa: E731
        fp, neg = sum(pos(s) for s in scores[0]), len(scores[0])
        fn, npos = sum(not pos(s) for s in scores[1]), len(scores[1])
        rfp, rneg, rfn, rpos = _counts(pt["region"])
        self.assertTrue(_meets(fp, neg, rfp, rneg), "FP %d/%d against the built-in's %d/%d" % (fp, neg, rfp, rneg))
        self.assertTrue(_meets(fn, npos, rfn, rpos), "FN %d/%d against the built-in's %d/%d" % (fn, npos, rfn, rpos))
        eps = util.region_bound(fp, neg, fn, npos, 1e-5, 0.95)
        flo, fhi = util.cp_two_sided(rfp, rneg, 0.999)
        nlo, nhi = util.cp_two_sided(rfn, rpos, 0.999)
        # eq. 12 falls as either count rises: its extremes over the counts
        # inside both intervals are at the corners.
        lo = util.region_bound(math.floor(fhi * rneg), rneg, math.floor(nhi * rpos), rpos, 1e-5, 0.95)
        hi = util.region_bound(math.ceil(flo * rneg), rneg, math.ceil(nlo * rpos), rpos, 1e-5, 0.95)
        sys.stderr.write("Python audit: ε_lb %.4f (FP %d/%d, FN %d/%d), μ_lb %.4f; built-in: ε_lb %.4f (FP %d/%d, FN %d/%d); "
                         "its rule on the Python runs: FP %d/%d, FN %d/%d, ε_lb %.4f in [%.4f, %.4f]\n"
                         % (rep.epsilon_lb, rep.fp, rep.negatives, rep.fn, rep.positives, rep.mu_lb,
                            pt["region"]["epsilon"], rfp, rneg, rfn, rpos, fp, neg, fn, npos, eps, lo, hi))
        self.assertTrue(lo <= eps <= hi, "ε_lb %.4f of the Python runs outside [%.4f, %.4f] around the built-in's %.4f"
                        % (eps, lo, hi, pt["region"]["epsilon"]))
        # The HTML report and the text table came back.
        self.assertIn("<html", rep.html.lower())
        self.assertIn("release", rep.text)

    def test_bad_input_raises_audit_error(self):
        stderr = io.StringIO()
        with self.assertRaises(ma.AuditError) as cm, contextlib.redirect_stderr(stderr):
            ma.audit(samplers.gaussian, dim=1, releases=["release"], model=MODEL, data=DATA, neighbour=NEIGHBOUR,
                     load=samplers.total, trials=10, confidence=1.5, progress=False)
        e = cm.exception
        # The tool's message once: in the exception, not also on stderr.
        self.assertNotIn("confidence", stderr.getvalue())
        self.assertEqual(e.exit_code, 2)
        self.assertTrue(e.message.startswith("audit run: "), e.message)
        self.assertIn("confidence", e.message)

    def test_unimportable_functions_refused(self):
        with self.assertRaises(ValueError) as cm:
            ma.audit(lambda seed, side, data: [[0.0]], dim=1, releases=["r"], trials=10)
        self.assertIn("lambda", str(cm.exception))

        def local(seed, side, data):
            return [[0.0]]
        with self.assertRaises(ValueError) as cm:
            ma.audit(local, dim=1, releases=["r"], trials=10)
        self.assertIn("nested", str(cm.exception))


# Interrupted, then resumed: a script so that SIGINT reaches its process as Ctrl-C would. The sampler gets its
# datasets from the call (d=, d_prime=, made afresh by each process): the run is keyed by their values.
INTERRUPT_SCRIPT = textwrap.dedent("""
    import signal
    import sys
    # Ctrl-C raises KeyboardInterrupt even when the test runs under a shell that started it with SIGINT
    # ignored (a background job without job control), which Python would otherwise keep.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import numpy as np
    import mcmcaudit as ma
    import samplers
    resume = sys.argv[1] == "resume"
    D = np.array([[0.3], [-0.2], [0.0]])
    D_PRIME = np.array([[0.3], [-0.2], [1.0]])
    try:
        rep = ma.audit(samplers.slow, dim=1, releases=["r"], d=D, d_prime=D_PRIME, trials=700, seed=3, workers=2,
                       progress=False, resume=resume)
    except KeyboardInterrupt as e:
        print("INTERRUPTED", e)
        sys.exit(42)
    print("DONE", rep.runs, rep.epsilon_lb)
""")


def _blocks(cache):
    """The completed blocks of trials in the default checkpoints under the cache directory `cache`."""
    root = os.path.join(cache, "mcmcaudit", "checkpoints")
    try:
        return [n for d in os.listdir(root) for n in os.listdir(os.path.join(root, d))
                if n.startswith("trials-") and n.endswith(".part")]
    except FileNotFoundError:
        return []


class TestInterrupt(unittest.TestCase):
    def _start(self, tmp, hold_after):
        script = os.path.join(tmp, "interrupt.py")
        with open(script, "w") as f:
            f.write(INTERRUPT_SCRIPT)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.abspath(__file__))] + sys.path),
                   XDG_CACHE_HOME=os.path.join(tmp, "cache"), SLOW_LOG=os.path.join(tmp, "trials.log"),
                   SLOW_GATE=os.path.join(tmp, "gate"), SLOW_HOLD_AFTER=str(hold_after))
        p = subprocess.Popen([sys.executable, script, "start"], cwd=tmp, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        return script, env, p

    def _wait(self, p, ready):
        """Poll until ready() (or the process ended, which the caller's assertions then report)."""
        while p.poll() is None and not ready():
            time.sleep(0.05)

    def _lines(self, env):
        try:
            with open(env["SLOW_LOG"]) as f:
                return len(f.readlines())
        except FileNotFoundError:
            return 0

    def test_ctrl_c_keeps_trials_and_resumes(self):
        with tempfile.TemporaryDirectory() as tmp:
            # Trials past the 320th are held until the gate opens (samplers.slow), so the run cannot end before
            # the interruption; the test interrupts once the checkpoint holds its first block of trials (256),
            # whatever the machine's load: it polls the checkpoint, not the clock.
            script, env, p = self._start(tmp, 320)
            self._wait(p, lambda: _blocks(env["XDG_CACHE_HOME"]))
            p.send_signal(signal.SIGINT)
            out, err = p.communicate()
            open(env["SLOW_GATE"], "w").close()
            self.assertEqual(p.returncode, 42, out + err)
            self.assertIn("INTERRUPTED", out)
            self.assertIn("resume=True", out)
            self.assertNotIn("--resume", out)  # the tool's command names this call's temporary files
            self.assertIn("saved", out)
            before = self._lines(env)
            # A new process makes the datasets afresh: the same values key the same run.
            r = subprocess.run([sys.executable, script, "resume"], cwd=tmp, env=env, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("DONE 700", r.stdout)
            # The resumed run served only what the checkpoint lacked: at most
            # 700 - 256 trials plus the determinism checks' re-runs (4 by
            # default; 10 allowed here).
            after = self._lines(env) - before
            self.assertGreater(before, 0)
            self.assertLess(after, 700 - 256 + 10, "the resumed run served %d trials: it did not resume" % after)
            # One run directory for the two calls.
            self.assertEqual(len(os.listdir(os.path.join(env["XDG_CACHE_HOME"], "mcmcaudit", "runs"))), 1)
            # The tool's message on the interruption was the exception's, not also on stderr.
            self.assertNotIn("interrupted", err)

    def test_ctrl_c_before_the_first_block_says_nothing_is_saved(self):
        with tempfile.TemporaryDirectory() as tmp:
            # Every trial after the first is held: no block can be complete when the interruption comes.
            script, env, p = self._start(tmp, 1)
            self._wait(p, lambda: self._lines(env) >= 1)
            p.send_signal(signal.SIGINT)
            out, err = p.communicate()
            open(env["SLOW_GATE"], "w").close()
            self.assertEqual(p.returncode, 42, out + err)
            self.assertEqual(_blocks(env["XDG_CACHE_HOME"]), [])
            self.assertIn("nothing is saved", out)
            self.assertNotIn("resume=True", out)


class TestContentKey(unittest.TestCase):
    def test_same_datasets_same_run(self):
        # Two calls with equal datasets (new arrays each time) share one run directory; other values get another.
        import numpy as np
        with tempfile.TemporaryDirectory() as tmp, unittest.mock.patch.dict(os.environ, {"XDG_CACHE_HOME": tmp}):
            for d_prime in ([[0.0], [1.0]], [[0.0], [1.0]], [[0.0], [2.0]]):
                rep = ma.audit(samplers.shifted, dim=1, releases=["r"], d=np.array([[0.0], [0.0]]),
                               d_prime=np.array(d_prime), trials=40, progress=False, html=False)
                self.assertEqual(rep.runs, 40)
            self.assertEqual(len(os.listdir(os.path.join(tmp, "mcmcaudit", "runs"))), 2)


class TestDatasetsInReport(unittest.TestCase):
    def test_d_and_d_prime_are_described(self):
        # The report names the datasets the function was given, with their records and adjacency, instead of
        # saying that the sampler owns its data.
        import numpy as np
        cases = [(np.array([[0.3], [-0.2], [0.0]]), np.array([[0.3], [-0.2], [1.0]]), "replace-one", "record 2 differs"),
                 ([[0.3], [-0.2]], [[0.3], [-0.2], [1.0]], "add-one", "D′ adds record 2")]
        with tempfile.TemporaryDirectory() as tmp, unittest.mock.patch.dict(os.environ, {"XDG_CACHE_HOME": tmp}):
            for d, d_prime, adjacency, note in cases:
                rep = ma.audit(samplers.shifted, dim=1, releases=["r"], d=d, d_prime=d_prime, trials=40,
                               progress=False)
                doc = rep.to_dict()["report"]
                self.assertEqual(doc["d"], {"name": "d", "records": len(d)})
                self.assertEqual(doc["d_prime"], {"name": "d_prime", "records": len(d_prime)})
                self.assertEqual((doc["adjacency"], doc["pair_note"]), (adjacency, note))
                for page in (rep.html, rep.text):
                    self.assertNotIn("no datasets given", page)
                    self.assertIn("D = d (%d records)" % len(d), page)


class TestProgressCallback(unittest.TestCase):
    def test_progress_moves_between_the_tools_lines(self):
        # The tool prints a progress line every 10 s; the callback hears of trials as the runner answers them.
        seen = []
        with tempfile.TemporaryDirectory() as tmp, unittest.mock.patch.dict(os.environ, {"XDG_CACHE_HOME": tmp}):
            rep = ma.audit(samplers.slow, dim=1, releases=["r"], trials=150, workers=1,
                           progress=lambda done, total: seen.append((done, total)))
        self.assertEqual(rep.runs, 150)
        self.assertEqual(seen[-1], (150, 150))
        self.assertTrue(all(t == 150 for _, t in seen))
        self.assertEqual([d for d, _ in seen], sorted(set(d for d, _ in seen)), "not increasing: %r" % seen)
        # Counts strictly between the start and the end: the callback moved while the trials ran.
        self.assertGreaterEqual(len([d for d, _ in seen if 0 < d < 150]), 3, seen)


if __name__ == "__main__":
    unittest.main()
