#!/usr/bin/env bash
# The Python package's install command, as the README gives it, from fresh
# venvs of Debian's Python and of every other Python 3 at hand (python3 first
# on PATH when it is not Debian's, pyenv's versions, /usr/local/bin/python3.*):
#   python3 -m venv V && V/bin/pip install --no-build-isolation --no-index ./python
# then the package imported from outside the source tree, and the build
# backend's tests run by that interpreter. Pythons below requires-python
# are listed as not tried. On a machine with Debian's Python only, the second
# interpreter is reported as skipped. Each interpreter takes about 10 s on
# 2 busy cores (mostly the venv's own pip being installed).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

minimum=$(sed -n 's/^requires-python *= *"[^"]*>= *\([0-9][0-9.]*\).*/\1/p' python/pyproject.toml)
[ -n "$minimum" ] || { echo "python/pyproject.toml: no requires-python = \">=X.Y\" line"; exit 1; }

candidates=(/usr/bin/python3)
first=$(command -v python3 || true)
[ -n "$first" ] && candidates+=("$first")
if command -v pyenv >/dev/null 2>&1; then
  for v in "$(pyenv root)"/versions/*/bin/python3; do [ -x "$v" ] && candidates+=("$v"); done
fi
for v in /usr/local/bin/python3.*; do [ -x "$v" ] && candidates+=("$v"); done

# One per real interpreter (pyenv's shim and Debian's python3 symlinks resolve
# to what they run).
declare -A seen
pythons=()
for c in "${candidates[@]}"; do
  real=$("$c" -c 'import os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null) || continue
  [ -n "${seen[$real]:-}" ] && continue
  seen[$real]=1
  pythons+=("$c")
done

others=0
for py in "${pythons[@]}"; do
  version=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  if [ "$(printf '%s\n' "$minimum" "$version" | sort -V | head -1)" != "$minimum" ]; then
    echo "$py ($version): not tried, below requires-python >=$minimum"
    continue
  fi
  venv="$tmp/venv"
  if ! "$py" -m venv "$venv" >"$tmp/venv.log" 2>&1; then
    if [ "$py" = /usr/bin/python3 ]; then cat "$tmp/venv.log"; exit 1; fi
    echo "$py ($version): skipped, it cannot make a venv ($(tail -1 "$tmp/venv.log"))"
    continue
  fi
  log="$tmp/pip-$version.log"
  if ! "$venv/bin/pip" install --no-build-isolation --no-index ./python >"$log" 2>&1; then
    echo "$py ($version): pip install --no-build-isolation --no-index ./python failed:"
    tail -20 "$log"
    exit 1
  fi
  where=$(cd "$tmp" && "$venv/bin/python" -c 'import mcmcaudit; print(mcmcaudit.__file__)')
  case "$where" in
    "$venv"/*) ;;
    *) echo "$py ($version): mcmcaudit imported from $where, not from the venv"; exit 1 ;;
  esac
  "$venv/bin/python" -m unittest discover -s python/_backend >"$tmp/unittest.log" 2>&1 \
    || { cat "$tmp/unittest.log"; exit 1; }
  echo "$py ($version, pip $("$venv/bin/pip" --version | cut -d' ' -f2)): installed and imported; backend tests: $(tail -1 "$tmp/unittest.log")"
  rm -rf "$venv"
  [ "$py" = /usr/bin/python3 ] || others=$((others + 1))
done
if [ "$others" = 0 ]; then
  echo "second interpreter: skipped, none found besides /usr/bin/python3 (looked at python3 on PATH, pyenv, /usr/local/bin/python3.*)"
fi
