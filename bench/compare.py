"""Times the audit tool against its NumPy peers on four workloads, in one run.

Builds the tool once (go build ./cmd/audit), then for each workload runs tool
and peer alternately K times (a pair per round, so that a change in the
machine's load hits both) and measures for every command its wall time and
its CPU time: user + system time of the whole process tree (the process and
every descendant it waited for), from resource.getrusage(RUSAGE_CHILDREN)
read before and after the command. Prints min/median/max of each, and the
ratios peer / tool (above 1: the tool is faster) of the K pairs, min /
median / max, for CPU time and for wall time. CPU time measures the work
and is robust to a loaded machine; wall time also counts the waiting, and
favours whichever side uses more cores. Each peer is given the tool's JSON
output and prints its own numbers beside the tool's, so that one can see
they do the same work; the last such printout of each workload is shown.

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
import platform
import resource
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
    """Runs cmd; returns (wall s, CPU s of its process tree, stdout)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"command failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return dt, cpu, r.stdout


def fmt(ts):
    return f"{min(ts):8.3f} {statistics.median(ts):8.3f} {max(ts):8.3f}"


def ratios(peer, tool):
    """min / median / max of the K paired ratios peer / tool."""
    rs = [p / t for p, t in zip(peer, tool)]
    return f"{min(rs):6.2f} {statistics.median(rs):6.2f} {max(rs):6.2f}"


def environment():
    """What the figures depend on besides the code: recorded, not changed."""
    env = " ".join(f"{k}={os.environ[k]}" for k in sorted(os.environ)
                   if k.startswith(("OPENBLAS_", "OMP_", "MKL_", "GOMAXPROCS", "GOAMD64")))
    try:
        import numpy
        npv = numpy.__version__
    except ImportError:
        npv = "absent"
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    go = subprocess.run(["go", "version"], capture_output=True, text=True).stdout.strip()
    return f"{cpu}; {go}; Python {platform.python_version()}, NumPy {npv}; env: {env or '(none set)'}"


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
    print(f"built the tool in {time.perf_counter() - t0:.1f} s; {os.cpu_count()} CPUs; K = {args.k}")
    print(environment() + "\n")
    wl = workloads(tool, out)
    summary = []
    for name in args.only.split(","):
        tcmd, pcmd, steps = wl[name]
        tw, tc, pw, pc = [], [], [], []
        last = ""
        for _ in range(args.k):
            w, c, _ = timed(tcmd)
            tw.append(w)
            tc.append(c)
            w, c, last = timed(pcmd)
            pw.append(w)
            pc.append(c)
        print(f"== {name}: peer output of the last run ==\n{last.rstrip()}\n")
        summary.append((name, tw, tc, pw, pc, steps))
    print("seconds (min / median / max of K runs); ratio = peer / tool of each pair (min / median / max)")
    print(f"{'workload':8s} {'':4s} {'CPU min':>8s} {'median':>8s} {'max':>8s}  "
          f"{'wall min':>8s} {'median':>8s} {'max':>8s}")
    for name, tw, tc, pw, pc, steps in summary:
        print(f"{name:8s} tool {fmt(tc)}  {fmt(tw)}")
        print(f"{'':8s} peer {fmt(pc)}  {fmt(pw)}")
        print(f"{'':8s} ratio CPU {ratios(pc, tc)}   wall {ratios(pw, tw)}")
        if steps:
            print(f"{'':8s} per step (medians, whole processes): tool {statistics.median(tc) / steps * 1e9:.1f} ns CPU, "
                  f"peer {statistics.median(pc) / steps * 1e9:.1f} ns CPU")
    if not args.keep:
        shutil.rmtree(out)


if __name__ == "__main__":
    main()
