#!/usr/bin/env python3
"""Drive lenet5_sgld.py through one canary run without the Go tool, and bound ε from it.

This plays the tool's side of the canary extension of mcmcaudit/1
(/docs/protocol.md): it draws m canaries and the inclusion signs S_i from the
audit seed, writes the canaries CSV, starts the program with
MCMCAUDIT_CANARIES pointing at it, sends the one run request with the
inclusion mask, reads the per-epoch scores and turns each epoch's scores into
the one-run counts of Steinke, Nasr & Jagielski (2023, §3): guess +1 for the
k+ highest scores, -1 for the k- lowest, v correct of r = k+ + k-. The number
of guesses is fixed here before the run (--guesses, split evenly); ties in
the scores are broken by canary index (a stable sort). With --audit BINARY
each epoch's (m, r, v) is handed to `audit epsilon --one-run` for ε_lb and
μ_lb.

Canaries (--kind):
  random    each of the 784 pixels uniform on [0, 1], the label uniform on 0..9;
  mislabel  the last m of the 10,000 test images with the label moved to one
            of the 9 others at random; the program is then told to score
            accuracy on the first 10,000 - m test images only (--test), so
            the test set and the canaries stay disjoint.

Seeds: canaries and signs come from NumPy's PCG64 seeded with --audit-seed;
the run's seed (--run-seed) is drawn from the same generator unless given.

Everything after `--` is passed to lenet5_sgld.py (e.g. -- --train 6000 --epochs 1).
Prints a table per epoch and, with --json FILE, writes everything measured.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FEATURES, CLASSES = 784, 10


def make_canaries(rng, m, kind, data_dir):
    """(features m x 784 in [0, 1], labels m) of the canaries."""
    if kind == "random":
        x = rng.random((m, FEATURES))
        y = rng.integers(0, CLASSES, m)
        return x, y
    sys.path.insert(0, HERE)
    import lenet5_sgld as prog  # the same idx reader and SHA-256 pins
    X, y0 = prog.load_mnist(data_dir, "t10k", 10000)
    x = X.numpy().reshape(10000, FEATURES)[10000 - m:].astype(np.float64)
    y0 = y0.numpy()[10000 - m:]
    y = (y0 + rng.integers(1, CLASSES, m)) % CLASSES  # never the true label
    return x, y


def write_csv(path, x, y):
    with open(path, "w") as f:
        f.write(",".join(["x%d" % (i + 1) for i in range(x.shape[1])] + ["y"]) + "\n")
        for row, label in zip(x, y):
            # repr: the shortest string that reads back as the same float64.
            f.write(",".join(repr(float(v)) for v in row) + ",%d\n" % label)


def one_run_counts(scores, included, k_plus, k_minus):
    """v correct of r = k+ + k- guesses: +1 for the k+ highest scores, -1 for the k- lowest."""
    order = np.argsort(np.asarray(scores), kind="stable")  # ascending; ties by index
    low, high = order[:k_minus], order[len(order) - k_plus:] if k_plus else order[:0]
    return int(included[high].sum()) + int((~included[low]).sum())


def run_program(cmd, env, mask, seed, timeout):
    """Handshake, one request, the answer; the child's stderr passes through."""
    t0, ru0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
    try:
        hs = json.loads(p.stdout.readline())
        if hs.get("mcmcaudit") != 1 or hs.get("scores") is not True or not hs.get("releases"):
            raise SystemExit("drive.py: bad handshake %r" % hs)
        t_ready = time.perf_counter() - t0
        req = {"trial": 0, "side": "D", "seed": seed, "canaries": "".join("1" if b else "0" for b in mask)}
        p.stdin.write(json.dumps(req) + "\n")
        p.stdin.flush()
        line = p.stdout.readline()
        if not line:
            raise SystemExit("drive.py: the program died before answering")
        ans = json.loads(line)
        p.stdin.close()
        p.wait(timeout=timeout)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru.ru_utime - ru0.ru_utime) + (ru.ru_stime - ru0.ru_stime)
    if "error" in ans:
        raise SystemExit("drive.py: the program answered an error: %s" % ans["error"])
    if ans.get("trial") != 0 or len(ans.get("scores", [])) != len(hs["releases"]):
        raise SystemExit("drive.py: answer for another trial or with the wrong number of releases")
    for s in ans["scores"]:
        if len(s) != len(mask) or not all(np.isfinite(s)):
            raise SystemExit("drive.py: a release without %d finite scores" % len(mask))
    return hs, ans, {"wall_s": time.perf_counter() - t0, "ready_s": t_ready, "cpu_s": cpu}


def replay(path, seed, m):
    """The handshake and answer a run would have given, from the epochs its --epoch-log recorded."""
    rows = [json.loads(line) for line in open(path) if line.strip()]
    rows = [r for r in rows if r["seed"] == seed]
    if not rows or [r["epoch"] for r in rows] != list(range(1, len(rows) + 1)) or any(len(r["scores"]) != m for r in rows):
        raise SystemExit("drive.py: %s holds no complete epochs 1, 2, ... of %d scores for run seed %d" % (path, m, seed))
    hs = {"releases": ["epoch %d" % r["epoch"] for r in rows]}
    ans = {"scores": [r["scores"] for r in rows], "info": {"correct": [r["correct"] for r in rows]}}
    return hs, ans, {"wall_s": float("nan"), "ready_s": float("nan"), "cpu_s": float("nan")}


