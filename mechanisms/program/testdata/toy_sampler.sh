#!/bin/sh
# A toy sampler speaking the mcmcaudit/1 protocol (docs/protocol.md) in
# POSIX sh, for the package's Example: one release point of one
# coordinate, a deterministic function of (seed, side) — the seed's last
# two digits divided by 100 on D, plus 1 on D'.
echo '{"mcmcaudit": 1, "dim": 1, "releases": ["final"]}'
while IFS= read -r line; do
	trial=$(printf '%s\n' "$line" | sed -n 's/.*"trial": *\([0-9]*\).*/\1/p')
	seed=$(printf '%s\n' "$line" | sed -n 's/.*"seed": *\([0-9]*\).*/\1/p')
	digits=$(printf '0%s\n' "$seed" | sed 's/.*\(..\)$/\1/')
	case $line in
	*'"side": "D'"'"'"'*) whole=1 ;;
	*) whole=0 ;;
	esac
	echo "{\"trial\": $trial, \"releases\": [[$whole.$digits]]}"
done
