"""Serve a Python sampler to mcmcaudit over the mcmcaudit/1 line protocol.

Standard library only, and self-contained: it is the module
`mcmcaudit.protocol` of the `mcmcaudit` package (`pip install ./python` from
the repository), and it also works copied alone next to a sampler (as
`mcmcaudit_protocol.py`, the name the repository's examples import). You write

    def run(seed, side, data):
        ...                      # all randomness from `seed`
        return releases          # one row of `dim` floats per release point

    serve(run, dim=D, releases=["epoch 1", "epoch 2"])

and `serve` does the rest: the handshake, reading requests from stdin,
loading D and D' once (from the CSV files named by MCMCAUDIT_D and
MCMCAUDIT_DPRIME), calling `run`, checking and writing the answers, and
turning exceptions into {"trial": i, "error": "..."}. While it serves,
anything printed to stdout -- by `print`, by C extensions, by child
processes -- goes to stderr, so that stdout carries protocol lines only.

In the canary (one-run) design, requests carry an inclusion mask of the
canaries in MCMCAUDIT_CANARIES: `serve` hands `run` D plus the included
canaries, and with `scores=True` also every canary, for `run` to return one
score per canary and release point (see `serve`).

`releases` returned by `run` may be a list of lists of numbers or an array
of shape (len(releases), dim) (anything with a `tolist` method, e.g. a NumPy
array or a PyTorch tensor). Return `Result(releases, info)` to pass an
extra JSON object back (acceptance counts, test accuracy, ...).

Seeds: every trial gets an unsigned 64-bit seed. `numpy_generator`,
`numpy_random_state`, `legacy_seed_words`, `seed32`, `torch_generator` and
`jax_key` turn it into what each library accepts (NumPy's legacy
`RandomState` and `np.random.seed` refuse integers >= 2**32; PyTorch's CPU
generator keeps 32 bits). None of them imports its library before it is
called.

See docs/protocol.md in the mcmcaudit repository for the protocol itself.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import os
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Sequence
import traceback

PROTOCOL_VERSION = 1

# Sides of a trial, as written in requests.
SIDE_D = "D"
SIDE_DPRIME = "D'"

# Environment variables set by the tool.
ENV_D = "MCMCAUDIT_D"
ENV_DPRIME = "MCMCAUDIT_DPRIME"
ENV_CANARY = "MCMCAUDIT_CANARY"
ENV_TEST = "MCMCAUDIT_TEST"
ENV_CANARIES = "MCMCAUDIT_CANARIES"


class Result:
    """A trial's releases plus an optional JSON-serialisable `info` dict."""

    def __init__(self, releases: Any, info: Optional[Dict[str, Any]] = None) -> None:
        self.releases = releases
        self.info = info


def read_csv(path: str) -> List[List[float]]:
    """Read a dataset CSV: one record per line, features then the label.

    Returns a list of rows, each a list of floats (the label last). A first
    line that does not parse as numbers is taken for a header and skipped;
    blank lines are skipped; gzip-compressed files are read transparently.
    Raises ValueError naming the file and line of any other bad value.
    """
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    opener = gzip.open if gz else open
    rows = []
    width = None
    with opener(path, "rt", newline="", encoding="utf-8") as f:
        for lineno, row in enumerate(csv.reader(f), 1):
            if not row or all(not c.strip() for c in row):
                continue
            try:
                vals = [float(c) for c in row]
            except ValueError:
                if lineno == 1:
                    continue  # a header
                raise ValueError("%s: line %d: every column must be a number, got %r" % (path, lineno, row)) from None
            if not all(math.isfinite(v) for v in vals):
                raise ValueError("%s: line %d: every value must be finite, got %r" % (path, lineno, row))
            if width is None:
                width = len(vals)
            elif len(vals) != width:
                raise ValueError("%s: line %d: must have %d columns like the first row, got %d" % (path, lineno, width, len(vals)))
            rows.append(vals)
    return rows


def env_rows(var: str) -> Optional[List[List[float]]]:
    """The rows of the CSV file named by environment variable `var`, or None if it is unset."""
    path = os.environ.get(var)
    return read_csv(path) if path else None


def canary() -> Optional[Dict[str, Any]]:
    """The DeepFool canary handed over in MCMCAUDIT_CANARY, or None.

    A dict {"index": i, "x0": [...], "y0": k, "x_star": [...], "y_star": k*}:
    D' holds (x_star, y0) at row i, where D holds (x0, y0).
    """
    raw = os.environ.get(ENV_CANARY)
    return json.loads(raw) if raw else None


