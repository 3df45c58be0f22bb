#!/usr/bin/env bash
# Runs one Fortran test program on N ranks in a fresh run directory, and prints what it printed.
# The namcouple is a copy of $ISTHMUS_FTEST_NAMCOUPLE if set, else one that couples nothing
# (for programs that need only oasis_init_comp to find one).
# EXPECT: a line the output must hold. Usage: run_in_dir.sh MPIRUN_SH N EXPECT PROGRAM [ARGS...]
set -uo pipefail
mpirun_sh=$1 n=$2 expect=$3
shift 3
dir=$(mktemp -d /tmp/isthmus-ftest-XXXXXX)
trap 'rm -rf "$dir"' EXIT
if [ -n "${ISTHMUS_FTEST_NAMCOUPLE:-}" ]; then
  cp "$ISTHMUS_FTEST_NAMCOUPLE" "$dir/namcouple"
else
  printf '$NFIELDS\n  0\n$END\n$RUNTIME\n  3600\n$END\n$STRINGS\n$END\n' > "$dir/namcouple"
fi
cd "$dir"
out=$("$mpirun_sh" "$n" "$@" 2>&1)
echo "$out"
grep -qF -- "$expect" <<<"$out"
