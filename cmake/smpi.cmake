# Toolchain file for the SimGrid SMPI build (build-smpi/): the library and the benchmarks are
# compiled unchanged with smpicc/smpicxx (and smpif90 when Fortran is enabled), so that the same
# code runs on a simulated network under smpirun.
#
#   cmake -S . -B build-smpi -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/smpi.cmake
#   ninja -C build-smpi bench_neighbour bench_ping bench_redist
#
# or let `isthmus simulate` and the simulated tests (tests/sim) configure it on demand.
#
# By default the compilers are those in PATH (Debian's libsimgrid-dev, SimGrid 3.32). Another
# SimGrid installation (e.g. 4.1 built by sim/build_simgrid.sh) is used, and only it, with
#   -DISTHMUS_SIMGRID_PREFIX=/work/simgrid-4.1
# (`isthmus simulate --simgrid PREFIX` passes it); give such a build its own build directory.

# The toolchain file is read again for every try_compile project: pass the prefix on to them.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ISTHMUS_SIMGRID_PREFIX)
if(ISTHMUS_SIMGRID_PREFIX)
  set(_isthmus_smpi_where HINTS "${ISTHMUS_SIMGRID_PREFIX}/bin" NO_DEFAULT_PATH)
  set(_isthmus_smpi_missing
      " in ${ISTHMUS_SIMGRID_PREFIX}/bin (ISTHMUS_SIMGRID_PREFIX; sim/build_simgrid.sh builds one)")
else()
  set(_isthmus_smpi_where)
  set(_isthmus_smpi_missing "; install libsimgrid-dev (make deps)")
endif()
find_program(SMPICC smpicc ${_isthmus_smpi_where})
find_program(SMPICXX smpicxx ${_isthmus_smpi_where})
find_program(SMPIF90 smpif90 ${_isthmus_smpi_where})
if(NOT SMPICC OR NOT SMPICXX)
  message(FATAL_ERROR "cmake/smpi.cmake: smpicc/smpicxx not found${_isthmus_smpi_missing} "
                      "to build against SimGrid SMPI")
endif()

set(CMAKE_C_COMPILER ${SMPICC})
set(CMAKE_CXX_COMPILER ${SMPICXX})
if(SMPIF90)
  set(CMAKE_Fortran_COMPILER ${SMPIF90})
endif()

# smpicc links every program as a shared object that smpirun dlopens. CMake's compiler probes
# must instead see an ordinary compiler; SMPI_PRETEND_CC does that for configure time only (the
# environment of the cmake process, not of the later build).
set(ENV{SMPI_PRETEND_CC} 1)

set(ISTHMUS_SMPI ON CACHE BOOL "Build against SimGrid SMPI" FORCE)
# Tests run under the real MPI; under SMPI only the library and the benchmarks are built.
set(ISTHMUS_TESTS OFF CACHE BOOL "Build the tests" FORCE)
