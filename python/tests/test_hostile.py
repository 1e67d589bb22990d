"""Hostile input to the package: counts that are not whole numbers, samples that are not real, and
MCMCAUDIT_BIN pointing at something that is not the audit binary. Each is refused with an AuditError
whose one-line message names what was wrong, never a truncated count, a dropped imaginary part or a
raw JSONDecodeError, FileNotFoundError or OSError."""

import contextlib
import io
import os
import re
import stat
import sys
import tempfile
import unittest
import warnings
from unittest import mock

import numpy as np

import mcmcaudit as ma
from mcmcaudit import _binary
import samplers
import util

RANGE = re.compile(r"must be an integer in \[\d+, \d+\]")


class TestCounts(unittest.TestCase):
    def assertRefused(self, call, name, allowed):
        """call() raises an AuditError that is also a ValueError, exit code 2, naming `name` and `allowed`."""
        with self.assertRaises(ma.AuditError) as cm:
            call()
        e = cm.exception
        self.assertIsInstance(e, ValueError)
        self.assertEqual(e.exit_code, 2)
        self.assertIn("%s: must be %s" % (name, allowed), e.message)
        self.assertNotIn("\n", str(e))
        return e

    def test_one_run_counts_that_are_not_whole_numbers_are_refused(self):
        # int() would make 100.5 canaries 100 and True one canary.
        r = "an integer in [1, 10000000]"
        e = self.assertRefused(lambda: ma.epsilon_one_run(100.5, 10, 5), "canaries", r)
        self.assertTrue(e.message.startswith("epsilon_one_run: canaries: "), e.message)
        self.assertIn("got 100.5", e.message)
        e = self.assertRefused(lambda: ma.epsilon_one_run(True, True, True), "canaries", r)
        self.assertIn("got True", e.message)
        self.assertRefused(lambda: ma.epsilon_one_run(np.bool_(True), 1, 1), "canaries", r)
        self.assertRefused(lambda: ma.epsilon_one_run(1000, 100.5, 5), "guesses", "an integer in [0, 10000000]")
        self.assertRefused(lambda: ma.epsilon_one_run(1000, 100, np.float64(95.5)), "correct", "an integer in [0, 10000000]")
        self.assertRefused(lambda: ma.epsilon_one_run(1000, 100, False), "correct", "an integer in [0, 10000000]")
        for bad in ("1000", None, float("nan"), float("inf"), 1000 + 0j, 1e300):
            self.assertRefused(lambda: ma.epsilon_one_run(bad, 100, 95), "canaries", r)

    def test_fp_fn_counts_that_are_not_whole_numbers_are_refused(self):
        self.assertRefused(lambda: ma.epsilon(3.5, 500, 7, 500), "fp", "an integer in [0, 100000000]")
        self.assertRefused(lambda: ma.epsilon(3, True, 7, 500), "negatives", "an integer in [1, 100000000]")
        self.assertRefused(lambda: ma.epsilon(3, 500, "7", 500), "fn", "an integer in [0, 100000000]")
        self.assertRefused(lambda: ma.epsilon(3, 500, 7, 500.25), "positives", "an integer in [1, 100000000]")

    def test_bools_and_strings_are_not_delta_or_confidence(self):
        # float(False) is δ = 0 and float("0.9") a confidence: neither was meant.
        self.assertRefused(lambda: ma.epsilon(3, 500, 7, 500, delta=False), "delta", "a real number")
        self.assertRefused(lambda: ma.epsilon_one_run(1000, 100, 95, confidence="0.9"), "confidence", "a real number")
        self.assertRefused(lambda: ma.epsilon_one_run(1000, 100, 95, delta=1e-5 + 0j), "delta", "a real number")

    def test_whole_numbers_of_any_type_are_counts(self):
        want = ma.epsilon_one_run(1000, 100, 95).to_dict()
        self.assertEqual(ma.epsilon_one_run(np.int64(1000), np.uint16(100), 95.0).to_dict(), want)
        self.assertEqual(ma.epsilon(np.int32(3), 500.0, np.float64(7.0), np.uint64(500)).to_dict(),
                         ma.epsilon(3, 500, 7, 500).to_dict())
        self.assertEqual(ma.epsilon(3, 500, 7, 500, delta=np.float64(1e-3), confidence=np.float32(0.5)).delta, 1e-3)

    def test_ranges_are_the_tools(self):
        # The package's ranges of the counts, which its messages quote, are those of `audit epsilon`.
        cases = [(["--one-run", "--canaries", "0", "--guesses", "0", "--correct", "0"],
                  lambda: ma.epsilon_one_run(0, 0, 0)),
                 (["--one-run", "--canaries", "5", "--guesses", "20000000", "--correct", "0"],
                  lambda: ma.epsilon_one_run(5, 20000000, 0)),
                 (["--one-run", "--canaries", "5", "--guesses", "5", "--correct", "-1"],
                  lambda: ma.epsilon_one_run(5, 5, -1)),
                 (["--fp", "-1", "--negatives", "5", "--fn", "0", "--positives", "5"], lambda: ma.epsilon(-1, 5, 0, 5)),
                 (["--fp", "0", "--negatives", "0", "--fn", "0", "--positives", "5"], lambda: ma.epsilon(0, 0, 0, 5)),
                 (["--fp", "0", "--negatives", "5", "--fn", "100000001", "--positives", "5"],
                  lambda: ma.epsilon(0, 5, 100000001, 5)),
                 (["--fp", "0", "--negatives", "5", "--fn", "0", "--positives", "100000001"],
                  lambda: ma.epsilon(0, 5, 0, 100000001))]
        for flags, call in cases:
            code, _, err = util.cli("epsilon", *flags)
            self.assertEqual(code, 2, err)
            tool = RANGE.search(err)
            self.assertIsNotNone(tool, err)
            with self.assertRaises(ma.AuditError) as cm:
                call()
            self.assertEqual(cm.exception.exit_code, 2)
            self.assertIn(tool.group(0), cm.exception.message, "the tool says: " + err)


