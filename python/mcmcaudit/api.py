"""Audits from Python: a Python sampler function, precomputed samples, error counts."""

from __future__ import annotations

import hashlib
import io
import json
import math
import numbers
import operator
import os
import re
import sys
import tempfile
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from . import _yaml
from ._binary import private_cache_dir
from ._runner import ENV_SERVING
from ._tool import ProgressArg, read_output, run_tool, tool_json
from .design import Canaries, ClaimArg, claim_section
from .errors import InputError
from .report import EpsilonResult, Report

_NOTEBOOK_HINT = ("another process must import it: put it in a module file (in a notebook, a cell "
                  "starting %%writefile my_sampler.py) and import it from there, or pass 'module:function'")


def _is_bool(x):
    """True for Python's and NumPy's booleans (True is an int to Python, but never a count)."""
    t = type(x)
    return isinstance(x, bool) or (t.__module__ == "numpy" and t.__name__ in ("bool_", "bool"))


def _count(where, name, value, lo, hi=None):
    """`value` as an int if it is a whole number in [lo, hi] (hi None: no upper bound), else InputError.

    Python and NumPy integers and floats with no fractional part (100.0)
    are counts; 100.5, True, "100" and None are not: int() would truncate
    or convert them silently.
    """
    n = None
    if not _is_bool(value):
        try:
            n = operator.index(value)
        except TypeError:
            if isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
                n = int(value)
    if n is None or n < lo or (hi is not None and n > hi):
        allowed = "in [%d, %d]" % (lo, hi) if hi is not None else ">= %d" % lo
        raise InputError("%s: %s: must be an integer %s, got %r" % (where, name, allowed, value))
    return n


def _real(where, name, value):
    """`value` as a float if it is a real number (not a bool, a string or a complex number), else InputError.

    Its range is left to the tool, which names it.
    """
    bad = _is_bool(value) or isinstance(value, (str, bytes)) or (
        isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real))
    if not bad:
        try:
            return float(value)
        except (TypeError, ValueError):
            pass
    raise InputError("%s: %s: must be a real number, got %r" % (where, name, value))


def _function_ref(fn, what):
    """How the runner imports `fn`: {"module", "qualname", "file"}, or ValueError saying why it cannot."""
    if isinstance(fn, str):
        mod, sep, qual = fn.partition(":")
        if not sep or not mod or not qual:
            raise ValueError("%s: a string must be 'module:function' or 'path/to/file.py:function', got %r" % (what, fn))
        if mod.endswith(".py"):
            path = os.path.abspath(mod)
            if not os.path.isfile(path):
                raise ValueError("%s: %s is not a file" % (what, path))
            return {"module": "__main__", "qualname": qual, "file": path}
        return {"module": mod, "qualname": qual, "file": None}
    if not callable(fn):
        raise TypeError("%s must be a function, or a 'module:function' string, got %s" % (what, type(fn).__name__))
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not module or not qualname:
        raise ValueError("%s: %r has no module or name; %s" % (what, fn, _NOTEBOOK_HINT))
    if "<locals>" in qualname or "<lambda>" in qualname:
        raise ValueError("%s: %s is a nested function or a lambda, which another process cannot import; "
                         "define it at the top level of a module" % (what, qualname))
    if module == "__main__":
        main = sys.modules.get("__main__")
        path = getattr(main, "__file__", None)
        if not path or "ipykernel" in sys.modules or not path.endswith(".py"):
            raise ValueError("%s: %s is defined in __main__ (a notebook or an interactive session); %s"
                             % (what, qualname, _NOTEBOOK_HINT))
        return {"module": "__main__", "qualname": qualname, "file": os.path.abspath(path)}
    return {"module": module, "qualname": qualname, "file": None}


def _search_path():
    paths = []
    for p in sys.path:
        p = os.path.abspath(p or os.getcwd())
        if os.path.isdir(p) and p not in paths:
            paths.append(p)
    return paths


def _package_parent():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _is_numpy(x):
    return type(x).__module__ == "numpy" and hasattr(x, "shape")