def audit_bounds(binary, m, r, v, delta, confidence):
    out = subprocess.run([binary, "epsilon", "--one-run", "--canaries", str(m), "--guesses", str(r),
                          "--correct", str(v), "--delta", repr(delta), "--confidence", repr(confidence),
                          "--json", "-"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    argv = sys.argv[1:]
    rest = []
    if "--" in argv:
        i = argv.index("--")
        argv, rest = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m", type=int, default=1000, help="canaries m (default 1000)")
    ap.add_argument("--kind", choices=["random", "mislabel"], default="random")
    ap.add_argument("--guesses", type=int, default=100, help="guesses r, fixed in advance, half + and half - (default 100)")
    ap.add_argument("--audit-seed", type=int, default=1, help="seed of the canaries and signs (default 1)")
    ap.add_argument("--run-seed", type=int, help="the run's 64-bit seed (default: drawn from the audit seed)")
    ap.add_argument("--audit", metavar="BINARY", help="the `audit` binary, to turn the counts into ε_lb and μ_lb")
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--json", metavar="FILE", help="write the run's figures as JSON")
    ap.add_argument("--keep", metavar="CSV", help="keep the canaries CSV at this path")
    ap.add_argument("--replay", metavar="LOG",
                    help="do not run the program: read the epochs it logged with --epoch-log LOG (same --m, --kind, "
                         "--audit-seed and --run-seed as the run that wrote it)")
    ap.add_argument("--timeout", type=float, default=30, help="seconds to wait for the program's exit")
    args = ap.parse_args(argv)
    if args.m < 2 or not 0 <= args.guesses <= args.m:
        ap.error("--m must be >= 2 and --guesses in [0, m]")
    k_plus, k_minus = (args.guesses + 1) // 2, args.guesses // 2

    rng = np.random.Generator(np.random.PCG64(args.audit_seed))
    data_dir = os.environ.get("MNIST_DIR") or None
    if data_dir is None:
        sys.path.insert(0, HERE)
        import lenet5_sgld as prog
        data_dir = prog.default_data_dir()
    x, y = make_canaries(rng, args.m, args.kind, data_dir)
    included = rng.integers(0, 2, args.m) == 1  # S_i = +1 with probability 1/2
    seed = args.run_seed if args.run_seed is not None else int(rng.integers(0, 2**64, dtype=np.uint64))

    cmd = [sys.executable, os.path.join(HERE, "lenet5_sgld.py")] + rest
    if args.kind == "mislabel":
        cmd += ["--test", str(10000 - args.m)]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if args.replay:
        hs, ans, cost = replay(args.replay, seed, len(included))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            path = args.keep or os.path.join(tmp, "canaries.csv")
            write_csv(path, x, y)
            env["MCMCAUDIT_CANARIES"] = os.path.abspath(path)
            hs, ans, cost = run_program(cmd, env, included, seed, args.timeout)

    n_test = 10000 - args.m if args.kind == "mislabel" else 10000
    for i, a in enumerate(rest[:-1]):
        if a == "--test" and args.kind == "random":
            n_test = int(rest[i + 1])
    rows = []
    for label, scores, correct in zip(hs["releases"], ans["scores"], ans.get("info", {}).get("correct", [])):
        v = one_run_counts(scores, included, k_plus, k_minus)
        row = {"release": label, "canaries": args.m, "guesses": args.guesses, "correct": v, "test_correct": correct}
        if args.audit:
            b = audit_bounds(args.audit, args.m, args.guesses, v, args.delta, args.confidence)
            row.update(eps_lb=b["one_run"]["epsilon"], mu_lb=b["fdp"].get("mu", 0.0), eps_from_mu=b["fdp"]["epsilon"],
                       ceiling=b["ceiling"])
        rows.append(row)

    print("m = %d canaries (%s, %d included), r = %d guesses (k+ = %d, k- = %d), delta = %g, confidence %g, "
          "run seed %d; program %.1f s wall (%.1f s to the handshake), %.1f s CPU"
          % (args.m, args.kind, int(included.sum()), args.guesses, k_plus, k_minus, args.delta, args.confidence,
             seed, cost["wall_s"], cost["ready_s"], cost["cpu_s"]))
    for row in rows:
        acc = "test accuracy %d/%d = %.4f" % (row["test_correct"], n_test, row["test_correct"] / n_test)
        bounds = ("  eps_lb %.4f  mu_lb %.4f  (eps if Gaussian %.4f, ceiling %.3f)"
                  % (row["eps_lb"], row["mu_lb"], row["eps_from_mu"], row["ceiling"])) if args.audit else ""
        print("%-9s v = %d/%d  %s%s" % (row["release"], row["correct"], row["guesses"], acc, bounds))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"m": args.m, "kind": args.kind, "included": int(included.sum()), "guesses": args.guesses,
                       "k_plus": k_plus, "k_minus": k_minus, "delta": args.delta, "confidence": args.confidence,
                       "audit_seed": args.audit_seed, "run_seed": seed, "program": cmd[1:], "cost": cost,
                       "test_images": n_test, "epochs": rows}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
