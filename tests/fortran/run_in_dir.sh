#!/usr/bin/env bash
# Runs one Fortran test program on N ranks in a fresh run directory whose namcouple couples
# nothing (the program needs only oasis_init_comp to find one), and prints what it printed.
# EXPECT: a line the output must hold. Usage: run_in_dir.sh MPIRUN_SH N EXPECT PROGRAM [ARGS...]
set -uo pipefail
mpirun_sh=$1 n=$2 expect=$3
shift 3
dir=$(mktemp -d /tmp/isthmus-ftest-XXXXXX)
trap 'rm -rf "$dir"' EXIT
printf '$NFIELDS\n  0\n$END\n$RUNTIME\n  3600\n$END\n$STRINGS\n$END\n' > "$dir/namcouple"
cd "$dir"
out=$("$mpirun_sh" "$n" "$@" 2>&1)
echo "$out"
grep -qF -- "$expect" <<<"$out"
