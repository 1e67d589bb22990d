#!/bin/sh
# Runs the Kubernetes example on the cluster of the current kubectl context:
# applies the claim, the ConfigMap and the shard Job, waits for the shards,
# applies the merge Job, waits for it, prints its log and exits with its exit
# code, which is the verdict (0 no claim refuted, 1 refuted, 2 bad or missing
# parts). Every wait is bounded and ends early when the Job fails or a pod
# cannot start.
#
#   IMAGE=registry.example.com/mcmcaudit:0.1.0 examples/kubernetes/run.sh
#
# IMAGE is the image built from examples/kubernetes/Dockerfile and pushed to a
# registry the nodes can pull from (or, on kind, loaded with kind load
# docker-image). SHARD_TIMEOUT and MERGE_TIMEOUT, in seconds, bound the waits
# (defaults 6 h 10 min and 1 h 10 min, just above the Jobs' own deadlines);
# POLL_SECONDS is the time between two looks at a Job (default 10).
set -eu
dir=$(dirname "$0")
: "${IMAGE:?set IMAGE to your image, e.g. IMAGE=registry.example.com/mcmcaudit:0.1.0}"
case $IMAGE in
  *REGISTRY* | *VERSION*) echo "IMAGE: replace the placeholder with your image, got $IMAGE" >&2; exit 2 ;;
  *:latest) echo "IMAGE: use a version tag, not :latest (IfNotPresent would keep a stale image), got $IMAGE" >&2; exit 2 ;;
esac
shard_timeout=${SHARD_TIMEOUT:-22200}
merge_timeout=${MERGE_TIMEOUT:-4200}
poll=${POLL_SECONDS:-10}

# job_state JOB: Complete, Failed or nothing yet.
job_state() {
  kubectl get job "$1" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{"\n"}{end}' |
    grep -x -E 'Complete|Failed' | head -n 1 || true
}

# stuck_pods JOB: the pods of JOB that wait for something that will not come.
stuck_pods() {
  kubectl get pods -l "batch.kubernetes.io/job-name=$1" \
    -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.containerStatuses[*].state.waiting.reason}{"\n"}{end}' |
    grep -E 'ErrImagePull|ImagePullBackOff|InvalidImageName|CreateContainerConfigError|CreateContainerError' || true
}

# wait_job JOB SECONDS: waits until JOB is Complete (returns 0) or Failed
# (returns 1), for at most SECONDS; gives up early on pods that cannot start.
wait_job() {
  end=$(($(date +%s) + $2))
  while :; do
    state=$(job_state "$1")
    case $state in
      Complete) return 0 ;;
      Failed)
        echo "job/$1 failed:" >&2
        kubectl get job "$1" -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}' >&2
        kubectl get job "$1" -o jsonpath='failed indexes: {.status.failedIndexes}{"\n"}' >&2
        return 1 ;;
    esac
    stuck=$(stuck_pods "$1")
    if [ -n "$stuck" ]; then
      echo "job/$1: pods cannot start:" >&2
      echo "$stuck" >&2
      kubectl describe job "$1" >&2
      return 1
    fi
    if [ "$(date +%s)" -ge "$end" ]; then
      echo "job/$1: neither Complete nor Failed after $2 s" >&2
      kubectl describe job "$1" >&2
      kubectl get pods -l "batch.kubernetes.io/job-name=$1" -o wide >&2
      return 1
    fi
    sleep "$poll"
  done
}

# with_image FILE: the manifest with the image placeholder replaced.
with_image() {
  sed "s|REGISTRY/mcmcaudit:VERSION|$IMAGE|" "$dir/$1"
}

kubectl apply -f "$dir/audit-results-pvc.yaml"
kubectl apply --server-side -f "$dir/audit-scenario.yaml"
# Jobs are immutable: a new run replaces the previous one.
kubectl delete job audit-shards audit-merge --ignore-not-found --wait=true
with_image audit-indexed-job.yaml | kubectl apply -f -
if ! wait_job audit-shards "$shard_timeout"; then
  kubectl logs -l batch.kubernetes.io/job-name=audit-shards --tail=20 --prefix >&2 || true
  exit 2
fi
with_image audit-merge-job.yaml | kubectl apply -f -
wait_job audit-merge "$merge_timeout" || true
kubectl logs job/audit-merge
code=$(kubectl get pods -l batch.kubernetes.io/job-name=audit-merge \
  -o jsonpath='{.items[0].status.containerStatuses[0].state.terminated.exitCode}')
echo "audit merge exited with $code (0 no claim refuted, 1 a claim refuted, 2 bad or missing parts)"
exit "${code:-3}"
