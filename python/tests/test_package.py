"""The package's plumbing: finding or building the binary, progress, scripts as samplers."""

import os
import subprocess
import sys
import tempfile
import textwrap
import types
import unittest

import mcmcaudit as ma
from mcmcaudit import _tool
import util


def _python(code, env, cwd):
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, timeout=900)


class TestFindBinary(unittest.TestCase):
    def _env(self, tmp, **extra):
        env = {k: v for k, v in os.environ.items() if k not in ("MCMCAUDIT_BIN", "MCMCAUDIT_REPO")}
        # Go's build cache stays warm although XDG_CACHE_HOME moves.
        gocache = subprocess.run(["go", "env", "GOCACHE"], capture_output=True, text=True, check=True).stdout.strip()
        env.update(XDG_CACHE_HOME=os.path.join(tmp, "cache"), GOCACHE=gocache, **extra)
        return env

    def test_audit_on_path(self):
        with tempfile.TemporaryDirectory() as tmp:
            bindir = os.path.join(tmp, "bin")
            os.mkdir(bindir)
            os.symlink(util.binary(), os.path.join(bindir, "audit"))
            env = self._env(tmp, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
            r = _python("import mcmcaudit; print(mcmcaudit.find_binary())", env, tmp)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.strip(), os.path.join(bindir, "audit"))

    def test_built_with_go_into_the_cache(self):
        with tempfile.TemporaryDirectory() as tmp:
            # PATH with go but without an audit binary.
            go = subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True, check=True).stdout.strip()
            env = self._env(tmp, PATH=os.path.join(go, "bin") + os.pathsep + "/usr/bin:/bin", MCMCAUDIT_REPO=util.REPO)
            r = _python("import mcmcaudit; print(mcmcaudit.find_binary()); "
                        "print(mcmcaudit.epsilon(3, 500, 7, 500).epsilon_lb)", env, tmp)
            self.assertEqual(r.returncode, 0, r.stderr)
            path, eps = r.stdout.split()
            self.assertTrue(path.startswith(os.path.join(tmp, "cache", "mcmcaudit", "bin") + os.sep), path)
            self.assertIn("building the audit binary", r.stderr)
            self.assertEqual(float(eps), ma.epsilon(3, 500, 7, 500).epsilon_lb)
            self.assertIn("audit-%s-" % ma.__version__, os.path.basename(path))
            # Another process finds the same build: once per version and source tree, not once per process.
            again = _python("import mcmcaudit; print(mcmcaudit.find_binary())", env, tmp)
            self.assertEqual(again.returncode, 0, again.stderr)
            self.assertEqual(again.stdout.strip(), path)
            self.assertNotIn("building", again.stderr)
            # Outside the clone (no MCMCAUDIT_REPO; the current directory and, when installed, the package are
            # elsewhere), the build of this version is found in the cache.
            outside = {k: v for k, v in env.items() if k != "MCMCAUDIT_REPO"}
            r = _python("import mcmcaudit; print(mcmcaudit.find_binary())", outside, tmp)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.strip(), path)

    def test_no_binary_is_an_audit_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            env = self._env(tmp, PATH="/nonexistent")
            r = _python("import mcmcaudit\ntry:\n    mcmcaudit.find_binary()\nexcept mcmcaudit.AuditError as e:\n"
                        "    print(e.exit_code, e.message)", env, tmp)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertTrue(r.stdout.startswith("2 no audit binary: set MCMCAUDIT_BIN"), r.stdout)


