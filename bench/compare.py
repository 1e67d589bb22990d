"""Times the audit tool against its NumPy peers and bare-Go floors, in one run.

Builds the tool and the floors once (go build), then for each workload runs
tool, peer and floor in turn K times (a round each, so that a change in the
machine's load hits all three) and measures for every command its wall time and
its CPU time: user + system time of the whole process tree (the process and
every descendant it waited for), from resource.getrusage(RUSAGE_CHILDREN)
read before and after the command. Prints min/median/max of each, and the
ratios peer / tool (above 1: the tool is faster) and tool / floor (how far
the tool is from the bare work) of the K rounds, min / median / max, for CPU
time and for wall time. CPU time measures the work
and is robust to a loaded machine; wall time also counts the waiting, and
favours whichever side uses more cores. Each peer is given the tool's JSON
output and prints its own numbers beside the tool's, so that one can see
they do the same work; the last such printout of each workload is shown.

The peers run with the machine's best kernels: OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE (which pin OpenBLAS to older kernels) are removed from the
peers' environment only, and the kernels they then use — OpenBLAS's
architecture and threads (threadpoolctl) and NumPy's SIMD dispatch — are
printed with the CPU model before the table. The tool and the floors run in
the environment as it is.

Floors (bench/*floor, plain Go, one goroutine, math/rand/v2's generators):
  sgld    bench/sgldfloor: the chains' steps and one sort of the final states
  digits  bench/digitsfloor: the training steps, features and test accuracy
  fig1    bench/fig1floor: the exact draws and one radix sort per release

Workloads:
  curves  audit curve --c 2e7 --eta-scale 1 (Fig. 1 parameters, 70 epochs)
  sgld    audit run bench/sgld-linreg.yaml (batch-1 SGLD, 4*10^7 steps,
          indices with replacement); also reported per step
  digits  audit run testdata/digits-sgld.yaml (softmax SGLD on the digits,
          DeepFool canary, 1000 runs, 20 epochs, linear attack)
  fig1    audit run testdata/fig1-exact.yaml (10^6 exact draws of the
          counterexample, threshold attack)

Usage: /usr/bin/python3 bench/compare.py [-k K] [--only curves,sgld,...] [--keep DIR] [--markdown]
It is a benchmark, not a test: it fails only if a command fails.
"""
import argparse
import json
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

# The variables that pin OpenBLAS to a kernel or cache size other than the
# machine's: removed from the peers' environment only.
PINNING = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def peer_env():
    """The environment of a peer: this one without the OpenBLAS pins."""
    return {k: v for k, v in os.environ.items() if k not in PINNING}


def workloads(tool, floors, out):
    """name -> (tool command, peer command, floor command or None, steps)."""
    j = lambda name: os.path.join(out, name + ".json")
    return {
        "curves": ([tool, "curve", "--c", "2e7", "--eta-scale", "1", "--json", j("curves")],
                   [PY, os.path.join(BENCH, "curves_peer.py"), "--tool-json", j("curves")], None, None),
        "sgld": ([tool, "run", os.path.join(BENCH, "sgld-linreg.yaml"), "--quiet", "--json", j("sgld")],
                 [PY, os.path.join(BENCH, "sgld_peer.py"), "--tool-json", j("sgld")], [floors["sgld"]], SGLD_STEPS),
        "digits": ([tool, "run", os.path.join(ROOT, "testdata", "digits-sgld.yaml"), "--quiet", "--json", j("digits")],
                   [PY, os.path.join(BENCH, "digits_peer.py"), "--tool-json", j("digits")], [floors["digits"]], None),
        "fig1": ([tool, "run", os.path.join(ROOT, "testdata", "fig1-exact.yaml"), "--quiet", "--json", j("fig1")],
                 [PY, os.path.join(BENCH, "fig1_peer.py"), "--tool-json", j("fig1")], [floors["fig1"]], None),
    }


def timed(cmd, env=None):
    """Runs cmd; returns (wall s, CPU s of its process tree, stdout)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
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


def cpu_model():
    """The CPU's model name and its widest vector extensions."""
    cpu, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and cpu in ("", platform.machine(), platform.processor()):
                    cpu = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    vec = [x for x in ("avx2", "fma", "avx512f", "avx512bw", "avx512vl") if x in flags]
    return f"{cpu} ({' '.join(vec) or 'no AVX'})"


# Run in a peer's environment: what NumPy and OpenBLAS dispatch to there.
KERNELS = r"""
import json, numpy
info = {"numpy": numpy.__version__}
try:
    from numpy.core._multiarray_umath import __cpu_features__, __cpu_baseline__, __cpu_dispatch__
    info["simd"] = [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]
    info["baseline"] = list(__cpu_baseline__)
except ImportError:
    pass
try:
    import threadpoolctl
    info["blas"] = [{k: d.get(k) for k in ("internal_api", "version", "architecture", "num_threads")}
                    for d in threadpoolctl.threadpool_info() if d.get("user_api") == "blas"]
except ImportError:
    info["blas"] = None
print(json.dumps(info))
"""


