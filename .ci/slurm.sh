#!/usr/bin/env bash
# Runs examples/slurm on a real Slurm: a single-node cluster on localhost
# (munged, slurmctld and slurmd started here, by PID, and stopped on exit),
# the example submitted with examples/slurm/submit.sh for two scenarios, the
# merged reports compared byte for byte with single-process runs, and one
# shard rebuilt by the documented resubmission. Needs root on Debian 12.
#
#   (a) testdata/sgld-interim.yaml, 4 shards, --trials 480 and a claim the
#       audit refutes: submitted from the repository root, as in
#       docs/scale-out.md;
#       the merge job's exit code must be the single run's (1). Then part-1 is
#       deleted and blocked by a directory: its rerun fails and the merge must
#       be cancelled, not left pending; once unblocked, the rerun rebuilds
#       part-1 byte for byte and the report again.
#   (b) testdata/digits-sgld.yaml (CSV data), 3 shards, --trials 60:
#       submitted from a directory that holds neither the scenario nor its
#       data, so the merge job needs parts that carry their data; part-0 is
#       deleted and rebuilt by a rerun.
#   (c) docs/scale-out.md's raw sbatch lines for testdata/sgld-interim.yaml (16
#       shards, --trials 4000) and its rerun of shard 5, run as written.
#
# Timeouts: AUDIT_SLURM_TIMEOUT seconds per wait (default 300).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
timeout_s=${AUDIT_SLURM_TIMEOUT:-300}
t_start=$(date +%s)
t_phase=$t_start
phase() {
  local now
  now=$(date +%s)
  echo "-- $1 (previous phase $((now - t_phase)) s, total $((now - t_start)) s)"
  t_phase=$now
}
fail() {
  echo "FAIL: $*" >&2
  diagnose
  exit 1
}

if [ "$(id -u)" != 0 ]; then
  echo "FAIL: .ci/slurm.sh starts munged, slurmctld and slurmd and needs root" >&2
  exit 1
fi

phase "Slurm and munge from Debian"
missing=
for c in munged mungekey munge unmunge slurmctld slurmd sbatch squeue sinfo scontrol scancel; do
  command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
done
if [ -n "$missing" ]; then
  echo "missing:$missing; installing slurm-wlm and munge"
  export DEBIAN_FRONTEND=noninteractive
  timeout 600 apt-get update >/tmp/slurm-apt.log 2>&1 || { cat /tmp/slurm-apt.log; exit 1; }
  timeout 600 apt-get install -y --no-install-recommends slurm-wlm munge >>/tmp/slurm-apt.log 2>&1 ||
    { tail -50 /tmp/slurm-apt.log; exit 1; }
fi
slurmctld -V

# Everything of this cluster lives in $tmp; the daemons' sockets must be in
# directories that every user may traverse, hence 0755.
tmp=$(mktemp -d /tmp/ci-slurm.XXXXXX)
chmod 755 "$tmp"
mkdir -p "$tmp/munge" "$tmp/run" "$tmp/state" "$tmp/spool" "$tmp/log"
chmod 700 "$tmp/munge"
chmod 755 "$tmp/run"
pids=()
jobs=()

