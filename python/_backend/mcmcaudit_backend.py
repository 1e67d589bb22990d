"""The build backend of the mcmcaudit package: PEP 517 and PEP 660, standard library only.

pip (and any PEP 517 front end) finds it through pyproject.toml's
`build-backend` and `backend-path`. It exists so that

    pip install --no-build-isolation --no-index ./python

works offline with any Python 3 and its pip: setuptools before 70.1 builds
wheels only with the separate `wheel` package, which a virtual environment
of a Python built from source (pyenv, python.org, a distribution other than
Debian's python3-wheel) does not have, and pip's error is then "invalid
command 'bdist_wheel'". This backend needs neither setuptools nor wheel.

What it reads: pyproject.toml's [project] table (PEP 621; the fields listed
in PROJECT_FIELDS; anything else is refused with a one-line error naming
it, not silently dropped), with `version` either given there or listed in
`dynamic` and read from `__version__ = "..."` in the package's
`__init__.py` (or `_version.py`). What it packages: the directory named
after the project (`mcmcaudit/`), every file in it except caches and
compiled files, as a pure-Python `py3-none-any` wheel (wheel format 1.0,
PEP 427; core metadata 2.1, PEP 566). Archives are reproducible: entries
sorted, timestamps from SOURCE_DATE_EPOCH or else 1980-01-01.
"""

import ast
import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile

__all__ = [
    "build_editable", "build_sdist", "build_wheel", "get_requires_for_build_editable", "get_requires_for_build_sdist",
    "get_requires_for_build_wheel", "prepare_metadata_for_build_editable", "prepare_metadata_for_build_wheel",
]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = "mcmcaudit_backend"

# The [project] fields this backend turns into metadata.
PROJECT_FIELDS = (
    "name", "version", "description", "readme", "requires-python", "dependencies", "optional-dependencies",
    "license", "authors", "maintainers", "keywords", "classifiers", "urls", "scripts", "dynamic",
)


class BuildError(Exception):
    """A pyproject.toml or source tree this backend cannot build, with a one-line reason."""


# --- TOML -------------------------------------------------------------------


def load_toml(text):
    """Parse TOML text: tomllib where the standard library has it (3.11+), else parse_toml."""
    try:
        import tomllib
    except ImportError:
        return parse_toml(text)
    return tomllib.loads(text)


