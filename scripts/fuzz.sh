#!/usr/bin/env bash
# Fuzzes every fuzz target of the module, each for FUZZTIME (a count of
# inputs such as 5000x, or a duration), one after another: go test fuzzes
# one target of one package at a time. The list comes from
# "go test -list '^Fuzz'", so a new target is fuzzed without being named
# here. A failure leaves its input under the package's testdata/fuzz.
#   GO        the go command (go)
#   FUZZTIME  inputs (or time) per target (5000x)
#   FUZZPKGS  the packages to look in (./...)
set -euo pipefail

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-5000x}
FUZZPKGS=${FUZZPKGS:-./...}

# go test -list prints a package's matching names, then its "ok" line.
listing=$("$GO" test -vet=off -list '^Fuzz' $FUZZPKGS)
targets=$(awk '/^Fuzz/ {n[++k] = $1; next} /^ok / {for (i = 1; i <= k; i++) print $2 ":" n[i]; k = 0}' <<<"$listing")
if [ -z "$targets" ]; then
	echo "fuzz: no fuzz targets in $FUZZPKGS" >&2
	exit 1
fi
total=$(wc -l <<<"$targets")
i=0
for t in $targets; do
	i=$((i + 1))
	pkg=${t%%:*}
	name=${t##*:}
	echo "fuzz [$i/$total] $pkg $name ($FUZZTIME)"
	"$GO" test -run='^$' -fuzz="^$name\$" -fuzztime="$FUZZTIME" -fuzzminimizetime=200x "$pkg"
done