def load_datasets(load: Optional[Callable[[Any], Any]] = None) -> Dict[str, Any]:
    """D and D' from MCMCAUDIT_D and MCMCAUDIT_DPRIME, as {"D": ..., "D'": ...}.

    Each is `load(rows)` (or the rows themselves without `load`), or None
    when its variable is unset.
    """
    data = {}
    for side, var in ((SIDE_D, ENV_D), (SIDE_DPRIME, ENV_DPRIME)):
        rows = env_rows(var)
        data[side] = None if rows is None else (load(rows) if load else rows)
    return data


def check_releases(out, dim, count):
    """Turn `run`'s return value into (releases as lists of floats, info).

    Raises ValueError or TypeError, with a message naming the release and
    coordinate, unless there are `count` releases of `dim` finite numbers.
    """
    info = None
    if isinstance(out, Result):
        out, info = out.releases, out.info
        if info is not None and not isinstance(info, dict):
            raise TypeError("Result.info must be a dict, got %s" % type(info).__name__)
    if hasattr(out, "tolist"):
        out = out.tolist()
    if not isinstance(out, (list, tuple)):
        raise TypeError("run must return %d releases of %d numbers (a list of lists or an array of shape (%d, %d)), got %s"
                        % (count, dim, count, dim, type(out).__name__))
    if len(out) != count:
        raise ValueError("run returned %d releases, the handshake declares %d" % (len(out), count))
    rel = []
    for i, row in enumerate(out):
        if hasattr(row, "tolist"):
            row = row.tolist()
        if not isinstance(row, (list, tuple)):
            raise TypeError("release %d must be a list of %d numbers, got %s" % (i + 1, dim, type(row).__name__))
        if len(row) != dim:
            raise ValueError("release %d has %d coordinates, the handshake declares dim %d" % (i + 1, len(row), dim))
        vals = []
        for k, v in enumerate(row):
            if isinstance(v, (bool, str, bytes)) or v is None:
                raise TypeError("release %d, coordinate %d must be a number, got %r" % (i + 1, k + 1, v))
            x = float(v)
            if not math.isfinite(x):
                raise ValueError("release %d, coordinate %d is %r: releases must be finite" % (i + 1, k + 1, x))
            vals.append(x)
        rel.append(vals)
    return rel, info


def _jsonable(o):
    """json.dumps fallback for NumPy/PyTorch scalars and arrays in info."""
    if hasattr(o, "tolist"):
        return o.tolist()
    if hasattr(o, "item"):
        return o.item()
    raise TypeError("%s is not JSON serialisable" % type(o).__name__)


def _dumps(obj):
    # allow_nan=False: JSON has no NaN or Infinity. repr-based float output
    # is the shortest string that reads back as the same float64.
    return json.dumps(obj, allow_nan=False, separators=(", ", ": "), default=_jsonable)


_proto_out = None


def _claim_stdout():
    """Keep the real stdout for protocol lines and send everything else to stderr.

    File descriptor 1 itself is pointed at stderr, so that writes from C
    code and child processes cannot corrupt the protocol either. Output
    still buffered in sys.stdout (printed before serve, without -u) is
    flushed after the switch, so it lands on stderr too.
    """
    global _proto_out
    if _proto_out is not None:
        return _proto_out  # claimed already (by a runner, before its imports)
    proto_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout.flush()
    sys.stdout = sys.stderr
    _proto_out = os.fdopen(proto_fd, "w", encoding="utf-8", newline="\n")
    return _proto_out


def _request(line):
    """Parse a request line into (trial, side, seed, mask or None), or exit 2."""
    try:
        req = json.loads(line)
        trial, side, seed = req["trial"], req["side"], req["seed"]
        mask = req.get("canaries")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (trial, seed)) or side not in (SIDE_D, SIDE_DPRIME):
            raise ValueError("bad field types or side")
        if mask is not None and (not isinstance(mask, str) or mask.strip("01")):
            raise ValueError("canaries must be a string of '0' and '1'")
    except (ValueError, KeyError, TypeError) as e:
        sys.stderr.write("mcmcaudit_protocol: malformed request %r: %s\n" % (line[:200], e))
        sys.exit(2)
    return trial, side, seed, mask