class TestSamples(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        rng = np.random.default_rng(11)
        cls.d = rng.standard_normal((100, 1))
        cls.dp = 1.0 + rng.standard_normal((100, 1))

    def assertRefused(self, d, dp, name, dtype):
        with warnings.catch_warnings():
            # NumPy's ComplexWarning used to be all that was said.
            warnings.simplefilter("error")
            with self.assertRaises(ma.AuditError) as cm:
                ma.analyze(d, dp, html=False)
        e = cm.exception
        self.assertIsInstance(e, ValueError)
        self.assertEqual(e.exit_code, 2)
        self.assertTrue(e.message.startswith("analyze: %s: " % name), e.message)
        self.assertIn(dtype, e.message)
        self.assertNotIn("\n", str(e))

    def test_complex_samples_are_refused(self):
        self.assertRefused(self.d + 0.5j, self.dp, "d_samples", "complex128")
        self.assertRefused(self.d, self.dp.astype(np.complex64), "d_prime_samples", "complex64")
        # Lists of Python complex numbers too.
        self.assertRefused(self.d, [[complex(v)] for v in self.dp[:, 0]], "d_prime_samples", "complex")

    def test_samples_that_are_not_numbers_are_refused(self):
        self.assertRefused(self.d > 0, self.dp, "d_samples", "bool")
        self.assertRefused(self.d.astype(str), self.dp, "d_samples", "<U")
        self.assertRefused(self.d, self.dp.astype(object), "d_prime_samples", "object")

    def test_integer_samples_are_numbers(self):
        # Scaled so that no two runs repeat (the tool refuses repeated rows of a continuous sampler).
        ints = np.rint(1e6 * self.d).astype(np.int32)
        rep = ma.analyze(ints, np.rint(1e6 * self.dp).astype(np.int64), seed=1, html=False)
        ref = ma.analyze(ints.astype(float), np.rint(1e6 * self.dp), seed=1, html=False)
        self.assertEqual((rep.epsilon_lb, rep.fp, rep.fn), (ref.epsilon_lb, ref.fp, ref.fn))
        self.assertEqual(rep.runs, 200)

    def test_without_numpy_complex_and_bool_values_are_refused(self):
        # Lists of rows are read with the standard library when NumPy is absent.
        rows = [[float(v)] for v in self.d[:, 0]]
        with mock.patch.dict(sys.modules, {"numpy": None}):
            for bad, shown in ((1j, "1j"), (True, "True"), ("0.5", "'0.5'")):
                with self.assertRaises(ma.AuditError) as cm:
                    ma.analyze(rows[:-1] + [[bad]], rows, html=False)
                self.assertEqual(cm.exception.message, "analyze: d_samples: must be a real number, got %s" % shown)


def _script(path, text, mode=0o755):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


class TestBinary(unittest.TestCase):
    """Whatever MCMCAUDIT_BIN points at, each public call raises AuditError naming it."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name
        # audit() writes its runs into the cache: keep them in this test's directory.
        for p in (mock.patch.dict(os.environ, {"XDG_CACHE_HOME": os.path.join(self.tmp, "cache")}),
                  mock.patch.object(_binary, "_found", None)):
            p.start()
            self.addCleanup(p.stop)

    def calls(self):
        d = np.arange(40.0).reshape(20, 2)
        return {
            "epsilon": lambda: ma.epsilon(3, 500, 7, 500),
            "epsilon_one_run": lambda: ma.epsilon_one_run(1000, 100, 95),
            "analyze": lambda: ma.analyze(d, d + 1),
            "audit": lambda: ma.audit(samplers.gaussian, dim=1, releases=["release"], trials=10, progress=False),
        }

    def check(self, binary, exit_code, what):
        """Each call with MCMCAUDIT_BIN=binary raises AuditError(exit_code) whose message holds `what`.

        Returns what the calls wrote on stderr.
        """
        stderr = io.StringIO()
        with mock.patch.dict(os.environ, {"MCMCAUDIT_BIN": binary}), contextlib.redirect_stderr(stderr):
            for name, call in self.calls().items():
                with self.subTest(binary=os.path.basename(binary), call=name):
                    with self.assertRaises(ma.AuditError) as cm:
                        call()
                    e = cm.exception
                    self.assertEqual(e.exit_code, exit_code, e.message)
                    self.assertIn("MCMCAUDIT_BIN=%s" % binary, e.message)
                    self.assertIn(what, e.message)
                    self.assertNotIn("\n", str(e))
        return stderr.getvalue()

    def test_a_program_that_writes_no_report(self):
        # /bin/false exits 1, which the tool uses for a refuted claim: its report was expected.
        self.check("/bin/false", 3, "exited with status 1")
        garbage = _script(os.path.join(self.tmp, "garbage"), "#!/bin/sh\necho 'Usage: garbage [options]'\n")
        self.check(garbage, 3, "exited with status 0")
        not_a_report = _script(os.path.join(self.tmp, "json"), "#!/bin/sh\necho '[1, 2]'\nexit 1\n")
        self.check(not_a_report, 3, "exited with status 1")

    def test_a_program_that_cannot_start(self):
        no_interpreter = _script(os.path.join(self.tmp, "nointerp"), "#!%s/no/such/interpreter\n" % self.tmp)
        self.check(no_interpreter, 2, "cannot be started")
        # Executable text that is no script (no "#!" line): exec() refuses it.
        self.check(_script(os.path.join(self.tmp, "text"), "this is not a program\n"), 2, "cannot be started")

    def test_an_exit_status_the_tool_never_uses(self):
        odd = _script(os.path.join(self.tmp, "odd"), "#!/bin/sh\necho 'odd: nothing done' >&2\nexit 42\n")
        stderr = self.check(odd, 3, "exited with status 42")
        # Its stderr was shown, once per call, and is not repeated in the message.
        self.assertEqual(stderr.count("odd: nothing done"), len(self.calls()), stderr)

    def test_a_path_that_is_no_program(self):
        self.check(os.path.join(self.tmp, "missing"), 2, "no such file")
        self.check(self.tmp, 2, "a directory")
        self.check(_script(os.path.join(self.tmp, "plain"), "#!/bin/sh\n", mode=stat.S_IRUSR | stat.S_IWUSR),
                   2, "not executable")

    def test_a_binary_removed_after_it_was_found(self):
        gone = _script(os.path.join(self.tmp, "gone"), "#!/bin/sh\nexit 0\n")
        with mock.patch.dict(os.environ, {"MCMCAUDIT_BIN": gone}):
            self.assertEqual(ma.find_binary(), gone)
            os.unlink(gone)
            # find_binary remembers it: starting it is what fails.
            with self.assertRaises(ma.AuditError) as cm:
                ma.epsilon(3, 500, 7, 500)
        self.assertEqual(cm.exception.exit_code, 2)
        self.assertIn("MCMCAUDIT_BIN=%s cannot be started: No such file" % gone, cm.exception.message)


if __name__ == "__main__":
    unittest.main()
