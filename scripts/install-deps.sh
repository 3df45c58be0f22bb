#!/usr/bin/env bash
# Installs what isthmus needs to build, test and simulate, by package name only.
# Idempotent: when everything is present it only checks and returns in about a second.
set -euo pipefail

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config gfortran
  openmpi-bin libopenmpi-dev
  libnetcdf-dev netcdf-bin libnetcdff-dev
  libgtest-dev libyaml-cpp-dev
  libsimgrid-dev simgrid
  libnanoflann-dev  # the spatial index of weight generation (header-only)
  liboasis3-dev  # OASIS3-MCT 2.0: the tests build an OASIS3-MCT model against it and against isthmus
)
PY_MODULES=(mpi4py numpy netCDF4 matplotlib pytest tqdm)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: apt-get install ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
pymissing=()
for m in "${PY_MODULES[@]}"; do
  "$PY" -c "import $m" 2>/dev/null || pymissing+=("$m")
done
if ((${#pymissing[@]})); then
  echo "install-deps: pip install ${pymissing[*]}"
  # mpi4py builds against the Open MPI just installed
  MPICC=mpicc "$PY" -m pip install -q "${pymissing[@]}"
fi
echo "install-deps: all dependencies present"
