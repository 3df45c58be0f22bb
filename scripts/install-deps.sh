#!/usr/bin/env bash
# Installs what isthmus needs to build, test and simulate, by package name only.
# Idempotent: when everything is present it only checks and returns in about a second.
# Usage: scripts/install-deps.sh [--mpich PYTHONUSERBASE]
#   --mpich: also MPICH (Debian's mpich and libmpich-dev, beside Open MPI through alternatives:
#   mpicc.mpich, mpiexec.mpich, ...) and an mpi4py built against it as a user site under the
#   given PYTHONUSERBASE, apart from the one pip built against Open MPI (`make test MPI=mpich`
#   sets PYTHONUSERBASE for its tests; a user site comes before the site-packages).
set -euo pipefail
MPICH_PYBASE=""
if [ "${1:-}" = "--mpich" ]; then
  [[ ${2:-} == /* ]] || { echo "install-deps: --mpich needs an absolute PYTHONUSERBASE" >&2; exit 2; }
  MPICH_PYBASE=$2
fi

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config gfortran
  openmpi-bin libopenmpi-dev
  libnetcdf-dev netcdf-bin libnetcdff-dev
  libpnetcdf-dev  # PnetCDF (for Open MPI): weights files written by every rank at once
  libgtest-dev libyaml-cpp-dev
  libsimgrid-dev  # SimGrid 3.32 with SMPI: smpicc, smpicxx, smpirun (it provides "simgrid")
  libnanoflann-dev  # the spatial index of weight generation (header-only)
  liboasis3-dev  # OASIS3-MCT 2.0: the tests build an OASIS3-MCT model against it and against isthmus
  liboasis3-doc  # OASIS3-MCT's own examples: one is built unchanged against both and compared
)
[ -n "$MPICH_PYBASE" ] && APT_PACKAGES+=(mpich libmpich-dev)
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

# mpi4py against MPICH, in its own user site: the one above is linked to Open MPI's libmpi, and
# a process must not load both MPI libraries (libisthmus of an MPICH build links libmpich).
if [ -n "$MPICH_PYBASE" ]; then
  mpich_mpi4py() {
    PYTHONUSERBASE="$MPICH_PYBASE" "$PY" -c "import mpi4py; mpi4py.rc.initialize = False
from mpi4py import MPI; assert MPI.Get_library_version().startswith('MPICH')" 2>/dev/null
  }
  if ! mpich_mpi4py; then
    # the version pip installed for Open MPI, built from source with MPICH's compiler wrapper
    ver=$("$PY" -c "import mpi4py; print(mpi4py.__version__)" 2>/dev/null || true)
    echo "install-deps: pip install --user mpi4py${ver:+==$ver} (MPICC=mpicc.mpich, PYTHONUSERBASE=$MPICH_PYBASE)"
    PYTHONUSERBASE="$MPICH_PYBASE" MPICC=mpicc.mpich "$PY" -m pip install -q --user \
      --no-binary mpi4py --no-cache-dir --ignore-installed "mpi4py${ver:+==$ver}"
    mpich_mpi4py || { echo "install-deps: mpi4py under $MPICH_PYBASE is not MPICH's" >&2; exit 1; }
  fi
fi
echo "install-deps: all dependencies present"