class _Toml:
    """A parser of the TOML that pyproject files use (for Pythons before 3.11).

    It reads tables, dotted and quoted keys, basic and literal strings
    (single- and multi-line), integers, floats, booleans, arrays and inline
    tables. Arrays of tables and dates are refused with the line number.
    """

    _ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}
    _BARE = re.compile(r"[A-Za-z0-9_-]+")
    _NUMBER = re.compile(r"[+-]?(?:inf|nan|[0-9][0-9_]*(?:\.[0-9_]+)?(?:[eE][+-]?[0-9_]+)?)")

    def __init__(self, text):
        self.s = text
        self.i = 0
        self.headers = set()

    def error(self, what):
        raise BuildError("pyproject.toml line %d: %s" % (self.s.count("\n", 0, self.i) + 1, what))

    def peek(self, n=1):
        return self.s[self.i:self.i + n]

    def skip_space(self, newlines=False):
        """Skip blanks and comments (and newlines, inside arrays)."""
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in " \t" or (newlines and c in "\r\n"):
                self.i += 1
            elif c == "#":
                while self.i < len(self.s) and self.s[self.i] != "\n":
                    self.i += 1
            else:
                return

    def end_of_line(self):
        self.skip_space()
        if self.i < len(self.s) and self.s[self.i] not in "\r\n":
            self.error("unexpected %r after a value" % self.s[self.i])

    def parse(self):
        doc = {}
        table = doc
        while True:
            self.skip_space(newlines=True)
            if self.i >= len(self.s):
                return doc
            if self.peek(2) == "[[":
                self.error("arrays of tables are not supported")
            if self.peek() == "[":
                self.i += 1
                keys = self.key()
                if self.peek() != "]":
                    self.error("a table header must end with ]")
                self.i += 1
                self.end_of_line()
                if tuple(keys) in self.headers:
                    self.error("table [%s] defined twice" % ".".join(keys))
                self.headers.add(tuple(keys))
                table = self.descend(doc, keys)
                continue
            keys = self.key()
            if self.peek() != "=":
                self.error("expected = after a key")
            self.i += 1
            self.skip_space()
            self.assign(table, keys, self.value())
            self.end_of_line()

    def descend(self, table, keys):
        for k in keys:
            sub = table.setdefault(k, {})
            if not isinstance(sub, dict):
                self.error("%s is not a table" % ".".join(keys))
            table = sub
        return table

    def assign(self, table, keys, value):
        table = self.descend(table, keys[:-1])
        if keys[-1] in table:
            self.error("key %s defined twice" % ".".join(keys))
        table[keys[-1]] = value

    def key(self):
        keys = []
        while True:
            self.skip_space()
            c = self.peek()
            if c == '"':
                keys.append(self.basic_string())
            elif c == "'":
                keys.append(self.literal_string())
            else:
                m = self._BARE.match(self.s, self.i)
                if not m:
                    self.error("expected a key")
                keys.append(m.group())
                self.i = m.end()
            self.skip_space()
            if self.peek() != ".":
                return keys
            self.i += 1

    def value(self):
        c = self.peek()
        if self.peek(3) == '"""':
            return self.multiline_basic()
        if self.peek(3) == "'''":
            return self.multiline_literal()
        if c == '"':
            return self.basic_string()
        if c == "'":
            return self.literal_string()
        if c == "[":
            return self.array()
        if c == "{":
            return self.inline_table()
        for word, v in (("true", True), ("false", False)):
            if self.s.startswith(word, self.i):
                self.i += len(word)
                return v
        m = self._NUMBER.match(self.s, self.i)
        if not m or (self.i + len(m.group()) < len(self.s) and self.s[m.end()] in "-:T"):
            self.error("unsupported value (strings, numbers, booleans, arrays and inline tables are read)")
        self.i = m.end()
        t = m.group().replace("_", "")
        if re.match(r"[+-]?[0-9]+$", t):
            return int(t)
        return float(t)

    def escape(self):
        c = self.peek()
        self.i += 1
        if c in self._ESCAPES:
            return self._ESCAPES[c]
        n = {"u": 4, "U": 8}.get(c)
        if n and re.match(r"[0-9A-Fa-f]{%d}$" % n, self.s[self.i:self.i + n]):
            self.i += n
            return chr(int(self.s[self.i - n:self.i], 16))
        self.error("invalid escape \\%s" % c)

    def basic_string(self):
        self.i += 1
        out = []
        while True:
            c = self.peek()
            if c in ("", "\n"):
                self.error("unterminated string")
            self.i += 1
            if c == '"':
                return "".join(out)
            out.append(self.escape() if c == "\\" else c)

    def literal_string(self):
        end = self.s.find("'", self.i + 1)
        if end < 0 or "\n" in self.s[self.i:end]:
            self.error("unterminated string")
        v = self.s[self.i + 1:end]
        self.i = end + 1
        return v

    def multiline_basic(self):
        self.i += 3
        if self.peek() == "\n":
            self.i += 1
        out = []
        while True:
            if self.i >= len(self.s):
                self.error("unterminated string")
            if self.peek(3) == '"""':
                self.i += 3
                return "".join(out)
            c = self.s[self.i]
            self.i += 1
            if c != "\\":
                out.append(c)
            elif self.peek() in "\n \t\r":
                # A line-ending backslash trims the newline and following blanks.
                while self.i < len(self.s) and self.s[self.i] in " \t\r\n":
                    self.i += 1
            else:
                out.append(self.escape())

    def multiline_literal(self):
        start = self.i + 3
        if self.s.startswith("\n", start):
            start += 1
        end = self.s.find("'''", start)
        if end < 0:
            self.error("unterminated string")
        self.i = end + 3
        return self.s[start:end]

    def array(self):
        self.i += 1
        out = []
        while True:
            self.skip_space(newlines=True)
            if self.peek() == "]":
                self.i += 1
                return out
            out.append(self.value())
            self.skip_space(newlines=True)
            if self.peek() == ",":
                self.i += 1
            elif self.peek() != "]":
                self.error("expected , or ] in an array")

    def inline_table(self):
        self.i += 1
        out = {}
        self.skip_space()
        if self.peek() == "}":
            self.i += 1
            return out
        while True:
            keys = self.key()
            if self.peek() != "=":
                self.error("expected = after a key")
            self.i += 1
            self.skip_space()
            self.assign(out, keys, self.value())
            self.skip_space()
            if self.peek() == "}":
                self.i += 1
                return out
            if self.peek() != ",":
                self.error("expected , or } in an inline table")
            self.i += 1


