#!/usr/bin/env bash
# Opt-in: build a newer SimGrid (default 4.1) with SMPI into a prefix that `isthmus simulate
# --simgrid PREFIX` (or ISTHMUS_SIMGRID=PREFIX) then uses instead of Debian's SimGrid 3.32, which
# stays the default (docs/simulation.md sect. 5, "SimGrid 4.1 (opt-in)").
#   sim/build_simgrid.sh [PREFIX]        (default /work/simgrid-4.1)
# Environment: SIMGRID_VERSION (default 4.1), SIMGRID_SRC (work directory for the source and the
# build, default PREFIX-src), JOBS (default 2).
# Idempotent: does nothing when PREFIX/bin/smpirun already exists. The source is the `simgrid`
# source distribution on PyPI (its full source tree, SMPI included), fetched with pip; build
# dependencies come from apt-get by package name, only when missing. The build runs under
# `nice -n 10` (the machine is shared); it took 10 min here (2 cores, one simulation beside it).
set -euo pipefail
version=${SIMGRID_VERSION:-4.1}
prefix=$(realpath -m "${1:-/work/simgrid-$version}")
src=${SIMGRID_SRC:-$prefix-src}
jobs=${JOBS:-2}
start=$(date +%s)

if [[ -x "$prefix/bin/smpirun" ]]; then
  have=$("$prefix/bin/smpirun" -version 2>/dev/null | head -1 || true)
  echo "build_simgrid.sh: $prefix already holds ${have:-SimGrid}; nothing to do"
  exit 0
fi

# Build dependencies. Boost headers are the only mandatory library; context/stacktrace, Eigen
# and JSON are optional features the simulations here do not use.
need=()
for pkg in cmake make g++ python3 libboost-dev; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if ((${#need[@]})); then
  echo "build_simgrid.sh: installing ${need[*]}"
  sudo=$([[ $(id -u) -eq 0 ]] || echo sudo)
  $sudo apt-get update
  $sudo apt-get install -y --no-install-recommends "${need[@]}"
fi

mkdir -p "$src"
tarball="$src/simgrid-$version.tar.gz"
if [[ ! -f "$tarball" ]]; then
  python3 -m pip download --no-binary :all: --no-deps --dest "$src" "simgrid==$version"
fi
if [[ ! -f "$src/simgrid-$version/CMakeLists.txt" ]]; then
  tar -xzf "$tarball" -C "$src"
fi

# Only the library, smpirun/smpicc/smpicxx and their tools: no bindings, documentation,
# model checker, sthread or Fortran (isthmus does not build Fortran under SMPI); the test suites
# are not part of the default target. LTO is off to keep the build short (its whole-library link
# is slow on 2 cores); enable_debug=OFF compiles XBT_DEBUG logging out of the hot paths.
build="$src/build"
nice -n 10 cmake -S "$src/simgrid-$version" -B "$build" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix" \
  -Denable_smpi=ON \
  -Denable_compile_optimizations=ON \
  -Denable_lto=OFF \
  -Denable_debug=OFF \
  -Denable_java=OFF \
  -Denable_python=OFF \
  -Denable_documentation=OFF \
  -Denable_model-checking=OFF \
  -Denable_sthread=OFF \
  -Denable_fortran=OFF \
  -Denable_ns3=OFF \
  -Denable_smpi_papi=OFF \
  -Denable_testsuite_smpi_MPICH3=OFF \
  -Denable_testsuite_smpi_MBI=OFF \
  -Denable_testsuite_McMini=OFF \
  -Denable_compile_warnings=OFF \
  -DEIGEN3_HINT=OFF
nice -n 10 cmake --build "$build" -j "$jobs"
nice -n 10 cmake --install "$build"

"$prefix/bin/smpirun" -version | head -1
end=$(date +%s)
echo "build_simgrid.sh: SimGrid $version installed in $prefix in" \
     "$(((end - start) / 60)) min $(((end - start) % 60)) s"
echo "use it with: bin/isthmus simulate --simgrid $prefix ...   (or ISTHMUS_SIMGRID=$prefix)"
