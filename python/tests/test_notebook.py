"""The example notebook (examples/notebook.ipynb), executed as Jupyter executes it.

nbclient runs every cell in an ipykernel kernel whose Python is this test's
own interpreter (a kernelspec written for the test), so the kernel imports
the installed package, as a user's notebook started from their environment
does. The notebook is copied with its sampler module into a temporary
directory and run there. Without nbclient or ipykernel (Debian:
python3-nbclient python3-ipykernel, seen from a venv made with
--system-site-packages) the test is skipped, with the reason printed; with
MCMCAUDIT_REQUIRE_PYTHON=1 (as in CI) it fails instead.
"""

import json
import os
import re
import shutil
import sys
import tempfile
import unittest

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "examples")
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir))
KERNEL = "mcmcaudit-test-venv"


def _missing():
    """What this interpreter lacks to execute a notebook, or None."""
    lacking = []
    for module, package in (("nbclient", "python3-nbclient"), ("nbformat", "python3-nbformat"),
                            ("ipykernel", "python3-ipykernel")):
        try:
            __import__(module)
        except ImportError:
            lacking.append("%s (Debian: %s)" % (module, package))
    return ", ".join(lacking) or None


def _text(output):
    if output.get("output_type") == "stream":
        return output.get("text", "")
    return output.get("data", {}).get("text/plain", "")


class TestNotebook(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        lacking = _missing()
        if lacking:
            msg = "%s cannot execute the notebook: no %s" % (sys.executable, lacking)
            if os.environ.get("MCMCAUDIT_REQUIRE_PYTHON") == "1":
                raise AssertionError(msg + " (MCMCAUDIT_REQUIRE_PYTHON=1)")
            sys.stderr.write("\nSKIP notebook: %s\n" % msg)
            raise unittest.SkipTest(msg)
        import nbclient
        import nbformat

        cls.tmp = tempfile.mkdtemp()
        for f in ("notebook.ipynb", "gaussian_sampler.py"):
            shutil.copy(os.path.join(EXAMPLES, f), cls.tmp)
        # A kernel running this interpreter: Debian's own kernelspec runs
        # /usr/bin/python3, which does not see the package in this venv.
        spec = os.path.join(cls.tmp, "jupyter", "kernels", KERNEL)
        os.makedirs(spec)
        with open(os.path.join(spec, "kernel.json"), "w") as f:
            json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                       "display_name": "mcmcaudit test", "language": "python",
                       # ipykernel's debugger otherwise warns about frozen modules on stderr;
                       # without MCMCAUDIT_BIN the package builds the binary of this clone.
                       "env": {"PYDEVD_DISABLE_FILE_VALIDATION": "1",
                               "MCMCAUDIT_REPO": os.environ.get("MCMCAUDIT_REPO", REPO)}}, f)
        saved = os.environ.get("JUPYTER_PATH")
        os.environ["JUPYTER_PATH"] = os.path.join(cls.tmp, "jupyter")
        try:
            cls.nb = nbformat.read(os.path.join(cls.tmp, "notebook.ipynb"), as_version=4)
            cls.source = nbformat.read(os.path.join(EXAMPLES, "notebook.ipynb"), as_version=4)
            client = nbclient.NotebookClient(cls.nb, timeout=600, kernel_name=KERNEL,
                                             resources={"metadata": {"path": cls.tmp}})
            client.execute()
        finally:
            if saved is None:
                del os.environ["JUPYTER_PATH"]
            else:
                os.environ["JUPYTER_PATH"] = saved
        cls.code = [c for c in cls.nb.cells if c.cell_type == "code"]
        cls.text = "\n".join(_text(o) for c in cls.code for o in c.outputs)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(getattr(cls, "tmp", ""), ignore_errors=True)

    def test_checked_in_without_outputs(self):
        import nbformat

        nbformat.validate(self.source)
        self.assertEqual(self.source.nbformat, 4)
        for c in self.source.cells:
            if c.cell_type == "code":
                self.assertEqual(c.outputs, [], "cell %s is checked in with outputs" % c.get("id"))
                self.assertIsNone(c.execution_count, "cell %s is checked in executed" % c.get("id"))

    def test_every_cell_ran_without_error(self):
        self.assertTrue(self.code)
        for i, c in enumerate(self.code, 1):
            self.assertEqual(c.execution_count, i)
            self.assertFalse([o for o in c.outputs if o.output_type == "error"], c.source)

    def test_printed_epsilon_is_the_json_reports(self):
        m = re.search(r"^epsilon_lb ([0-9.]+) \(confidence ([0-9.]+), ([0-9]+) evaluation runs\), mu_lb ([0-9.]+)",
                      self.text, re.M)
        self.assertIsNotNone(m, self.text)
        with open(os.path.join(self.tmp, "gaussian_report.json")) as f:
            doc = json.load(f)
        r = doc.get("report", doc)
        self.assertEqual(m.group(1), "%.4f" % r["epsilon"]["epsilon"])
        self.assertEqual(float(m.group(2)), r["confidence"])
        self.assertEqual(int(m.group(3)), r["eval_runs"])
        # The sampler is exactly 1-GDP (ε ≈ 4.36 at δ = 1e-5); with the
        # notebook's fixed seeds the bound is positive and below that.
        self.assertGreater(float(m.group(1)), 0)
        self.assertLess(float(m.group(1)), 4.36)

    def test_report_shown_inline_as_html(self):
        shown = [o for o in self.code[1].outputs if o.output_type == "execute_result"]
        self.assertEqual(len(shown), 1, self.code[1].outputs)
        self.assertIn("<iframe srcdoc=", shown[0].data.get("text/html", ""))
        self.assertTrue(shown[0].data["text/plain"].startswith("Report('python-sampler': epsilon_lb="))

    def test_epsilon_from_counts_equals_the_analysis(self):
        analyzed = re.search(r"^Report\('samples: [^']*': epsilon_lb=([0-9.]+)", self.text, re.M)
        counted = re.search(r"^EpsilonResult\(epsilon_lb=([0-9.]+)", self.text, re.M)
        self.assertIsNotNone(analyzed, self.text)
        self.assertIsNotNone(counted, self.text)
        self.assertEqual(analyzed.group(1), counted.group(1))


if __name__ == "__main__":
    unittest.main()
