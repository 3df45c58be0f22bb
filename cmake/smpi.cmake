# Toolchain file for the SimGrid SMPI build (build-smpi/): the library and the benchmarks are
# compiled unchanged with smpicc/smpicxx (and smpif90 when Fortran is enabled), so that the same
# code runs on a simulated network under smpirun.
#
#   cmake -S . -B build-smpi -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/smpi.cmake
#   ninja -C build-smpi bench_neighbour bench_ping bench_redist
#
# or let `isthmus simulate` and the simulated tests (tests/sim) configure it on demand.

find_program(SMPICC smpicc)
find_program(SMPICXX smpicxx)
find_program(SMPIF90 smpif90)
if(NOT SMPICC OR NOT SMPICXX)
  message(FATAL_ERROR "cmake/smpi.cmake: smpicc/smpicxx not found; install libsimgrid-dev "
                      "(make deps) to build against SimGrid SMPI")
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
