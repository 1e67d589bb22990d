#!/usr/bin/env bash
# Tests of the mcmcaudit Python package, as CI runs them: a fresh virtual
# environment from Debian's Python (with its NumPy and SciPy, and nbclient and
# ipykernel for the example notebook, through --system-site-packages), the
# package installed from this repository offline (--no-build-isolation
# --no-index: the package's own backend in _backend/ builds it, standard
# library only), the audit binary built from this tree, and the standard
# library's unittest. .ci/python-install.sh checks the same install command
# from other interpreters.
set -euo pipefail
cd "$(dirname "$0")"
python=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv --system-site-packages "$tmp/venv"
# As a user installs it (its build/ and egg-info are ignored by git).
(cd .. && "$tmp/venv/bin/pip" install --quiet --no-build-isolation --no-index ./python)
(cd .. && go build -o "$tmp/bin/audit" ./cmd/audit)
# Checkpoints and the files of audits stay in $tmp; Go's build cache (which
# defaults to $XDG_CACHE_HOME/go-build) stays where it is, warm.
GOCACHE=$(go env GOCACHE)
export GOCACHE MCMCAUDIT_BIN="$tmp/bin/audit" XDG_CACHE_HOME="$tmp/cache"
# The tests import the installed package: run them from outside the source tree.
cd "$tmp"
"$tmp/venv/bin/python" -c 'import mcmcaudit, sys; sys.stdout.write("mcmcaudit from %s\n" % mcmcaudit.__file__)'
"$tmp/venv/bin/python" -m unittest discover -s "$OLDPWD/tests" -t "$OLDPWD/tests" -v
