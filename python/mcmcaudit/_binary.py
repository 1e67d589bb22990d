"""Finding the `audit` binary: MCMCAUDIT_BIN, else `audit` on PATH, else a cached build with Go."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import threading
from typing import Optional

from .errors import AuditError

ENV_BIN = "MCMCAUDIT_BIN"
ENV_REPO = "MCMCAUDIT_REPO"
MODULE_LINE = "module github.com/mcmcaudit/mcmcaudit"

_lock = threading.Lock()
_found = None


def _cache_base():
    base = os.environ.get("XDG_CACHE_HOME")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return base


def cache_dir() -> str:
    """The package's cache directory: $XDG_CACHE_HOME/mcmcaudit (default ~/.cache/mcmcaudit).

    Built binaries and the files of audits of Python functions go there,
    never inside the installed package.
    """
    return os.path.join(_cache_base(), "mcmcaudit")


def private_cache_dir(*elems: str) -> str:
    """The directory cache_dir()/elems..., each element created 0700 if missing, and checked.

    The same rules as the tool's default checkpoint (docs/scale-out.md):
    the cache directory must be owned by the user (or root) and writable by
    nobody else unless sticky; mcmcaudit/ and every element below it must be
    a directory, not a symbolic link, owned by the user and writable by
    nobody else, whether created now or found. Otherwise AuditError (exit
    code 2) names the path and the reason: someone who can write into the
    user's cache must not be able to make the package write (or run a
    binary) elsewhere.
    """
    base = _cache_base()
    try:
        os.makedirs(base, mode=0o700, exist_ok=True)
        st = os.stat(base)
    except OSError as e:
        raise AuditError(2, "cannot create the cache directory %s: %s" % (base, e.strerror or e)) from None
    uid = os.geteuid()
    if not stat.S_ISDIR(st.st_mode):
        _unsafe(base, "is not a directory")
    if st.st_uid not in (uid, 0):
        _unsafe(base, "is owned by another user (uid %d)" % st.st_uid)
    if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
        _unsafe(base, "is writable by other users (mode %04o) and not sticky" % stat.S_IMODE(st.st_mode))
    path = base
    for e in ("mcmcaudit",) + elems:
        path = os.path.join(path, e)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError as err:
            raise AuditError(2, "cannot create the cache directory %s: %s" % (path, err.strerror or err)) from None
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            _unsafe(path, "is a symbolic link")
        if not stat.S_ISDIR(st.st_mode):
            _unsafe(path, "is not a directory")
        if st.st_uid != uid:
            _unsafe(path, "is owned by another user (uid %d)" % st.st_uid)
        if st.st_mode & 0o022:
            _unsafe(path, "is writable by other users (mode %04o)" % stat.S_IMODE(st.st_mode))
    return path


def _unsafe(path, reason):
    raise AuditError(2, "refusing the cache directory %s: %s (remove it, or make it yours and private)" % (path, reason))


def _is_repo(d):
    try:
        with open(os.path.join(d, "go.mod"), encoding="utf-8") as f:
            return any(line.strip() == MODULE_LINE for line in f)
    except OSError:
        return False


def find_repository() -> Optional[str]:
    """The mcmcaudit source tree to build from, or None.

    MCMCAUDIT_REPO if set; else the first directory holding the module's
    go.mod among the parents of this package's files (a source checkout)
    and of the current directory.
    """
    env = os.environ.get(ENV_REPO)
    if env:
        if not _is_repo(env):
            raise AuditError(2, "%s=%s: not an mcmcaudit source tree (no go.mod with %r)" % (ENV_REPO, env, MODULE_LINE))
        return os.path.abspath(env)
    for start in (os.path.dirname(os.path.abspath(__file__)), os.getcwd()):
        d = start
        while True:
            if _is_repo(d):
                return d
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
    return None


def _source_fingerprint(repo):
    """A digest of what `go build ./cmd/audit` in `repo` depends on: the path, size and modification time of
    every .go file and of go.mod and go.sum (testdata, hidden directories and examples left out).

    Stat calls only, no reading: a few milliseconds for the repository.
    """
    h = hashlib.sha256()
    for root, dirs, files in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")) and d not in ("testdata", "examples", "python"))
        for name in sorted(files):
            if name.endswith(".go") or (root == repo and name in ("go.mod", "go.sum")):
                path = os.path.join(root, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                h.update(("%s\0%d\0%d\n" % (os.path.relpath(path, repo), st.st_size, st.st_mtime_ns)).encode())
    return h.hexdigest()


def cached_binary_name(repo):
    """The name of the binary built from `repo` in cache_dir()/bin: "audit-<package version>-<digest>".

    The digest covers the repository's path and its Go sources (see
    _source_fingerprint): a binary is built once per version and source
    tree, and reused by later processes until the sources change.
    """
    from ._version import __version__
    key = hashlib.sha256(("%s\0%s" % (repo, _source_fingerprint(repo))).encode()).hexdigest()[:16]
    return "audit-%s-%s" % (__version__, key)


def _cached_build():
    """The newest binary of this package version built into cache_dir()/bin (from any source tree), or None.

    It lets a script run outside the clone once the package has built the
    binary there: the build is keyed by the version, not by where the
    script runs. Only looked at when nothing else gives a binary.
    """
    from ._version import __version__
    base = os.path.join(cache_dir(), "bin")
    if not os.path.isdir(base):
        return None
    bindir = private_cache_dir("bin")
    prefix = "audit-%s-" % __version__
    best = None
    for name in os.listdir(bindir):
        path = os.path.join(bindir, name)
        if not name.startswith(prefix) or ".tmp" in name or _not_runnable(path) is not None:
            continue
        mtime = os.stat(path).st_mtime
        if best is None or mtime > best[0]:
            best = (mtime, path)
    return best[1] if best else None


def _build(repo):
    bindir = private_cache_dir("bin")
    out = os.path.join(bindir, cached_binary_name(repo))
    if _not_runnable(out) is None:
        return out
    go = shutil.which("go")
    if go is None:
        raise AuditError(2, "no audit binary: set %s to its path, put `audit` on PATH, or install Go to build it "
                            "from the repository (%s)" % (ENV_BIN, repo))
    tmp = "%s.tmp%d" % (out, os.getpid())
    sys.stderr.write("mcmcaudit: building the audit binary from %s with go build (the first build compiles the "
                     "dependencies: a minute or more) into %s\n" % (repo, out))
    sys.stderr.flush()
    r = subprocess.run([go, "build", "-o", tmp, "./cmd/audit"], cwd=repo, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise AuditError(3, "go build ./cmd/audit in %s failed: %s" % (repo, " | ".join(r.stdout.strip().splitlines()[-5:])))
    os.replace(tmp, out)
    return out


def _not_runnable(path):
    """Why `path` cannot be the binary to run (missing, a directory, not executable), or None."""
    if not os.path.exists(path):
        return "no such file"
    if os.path.isdir(path):
        return "a directory, not a file"
    if not os.path.isfile(path):
        return "not a regular file"
    if not os.access(path, os.X_OK):
        return "not executable"
    return None


def _show(path):
    """`path` for a one-line message: quoted when it holds a newline or another unprintable character."""
    return path if path.isprintable() else repr(path)


def describe(path):
    """How messages name the binary at `path`: "MCMCAUDIT_BIN=path" when it came from there."""
    if os.environ.get(ENV_BIN) == path:
        return "%s=%s" % (ENV_BIN, _show(path))
    return "the audit binary %s" % _show(path)


def find_binary(build: bool = True) -> str:
    """The path of the `audit` binary to run.

    In this order: the environment variable MCMCAUDIT_BIN; `audit` on PATH
    (if `audit version` names the mcmcaudit module); else, when Go is
    installed and the repository is found (see find_repository), the
    binary built from it with `go build ./cmd/audit` into the user's cache
    directory, cache_dir()/bin/audit-VERSION-DIGEST: built once per
    package version and Go source tree (see cached_binary_name), and reused
    by every later process; else, outside the clone, the newest binary of
    this package version built there before. Raises AuditError (exit code
    2) when none works.
    """
    global _found
    with _lock:
        if _found is not None and os.environ.get(ENV_BIN) in (None, "", _found):
            return _found
        env = os.environ.get(ENV_BIN)
        if env:
            problem = _not_runnable(env)
            if problem:
                raise AuditError(2, "%s=%s: %s; it must be the path of mcmcaudit's audit binary"
                                 % (ENV_BIN, _show(env), problem))
            _found = env
            return env
        on_path = shutil.which("audit")
        if on_path:
            try:
                r = subprocess.run([on_path, "version"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
                if r.returncode == 0 and "mcmcaudit" in r.stdout:
                    _found = on_path
                    return on_path
            except (OSError, subprocess.SubprocessError):
                pass
        repo = find_repository() if build else None
        if repo is None:
            cached = _cached_build()
            if cached is not None:
                _found = cached
                return cached
            raise AuditError(2, "no audit binary: set %s to its path, put mcmcaudit's `audit` on PATH "
                                "(go install ./cmd/audit), or set %s to the repository so that it can be built"
                             % (ENV_BIN, ENV_REPO))
        _found = _build(repo)
        return _found