class _Canaries:
    """The canary design's data: D's rows and the canaries' rows, read once."""

    def __init__(self, load):
        self.load = load
        self.base = None
        self.rows = None
        self.loaded = None

    def read(self):
        if self.rows is None:
            rows = env_rows(ENV_CANARIES)
            if rows is None:
                raise ValueError("a canary request, but %s is not set" % ENV_CANARIES)
            self.rows = rows
            self.base = env_rows(ENV_D) or []
            self.loaded = self.load(rows) if self.load else rows

    def training(self, mask):
        """D's rows plus the canaries the mask includes, loaded like D."""
        self.read()
        if len(mask) != len(self.rows):
            raise ValueError("the request's canaries mask has %d characters for %d canaries in %s"
                             % (len(mask), len(self.rows), ENV_CANARIES))
        rows = self.base + [r for r, c in zip(self.rows, mask) if c == "1"]
        return self.load(rows) if self.load else rows


def serve(run: Callable[..., Any], dim: int, releases: Sequence[Any], load: Optional[Callable[[Any], Any]] = None,
          data: Optional[Dict[str, Any]] = None, scores: bool = False,
          iterations: Optional[Sequence[int]] = None) -> None:
    """Serve trials until stdin is closed, then return.

    run(seed, side, data) -> releases or Result: seed is the trial's
    unsigned 64-bit integer seed (derive all randomness from it), side is
    "D" or "D'", data is that side's dataset. dim is the number of
    coordinates of every release; releases lists the labels of the release
    points, in order. data, if given, is {"D": ..., "D'": ...}; otherwise
    it is read by load_datasets(load). iterations, if given, lists the
    iteration each release follows (integers >= 1, increasing, one per
    label): the report then counts the iterations between releases (labels
    "iteration K" give them too).

    The canary (one-run) design: a request that carries "canaries" (one
    '0'/'1' per row of the file named by MCMCAUDIT_CANARIES) trains on D
    plus the included canaries. Without scores, run(seed, "D", rows) gets
    D's rows followed by the included canaries' rows (through load, if
    given) and returns its releases, which the tool scores. With
    scores=True the handshake says "scores": true, and
    run(seed, "D", rows, canaries) also gets every canary (through load)
    and returns, per release point, one score per canary -- all m of them,
    larger meaning "more likely included" (e.g. the canary's log-likelihood
    of its label) -- as a list of lists or an array of shape
    (len(releases), m), or a Result of one.
    """
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        raise ValueError("serve: dim must be an integer >= 1, got %r" % (dim,))
    labels = [str(r) for r in releases]
    if not labels:
        raise ValueError("serve: releases must name at least one release point")
    proto = _claim_stdout()
    if data is None:
        data = load_datasets(load)
    canaries = _Canaries(load)
    hs = {"mcmcaudit": PROTOCOL_VERSION, "dim": dim, "releases": labels}
    if scores:
        hs["scores"] = True
    if iterations is not None:
        its = [int(k) for k in iterations]
        if len(its) != len(labels) or any(k < 1 for k in its) or any(b <= a for a, b in zip(its, its[1:])):
            raise ValueError("serve: iterations must be %d increasing integers >= 1, got %r" % (len(labels), iterations))
        hs["iterations"] = its
    proto.write(_dumps(hs) + "\n")
    proto.flush()
    while True:
        line = sys.stdin.readline()
        if not line:
            return  # stdin closed: the tool is done with us
        if not line.strip():
            continue
        trial, side, seed, mask = _request(line)
        try:
            if mask is None:
                answer = {"trial": trial}
                answer["releases"], info = check_releases(run(seed, side, data.get(side)), dim, len(labels))
            elif scores:
                rows = canaries.training(mask)
                answer = {"trial": trial}
                answer["scores"], info = check_releases(run(seed, side, rows, canaries.loaded), len(mask), len(labels))
            else:
                answer = {"trial": trial}
                answer["releases"], info = check_releases(run(seed, side, canaries.training(mask)), dim, len(labels))
            if info is not None:
                answer["info"] = info
            text = _dumps(answer)
        except Exception as e:  # the program's answer: this trial failed
            traceback.print_exc(file=sys.stderr)
            text = _dumps({"trial": trial, "error": "%s: %s" % (type(e).__name__, e)})
        proto.write(text + "\n")
        proto.flush()