diagnose() {
  set +e
  echo "== diagnosis"
  echo "-- squeue"
  squeue -a -o '%.10i %.14j %.9T %.10M %R'
  for j in "${jobs[@]}"; do
    echo "-- scontrol show job $j"
    scontrol show job "$j"
  done
  echo "-- completed jobs (jobcomp/filetxt; sacct needs slurmdbd, not run here)"
  cat "$tmp/log/jobcomp.txt" 2>/dev/null
  for f in "$tmp"/*/parts/*.log "$tmp"/*/*.log "$repo"/parts/*.log; do
    [ -f "$f" ] || continue
    echo "-- $f"
    tail -40 "$f"
  done
  for f in "$tmp"/log/*.log "$tmp"/log/*.out; do
    echo "-- $f (last 30 lines)"
    tail -30 "$f"
  done
  set -e
}

cleanup() {
  local rc=$?
  set +e
  trap - EXIT INT TERM
  if [ ${#jobs[@]} -gt 0 ]; then
    scancel "${jobs[@]}" 2>/dev/null
    sleep 1
  fi
  # Stop the daemons in reverse order of start, each by its PID.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill "${pids[i]}" 2>/dev/null
  done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do
      kill -0 "$p" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$p" 2>/dev/null && kill -9 "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  if [ "$rc" = 0 ]; then
    rm -rf "$tmp"
  else
    echo "left $tmp for inspection"
  fi
  echo "-- Slurm step: $(($(date +%s) - t_start)) s, exit $rc"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

phase "munged"
mungekey --create --keyfile="$tmp/munge/munge.key"
munged --foreground --key-file="$tmp/munge/munge.key" --socket="$tmp/run/munge.socket" \
  --pid-file="$tmp/run/munged.pid" --log-file="$tmp/log/munged.log" \
  --seed-file="$tmp/munge/munged.seed" >"$tmp/log/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  [ -S "$tmp/run/munge.socket" ] && break
  sleep 0.1
done
munge --socket="$tmp/run/munge.socket" --no-input | unmunge --socket="$tmp/run/munge.socket" >/dev/null ||
  fail "munged does not answer on $tmp/run/munge.socket"

phase "slurmctld and slurmd"
# A single node on localhost: no cgroups (proctrack/linuxproc, task/none),
# no accounting daemon (completed jobs go to a text file), unusual ports so
# that a Slurm already on the machine is not disturbed.
mem=$(awk '/^MemTotal:/ { print int($2 / 1024 * 0.8) }' /proc/meminfo)
export SLURM_CONF=$tmp/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=ci
SlurmctldHost=localhost
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/run/munge.socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$tmp/log/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
MinJobAge=3600
ReturnToService=2
NodeName=ci-node NodeHostname=$(hostname -s) NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$mem State=UNKNOWN
PartitionName=ci Nodes=ci-node Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -D -c -f "$SLURM_CONF" >"$tmp/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N ci-node >"$tmp/log/slurmd.out" 2>&1 &
pids+=($!)
state=
for _ in $(seq 120); do
  state=$(sinfo -h -n ci-node -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] || fail "the node is '$state', not idle, after 60 s"
sinfo

# job_field JOB FIELD: the value of FIELD in scontrol's record of JOB (for
# an array, one line per task).
job_field() {
  scontrol -o show job "$1" | grep -o " $2=[^ ]*" | cut -d= -f2 || true
}

# wait_done JOB: waits until every task of JOB has ended, at most $timeout_s.
wait_done() {
  local deadline=$(($(date +%s) + timeout_s)) s
  while :; do
    s=$(job_field "$1" JobState | grep -Ev '^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED)$' || true)
    [ -z "$s" ] && return 0
    [ "$(date +%s)" -lt "$deadline" ] || fail "job $1 still $(echo $s) after $timeout_s s"
    sleep 1
  done
}

# submit DIR COMMAND: runs the shell COMMAND (a call of submit.sh) in DIR,
# records the two job ids it prints in $shard_job and $merge_job and the
# rerun command it prints in $rerun.
submit() {
  local dir=$1 cmd=$2 out
  echo "\$ (cd $dir && $cmd)"
  out=$(cd "$dir" && eval "$cmd") || fail "submission failed: $cmd"
  echo "$out"
  shard_job=$(echo "$out" | sed -n 's/^shards: job \([0-9]*\),.*/\1/p')
  merge_job=$(echo "$out" | sed -n 's/^merge:  job \([0-9]*\) .*/\1/p')
  rerun=$(echo "$out" | sed -n 's/^rerun shard K once the array has finished: //p')
  [ -n "$shard_job" ] && [ -n "$merge_job" ] && [ -n "$rerun" ] || fail "unexpected output of submit.sh"
  jobs+=("$shard_job" "$merge_job")
}

# rerun_shard DIR K: runs, in DIR, the rerun command that the first
# submission printed, with K.
rerun_shard() {
  local dir=$1 k=$2 first=$rerun
  submit "$dir" "${rerun/ -k K / -k $k }"
  rerun=$first
}

