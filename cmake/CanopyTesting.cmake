# Test helpers. Every test carries labels (cpu, gpu, regression, long). GPU tests call GTEST_SKIP()
# where no GPU exists; gtest_discover_tests turns that into a ctest "skipped", never "passed".
find_package(GTest REQUIRED)
include(GoogleTest)

# canopy_add_gtest(NAME SOURCES src... LIBS lib... LABELS label... [WHOLE_SUITES suite...])
# Each test is a ctest test of its own (one process each), except the suites named in WHOLE_SUITES:
# each of those is one ctest test named SUITE.all (one process), so a suite whose SetUpTestSuite trains
# a model pays for it once instead of once per test. A name that matches no suite fails (gtest runs
# nothing), and a skip inside the suite reports the whole suite skipped.
#
# Test sources are compiled at CANOPY_TEST_OPTIMIZATION instead of the build type's -O3: at -O3 the
# GoogleTest and ITK code of the test files was a third of a cold build's CPU time (docs/BENCHMARKS.md,
# "Build time"), and -O1 cut their compile time by 40 %. Only the test executables' own
# sources change; the libraries they test, the canopy command the regression tests run and the
# benchmarks keep the build type's flags. Set it to "" to compile tests like everything else.
set(CANOPY_TEST_OPTIMIZATION "-O1" CACHE STRING
  "Optimisation flag of GoogleTest test sources in optimised builds (empty: the build type's flags)")
function(canopy_add_gtest name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS;WHOLE_SUITES" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  if(CANOPY_TEST_OPTIMIZATION) # after the build type's flags on the command line, so it is the one in force
    target_compile_options(${name} PRIVATE
      "$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<NOT:$<CONFIG:Debug>>>:${CANOPY_TEST_OPTIMIZATION}>")
  endif()
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} canopy_testing GTest::gtest GTest::gtest_main)
  if(NOT ARG_LABELS)
    set(ARG_LABELS cpu)
  endif()
  set(environment "CANOPY_TEST_OUTPUT=${CMAKE_BINARY_DIR}/Testing/Temporary")
  set(others "*")
  if(ARG_WHOLE_SUITES)
    set(others "*-")
    foreach(suite IN LISTS ARG_WHOLE_SUITES)
      add_test(NAME ${suite}.all COMMAND ${name} --gtest_filter=${suite}.*)
      set_tests_properties(${suite}.all PROPERTIES LABELS "${ARG_LABELS}" ENVIRONMENT "${environment}"
        SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]" FAIL_REGULAR_EXPRESSION "Running 0 tests from")
      string(APPEND others "${suite}.*:")
    endforeach()
    string(REGEX REPLACE ":$" "" others "${others}")
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST TEST_LIST ${name}_TESTS TEST_FILTER "${others}"
    PROPERTIES ENVIRONMENT "${environment}")
  # Labels are set after discovery, from ctest's own include file: passed through
  # gtest_discover_tests' PROPERTIES, a list such as "gpu;regression" is flattened and only its
  # first label survives (CMake's GoogleTestAddTests re-splits the property list).
  set(labels_file "${CMAKE_CURRENT_BINARY_DIR}/${name}_labels.cmake")
  file(WRITE "${labels_file}"
    "if(${name}_TESTS)\n"
    "  set_tests_properties(\${${name}_TESTS} PROPERTIES LABELS \"${ARG_LABELS}\")\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${labels_file}")
endfunction()
