# Building against Debian's MPICH beside Open MPI (-DISTHMUS_MPI=mpich; `make test MPI=mpich`).
#
# Debian installs both through alternatives: mpicc, mpirun, ... are Open MPI's, MPICH's tools
# carry a suffix (mpicc.mpich, mpicxx.mpich, mpif90.mpich, mpiexec.mpich). FindMPI is pointed at
# MPICH's wrappers, checked to have found MPICH's headers and libraries (not Open MPI's), and
# ctest runs every test with an environment that launches through MPICH's mpiexec (Hydra):
#   ISTHMUS_MPIEXEC  tests/mpirun.sh's launcher instead of Open MPI's mpirun
#   MPIRUN           `isthmus weights`'s launcher: tests/mpirun.sh, which drops the Open MPI
#                    flags that command adds (--allow-run-as-root, --oversubscribe)
#   ISTHMUS_MPIF90   the Fortran wrapper tests/fortran/test_install.sh compiles a model with
#   ISTHMUS_MPICC    and the C wrapper it compiles a C model with
#   PYTHONUSERBASE   a user site holding mpi4py built against MPICH (scripts/install-deps.sh
#                    --mpich DIR): it comes before the site-packages, whose mpi4py is Open MPI's
#   ISTHMUS_MPICH_PRELOAD  libisthmus_mpich_yield.so, which tests/mpirun.sh preloads into the
#                    ranks (below: MPICH has no counterpart of Open MPI's mpi_yield_when_idle)

set(ISTHMUS_MPICH_PYTHONUSERBASE ${PROJECT_BINARY_DIR}/python-user CACHE PATH
    "PYTHONUSERBASE of the mpi4py built against MPICH (scripts/install-deps.sh --mpich DIR)")

foreach(tool mpicc mpicxx mpif90 mpiexec)
  string(TOUPPER ${tool} _var)
  find_program(ISTHMUS_MPICH_${_var} ${tool}.mpich)
  if(NOT ISTHMUS_MPICH_${_var})
    message(FATAL_ERROR "ISTHMUS_MPI=mpich: ${tool}.mpich not found; install Debian's mpich and "
                        "libmpich-dev (scripts/install-deps.sh --mpich DIR, or make deps MPI=mpich)")
  endif()
endforeach()
# FindMPI's inputs (cache variables, as a user would give them on the command line)
set(MPI_C_COMPILER ${ISTHMUS_MPICH_MPICC} CACHE FILEPATH "MPICH's C wrapper" FORCE)
set(MPI_CXX_COMPILER ${ISTHMUS_MPICH_MPICXX} CACHE FILEPATH "MPICH's C++ wrapper" FORCE)
set(MPI_Fortran_COMPILER ${ISTHMUS_MPICH_MPIF90} CACHE FILEPATH "MPICH's Fortran wrapper" FORCE)
set(MPIEXEC_EXECUTABLE ${ISTHMUS_MPICH_MPIEXEC} CACHE FILEPATH "MPICH's mpiexec (Hydra)" FORCE)

# isthmus_check_mpich(LANG...): after find_package(MPI), every language's include folders and
# libraries are MPICH's; Open MPI's found instead would make a build that silently is not one.
function(isthmus_check_mpich)
  foreach(lang IN LISTS ARGN)
    set(_inc "${MPI_${lang}_INCLUDE_DIRS}")
    set(_libs "${MPI_${lang}_LIBRARIES}")
    if(NOT _libs MATCHES "mpich" OR _libs MATCHES "openmpi|libmpi\\.so|open-rte|open-pal"
       OR _inc MATCHES "openmpi")
      message(FATAL_ERROR "ISTHMUS_MPI=mpich: FindMPI's ${lang} is not MPICH's:\n"
                          "  includes  ${_inc}\n  libraries ${_libs}")
    endif()
    message(STATUS "MPICH ${lang}: ${MPI_${lang}_COMPILER} -> ${_libs}")
  endforeach()
endfunction()

