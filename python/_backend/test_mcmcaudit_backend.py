"""Tests of the package's build backend, run with every interpreter CI installs with.

    python3 -m unittest discover -s python/_backend

The TOML parser is compared with the standard library's tomllib where it
exists (3.11+) and with literal values everywhere, so a Python before 3.11
checks the parser it really uses; the wheel is checked as an installer
reads it (RECORD hashes and sizes, METADATA fields, the package's files).
"""

import base64
import hashlib
import io
import os
import shutil
import sys
import tempfile
import unittest
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcmcaudit_backend as backend  # noqa: E402

SAMPLE = r'''
# a comment
[build-system]
requires = []   # nothing
build-backend = "x"

[project]
name = "demo-pkg"
"quoted key" = 'C:\literal'
description = "tab\there \"quoted\" \u00e9"
multi = """
first \
  joined
second"""
''' + "raw = '''\na\\b'''\n" + r'''numbers = [1, -2, 3.5, 1_000, 6e2]
flags = [true, false]
nested = [["a", "b"], [],
  # a comment inside an array
  ["c",],
]
license = {text = "MIT", extra = {deep = 1}}
urls.home = "https://example.org"
urls."bug tracker" = "https://example.org/issues"

[project.optional-dependencies]
numpy = ["numpy>=1.20"]
'''


def _project(tmp, body, init='"""demo."""\n'):
    with open(os.path.join(tmp, "pyproject.toml"), "w") as f:
        f.write(body)
    os.makedirs(os.path.join(tmp, "demo_pkg"), exist_ok=True)
    with open(os.path.join(tmp, "demo_pkg", "__init__.py"), "w") as f:
        f.write(init)
    return backend.Project(tmp)


class TestToml(unittest.TestCase):
    def test_sample_values(self):
        doc = backend.parse_toml(SAMPLE)
        p = doc["project"]
        self.assertEqual(doc["build-system"], {"requires": [], "build-backend": "x"})
        self.assertEqual(p["quoted key"], "C:\\literal")
        self.assertEqual(p["description"], 'tab\there "quoted" \u00e9')
        self.assertEqual(p["multi"], "first joined\nsecond")
        self.assertEqual(p["raw"], "a\\b")
        self.assertEqual(p["numbers"], [1, -2, 3.5, 1000, 600.0])
        self.assertEqual(p["flags"], [True, False])
        self.assertEqual(p["nested"], [["a", "b"], [], ["c"]])
        self.assertEqual(p["license"], {"text": "MIT", "extra": {"deep": 1}})
        self.assertEqual(p["urls"], {"home": "https://example.org", "bug tracker": "https://example.org/issues"})
        self.assertEqual(p["optional-dependencies"], {"numpy": ["numpy>=1.20"]})

    @unittest.skipIf(sys.version_info < (3, 11), "tomllib is in the standard library from Python 3.11")
    def test_same_as_tomllib(self):
        import tomllib

        with open(os.path.join(backend.ROOT, "pyproject.toml")) as f:
            text = f.read()
        for t in (SAMPLE, text):
            self.assertEqual(backend.parse_toml(t), tomllib.loads(t))

    def test_refusals_name_the_line(self):
        for text, line, what in (
                ('a = 1\n[[t]]\n', 2, "arrays of tables"),
                ('when = 1979-05-27\n', 1, "unsupported value"),
                ('a = 1\na = 2\n', 2, "key a defined twice"),
                ('[t]\n[t]\n', 2, "table [t] defined twice"),
                ('a = "open\n', 1, "unterminated string"),
                ('a = [1 2]\n', 1, "expected , or ]"),
                ('a = 1 b\n', 1, "unexpected 'b' after a value"),
        ):
            with self.assertRaises(backend.BuildError) as e:
                backend.parse_toml(text)
            self.assertIn("line %d: %s" % (line, what), str(e.exception))