# check_merge LABEL PARTS WANT_JSON WANT_CODE: the merge job completed with
# the single run's exit code and wrote the single run's report, byte for byte.
check_merge() {
  local label=$1 parts=$2 want=$3 code=$4 state exit_code
  wait_done "$shard_job"
  wait_done "$merge_job"
  job_field "$shard_job" JobState | grep -qvx COMPLETED && fail "$label: a shard task did not complete: $(job_field "$shard_job" JobState | tr '\n' ' ')"
  state=$(job_field "$merge_job" JobState)
  exit_code=$(job_field "$merge_job" ExitCode | cut -d: -f1)
  echo "$label: merge job $merge_job $state, exit code $exit_code (single run: $code)"
  [ "$exit_code" = "$code" ] || fail "$label: the merge job's exit code $exit_code is not the single run's $code"
  cmp "$parts/report.json" "$want" || fail "$label: merged report differs from the single run's"
  echo "$label: $parts/report.json is byte-identical to the single run's ($(wc -c <"$want") bytes)"
}

phase "build the binary as docs/scale-out.md does"
go build -o bin/audit ./cmd/audit

# (a) The built-in counterexample scenario with a claim it refutes.
a_flags=(--trials 480 --seed 7 --claim-epsilon 0.5 --claim-delta 1e-5)
phase "(a) single-process run of sgld-interim"
mkdir -p "$tmp/a-single"
a_code=0
(cd "$tmp/a-single" && "$repo/bin/audit" run "$repo/testdata/sgld-interim.yaml" "${a_flags[@]}" --json single.json --quiet >table.txt) || a_code=$?
# The claim ε = 0.5 is refuted at this seed (ε_lb well above 1), so the
# verdict that travels through the merge job's exit code is 1, not 0.
[ "$a_code" = 1 ] || fail "(a) the single run exited $a_code, expected 1 (claim refuted)"
grep -E '^(ε_lb|verdict)' "$tmp/a-single/table.txt"

phase "(a) submit 4 shards and the merge from the repository root"
rm -rf "$tmp/a"
submit "$repo" "examples/slurm/submit.sh -p $tmp/a/parts testdata/sgld-interim.yaml 4 ${a_flags[*]}"
check_merge "(a)" "$tmp/a/parts" "$tmp/a-single/single.json" "$a_code"

phase "(a) a failed shard: the rerun of part-1 fails, the merge is cancelled"
cp "$tmp/a/parts/part-1" "$tmp/a/part-1.first"
rm "$tmp/a/parts/part-1"
mkdir "$tmp/a/parts/part-1" # the shard's rename onto it fails
rerun_shard "$repo" 1
wait_done "$shard_job"
[ "$(job_field "$shard_job" JobState)" = FAILED ] || fail "(a) the blocked shard did not fail"
[ "$(job_field "$shard_job" ArrayTaskId)" = 1 ] || fail "(a) the rerun did not run exactly index 1"
wait_done "$merge_job"
state=$(job_field "$merge_job" JobState)
[ "$state" = CANCELLED ] || fail "(a) the merge behind a failed shard is $state, not CANCELLED"
echo "(a) shard job $shard_job FAILED, merge job $merge_job $state ($(job_field "$merge_job" Reason))"

phase "(a) rerun part-1 as documented"
rmdir "$tmp/a/parts/part-1"
rerun_shard "$repo" 1
check_merge "(a) rerun" "$tmp/a/parts" "$tmp/a-single/single.json" "$a_code"
[ "$(job_field "$shard_job" ArrayTaskId)" = 1 ] || fail "(a) the rerun did not run exactly index 1"
cmp "$tmp/a/parts/part-1" "$tmp/a/part-1.first" || fail "(a) the rerun part-1 differs from the first one"
echo "(a) part-1 rebuilt byte for byte"