def kernels():
    """The kernels a peer uses, as one line (from its own environment)."""
    r = subprocess.run([PY, "-c", KERNELS], capture_output=True, text=True, env=peer_env())
    if r.returncode != 0:
        return f"unknown ({r.stderr.strip().splitlines()[-1] if r.stderr.strip() else 'no output'})"
    info = json.loads(r.stdout)
    if info.get("blas") is None:
        blas = "BLAS unknown (threadpoolctl absent: apt-get install python3-threadpoolctl)"
    else:
        blas = "; ".join(f"{b['internal_api']} {b['version']}, {b['architecture']} kernels, {b['num_threads']} threads"
                         for b in info["blas"]) or "no BLAS loaded"
    simd = " ".join(info.get("simd", [])) or "none"
    return f"NumPy {info['numpy']} ufuncs dispatched to {simd}; {blas}"


def environment():
    """What the figures depend on besides the code: recorded, not changed."""
    env = " ".join(f"{k}={os.environ[k]}" for k in sorted(os.environ)
                   if k.startswith(("OPENBLAS_", "OMP_", "MKL_", "GOMAXPROCS", "GOAMD64")))
    go = subprocess.run(["go", "version"], capture_output=True, text=True).stdout.strip()
    pinned = [k for k in PINNING if k in os.environ]
    peers = f" (removed for the peers: {', '.join(pinned)})" if pinned else ""
    return (f"CPU: {cpu_model()}\n{go}; Python {platform.python_version()}\n"
            f"peers' kernels: {kernels()}\nenv: {env or '(none set)'}{peers}")


FLOORS = ("sgld", "digits", "fig1")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-k", type=int, default=3, help="rounds of each workload (default 3)")
    ap.add_argument("--only", default="curves,sgld,digits,fig1", help="comma-separated workloads")
    ap.add_argument("--keep", help="write the tool's JSON outputs to DIR instead of a temporary one")
    ap.add_argument("--markdown", action="store_true", help="also print the summary as a Markdown table")
    args = ap.parse_args()
    out = args.keep or tempfile.mkdtemp(prefix="mcmcaudit-bench-")
    os.makedirs(out, exist_ok=True)
    tool = os.path.join(out, "audit")
    floors = {name: os.path.join(out, name + "floor") for name in FLOORS}
    t0 = time.perf_counter()
    subprocess.run(["go", "build", "-o", tool, "./cmd/audit"], cwd=ROOT, check=True)
    for name, path in floors.items():
        subprocess.run(["go", "build", "-o", path, f"./bench/{name}floor"], cwd=ROOT, check=True)
    print(f"built the tool and the floors in {time.perf_counter() - t0:.1f} s; {os.cpu_count()} CPUs; K = {args.k}")
    print(environment() + "\n")
    wl = workloads(tool, floors, out)
    penv = peer_env()
    summary = []
    for name in args.only.split(","):
        tcmd, pcmd, fcmd, steps = wl[name]
        t, p, f = ([], []), ([], []), ([], [])  # (wall, CPU) of each command
        last = ""
        for _ in range(args.k):
            for cmd, acc, env in ((tcmd, t, None), (pcmd, p, penv), (fcmd, f, None)):
                if cmd is None:
                    continue
                w, c, o = timed(cmd, env)
                acc[0].append(w)
                acc[1].append(c)
                if cmd is pcmd:
                    last = o
        print(f"== {name}: peer output of the last run ==\n{last.rstrip()}\n")
        summary.append((name, t, p, f, steps))
    print("seconds (min / median / max of K runs); ratios of each round (min / median / max):")
    print("peer / tool (above 1: the tool is faster), tool / floor (1: the tool does only the bare work)")
    print(f"{'workload':8s} {'':5s} {'CPU min':>8s} {'median':>8s} {'max':>8s}  "
          f"{'wall min':>8s} {'median':>8s} {'max':>8s}")
    for name, t, p, f, steps in summary:
        print(f"{name:8s} tool  {fmt(t[1])}  {fmt(t[0])}")
        print(f"{'':8s} peer  {fmt(p[1])}  {fmt(p[0])}")
        if f[1]:
            print(f"{'':8s} floor {fmt(f[1])}  {fmt(f[0])}")
        print(f"{'':8s} peer / tool: CPU {ratios(p[1], t[1])}   wall {ratios(p[0], t[0])}")
        if f[1]:
            print(f"{'':8s} tool / floor: CPU {ratios(t[1], f[1])}   wall {ratios(t[0], f[0])}")
        if steps:
            print(f"{'':8s} per step (medians, whole processes): tool {statistics.median(t[1]) / steps * 1e9:.1f} ns CPU, "
                  f"peer {statistics.median(p[1]) / steps * 1e9:.1f} ns CPU")
    if args.markdown:
        print("\n| workload | tool, CPU s | NumPy peer, CPU s | bare-Go floor, CPU s | peer / tool | tool / floor |")
        print("|---|---|---|---|---|---|")
        for name, t, p, f, _ in summary:
            fl = f"{statistics.median(f[1]):.3g}" if f[1] else "—"
            tf = ratio_cell(t[1], f[1]) if f[1] else "—"
            print(f"| {name} | {statistics.median(t[1]):.3g} | {statistics.median(p[1]):.3g} | {fl} | "
                  f"{ratio_cell(p[1], t[1])} | {tf} |")
    if not args.keep:
        shutil.rmtree(out)


def ratio_cell(a, b):
    """The median of the paired ratios a/b with their range, for a table."""
    rs = [x / y for x, y in zip(a, b)]
    return f"{statistics.median(rs):.2f}× ({min(rs):.2f}–{max(rs):.2f})"


if __name__ == "__main__":
    main()