class TestProject(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)

    def test_dynamic_version_from_the_package(self):
        p = _project(self.tmp, '[project]\nname = "demo-pkg"\ndynamic = ["version"]\n',
                     'import os\n__version__ = "2.3.0rc1"\n')
        self.assertEqual((p.version, p.dist_info), ("2.3.0rc1", "demo_pkg-2.3.0rc1.dist-info"))

    def test_dynamic_version_missing(self):
        with self.assertRaises(backend.BuildError) as e:
            _project(self.tmp, '[project]\nname = "demo-pkg"\ndynamic = ["version"]\n')
        self.assertIn("__version__", str(e.exception))

    def test_unknown_field_is_refused_by_name(self):
        with self.assertRaises(backend.BuildError) as e:
            _project(self.tmp, '[project]\nname = "demo-pkg"\nversion = "1.0"\ngui-scripts = {}\n')
        self.assertIn("field gui-scripts is not read", str(e.exception))

    def test_bad_version_is_refused(self):
        with self.assertRaises(backend.BuildError) as e:
            _project(self.tmp, '[project]\nname = "demo-pkg"\nversion = "one"\n')
        self.assertIn("PEP 440", str(e.exception))

    def test_metadata_fields(self):
        with open(os.path.join(self.tmp, "README.md"), "w") as f:
            f.write("# Demo\n")
        p = _project(self.tmp, '[project]\nname = "demo-pkg"\nversion = "1.0"\ndescription = "A demo"\n'
                               'readme = "README.md"\nrequires-python = ">=3.8"\ndependencies = ["a>=1"]\n'
                               'authors = [{name = "Ann", email = "ann@example.org"}]\n'
                               '[project.optional-dependencies]\nx = ["b; python_version < \'3.9\'"]\n'
                               '[project.scripts]\ndemo = "demo_pkg:main"\n')
        m = p.metadata()
        for line in ("Metadata-Version: 2.1", "Name: demo-pkg", "Version: 1.0", "Summary: A demo",
                     "Requires-Python: >=3.8", "Requires-Dist: a>=1", "Provides-Extra: x",
                     "Requires-Dist: b; (python_version < '3.9') and extra == \"x\"",
                     "Author-email: Ann <ann@example.org>", "Description-Content-Type: text/markdown"):
            self.assertIn(line + "\n", m)
        self.assertTrue(m.endswith("\n\n# Demo\n"))
        self.assertEqual(p.entry_points(), "[console_scripts]\ndemo = demo_pkg:main\n")


class TestWheel(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)

    def build(self, sub):
        d = os.path.join(self.tmp, sub)
        os.makedirs(d)
        name = backend.build_wheel(d)
        with open(os.path.join(d, name), "rb") as f:
            return name, f.read()

    def test_wheel_as_an_installer_reads_it(self):
        project = backend.Project()
        name, data = self.build("a")
        self.assertEqual(name, "mcmcaudit-%s-py3-none-any.whl" % project.version)
        z = zipfile.ZipFile(io.BytesIO(data))
        info = project.dist_info
        record = z.read(info + "/RECORD").decode("utf-8").splitlines()
        self.assertEqual(sorted(r.split(",")[0] for r in record), sorted(z.namelist()))
        for row in record:
            path, digest, size = row.rsplit(",", 2)
            if path == info + "/RECORD":
                self.assertEqual((digest, size), ("", ""))
                continue
            content = z.read(path)
            want = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode("ascii")
            self.assertEqual((digest, int(size)), ("sha256=" + want, len(content)), path)
        files = [a for a, _ in project.package_files()]
        self.assertIn("mcmcaudit/__init__.py", files)
        self.assertFalse([f for f in files if "__pycache__" in f or f.endswith(".pyc")])
        self.assertEqual(sorted(n for n in z.namelist() if not n.startswith(info)), files)
        wheel = z.read(info + "/WHEEL").decode("utf-8")
        self.assertIn("Root-Is-Purelib: true\nTag: py3-none-any\n", wheel)
        meta = z.read(info + "/METADATA").decode("utf-8")
        self.assertIn("Name: mcmcaudit\nVersion: %s\n" % project.version, meta)

    def test_reproducible(self):
        self.assertEqual(self.build("a"), self.build("b"))

    def test_editable_points_at_the_source(self):
        name = backend.build_editable(self.tmp)
        z = zipfile.ZipFile(os.path.join(self.tmp, name))
        self.assertEqual(z.read("__editable__.mcmcaudit.pth").decode("utf-8").strip(), backend.ROOT)

    def test_sdist_holds_what_a_build_needs(self):
        import tarfile

        name = backend.build_sdist(self.tmp)
        with tarfile.open(os.path.join(self.tmp, name)) as t:
            names = t.getnames()
        base = name[:-len(".tar.gz")]
        for need in ("PKG-INFO", "pyproject.toml", "README.md", "_backend/mcmcaudit_backend.py",
                     "mcmcaudit/__init__.py"):
            self.assertIn(base + "/" + need, names)


if __name__ == "__main__":
    unittest.main()
