"""Makes the README's table of tight audits: for each sampler of the papers,
what the black-box audit of its testdata scenario proves and what the path
audit of testdata/tight/ proves, as fractions of the sampler's own bound.

Builds the tool once (go build ./cmd/audit), runs every scenario at its
full run count with --workers 1 --json, and prints a Markdown table with,
per scenario: the bound (the headline's theorem ε at δ, and μ where the
bound is a μ-GDP composition), ε_lb and ε_lb/ε_ub, μ_lb and μ_lb/μ, the
runs, the exit code and the CPU time of the run (user + system of the
child, from resource.getrusage(RUSAGE_CHILDREN)).

Usage: /usr/bin/python3 bench/tight.py [--only NAME,...] [--keep DIR]
It is a benchmark, not a test: it fails only if a command fails with an exit
code other than 0 or 1.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (sampler, black-box scenario, path scenario)
PAIRS = [
    ("DP-SGLD, full batch", "testdata/dp-sgld-correct.yaml", "testdata/tight/dp-sgld-full-path.yaml"),
    ("DP-SGLD, Poisson", "testdata/digits-dp-sgld.yaml", "testdata/tight/dp-sgld-poisson-path.yaml"),
    ("DP-HMC", "testdata/dp-hmc-gauss.yaml", "testdata/tight/dp-hmc-path.yaml"),
    ("DP-penalty", "testdata/dp-penalty-gauss.yaml", "testdata/tight/dp-penalty-path.yaml"),
    ("DP-Barker", "testdata/dp-barker-linreg.yaml", "testdata/tight/dp-barker-path.yaml"),
]


def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(tool, scenario, out):
    before = cpu()
    p = subprocess.run([tool, "run", scenario, "--quiet", "--no-checkpoint", "--workers", "1", "--json", out],
                       cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    spent = cpu() - before
    if p.returncode not in (0, 1):
        sys.exit(f"{scenario}: exit {p.returncode}\n{p.stderr}")
    with open(out) as f:
        rep = json.load(f)["report"]
    return rep, p.returncode, spent


def fmt(x, digits=3):
    return "—" if x is None else f"{x:.{digits}f}"


def row(rep, code, spent):
    t = rep.get("tightness") or {}
    h = rep["points"][rep["headline"]]
    eps = (rep.get("epsilon") or {}).get("epsilon")
    mu = (h.get("gdp") or {}).get("mu")
    covered = [c["epsilon_at_delta"] for c in h.get("claims") or [] if c.get("covered")]
    bound = min(covered) if covered else None
    mu_b = mu / t["mu"] if t.get("mu") and mu else None
    return (f"{fmt(bound, 2)} | {fmt(mu_b, 2)} | {fmt(eps)} ({fmt(t.get('epsilon'), 2)}) | "
            f"{fmt(mu)} ({fmt(t.get('mu'), 2)}) | {rep['trials']:,} | {code} | {spent:.1f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--keep", default="")
    a = ap.parse_args()
    only = [s for s in a.only.split(",") if s]
    work = a.keep or tempfile.mkdtemp(prefix="tight-")
    tool = os.path.join(work, "audit")
    subprocess.run(["go", "build", "-o", tool, "./cmd/audit"], cwd=ROOT, check=True)
    print("| sampler | threat | ε_ub | μ | ε_lb (of ε_ub) | μ_lb (of μ) | runs | exit | CPU s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, box, path in PAIRS:
        for threat, scen in (("releases", box), ("path", path)):
            base = os.path.splitext(os.path.basename(scen))[0]
            if only and base not in only:
                continue
            if not os.path.exists(os.path.join(ROOT, scen)):
                print(f"| {name} | {threat} | missing: {scen} |")
                continue
            rep, code, spent = run(tool, scen, os.path.join(work, base + ".json"))
            print(f"| {name} | {threat} ({base}) | {row(rep, code, spent)} |", flush=True)


if __name__ == "__main__":
    main()
