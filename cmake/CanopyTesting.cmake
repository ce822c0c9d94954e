# Test helpers. Every test carries labels (cpu, gpu, regression, long). GPU tests call GTEST_SKIP()
# where no GPU exists; gtest_discover_tests turns that into a ctest "skipped", never "passed".
find_package(GTest REQUIRED)
include(GoogleTest)

# canopy_add_gtest(NAME SOURCES src... LIBS lib... LABELS label...)
function(canopy_add_gtest name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} canopy_testing GTest::gtest GTest::gtest_main)
  if(NOT ARG_LABELS)
    set(ARG_LABELS cpu)
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST
    PROPERTIES LABELS "${ARG_LABELS}" ENVIRONMENT "CANOPY_TEST_OUTPUT=${CMAKE_BINARY_DIR}/Testing/Temporary")
endfunction()