class TestProgress(unittest.TestCase):
    def test_trial_lines_drive_tqdm(self):
        # A stand-in tqdm records what the bar shows; other lines go through its write.
        shown, written = [], []

        class Bar:
            def __init__(self, total, **kw):
                self.total, self.n = total, 0

            def refresh(self):
                shown.append(self.n)

            def write(self, s, file=None):
                written.append(s)

            def close(self):
                shown.append("closed")

        auto = types.ModuleType("tqdm.auto")
        auto.tqdm = Bar
        saved = {k: sys.modules.get(k) for k in ("tqdm", "tqdm.auto")}
        sys.modules["tqdm"], sys.modules["tqdm.auto"] = types.ModuleType("tqdm"), auto
        try:
            p = _tool._Progress(2000, True)
            p.line("audit: 1488/2000 trials (74%), elapsed 12s, about 4s left")
            p.line("[sampler 3] gaussian.py: sigma = 1")
            p.close(True)
        finally:
            for k, v in saved.items():
                if v is None:
                    sys.modules.pop(k, None)
                else:
                    sys.modules[k] = v
        self.assertEqual(shown, [1488, 2000, "closed"])
        self.assertEqual(written, ["[sampler 3] gaussian.py: sigma = 1"])


class TestPythonPackage(unittest.TestCase):
    """What Python users expect of a package: typed, one version, the interpreter it says."""

    def test_public_api_is_typed(self):
        import inspect
        import typing
        missing = []
        for name in ma.__all__:
            obj = getattr(ma, name)
            if inspect.isclass(obj) or not callable(obj):
                continue
            sig = inspect.signature(obj)
            hints = typing.get_type_hints(obj)
            missing += ["%s(%s)" % (name, p) for p in sig.parameters if p not in hints]
            if "return" not in hints:
                missing.append("%s -> ?" % name)
        self.assertEqual(missing, [])
        # Report's attributes are declared with their types.
        hints = typing.get_type_hints(ma.Report)
        for attr in ("epsilon_lb", "mu_lb", "epsilon_lb_per_release", "releases", "verdict", "guesses"):
            self.assertIn(attr, hints)

    def test_py_typed_installed(self):
        # PEP 561: the installed package says that its hints are for type checkers.
        self.assertTrue(os.path.isfile(os.path.join(os.path.dirname(ma.__file__), "py.typed")))

    def _pyproject(self):
        import tomllib
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "pyproject.toml")
        with open(path, "rb") as f:
            return tomllib.load(f)

    def test_one_version(self):
        # pyproject.toml reads the version from the package: no second copy to forget.
        meta = self._pyproject()
        self.assertNotIn("version", meta["project"])
        self.assertIn("version", meta["project"]["dynamic"])
        # The build backend (_backend/) reads __version__ from mcmcaudit/_version.py.
        self.assertNotIn("tool", meta)
        self.assertTrue(os.path.isfile(os.path.join(os.path.dirname(os.path.abspath(ma.__file__)), "_version.py")))
        from importlib import metadata
        try:
            installed = metadata.version("mcmcaudit")
        except metadata.PackageNotFoundError:
            return  # not installed (run_tests.sh installs it)
        self.assertEqual(installed, ma.__version__)

    def test_requires_python_is_what_ci_tests(self):
        # The least Python the package claims is the one CI runs: Debian's python3.
        req = self._pyproject()["project"]["requires-python"]
        self.assertRegex(req, r"^>=3\.\d+$")
        low = tuple(int(x) for x in req[2:].split("."))
        if not os.path.exists("/usr/bin/python3"):
            self.skipTest("no Debian python3 here")
        r = subprocess.run(["/usr/bin/python3", "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True,
                           text=True, check=True)
        self.assertEqual(low, tuple(int(x) for x in r.stdout.split()))
        self.assertGreaterEqual(sys.version_info[:2], low)

    def test_claims_as_values(self):
        from mcmcaudit.design import claim_section
        self.assertEqual(claim_section(ma.GDP(1.0)), {"gdp": 1.0})
        self.assertEqual(claim_section([ma.EpsilonDelta(1, 1e-5), ma.GDP(0.5)]), {"epsilon": 1, "delta": 1e-5, "gdp": 0.5})
        self.assertEqual(claim_section({"gdp": 2}), {"gdp": 2})
        self.assertEqual(claim_section(ma.Theorems()), {"theorems": True})
        with self.assertRaises(ValueError):
            claim_section([ma.GDP(1), ma.GDP(2)])
        self.assertEqual(ma.Canaries.from_value({"count": 9, "kind": "mislabel", "range": [0, 1]}).section(),
                         {"count": 9, "kind": "mislabel", "range": [0, 1]})


class TestDescribePair(unittest.TestCase):
    """How audit() describes d and d_prime to the tool (sampler.program.datasets), without running it."""

    def test_adjacency_found_by_comparing_records(self):
        import numpy as np
        from mcmcaudit.api import _describe_pair
        a = np.zeros((5, 2, 2))
        b = a.copy()
        b[3, 1, 0] = 1
        self.assertEqual(_describe_pair(a, b)["adjacency"], "replace-one")
        self.assertEqual(_describe_pair(a, b)["note"], "record 3 differs")
        b[1, 0, 0] = 2
        self.assertNotIn("adjacency", _describe_pair(a, b))
        self.assertEqual(_describe_pair(a, b)["note"], "2 records differ")
        r = _describe_pair([[1], [2], [3]], [[1], [3]])
        self.assertEqual((r["adjacency"], r["note"], r["d"]["records"], r["d_prime"]["records"]),
                         ("remove-one", "D′ lacks record 1 of D", 3, 2))
        self.assertEqual(_describe_pair([[1]], [[1], [4]])["adjacency"], "add-one")
        self.assertIsNone(_describe_pair({"x": 1}, {"x": 2}))  # records not countable: not described


class TestInterruptMessage(unittest.TestCase):
    """What KeyboardInterrupt says for each of the tool's messages on an interruption."""

    def test_messages(self):
        from mcmcaudit.api import _interrupt_message
        with tempfile.TemporaryDirectory() as ck:
            resume = "call audit() again with the same arguments"
            m = _interrupt_message("audit run: interrupted; 256 of 700 trials are saved in %s; resume with: audit run x "
                                   "--resume" % ck)
            self.assertIn(resume, m)
            self.assertNotIn("--resume", m)
            m = _interrupt_message("audit run: interrupted; 0 of 700 trials are saved in %s; resume with: audit run x "
                                   "--resume" % ck)
            self.assertIn("nothing is saved", m)
            self.assertNotIn("resume", m)
            # The other form names the directory: its blocks say whether anything is saved.
            blocks = "audit run: interrupted; the blocks of trials completed so far are saved in %s" % ck
            self.assertIn("nothing is saved", _interrupt_message(blocks))
            open(os.path.join(ck, "trials-000000000000-000000000256.part"), "w").close()
            self.assertIn(resume, _interrupt_message(blocks))
        self.assertEqual(_interrupt_message("audit run: interrupted; nothing was saved"),
                         "audit run: interrupted; nothing was saved.")


SCRIPT = textwrap.dedent("""
    import mcmcaudit as ma

    def run(seed, side, data):
        return [[ma.numpy_generator(seed).standard_normal() + (1.0 if side == "D'" else 0.0)]]

    GUARD
        report = ma.audit(run, dim=1, releases=["r"], trials=200, progress=False)
        print("RUNS", report.runs, report.verdict)
""")


class TestScriptSampler(unittest.TestCase):
    def _run(self, guard):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "script.py")
            with open(path, "w") as f:
                f.write(SCRIPT.replace("GUARD", guard))
            return subprocess.run([sys.executable, path], cwd=tmp, capture_output=True, text=True, timeout=600)

    def test_guarded_script(self):
        r = self._run('if __name__ == "__main__":')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("RUNS 200 no claim", r.stdout)

    def test_unguarded_script_explained(self):
        r = self._run("if True:")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("mcmcaudit.AuditError: audit run: ", r.stderr)
        self.assertIn('put that call under `if __name__ == \\"__main__\\":`', r.stderr)


if __name__ == "__main__":
    unittest.main()