# (c) docs/scale-out.md's raw sbatch lines, as written, in a directory laid out like
# the repository (bin/, examples/, testdata/), so that parts/ lands there.
# readme_block TEXT: the first sh code block after the docs/scale-out.md line that ends
# with TEXT.
readme_block() {
  awk -v m="$1" 'substr($0, length($0) - length(m) + 1) == m { f = 1; next }
    f && /^```sh/ { c = 1; next }
    c && /^```/ { exit }
    c { print }' "$repo/docs/scale-out.md"
}
# run_block TEXT: runs that block in $raw and records the job ids it makes.
run_block() {
  local block out
  block=$(readme_block "$1")
  [ -n "$block" ] || fail "no sh block after '$1' in docs/scale-out.md"
  echo "$block" | sed 's/^/$ /'
  out=$(cd "$raw" && bash -euo pipefail -c "$block"$'\n''echo "shard job $jid"') || fail "the docs/scale-out.md block failed"
  echo "$out"
  merge_job=$(echo "$out" | sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p')
  shard_job=$(echo "$out" | sed -n 's/^shard job \([0-9]*\).*/\1/p')
  [ -n "$shard_job" ] && [ -n "$merge_job" ] || fail "no job ids from the docs/scale-out.md block"
  jobs+=("$shard_job" "$merge_job")
}
phase "(c) single-process run for docs/scale-out.md's sbatch lines"
raw=$tmp/raw
mkdir -p "$raw" "$tmp/c-single"
ln -s "$repo/bin" "$repo/examples" "$repo/testdata" "$raw/"
(cd "$tmp/c-single" && "$repo/bin/audit" run "$repo/testdata/sgld-interim.yaml" --trials 4000 --json single.json --quiet >/dev/null) ||
  fail "(c) the single run failed"

phase "(c) docs/scale-out.md's sbatch lines: 16 shards and the merge"
run_block "same submissions by hand:"
check_merge "(c)" "$raw/parts" "$tmp/c-single/single.json" 0

phase "(c) docs/scale-out.md's sbatch lines: rerun shard 5"
cp "$raw/parts/part-5" "$tmp/c-part-5.first"
rm "$raw/parts/part-5"
run_block "to rerun shard 5 alone and merge again:"
check_merge "(c) rerun" "$raw/parts" "$tmp/c-single/single.json" 0
[ "$(job_field "$shard_job" ArrayTaskId)" = 5 ] || fail "(c) the rerun did not run exactly index 5"
cmp "$raw/parts/part-5" "$tmp/c-part-5.first" || fail "(c) the rerun part-5 differs from the first one"
echo "(c) part-5 rebuilt byte for byte"

# (b) CSV data, submitted from a directory that is neither the repository
# nor the scenario's: the merge job runs there.
b_flags=(--trials 60)
phase "(b) single-process run of digits-sgld"
mkdir -p "$tmp/b-single" "$tmp/b"
b_code=0
(cd "$tmp/b-single" && "$repo/bin/audit" run "$repo/testdata/digits-sgld.yaml" "${b_flags[@]}" --json single.json --quiet >table.txt) || b_code=$?
grep -E '^(ε_lb|verdict)' "$tmp/b-single/table.txt"
[ "$b_code" = 0 ] || fail "(b) the single run exited $b_code, expected 0 (no claim)"

phase "(b) submit 3 shards and the merge from $tmp/b"
submit "$tmp/b" "AUDIT=$repo/bin/audit $repo/examples/slurm/submit.sh $repo/testdata/digits-sgld.yaml 3 ${b_flags[*]}"
check_merge "(b)" "$tmp/b/parts" "$tmp/b-single/single.json" "$b_code"

phase "(b) delete part-0 and rerun it as documented"
cp "$tmp/b/parts/part-0" "$tmp/b/part-0.first"
rm "$tmp/b/parts/part-0"
rerun_shard "$tmp/b" 0
check_merge "(b) rerun" "$tmp/b/parts" "$tmp/b-single/single.json" "$b_code"
[ "$(job_field "$shard_job" ArrayTaskId)" = 0 ] || fail "(b) the rerun did not run exactly index 0"
cmp "$tmp/b/parts/part-0" "$tmp/b/part-0.first" || fail "(b) the rerun part-0 differs from the first one"
echo "(b) part-0 rebuilt byte for byte"

phase "done"
