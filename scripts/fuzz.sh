#!/usr/bin/env bash
# Fuzzes the fuzz targets given as PACKAGE:Target (a package directory
# relative to the module, as the Makefile's FUZZ_TARGETS lists them; the
# list is checked against the tree by internal/archtest), each for
# FUZZTIME (a count of inputs such as 5000x, or a duration), one after
# another: go test fuzzes one target of one package at a time. A failure
# leaves its input under the package's testdata/fuzz.
#   GO        the go command (go)
#   FUZZTIME  inputs (or time) per target (5000x)
set -euo pipefail

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-5000x}

if [ $# -eq 0 ]; then
	echo "usage: fuzz.sh PACKAGE:Target ..." >&2
	exit 2
fi
i=0
for t in "$@"; do
	i=$((i + 1))
	pkg=${t%%:*}
	name=${t##*:}
	if [ "$pkg" = "$t" ] || [ -z "$name" ]; then
		echo "fuzz: $t: want PACKAGE:Target" >&2
		exit 2
	fi
	echo "fuzz [$i/$#] $pkg $name ($FUZZTIME)"
	"$GO" test -run='^$' -fuzz="^$name\$" -fuzztime="$FUZZTIME" -fuzzminimizetime=200x "./$pkg"
done