def standalone(run: Callable[..., Any], n: int, data: Any, dim: int, releases: Sequence[Any], seed: int = 1) -> float:
    """Run n trials in a plain loop, without the protocol, and report the time.

    Trials alternate between D and D' with seeds seed, seed + 1, ...; every
    answer is checked as serve would. Prints one summary line to stdout and
    returns the seconds per trial.
    """
    count = len(list(releases))
    begin, cpu = time.perf_counter(), time.process_time()
    for i in range(n):
        side = SIDE_D if i % 2 == 0 else SIDE_DPRIME
        check_releases(run(seed + i, side, data.get(side)), dim, count)
    took, cpu = time.perf_counter() - begin, time.process_time() - cpu
    per = took / max(n, 1)
    print("standalone: %d trials in %.3f s: %.1f trials/s, %.1f us per trial (CPU %.1f us per trial)"
          % (n, took, n / took if took > 0 else float("inf"), 1e6 * per, 1e6 * cpu / max(n, 1)))
    return per


# Seeds. A request's seed is an unsigned 64-bit integer; each library takes
# something else.

SEED_MAX = 2**64 - 1


def _check_seed(seed):
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= SEED_MAX:
        raise ValueError("seed must be an integer in [0, 2**64 - 1], got %r" % (seed,))
    return seed


def numpy_generator(seed: int) -> Any:
    """A NumPy Generator (PCG64) seeded with all 64 bits of `seed`.

    The same as np.random.default_rng(seed), which takes any non-negative
    integer: the recommended generator for a sampler written in NumPy.
    """
    import numpy as np
    return np.random.default_rng(_check_seed(seed))


def legacy_seed_words(seed: int) -> List[int]:
    """`seed` as the list [low 32 bits, high 32 bits], for NumPy's legacy seeding.

    np.random.RandomState(seed) and np.random.seed(seed) refuse integers of
    2**32 and more ("Seed must be between 0 and 2**32 - 1"), but both take a
    list of 32-bit words and use every word (MT19937's init_by_array), so
    np.random.seed(legacy_seed_words(seed)) seeds the global legacy generator
    with all 64 bits: every bit of the seed changes the stream.
    """
    _check_seed(seed)
    return [seed & 0xFFFFFFFF, seed >> 32]


def numpy_random_state(seed: int) -> Any:
    """A legacy np.random.RandomState seeded with all 64 bits of `seed` (see legacy_seed_words)."""
    import numpy as np
    return np.random.RandomState(legacy_seed_words(seed))


def seed32(seed: int) -> int:
    """`seed` folded into [0, 2**32 - 1], for APIs that take one 32-bit integer only.

    The high word is mixed into the low one (xor), so seeds that differ only
    above bit 32 do not all map to the same value. Folding 64 bits into 32
    cannot be one to one: among n trials on one dataset, two share a folded
    seed with probability about n**2 / 2**33 (1% at n = 9,300; expect one
    pair at n = 93,000), and a program whose trials repeat is refused by
    the audit. Prefer numpy_generator or legacy_seed_words where they apply.
    """
    _check_seed(seed)
    return (seed ^ (seed >> 32)) & 0xFFFFFFFF


def torch_generator(seed: int, device: Any = "cpu") -> Any:
    """A torch.Generator on `device`, seeded from `seed` with Generator.manual_seed.

    PyTorch's CPU generator (MT19937) keeps only the low 32 bits of the seed
    it is given, so on the CPU the seed is folded with seed32 first (same
    caveat: 2**32 streams at most); other devices' generators (CUDA's
    Philox) take all 64 bits and get `seed` as it is. For audits of many
    trials on the CPU, draw the noise from numpy_generator(seed) and convert
    it (torch.from_numpy) instead.
    """
    import torch
    g = torch.Generator(device=device)
    g.manual_seed(seed32(seed) if torch.device(device).type == "cpu" else _check_seed(seed))
    return g


def jax_key(seed: int) -> Any:
    """A JAX PRNG key holding all 64 bits of `seed`, without needing 64-bit JAX integers.

    The raw threefry key data [high 32 bits, low 32 bits] as a uint32 array
    of shape (2,): what jax.random.PRNGKey(seed) returns when 64-bit
    integers are enabled, whereas with JAX's default 32-bit integers
    PRNGKey refuses or truncates seeds of 2**32 and more. Every
    jax.random function accepts it as a key. JAX is imported only when this
    is called.
    """
    import jax.numpy as jnp
    _check_seed(seed)
    return jnp.array([seed >> 32, seed & 0xFFFFFFFF], dtype=jnp.uint32)
