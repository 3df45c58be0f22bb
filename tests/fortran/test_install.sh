#!/usr/bin/env bash
# A model's build changes only its flags: installs the build tree into a fresh prefix, compiles
# a Fortran program written for OASIS3-MCT (test_grids.F90) with nothing but
# `pkg-config --cflags/--libs isthmus-oasis` (and netCDF-Fortran, which the program itself
# uses), then runs it on 2 ranks; and a C program written for OASIS3-MCT 5.0's C interface
# (oasis_c_interface.c, #include "oasis_c.h") the same way, run at 1 + 1 ranks.
# Usage: test_install.sh BUILD_DIR MPIRUN_SH PROGRAM_SOURCE RUN_IN_DIR_SH [C_PROGRAM_SOURCE]
set -euo pipefail
build=$1 mpirun_sh=$2 source=$3 run_in_dir=$4 csource=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
prefix=$(mktemp -d /tmp/isthmus-finstall-XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" > "$prefix/install.log"
pc=$(find "$prefix" -name isthmus-oasis.pc)
test -n "$pc" || { echo "isthmus-oasis.pc not installed"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
cd "$prefix"
# shellcheck disable=SC2046 # the flags are words
# ISTHMUS_MPIF90: the MPI's Fortran wrapper (an MPICH build's tests set mpif90.mpich)
"${ISTHMUS_MPIF90:-mpif90}" -o model "$source" $(pkg-config --cflags isthmus-oasis) -I"$(pkg-config --variable=fmoddir netcdf-fortran)" \
  $(pkg-config --libs isthmus-oasis) $(pkg-config --libs netcdf-fortran)
"$run_in_dir" "$mpirun_sh" 2 "fortran grids: ok" "$prefix/model"
if [ -n "$csource" ]; then
  # ISTHMUS_MPICC: the MPI's C wrapper (an MPICH build's tests set mpicc.mpich)
  # shellcheck disable=SC2046 # the flags are words
  "${ISTHMUS_MPICC:-mpicc}" -o cmodel "$csource" $(pkg-config --cflags isthmus-oasis) \
    $(pkg-config --libs isthmus-oasis)
  "$here/run_interface.sh" "$mpirun_sh" "$prefix/cmodel" 1 1 bundle
fi
