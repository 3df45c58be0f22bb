# ctest fixture (cmake -P): configure the SimGrid SMPI build with cmake/smpi.cmake if needed and
# build the benchmarks the simulated tests run. A lock serialises concurrent test runs from
# several build trees that share one SMPI build.
#   cmake -DSOURCE_DIR=... -DBUILD_DIR=... -DTARGETS="a;b" -P build_smpi.cmake
foreach(v SOURCE_DIR BUILD_DIR TARGETS)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "build_smpi.cmake: -D${v}=... is required")
  endif()
endforeach()
file(MAKE_DIRECTORY ${BUILD_DIR})
file(LOCK ${BUILD_DIR}/.isthmus-test-lock TIMEOUT 900 RESULT_VARIABLE lock_error)
if(lock_error)
  message(FATAL_ERROR "build_smpi.cmake: could not lock ${BUILD_DIR}: ${lock_error}")
endif()
if(NOT EXISTS ${BUILD_DIR}/CMakeCache.txt)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${BUILD_DIR} -G Ninja
                          -DCMAKE_BUILD_TYPE=RelWithDebInfo
                          -DCMAKE_TOOLCHAIN_FILE=${SOURCE_DIR}/cmake/smpi.cmake
                  RESULT_VARIABLE rc)
  if(rc)
    file(REMOVE ${BUILD_DIR}/CMakeCache.txt)
    message(FATAL_ERROR "build_smpi.cmake: configuring the SMPI build in ${BUILD_DIR} failed")
  endif()
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} -j 2 --target ${TARGETS}
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "build_smpi.cmake: building ${TARGETS} under SMPI failed")
endif()
