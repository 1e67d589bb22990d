#!/usr/bin/env bash
# Checks examples/kubernetes without a cluster, with its own Go module: every
# manifest decoded strictly into the Kubernetes API types and cross-checked
# (names, volumes, keys, paths, shard count, image), deliberate breakages
# caught, the Docker build context built, run.sh's waits run against a fake
# kubectl, and the Jobs' command lines run as local processes. The audit
# module itself must not depend on any Kubernetes package.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

if go list -deps ./... | grep -E '^(k8s\.io|sigs\.k8s\.io)/'; then
  echo "FAIL: the audit module depends on the Kubernetes packages above" >&2
  exit 1
fi
echo "audit module: no k8s.io or sigs.k8s.io in go list -deps ./..."

cd examples/kubernetes
go mod verify
go vet ./...
log=$(mktemp)
if ! go test -count=1 -v ./... >"$log" 2>&1; then
  cat "$log"
  rm -f "$log"
  exit 1
fi
grep -E '^(--- |ok|\s+context_test)' "$log"
rm -f "$log"
echo "-- Kubernetes checks: $(($(date +%s) - start)) s"
