"""Times the audit tool against its NumPy peers on four workloads, in one run.

Builds the tool once (go build ./cmd/audit), then for each workload runs tool
and peer alternately K times, and prints the min/median/max wall time of
each and the ratio of the medians (peer / tool: above 1 means the tool is
faster). Each peer is given the tool's JSON output and prints its own
numbers beside the tool's, so that one can see they do the same work; the
last such printout of each workload is shown.

Workloads:
  curves  audit curve --c 2e7 --eta-scale 1 (Fig. 1 parameters, 70 epochs)
  sgld    audit run bench/sgld-linreg.yaml (batch-1 SGLD, 4*10^7 steps,
          indices with replacement); also reported per step
  digits  audit run testdata/digits-sgld.yaml (softmax SGLD on the digits,
          DeepFool canary, 1000 runs, 20 epochs, linear attack)
  fig1    audit run testdata/fig1-exact.yaml (10^6 exact draws of the
          counterexample, threshold attack)

Usage: /usr/bin/python3 bench/compare.py [-k K] [--only curves,sgld,...] [--keep DIR]
It is a benchmark, not a test: it fails only if a command fails.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
PY = "/usr/bin/python3"  # Debian's interpreter, which has numpy and scipy

SGLD_STEPS = 4000 * 10_000


def workloads(tool, out):
    j = lambda name: os.path.join(out, name + ".json")
    return {
        "curves": ([tool, "curve", "--c", "2e7", "--eta-scale", "1", "--json", j("curves")],
                   [PY, os.path.join(BENCH, "curves_peer.py"), "--tool-json", j("curves")], None),
        "sgld": ([tool, "run", os.path.join(BENCH, "sgld-linreg.yaml"), "--quiet", "--json", j("sgld")],
                 [PY, os.path.join(BENCH, "sgld_peer.py"), "--tool-json", j("sgld")], SGLD_STEPS),
        "digits": ([tool, "run", os.path.join(ROOT, "testdata", "digits-sgld.yaml"), "--quiet", "--json", j("digits")],
                   [PY, os.path.join(BENCH, "digits_peer.py"), "--tool-json", j("digits")], None),
        "fig1": ([tool, "run", os.path.join(ROOT, "testdata", "fig1-exact.yaml"), "--quiet", "--json", j("fig1")],
                 [PY, os.path.join(BENCH, "fig1_peer.py"), "--tool-json", j("fig1")], None),
    }


def timed(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"command failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    return dt, r.stdout


def fmt(ts):
    return f"{min(ts):8.3f} {statistics.median(ts):8.3f} {max(ts):8.3f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-k", type=int, default=3, help="runs of each command (default 3)")
    ap.add_argument("--only", default="curves,sgld,digits,fig1", help="comma-separated workloads")
    ap.add_argument("--keep", help="write the tool's JSON outputs to DIR instead of a temporary one")
    args = ap.parse_args()
    out = args.keep or tempfile.mkdtemp(prefix="mcmcaudit-bench-")
    os.makedirs(out, exist_ok=True)
    tool = os.path.join(out, "audit")
    t0 = time.perf_counter()
    subprocess.run(["go", "build", "-o", tool, "./cmd/audit"], cwd=ROOT, check=True)
    print(f"built the tool in {time.perf_counter() - t0:.1f} s; {os.cpu_count()} CPUs; K = {args.k}\n")
    wl = workloads(tool, out)
    summary = []
    for name in args.only.split(","):
        tcmd, pcmd, steps = wl[name]
        tt, pt = [], []
        last = ""
        for _ in range(args.k):
            tt.append(timed(tcmd)[0])
            dt, last = timed(pcmd)
            pt.append(dt)
        print(f"== {name}: peer output of the last run ==\n{last.rstrip()}\n")
        summary.append((name, tt, pt, steps))
    print(f"{'workload':8s} {'':4s} {'min s':>8s} {'median':>8s} {'max s':>8s}   peer/tool (medians)")
    for name, tt, pt, steps in summary:
        ratio = statistics.median(pt) / statistics.median(tt)
        print(f"{name:8s} tool {fmt(tt)}")
        print(f"{'':8s} peer {fmt(pt)}   {ratio:.2f}")
        if steps:
            print(f"{'':8s} per step: tool {statistics.median(tt) / steps * 1e9:.1f} ns, "
                  f"peer {statistics.median(pt) / steps * 1e9:.1f} ns (whole processes, setup included)")
    if not args.keep:
        shutil.rmtree(out)


if __name__ == "__main__":
    main()
