#!/usr/bin/env bash
# Power of the path audits against planted bugs: for each sampler of
# testdata/bugs, audit its correct configuration with the noise standard
# deviation planted at F × the declared one (--set
# sampler.<key>.plant.noise=F, the theorem claim keeping the declared
# noise), for F in FACTORS, and report which F are refuted (exit 1). The
# figure of the power table is the largest F refuted with every smaller F
# of the sweep refuted too: the finest noise deficit the audit detects at
# this run count.
#
# Usage: bench/power.sh [SAMPLER ...]      (default: all five)
# Environment:
#   AUDIT    the audit binary (default: built from this checkout)
#   FACTORS  noise factors to sweep (default "0.8 0.85 0.9 0.95 0.97")
#   RUNS     runs per audit (default 1000000; 10⁶ runs of Poisson DP-SGLD
#            take about 55 s of CPU)
#   MAXWORK  --max-work of each audit (default 1e13: 10⁶ Poisson runs of 900
#            steps exceed the default limit of 1e12 units)
#   SEEDS    seeds to audit each F with (default: the file's own seed);
#            with several, F counts as refuted when every seed refutes it
#
# Each audit runs with --workers 1, so the CPU column is the audit's own.
set -u
cd "$(dirname "$0")/.." || exit 2

samplers=("$@")
[ ${#samplers[@]} -gt 0 ] || samplers=(dp-sgld-full dp-sgld-poisson dp-hmc dp-penalty dp-barker)
factors=${FACTORS:-"0.8 0.85 0.9 0.95 0.97"}
runs=${RUNS:-1000000}
seeds=${SEEDS:-}
maxwork=${MAXWORK:-1e13}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
audit=${AUDIT:-}
if [ -z "$audit" ]; then
	go build -o "$tmp/audit" ./cmd/audit || exit 3
	audit=$tmp/audit
fi

# key returns the scenario key of a catalogue sampler.
key() {
	case $1 in
	dp-sgld-*) echo sgld ;;
	dp-hmc) echo dp_hmc ;;
	dp-penalty) echo dp_penalty ;;
	dp-barker) echo dp_barker ;;
	*) return 1 ;;
	esac
}

# figures prints verdict, ε_lb/ε_ub and μ_lb/μ of a JSON report.
figures() {
	python3 - "$1" <<'EOF' 2>/dev/null || echo "?"
import json, sys
r = json.load(open(sys.argv[1]))["report"]
t = r.get("tightness") or {}
f = lambda k: "%.3f" % t[k] if k in t else "-"
print("%-12s eps_lb/eps_ub %s  mu_lb/mu %s" % (r["verdict"].replace(" ", "_"), f("epsilon"), f("mu")))
EOF
}

echo "power of the path audits: noise planted at F x the declared standard deviation, $runs runs per audit"
echo "audit = $audit (built from $(git rev-parse --short HEAD 2>/dev/null || echo this checkout))"
summary=()
for s in "${samplers[@]}"; do
	k=$(key "$s") || { echo "unknown sampler $s" >&2; exit 2; }
	file=testdata/bugs/$s-correct.yaml
	[ -f "$file" ] || { echo "no $file" >&2; exit 2; }
	echo
	echo "== $s ($file)"
	best="none" allbelow=1 broken=""
	for F in $factors; do
		refuted=1
		for seed in ${seeds:-file}; do
			seedarg=()
			[ "$seed" = file ] || seedarg=(--seed "$seed")
			cmd=("$audit" run "$file" --quiet --no-checkpoint --workers 1 --trials "$runs" --max-work "$maxwork" "${seedarg[@]}" --set "sampler.$k.plant.noise=$F" --json "$tmp/r.json")
			shown="audit ${cmd[*]:1}"
			echo "\$ ${shown/$tmp\/r.json/report.json}"
			TIMEFORMAT=%U+%S
			cpu=$( { time "${cmd[@]}" >/dev/null 2>"$tmp/err"; echo "rc=$?" >"$tmp/rc"; } 2>&1 )
			rc=$(sed 's/rc=//' "$tmp/rc")
			cpu=$(echo "$cpu" | tail -n1 | awk -F+ '{printf "%.1f", $1 + $2}')
			if [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
				echo "   F=$F exit $rc: $(head -c 300 "$tmp/err")"
				broken="exit $rc"
				refuted=0
				continue
			fi
			echo "   F=$F seed=$seed exit $rc  $(figures "$tmp/r.json")  cpu ${cpu}s"
			[ "$rc" = 1 ] || refuted=0
		done
		[ -z "$broken" ] || break
		if [ $refuted = 1 ] && [ $allbelow = 1 ]; then
			best=$F
		else
			allbelow=0
		fi
	done
	if [ -n "$broken" ]; then
		summary+=("$s: not measured ($broken; see above)")
	else
		summary+=("$s: largest noise factor refuted (all smaller refuted too) at $runs runs: $best")
	fi
done
echo
echo "== summary (factors swept: $factors)"
printf '%s\n' "${summary[@]}"