# isthmus_mpich_test_environment(): every folder with tests includes the environment above in
# its CTestTestfile.cmake (ctest then sets it for itself and every test it starts, whichever
# folder ctest is run from). Called at the end of the top-level CMakeLists.txt.
function(isthmus_mpich_test_environment)
  # Debian's MPICH (ch4:ucx) polls without ever yielding the core, and the tests run 8 ranks on
  # 2 cores: a rank waiting for a message burns its whole time slice while the rank that would
  # send it waits for a core (an allreduce at 8 ranks took 27 ms here; test_collectives_np8 44 s
  # against 0.6 s under Open MPI, which tests/mpirun.sh tells to yield when idle). This library,
  # preloaded into the ranks, wraps UCX's progress function, which MPICH's progress loop calls on
  # every poll, and yields the core when a poll found nothing to do (test_collectives_np8: 3.8 s).
  # It changes no MPI semantics: only when an idle rank gives its core away.
  set(_src ${PROJECT_SOURCE_DIR}/tests/mpich_yield.c)
  add_library(isthmus_mpich_yield SHARED ${_src})
  target_link_libraries(isthmus_mpich_yield PRIVATE ${CMAKE_DL_LIBS})

  set(_env ${PROJECT_BINARY_DIR}/isthmus_mpich_test_env.cmake)
  string(CONCAT _content
         "# written by cmake/mpich.cmake: the MPICH build's tests launch through MPICH\n"
         "set(ENV{ISTHMUS_MPIEXEC} \"${ISTHMUS_MPICH_MPIEXEC}\")\n"
         "set(ENV{MPIRUN} \"${PROJECT_SOURCE_DIR}/tests/mpirun.sh\")\n"
         "set(ENV{ISTHMUS_MPIF90} \"${ISTHMUS_MPICH_MPIF90}\")\n"
         "set(ENV{ISTHMUS_MPICC} \"${ISTHMUS_MPICH_MPICC}\")\n"
         "set(ENV{PYTHONUSERBASE} \"${ISTHMUS_MPICH_PYTHONUSERBASE}\")\n"
         "set(ENV{ISTHMUS_MPICH_PRELOAD} \"$<TARGET_FILE:isthmus_mpich_yield>\")\n")
  file(GENERATE OUTPUT ${_env} CONTENT "${_content}")
  set(_dirs ${PROJECT_SOURCE_DIR})
  while(_dirs)
    list(POP_FRONT _dirs _d)
    set_property(DIRECTORY ${_d} APPEND PROPERTY TEST_INCLUDE_FILES ${_env})
    get_property(_sub DIRECTORY ${_d} PROPERTY SUBDIRECTORIES)
    list(APPEND _dirs ${_sub})
  endwhile()

  # The Python tests and the Python toy need mpi4py against MPICH: say so now if it is missing
  # (make test MPI=mpich installs it) rather than let them mix Open MPI's mpi4py with libmpich.
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_FOUND)
    execute_process(
      COMMAND ${CMAKE_COMMAND} -E env PYTHONUSERBASE=${ISTHMUS_MPICH_PYTHONUSERBASE}
              ${Python3_EXECUTABLE} -c "import mpi4py; mpi4py.rc.initialize = False
from mpi4py import MPI; print(MPI.Get_library_version().splitlines()[0])"
      OUTPUT_VARIABLE _ver OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
    if(_rc EQUAL 0 AND _ver MATCHES "^MPICH")
      message(STATUS "mpi4py for the tests (${ISTHMUS_MPICH_PYTHONUSERBASE}): ${_ver}")
    else()
      message(WARNING "ISTHMUS_MPI=mpich: no mpi4py built against MPICH under "
                      "${ISTHMUS_MPICH_PYTHONUSERBASE} (found: '${_ver}'): the Python tests "
                      "that run MPI will fail. Install it with\n  scripts/install-deps.sh "
                      "--mpich ${ISTHMUS_MPICH_PYTHONUSERBASE}\n(make test MPI=mpich does)")
    endif()
  endif()
endfunction()
