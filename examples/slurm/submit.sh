#!/bin/bash
# Submits an audit split into N shards to Slurm: a job array whose task K runs
# shard K/N and writes PARTS/part-K, and a merge job that runs once every task
# has succeeded (afterok) and is cancelled if one fails. The merge job's exit
# code is the verdict (0 no claim refuted, 1 refuted, 2 bad input or parts).
#
#   examples/slurm/submit.sh [-p PARTS] SCENARIO N [audit run flags...]
#   examples/slurm/submit.sh [-p PARTS] -k K SCENARIO N [audit run flags...]
#
# The second form, after the array has finished, reruns shard K alone (same
# SCENARIO, N and flags as the first submission) and submits a new merge job.
# PARTS (default: parts) holds the parts, the logs and the report. The audit
# binary is $AUDIT (default: bin/audit, built with go build -o bin/audit
# ./cmd/audit). Site options (partition, account, QOS) go through sbatch's
# own environment variables, e.g. SBATCH_PARTITION and SBATCH_ACCOUNT.
set -euo pipefail

die() {
  echo "submit.sh: $*" >&2
  exit 2
}
usage="usage: submit.sh [-p PARTS] [-k K] SCENARIO N [audit run flags...]"
here=$(cd "$(dirname "$0")" && pwd)
parts=parts
only=
while getopts p:k:h opt; do
  case $opt in
    p) parts=$OPTARG ;;
    k) only=$OPTARG ;;
    h) echo "$usage"; exit 0 ;;
    *) die "$usage" ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || die "$usage"
scenario=$1 shards=$2
shift 2
case $shards in
  '' | *[!0-9]* | 0*) die "N: must be a positive integer, got '$shards'" ;;
esac
if [ -n "$only" ]; then
  case $only in
    '' | *[!0-9]* | 0?*) die "-k: must be a shard index in [0, $shards), got '$only'" ;;
  esac
  [ "$only" -lt "$shards" ] || die "-k: must be a shard index in [0, $shards), got '$only'"
fi
[ -f "$scenario" ] && [ -r "$scenario" ] || die "SCENARIO: cannot read '$scenario'"
for a in "$@"; do
  case $a in
    --shard | --shard=* | -shard | -shard=* | --out | --out=* | -out | -out=*)
      die "$a: set by the array script (shard K/N, PARTS/part-K); pass only scenario flags such as --trials or --seed" ;;
    --json* | -json* | --csv* | -csv* | --plot* | -plot* | --html* | -html*)
      die "$a: a shard writes only its trials file; the merge job writes PARTS/report.json and PARTS/report.html" ;;
    --checkpoint* | -checkpoint* | --resume* | -resume*)
      die "$a: shards are short and rerun per index; checkpoints are for single long runs" ;;
  esac
done
audit=${AUDIT:-bin/audit}
[ -x "$audit" ] && [ ! -d "$audit" ] || die "AUDIT: '$audit' is not an executable file (build it with: go build -o bin/audit ./cmd/audit)"

# Absolute paths: the jobs do not depend on the directory they start in.
abs() { (cd "$(dirname "$1")" && echo "$(pwd)/$(basename "$1")"); }
audit=$(abs "$audit")
scenario=$(abs "$scenario")
if [ -n "$only" ]; then
  [ -d "$parts" ] || die "-p: '$parts' does not exist; -k reruns a shard of an earlier submission"
  array=$only
else
  # Slurm opens the log files before a job starts: the directory must exist.
  mkdir -p "$parts"
  if compgen -G "$parts/part-*" >/dev/null; then
    die "-p: '$parts' already holds parts; choose a new directory (or -k K to rerun one shard)"
  fi
  array=0-$((shards - 1))
fi
parts=$(cd "$parts" && pwd)

jid=$(sbatch --parsable --array="$array" --export=ALL,AUDIT="$audit" \
  --output="$parts/shard-%a-job%A.log" \
  "$here/audit-array.sbatch" "$parts" "$scenario" "$shards" "$@")
jid=${jid%%;*}
mid=$(sbatch --parsable --dependency=afterok:"$jid" --kill-on-invalid-dep=yes \
  --export=ALL,AUDIT="$audit" --output="$parts/merge-job%j.log" \
  "$here/audit-merge.sbatch" "$parts" "$shards")
mid=${mid%%;*}

echo "shards: job $jid, array $array of N = $shards, writing $parts/part-K (logs $parts/shard-K-job$jid.log)"
echo "merge:  job $mid after all shards succeed: $parts/report.json, $parts/report.html, log $parts/merge-job$mid.log"
echo "        its exit code is the verdict: sacct -j $mid -o JobID,State,ExitCode (or scontrol show job $mid)"
cmd=
if [ $# -gt 0 ]; then
  cmd=$(printf ' %q' "$@")
fi
echo "rerun shard K once the array has finished: AUDIT=$(printf %q "$audit") $(printf %q "$here/submit.sh") -p $(printf %q "$parts") -k K $(printf %q "$scenario") $shards$cmd"