def parse_toml(text):
    """Parse TOML text with this module's own parser (the subset pyproject files use)."""
    return _Toml(text.replace("\r\n", "\n")).parse()


# --- the project ------------------------------------------------------------


def _read(path):
    with io.open(path, encoding="utf-8") as f:
        return f.read()


def _strings(project, field):
    v = project.get(field, [])
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise BuildError("pyproject.toml: [project] %s must be an array of strings" % field)
    return v


def _package_version(root, package):
    for name in ("_version.py", "__init__.py"):
        path = os.path.join(root, package, name)
        if not os.path.exists(path):
            continue
        for node in ast.parse(_read(path), path).body:
            if (isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__version__" for t in node.targets)
                    and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                return node.value.value
    raise BuildError("pyproject.toml lists version in dynamic but %s/__init__.py (or _version.py) has no "
                     "__version__ = \"...\"" % package)


class Project:
    """The [project] table of pyproject.toml, checked, and the package it describes."""

    def __init__(self, root=ROOT):
        self.root = root
        path = os.path.join(root, "pyproject.toml")
        meta = load_toml(_read(path)).get("project")
        if not isinstance(meta, dict):
            raise BuildError("pyproject.toml has no [project] table")
        unknown = sorted(set(meta) - set(PROJECT_FIELDS))
        if unknown:
            raise BuildError("pyproject.toml: [project] field %s is not read by the build backend (python/_backend); "
                             "it reads %s" % (unknown[0], ", ".join(PROJECT_FIELDS)))
        self.meta = meta
        self.name = meta.get("name")
        if not isinstance(self.name, str) or not re.match(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$", self.name):
            raise BuildError("pyproject.toml: [project] name must be a project name (letters, digits, . _ -)")
        # The wheel's file and directory names: the normalized name (PEP 503), with _ for runs of - _ .
        self.dist = re.sub(r"[-_.]+", "_", self.name).lower()
        self.package = self.dist
        if not os.path.isdir(os.path.join(root, self.package)):
            raise BuildError("the package directory %s/ is missing beside pyproject.toml" % self.package)
        dynamic = _strings(meta, "dynamic")
        if set(dynamic) - {"version"}:
            raise BuildError("pyproject.toml: [project] dynamic may list only version (read from __version__)")
        if "version" in dynamic:
            if "version" in meta:
                raise BuildError("pyproject.toml: [project] version is both given and listed in dynamic")
            self.version = _package_version(root, self.package)
        else:
            self.version = meta.get("version")
        if not isinstance(self.version, str) or not re.match(
                r"^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?$", self.version):
            raise BuildError("pyproject.toml: version %r must be a plain PEP 440 version such as 1.2.0 or 1.2.0rc1"
                             % (self.version,))
        self.dist_info = "%s-%s.dist-info" % (self.dist, self.version)

    def readme(self):
        """The long description and its content type, from readme."""
        r = self.meta.get("readme")
        if r is None:
            return None, None
        if isinstance(r, dict):
            ctype = r.get("content-type")
            text = r["text"] if "text" in r else _read(os.path.join(self.root, r.get("file", "")))
            return text, ctype
        if not isinstance(r, str):
            raise BuildError("pyproject.toml: [project] readme must be a file name or a table")
        ext = os.path.splitext(r)[1].lower()
        ctype = {".md": "text/markdown", ".rst": "text/x-rst"}.get(ext, "text/plain")
        return _read(os.path.join(self.root, r)), ctype

    def metadata(self):
        """The core metadata (METADATA / PKG-INFO), version 2.1."""
        m = self.meta
        lines = ["Metadata-Version: 2.1", "Name: " + self.name, "Version: " + self.version]
        if "description" in m:
            lines.append("Summary: " + " ".join(str(m["description"]).split()))
        for kind, field in (("Author", "authors"), ("Maintainer", "maintainers")):
            people = m.get(field) or []
            names = [p["name"] for p in people if "name" in p and "email" not in p]
            mails = ["%s <%s>" % (p["name"], p["email"]) if "name" in p else p["email"] for p in people if "email" in p]
            if names:
                lines.append("%s: %s" % (kind, ", ".join(names)))
            if mails:
                lines.append("%s-email: %s" % (kind, ", ".join(mails)))
        lic = m.get("license")
        if isinstance(lic, str):
            lines.append("License: " + lic)
        elif isinstance(lic, dict):
            text = lic["text"] if "text" in lic else _read(os.path.join(self.root, lic.get("file", "")))
            lines.append("License: " + text.strip().replace("\n", "\n        "))
        if m.get("keywords"):
            lines.append("Keywords: " + ",".join(_strings(m, "keywords")))
        lines += ["Classifier: " + c for c in _strings(m, "classifiers")]
        for label, url in sorted((m.get("urls") or {}).items()):
            lines.append("Project-URL: %s, %s" % (label, url))
        if "requires-python" in m:
            lines.append("Requires-Python: " + m["requires-python"])
        lines += ["Requires-Dist: " + d for d in _strings(m, "dependencies")]
        for extra, deps in sorted((m.get("optional-dependencies") or {}).items()):
            lines.append("Provides-Extra: " + extra)
            for d in deps:
                req, _, own = d.partition(";")
                marker = 'extra == "%s"' % extra
                if own.strip():
                    marker = "(%s) and %s" % (own.strip(), marker)
                lines.append("Requires-Dist: %s; %s" % (req.strip(), marker))
        text, ctype = self.readme()
        if ctype:
            lines.append("Description-Content-Type: " + ctype)
        out = "\n".join(lines) + "\n"
        if text:
            out += "\n" + text
        return out

    def entry_points(self):
        scripts = self.meta.get("scripts") or {}
        if not scripts:
            return None
        return "[console_scripts]\n" + "".join("%s = %s\n" % kv for kv in sorted(scripts.items()))

    def package_files(self):
        """The package's files, as (path in the archive, path on disk), sorted."""
        out = []
        top = os.path.join(self.root, self.package)
        for d, dirs, files in os.walk(top):
            dirs[:] = sorted(x for x in dirs if x != "__pycache__" and not x.startswith("."))
            for f in files:
                if f.endswith((".pyc", ".pyo")) or f.startswith("."):
                    continue
                full = os.path.join(d, f)
                out.append((os.path.relpath(full, self.root).replace(os.sep, "/"), full))
        return sorted(out)

    def dist_info_files(self):
        """The .dist-info files other than RECORD, as (name, text)."""
        files = [("METADATA", self.metadata()),
                 ("WHEEL", "Wheel-Version: 1.0\nGenerator: %s\nRoot-Is-Purelib: true\nTag: py3-none-any\n" % GENERATOR)]
        ep = self.entry_points()
        if ep:
            files.append(("entry_points.txt", ep))
        return files


# --- archives ---------------------------------------------------------------


def _timestamp():
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    return max(epoch, 315532800)  # zip cannot store times before 1980


class _Wheel:
    """A wheel being written: each file's RECORD line is kept, and RECORD is written last."""

    def __init__(self, path, dist_info):
        self.dist_info = dist_info
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.record = []
        self.date = time.gmtime(_timestamp())[:6]

    def add(self, arcname, data):
        if isinstance(data, str):
            data = data.encode("utf-8")
        info = zipfile.ZipInfo(arcname, self.date)
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
        self.record.append("%s,sha256=%s,%d" % (arcname, digest, len(data)))

    def close(self):
        record = self.dist_info + "/RECORD"
        info = zipfile.ZipInfo(record, self.date)
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, "\n".join(self.record + [record + ",,"]) + "\n")
        self.zip.close()


def _write_wheel(wheel_directory, project, payload):
    name = "%s-%s-py3-none-any.whl" % (project.dist, project.version)
    path = os.path.join(wheel_directory, name)
    w = _Wheel(path, project.dist_info)
    try:
        for arcname, data in payload:
            w.add(arcname, data)
        for fname, text in project.dist_info_files():
            w.add(project.dist_info + "/" + fname, text)
        w.close()
    except BaseException:
        w.zip.close()
        os.remove(path)
        raise
    return name


def _file_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def _prepare_metadata(metadata_directory):
    project = Project()
    d = os.path.join(metadata_directory, project.dist_info)
    if not os.path.isdir(d):
        os.makedirs(d)
    for fname, text in project.dist_info_files():
        with io.open(os.path.join(d, fname), "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    return project.dist_info


# --- PEP 517 and PEP 660 hooks ----------------------------------------------


def get_requires_for_build_wheel(config_settings=None):
    """Nothing beyond the standard library."""
    return []


def get_requires_for_build_sdist(config_settings=None):
    """Nothing beyond the standard library."""
    return []


def get_requires_for_build_editable(config_settings=None):
    """Nothing beyond the standard library."""
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    """Write the .dist-info directory (METADATA, WHEEL) and return its name."""
    return _prepare_metadata(metadata_directory)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    """Write the .dist-info directory of an editable install and return its name."""
    return _prepare_metadata(metadata_directory)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """Write the pure-Python wheel of the package into wheel_directory and return its file name."""
    project = Project()
    return _write_wheel(wheel_directory, project, [(a, _file_bytes(p)) for a, p in project.package_files()])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """Write an editable wheel (PEP 660): a .pth file that puts this source tree on sys.path."""
    project = Project()
    pth = os.path.abspath(project.root) + "\n"
    return _write_wheel(wheel_directory, project, [("__editable__.%s.pth" % project.dist, pth)])


def build_sdist(sdist_directory, config_settings=None):
    """Write the source distribution (.tar.gz: PKG-INFO, pyproject.toml, readme, backend, package)."""
    project = Project()
    base = "%s-%s" % (project.dist, project.version)
    members = [("pyproject.toml", os.path.join(project.root, "pyproject.toml"))]
    readme = project.meta.get("readme")
    rfile = readme if isinstance(readme, str) else (readme or {}).get("file")
    if rfile:
        members.append((rfile, os.path.join(project.root, rfile)))
    here = os.path.abspath(__file__)
    members.append((os.path.relpath(here, project.root).replace(os.sep, "/"), here))
    members += project.package_files()
    name = base + ".tar.gz"
    mtime = _timestamp()
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        entries = [("PKG-INFO", project.metadata().encode("utf-8"))] + [(a, _file_bytes(p)) for a, p in members]
        for arcname, data in entries:
            info = tarfile.TarInfo(base + "/" + arcname)
            info.size, info.mtime, info.mode = len(data), mtime, 0o644
            tar.addfile(info, io.BytesIO(data))
    return name
