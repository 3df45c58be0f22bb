# Helpers shared by every layer, test and benchmark folder.

# isthmus_layer(NAME DEPENDS lower layers...) : a static library from src/NAME/*.cpp
function(isthmus_layer name)
  cmake_parse_arguments(L "" "" "DEPENDS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  add_library(isthmus_${name} STATIC ${srcs})
  target_include_directories(isthmus_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(isthmus_${name} PUBLIC isthmus_mpi)
  foreach(dep IN LISTS L_DEPENDS)
    target_link_libraries(isthmus_${name} PUBLIC isthmus_${dep})
  endforeach()
  set_property(GLOBAL APPEND PROPERTY ISTHMUS_LAYER_TARGETS isthmus_${name})
endfunction()

# Rank counts every MPI test runs at: odd, even, non powers of two, oversubscribed on 2 cores.
set(ISTHMUS_TEST_RANKS 1 2 3 4 5 7 8 CACHE STRING "rank counts of the MPI tests")

# isthmus_unit_test(NAME SOURCES ... LIBS ...) : a GoogleTest binary run serially
function(isthmus_unit_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest_main)
  add_test(NAME ${name} COMMAND ${name})
endfunction()

# isthmus_mpi_test(NAME SOURCES ... LIBS ... [RANKS n...] [ARGS ...])
# A GoogleTest binary with tests/mpi_gtest_main.cpp, run under mpirun at each rank count.
function(isthmus_mpi_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;RANKS;ARGS" ${ARGN})
  if(NOT T_RANKS)
    set(T_RANKS ${ISTHMUS_TEST_RANKS})
  endif()
  add_executable(${name} ${T_SOURCES} ${PROJECT_SOURCE_DIR}/tests/mpi_gtest_main.cpp)
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest isthmus_mpi)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  foreach(n IN LISTS T_RANKS)
    add_test(NAME ${name}_np${n}
             COMMAND ${PROJECT_SOURCE_DIR}/tests/mpirun.sh ${n} $<TARGET_FILE:${name}> ${T_ARGS})
    set_tests_properties(${name}_np${n} PROPERTIES PROCESSORS 2 TIMEOUT 300 LABELS mpi)
  endforeach()
endfunction()

# isthmus_bench(NAME SOURCES ... LIBS ...) : a benchmark program printing JSON lines
function(isthmus_bench name)
  cmake_parse_arguments(B "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(bench_${name} ${B_SOURCES})
  target_link_libraries(bench_${name} PRIVATE ${B_LIBS} isthmus_mpi)
  target_include_directories(bench_${name} PRIVATE ${PROJECT_SOURCE_DIR}/bench ${PROJECT_SOURCE_DIR}/src)
endfunction()
