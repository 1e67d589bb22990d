"""Audits of Python functions: the NumPy Gaussian mechanism against the CLI, errors, Ctrl-C."""

import csv
import math
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

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
        with self.assertRaises(ma.AuditError) as cm:
            ma.audit(samplers.gaussian, dim=1, releases=["release"], model=MODEL, data=DATA, neighbour=NEIGHBOUR,
                     load=samplers.total, trials=10, confidence=1.5, progress=False)
        e = cm.exception
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


# Interrupted, then resumed: a script so that SIGINT reaches its process as Ctrl-C would.
INTERRUPT_SCRIPT = textwrap.dedent("""
    import signal
    import sys
    # Ctrl-C raises KeyboardInterrupt even when the test runs under a shell that started it with SIGINT
    # ignored (a background job without job control), which Python would otherwise keep.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import mcmcaudit as ma
    import samplers
    resume = sys.argv[1] == "resume"
    try:
        rep = ma.audit(samplers.slow, dim=1, releases=["r"], trials=700, seed=3, workers=2, progress=False,
                       resume=resume)
    except KeyboardInterrupt as e:
        print("INTERRUPTED", e)
        sys.exit(42)
    print("DONE", rep.runs, rep.epsilon_lb)
""")


class TestInterrupt(unittest.TestCase):
    def test_ctrl_c_keeps_trials_and_resumes(self):
        with tempfile.TemporaryDirectory() as tmp:
            script = os.path.join(tmp, "interrupt.py")
            with open(script, "w") as f:
                f.write(INTERRUPT_SCRIPT)
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.abspath(__file__))] + sys.path),
                       XDG_CACHE_HOME=os.path.join(tmp, "cache"), SLOW_LOG=os.path.join(tmp, "trials.log"),
                       SLOW_GATE=os.path.join(tmp, "gate"), SLOW_HOLD_AFTER="320")
            p = subprocess.Popen([sys.executable, script, "start"], cwd=tmp, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            # Interrupt once the first checkpoint block (256 trials) is surely complete. Trials past the
            # 320th are held until the gate opens (samplers.slow), so the run cannot end first: it once
            # did, on a loaded machine ("0 != 42").
            deadline = time.time() + 300
            while time.time() < deadline and p.poll() is None:
                try:
                    with open(env["SLOW_LOG"]) as f:
                        if len(f.readlines()) >= 320:
                            break
                except FileNotFoundError:
                    pass
                time.sleep(0.05)
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=120)
            open(env["SLOW_GATE"], "w").close()
            self.assertEqual(p.returncode, 42, out + err)
            self.assertIn("INTERRUPTED", out)
            self.assertIn("resume=True", out)
            self.assertNotIn("--resume", out)  # the tool's command names this call's temporary files
            self.assertIn("saved", out)
            with open(env["SLOW_LOG"]) as f:
                before = len(f.readlines())
            r = subprocess.run([sys.executable, script, "resume"], cwd=tmp, env=env, capture_output=True, text=True,
                               timeout=300)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("DONE 700", r.stdout)
            # The resumed run served only what the checkpoint lacked: at most
            # 700 - 256 trials plus the determinism checks' re-runs (4 by
            # default; 10 allowed here).
            with open(env["SLOW_LOG"]) as f:
                after = len(f.readlines()) - before
            self.assertGreater(before, 0)
            self.assertLess(after, 700 - 256 + 10, "the resumed run served %d trials: it did not resume" % after)


if __name__ == "__main__":
    unittest.main()
