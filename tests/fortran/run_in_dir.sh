#!/usr/bin/env bash
# Runs one Fortran test program on N ranks in a fresh run directory, and prints what it printed
# (standard output, then each rank's standard error).
# The namcouple is a copy of $ISTHMUS_FTEST_NAMCOUPLE if set, else one that couples nothing
# (for programs that need only oasis_init_comp to find one); the files in $ISTHMUS_FTEST_FILES
# (space-separated paths) are linked into it.
# EXPECT: a line the output must hold; the exit code must be 0, or not 0 with ISTHMUS_FTEST_ABORTS=1.
# Usage: run_in_dir.sh MPIRUN_SH N EXPECT PROGRAM [ARGS...]
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
# files the run reads (weights files), linked into it: $ISTHMUS_FTEST_FILES, space-separated
for f in ${ISTHMUS_FTEST_FILES:-}; do ln -s "$f" "$dir/"; done
cd "$dir"
# Each rank writes its standard error into a file of its own (stderr.<rank>), read back after
# the run: a launcher forwards the ranks' output through pipes, and when a rank calls MPI_Abort
# MPICH's Hydra may kill everything before draining them (the message a test expects was then
# lost in about one abort test in twenty); a file written by the rank itself keeps it.
# shellcheck disable=SC2016 # expanded by the rank's shell
out=$("$mpirun_sh" "$n" bash -c 'exec "$0" "$@" 2> "stderr.${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-0}}"' "$@" 2>&1)
rc=$?
for f in stderr.*; do
  [ -s "$f" ] && out="$out"$'\n'"$(cat "$f")"
done
echo "$out"
grep -qF -- "$expect" <<<"$out" || exit 1
# a run that should end well must also exit well (a sanitizer's report after the last line
# makes the exit code non-zero); one that tests an abort (ISTHMUS_FTEST_ABORTS=1) must not
if [ "${ISTHMUS_FTEST_ABORTS:-0}" = 1 ]; then
  [ "$rc" -ne 0 ] || { echo "run_in_dir.sh: the run was expected to abort, but exited with 0"; exit 1; }
else
  [ "$rc" -eq 0 ] || { echo "run_in_dir.sh: the run exited with $rc"; exit 1; }
fi
