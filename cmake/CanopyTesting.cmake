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
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST TEST_LIST ${name}_TESTS
    PROPERTIES ENVIRONMENT "CANOPY_TEST_OUTPUT=${CMAKE_BINARY_DIR}/Testing/Temporary")
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