def _dataset_bytes(x):
    """A dataset as the runner reads it: (".npy", bytes) for a NumPy array, (".json", bytes) for a JSON value.

    The bytes are the dataset's content: the same values give the same
    bytes, so they key the run (see audit).
    """
    if hasattr(x, "to_numpy") and not _is_numpy(x):
        x = x.to_numpy()  # a pandas DataFrame
    if _is_numpy(x):
        import numpy as np
        buf = io.BytesIO()
        np.save(buf, x, allow_pickle=False)
        return ".npy", buf.getvalue()
    try:
        text = json.dumps(x, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise TypeError("datasets must be NumPy arrays or JSON-serialisable values (lists of rows, dicts); "
                        "pass `load=` to turn them into tensors or other objects in the sampler's process: %s" % e)
    return ".json", text.encode("utf-8")


def _records(x):
    """The number of records of a dataset: the length of an array's first axis, of a list or of a DataFrame;
    None for anything else (a dict, a scalar), which the report then does not describe."""
    if _is_numpy(x):
        return int(x.shape[0]) if x.ndim >= 1 else None
    if isinstance(x, (list, tuple)) or hasattr(x, "to_numpy"):
        return len(x)
    return None


def _same(a, b):
    try:
        import numpy as np
    except ImportError:
        return a == b
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except (TypeError, ValueError):
        return a == b


def _adjacency(d, dp):
    """How the records of d and dp differ: (adjacency, note), adjacency "" when they are not neighbours."""
    n, m = len(d), len(dp)
    if n == m:
        if _is_numpy(d) and _is_numpy(dp) and d.shape == dp.shape and d.ndim >= 1:
            import numpy as np
            rows = (d != dp).reshape(n, -1).any(axis=1)  # one pass over arrays of any size
            diff = [int(i) for i in np.flatnonzero(rows)]
        else:
            diff = [i for i in range(n) if not _same(d[i], dp[i])]
        if len(diff) == 1:
            return "replace-one", "record %d differs" % diff[0]
        return "", ("D and D′ are equal" if not diff else "%d records differ" % len(diff))
    if abs(n - m) == 1:
        short, long_ = (d, dp) if n < m else (dp, d)
        i = next((k for k in range(len(short)) if not _same(short[k], long_[k])), len(short))
        if all(_same(short[k], long_[k + 1]) for k in range(i, len(short))):
            return ("add-one", "D′ adds record %d" % i) if n < m else ("remove-one", "D′ lacks record %d of D" % i)
    return "", ""


def _describe_pair(d, dp):
    """sampler.program.datasets for the report: d and d_prime by name and size, and how they differ as the
    package finds by comparing their records; None when their records cannot be counted."""
    n, m = _records(d), _records(dp)
    if n is None or m is None:
        return None
    if hasattr(d, "to_numpy") and not _is_numpy(d):
        d, dp = d.to_numpy(), dp.to_numpy()
    adjacency, note = _adjacency(d, dp)
    out = {"d": {"name": "d", "records": n}, "d_prime": {"name": "d_prime", "records": m}}
    if adjacency:
        out["adjacency"] = adjacency
    if note:
        out["note"] = note
    return out


# The tool's message on an interruption, with the number of trials it saved
# ("interrupted; 256 of 700 trials are saved in DIR"), or without it
# ("interrupted; the blocks of trials completed so far are saved in DIR").
_SAVED = re.compile(r"interrupted; (\d+) of (\d+) trials are saved in (.+)$")
_SAVED_BLOCKS = re.compile(r"interrupted; the blocks of trials completed so far are saved in (.+)$")


def _saved_blocks(path):
    """The number of completed blocks in the checkpoint directory `path` (0 when unreadable)."""
    try:
        return sum(1 for n in os.listdir(path) if n.startswith("trials-") and n.endswith(".part"))
    except OSError:
        return 0


def _interrupt_message(msg):
    """What KeyboardInterrupt says after the tool stopped on Ctrl-C: `msg` is its one-line message.

    The tool's own resume command names this call's temporary outputs,
    gone by now: the Python way to resume replaces it, and only when some
    trials are saved; otherwise the message says that nothing is.
    """
    msg = msg.split("; resume with: ")[0]
    m = _SAVED.search(msg)
    saved = None
    if m:
        saved = int(m.group(1))
    else:
        m = _SAVED_BLOCKS.search(msg)
        if m:
            saved = _saved_blocks(m.group(1).strip())
    if saved == 0:
        return ("audit run: interrupted before the first block of trials was complete; nothing is saved, so "
                "calling audit() again starts afresh.")
    if saved is None and "nothing" in msg:
        return msg + "."
    return ("%s. To continue from what is saved, call audit() again with the same arguments, from the same "
            "directory, and resume=True." % msg)


def _check_design(design, canaries, trials, d, data, neighbour, split, attacks, features):
    """The design ("runs" or "canaries") and the canary section, or ValueError for a mixture of the two."""
    if design is None:
        design = "canaries" if canaries is not None else "runs"
    if design not in ("runs", "canaries"):
        raise ValueError("design must be 'runs' or 'canaries', got %r" % (design,))
    if design == "runs":
        if canaries is not None:
            raise ValueError("canaries are the one-run design's: give design='canaries' (or leave design out)")
        if trials is None:
            raise ValueError("trials: required in the runs design (the number of runs on D and D' together)")
        if (data is None) != (neighbour is None):
            raise ValueError("data and neighbour go together: the tool builds D' from D with the neighbour section")
        return design, None
    if canaries is None:
        raise ValueError("design='canaries' needs canaries=mcmcaudit.Canaries(count=..., kind=..., guesses=...)")
    if d is not None or neighbour is not None:
        raise ValueError("the canary design adds canaries to the data= section's D itself: give data= (and model=), "
                         "not d/d_prime or neighbour")
    for name, value in (("split", split), ("attacks", attacks), ("features", features)):
        if value is not None:
            raise ValueError("%s: not used in the canary design, whose attack guesses on the canaries' scores; "
                             "leave it out" % name)
    return design, Canaries.from_value(canaries)


def audit(run: Union[Callable[..., Any], str], dim: int, releases: Sequence[Any], *,
          trials: Optional[int] = None, d: Any = None, d_prime: Any = None,
          data: Optional[Mapping[str, Any]] = None, neighbour: Optional[Mapping[str, Any]] = None,
          model: Optional[Mapping[str, Any]] = None, load: Union[Callable[[Any], Any], str, None] = None,
          claim: Optional[ClaimArg] = None, delta: float = 1e-5, confidence: float = 0.95,
          attacks: Optional[Sequence[str]] = None, split: Optional[Sequence[float]] = None,
          features: Optional[Sequence[str]] = None, design: Optional[str] = None,
          canaries: Union[Canaries, Mapping[str, Any], None] = None, scores: bool = False, seed: int = 0,
          name: str = "python-sampler", workers: Optional[int] = None, timeout: str = "60s",
          env: Optional[Mapping[str, str]] = None, determinism_checks: Optional[int] = None,
          scenario: Optional[Mapping[str, Any]] = None, resume: bool = False,
          save_releases: Optional[str] = None, html: bool = True, progress: ProgressArg = True,
          python: Optional[str] = None) -> Report:
    """Audit the Python sampler `run(seed, side, data) -> releases` with `audit run`.

    `run` is served by protocol.serve in processes the tool starts: it must
    be importable there, so it is a function defined at the top level of a
    module (not in a notebook cell: see python/README.md), of a script
    that calls audit() under `if __name__ == "__main__":`, or a
    'module:function' string. It returns `len(releases)` rows of `dim`
    numbers and draws all its randomness from `seed` (see numpy_generator).

    Two designs:
      - runs (the default): `trials` independent runs on D or D', attacks
        trained on some (`split`, `attacks`, `features`) and their errors
        counted on the rest;
      - canaries (one run; design="canaries", or just canaries=): the tool
        adds `canaries` (a Canaries, e.g. Canaries(count=200,
        kind="random", guesses=40)) to the data= section's D, each with
        probability 1/2, and asks for one run; `run(seed, "D", rows)` gets
        D's rows followed by the included canaries and returns its
        releases, which the tool scores with `model` -- or, with
        scores=True, `run(seed, "D", rows, canaries)` returns one score per
        canary and release. trials (if given) is the number of runs;
        neighbour, split, attacks and features are not used.

    The datasets of the runs design, one of:
      - d, d_prime: the two datasets themselves (NumPy arrays or JSON
        values); `run` gets one of them (after `load`, if given);
      - data, neighbour (and model): the scenario's sections as dicts
        (e.g. data={"records": [...]}, neighbour={"adjacency": "replace-one",
        ...}); the tool builds D and D' and `run` gets that side's rows as
        lists of floats (after `load`);
      - neither: `run` gets None and owns its data.
    claim (GDP(mu), EpsilonDelta(epsilon, delta), Theorems(), a list of
    them, or the claim section as a dict such as {"gdp": 1.0}), delta,
    confidence and seed fill the scenario's audit and claim sections;
    `scenario` (a dict) is merged over the generated scenario. workers,
    resume and save_releases are `audit run`'s flags; timeout, env and
    determinism_checks the program sampler's fields. progress: True (a
    tqdm bar when tqdm is installed, else a line on a terminal, else the
    tool's lines), False, or a function progress(done, total) called as
    trials complete.

    Returns a Report; a refuted claim gives report.verdict == "VIOLATION",
    not an exception. Raises AuditError for bad input or a failure, and
    KeyboardInterrupt on Ctrl-C after the tool has saved the completed
    trials: the same call with resume=True continues from them (the run is
    keyed by the call's contents: the datasets' values, the scenario, the
    function and the interpreter, not by temporary paths).
    """
    if os.environ.get(ENV_SERVING):
        raise RuntimeError("mcmcaudit.audit() called while serving trials: the script that defines the sampler "
                           "was imported again and called audit() at its top level; put that call under "
                           "`if __name__ == \"__main__\":`")
    if (d is None) != (d_prime is None):
        raise ValueError("d and d_prime go together: give both datasets or neither")
    if d is not None and (data is not None or neighbour is not None):
        raise ValueError("give the datasets (d, d_prime) or the tool's data and neighbour sections, not both")
    design, can = _check_design(design, canaries, trials, d, data, neighbour, split, attacks, features)
    dim = _count("audit", "dim", dim, 1)
    labels = [str(r) for r in releases]
    if not labels:
        raise ValueError("releases must name at least one release point")
    if trials is not None:
        trials = _count("audit", "trials", trials, 1)

    spec: Dict[str, Any] = {
        "function": _function_ref(run, "run"),
        "load": _function_ref(load, "load") if load is not None else None,
        "paths": [_package_parent()] + _search_path(),
        "dim": dim,
        "releases": labels,
        "scores": bool(scores),
    }
    sc = _scenario(name, seed, model, data, neighbour, timeout, env, determinism_checks, design, can, trials, split,
                   attacks, features, delta, confidence, claim, scenario)
    prog = sc["sampler"]["program"]
    if d is not None:
        described = _describe_pair(d, d_prime)
        if described is not None:
            prog["datasets"] = described
    # The files of this audit live in a directory named by the call's
    # content -- the datasets' bytes, the scenario, the function, the
    # interpreter -- so that the same call makes the same scenario (hence
    # the same default checkpoint, which resume=True continues).
    blobs = {}
    if d is not None:
        blobs = {"D": _dataset_bytes(d), "D'": _dataset_bytes(d_prime)}
    digests = {side: (ext, hashlib.sha256(b).hexdigest()) for side, (ext, b) in blobs.items()}
    key = hashlib.sha256(json.dumps([spec, digests, sc, python or sys.executable], sort_keys=True,
                                    default=str).encode()).hexdigest()[:16]
    rundir = private_cache_dir("runs", key)
    if blobs:
        spec["datasets"] = {}
        for side, (ext, b) in blobs.items():
            path = os.path.join(rundir, ("D" if side == "D" else "DPRIME") + ext)
            _write_bytes(path, b)
            spec["datasets"][side] = path
    spec_path = os.path.join(rundir, "spec.json")
    _write(spec_path, json.dumps(spec, indent=1, sort_keys=True) + "\n")
    runner = os.path.join(rundir, "runner.py")
    _write(runner, "# Serves %s to `audit run` (written by mcmcaudit.audit).\nimport sys\nsys.path.insert(0, %r)\n"
                   "from mcmcaudit._runner import main\nmain(%r)\n"
           % (spec["function"]["qualname"], _package_parent(), spec_path))
    prog["command"] = [python or sys.executable, runner]
    if not prog.get("dir"):
        prog["dir"] = os.getcwd()
    scenario_path = os.path.join(rundir, "scenario.yaml")
    _write(scenario_path, "# Written by mcmcaudit.audit for %s.\n%s\n" % (spec["function"]["qualname"], _yaml.dump(sc)))

    staging = tempfile.mkdtemp(prefix="mcmcaudit-")
    try:
        args = ["run", scenario_path, "--json", os.path.join(staging, "report.json")]
        if html:
            args += ["--html", os.path.join(staging, "report.html")]
        if workers is not None:
            args += ["--workers", str(workers)]
        if resume:
            args.append("--resume")
        if save_releases is not None:
            args += ["--save-releases", os.path.abspath(save_releases)]
        if not progress:
            args.append("--quiet")
        total = trials if design == "runs" else (trials or can.runs or 1)
        counter = os.path.join(staging, "served")
        try:
            code, text, _ = run_tool(args, "run", total=total, progress=progress, counter=counter)
        except KeyboardInterrupt as e:
            raise KeyboardInterrupt(_interrupt_message(e.args[0] if e.args else "audit interrupted")) from None
        return _read_report(staging, text, code, html, "run")
    finally:
        _rmtree(staging)


def _scenario(name, seed, model, data, neighbour, timeout, env, determinism_checks, design, can, trials, split,
              attacks, features, delta, confidence, claim, scenario):
    """The scenario of an audit() call, as a dict (the program's command is filled in later)."""
    sc: Dict[str, Any] = {"name": name, "seed": seed}
    if model is not None:
        sc["model"] = model
    if data is not None:
        sc["data"] = data
    if neighbour is not None:
        sc["neighbour"] = neighbour
    prog: Dict[str, Any] = {"command": None, "timeout": timeout,
                            "env": dict({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"},
                                        **(env or {}))}
    if determinism_checks is not None:
        prog["determinism_checks"] = determinism_checks
    sc["sampler"] = {"program": prog}
    if design == "canaries":
        aud: Dict[str, Any] = {"design": "canaries", "canaries": can.section()}
        if trials is not None:
            aud["trials"] = trials
    else:
        sp = list(split) if split is not None else [0.5, 0.5]
        if len(sp) == 2:
            spl = {"train": sp[0], "eval": sp[1]}
        elif len(sp) == 3:
            spl = {"train": sp[0], "select": sp[1], "eval": sp[2]}
        else:
            raise ValueError("split must be (train, eval) or (train, select, eval), got %r" % (split,))
        aud = {"trials": trials, "split": spl, "attacks": list(attacks) if attacks is not None else ["threshold"]}
        if features is not None:
            aud["features"] = list(features)
    aud.update({"delta": delta, "confidence": confidence})
    sc["audit"] = aud
    if claim is not None:
        sc["claim"] = claim_section(claim)
    if scenario:
        _merge(sc, scenario)
    return sc


def _merge(dst, src):
    for k, v in src.items():
        if isinstance(v, dict) and isinstance(dst.get(k), dict):
            _merge(dst[k], v)
        else:
            dst[k] = v


def _write(path, text):
    _write_bytes(path, text.encode("utf-8"))


def _write_bytes(path, data):
    """Write `data` to `path` through a temporary file renamed into place (two calls at once see whole files)."""
    tmp = "%s.tmp%d" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _rmtree(path):
    import shutil
    shutil.rmtree(path, ignore_errors=True)


def _read_report(dirpath, text, code, want_html, command):
    doc = tool_json(read_output(os.path.join(dirpath, "report.json"), command, code), command, code, "report",
                    source="report.json")
    page = None
    if want_html:
        page = read_output(os.path.join(dirpath, "report.html"), command, code)
    return Report(doc, text=text, html=page, exit_code=code)


def _claim_flags(claim):
    if not claim:
        return []
    claim = claim_section(claim)
    flags = []
    if "gdp" in claim:
        flags += ["--claim-gdp", repr(_real("analyze", "claim gdp", claim.pop("gdp")))]
    if "epsilon" in claim or "delta" in claim:
        if "epsilon" not in claim or "delta" not in claim:
            raise ValueError("claim: epsilon and delta go together, got %r" % (claim,))
        flags += ["--claim-epsilon", repr(_real("analyze", "claim epsilon", claim.pop("epsilon"))),
                  "--claim-delta", repr(_real("analyze", "claim delta", claim.pop("delta")))]
    if claim:
        raise ValueError("claim: analyze takes gdp, or epsilon with delta; unknown %s" % ", ".join(sorted(claim)))
    return flags


# The kinds of NumPy dtype that hold samples: signed and unsigned integers
# and floats, as the tool reads them from CSV (its .npy files hold floats).
# Not bool (a mask passed by mistake), complex (float64 would drop the
# imaginary part), strings, objects, dates or records.
_REAL_KINDS = "iuf"


def _sample_array(np, x, name):
    """`x` as an array of real numbers, or InputError naming the argument `name` of analyze."""
    try:
        a = np.asarray(x)
    except ValueError as e:
        # Rows of different lengths: NumPy refuses the ragged list.
        raise InputError("analyze: %s: not an array of runs (%s)" % (name, str(e).split("\n")[0])) from None
    if a.dtype.kind not in _REAL_KINDS:
        raise InputError("analyze: %s: samples must be real numbers (an integer or float array), got dtype %s"
                         % (name, a.dtype))
    return a


def _write_samples(x, base, name):
    """Samples as .npy (NumPy present) or CSV (lists of rows, standard library only)."""
    try:
        import numpy as np
    except ImportError:
        np = None
    if np is not None:
        a = _sample_array(np, x, name).astype(np.float64)
        if a.ndim not in (2, 3):
            raise InputError("analyze: %s: samples must be 2-D (runs, points*dim) or 3-D (runs, points, dim), got shape %s"
                             % (name, a.shape))
        path = base + ".npy"
        np.save(path, np.ascontiguousarray(a.astype("<f8")), allow_pickle=False)
        return path
    rows = [[_real("analyze", name, v) for v in row] for row in x]
    for row in rows:
        for v in row:
            if not math.isfinite(v):
                raise ValueError("samples must be finite, got %r" % v)
    path = base + ".csv"
    _write(path, "".join(",".join(repr(v) for v in row) + "\n" for row in rows))
    return path


def analyze(d_samples: Any, d_prime_samples: Any, *, points: Union[int, Sequence[str], None] = None,
            delta: float = 1e-5, confidence: float = 0.95, split: Sequence[float] = (0.5, 0.5),
            attacks: Sequence[str] = ("threshold",), seed: Optional[int] = None, claim: Optional[ClaimArg] = None,
            scenario: Optional[str] = None, allow_duplicate_rows: bool = False, workers: Optional[int] = None,
            html: bool = True) -> Report:
    """Audit precomputed samples with `audit analyze`.

    d_samples holds one independent run on D per row, d_prime_samples one
    run on D' per row: arrays of shape (runs, points*dim) or (runs,
    points, dim) (lists of rows work without NumPy). `points` is the
    number of release points or their labels (default: from a 3-D shape,
    else one). Statistics come from the arguments, or from `scenario` (a
    scenario file's path: its audit and claim sections). The rows are
    split into training and evaluation runs by a permutation drawn from
    `seed`. claim: GDP(mu) or EpsilonDelta(epsilon, delta) (or the dicts
    {"gdp": mu}, {"epsilon": e, "delta": d}). Returns a Report; raises
    AuditError for bad input.
    """
    staging = tempfile.mkdtemp(prefix="mcmcaudit-")
    try:
        pd = _write_samples(d_samples, os.path.join(staging, "D"), "d_samples")
        pp = _write_samples(d_prime_samples, os.path.join(staging, "DPRIME"), "d_prime_samples")
        args = ["analyze", pd, pp, "--json", os.path.join(staging, "report.json")]
        if html:
            args += ["--html", os.path.join(staging, "report.html")]
        if scenario is not None:
            args += ["--scenario", os.path.abspath(scenario)]
        else:
            sp = ":".join(repr(_real("analyze", "split", f)) for f in split)
            args += ["--delta", repr(_real("analyze", "delta", delta)),
                     "--confidence", repr(_real("analyze", "confidence", confidence)), "--split", sp,
                     "--attacks", ",".join(attacks)]
        if points is not None:
            if _is_bool(points) or isinstance(points, numbers.Real):
                args += ["--points", str(_count("analyze", "points", points, 1))]
            else:
                labels = [str(p) for p in points]
                if any("," in p for p in labels):
                    raise ValueError("points: labels may not contain commas, got %r" % (labels,))
                args += ["--points", ",".join(labels)]
        if seed is not None:
            args += ["--seed", str(seed)]
        args += _claim_flags(claim)
        if allow_duplicate_rows:
            args.append("--allow-duplicate-rows")
        if workers is not None:
            args += ["--workers", str(workers)]
        code, text, _ = run_tool(args, "analyze")
        return _read_report(staging, text, code, html, "analyze")
    finally:
        _rmtree(staging)


def _epsilon(flags: List[str]) -> EpsilonResult:
    code, text, _ = run_tool(["epsilon"] + flags + ["--json", "-"], "epsilon", echo=True)
    return EpsilonResult(tool_json(text, "epsilon", code, "counts"))


# The ranges of the counts, as `audit epsilon` has them (MaxCount and
# MaxCanaries in internal/epsilon/epsilon.go; test_hostile.py checks that they agree).
_MAX_COUNT = 100_000_000
_MAX_CANARIES = 10_000_000


def epsilon(fp: int, negatives: int, fn: int, positives: int, *, delta: float = 1e-5,
            confidence: float = 0.95) -> EpsilonResult:
    """ε lower bounds from an attack's error counts on evaluation runs (`audit epsilon`).

    negatives: runs on D, fp of them attributed to D'; positives: runs on
    D', fn of them attributed to D. Returns an EpsilonResult: epsilon_lb
    (Heller-Fetaya eq. 12 with Clopper-Pearson bounds), mu_lb,
    epsilon_if_gaussian, ceiling and the plug-in point estimate.
    """
    w = "epsilon"
    return _epsilon(["--fp", str(_count(w, "fp", fp, 0, _MAX_COUNT)),
                     "--negatives", str(_count(w, "negatives", negatives, 1, _MAX_COUNT)),
                     "--fn", str(_count(w, "fn", fn, 0, _MAX_COUNT)),
                     "--positives", str(_count(w, "positives", positives, 1, _MAX_COUNT)),
                     "--delta", repr(_real(w, "delta", delta)), "--confidence", repr(_real(w, "confidence", confidence))])


def epsilon_one_run(canaries: int, guesses: int, correct: int, *, delta: float = 1e-5,
                    confidence: float = 0.95) -> EpsilonResult:
    """ε lower bounds from a one-run canary audit (`audit epsilon --one-run`).

    canaries M (each in the run with probability 1/2), guesses R (their
    number fixed before looking), correct V. Returns an EpsilonResult:
    epsilon_lb (Steinke, Nasr & Jagielski 2023), mu_lb (Mahloujifar, Melis
    & Chaudhuri 2024), epsilon_if_gaussian and the ceiling.
    """
    w = "epsilon_one_run"
    return _epsilon(["--one-run", "--canaries", str(_count(w, "canaries", canaries, 1, _MAX_CANARIES)),
                     "--guesses", str(_count(w, "guesses", guesses, 0, _MAX_CANARIES)),
                     "--correct", str(_count(w, "correct", correct, 0, _MAX_CANARIES)),
                     "--delta", repr(_real(w, "delta", delta)), "--confidence", repr(_real(w, "confidence", confidence))])
