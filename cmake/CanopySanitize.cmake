# Sanitizer and fuzzing builds (docs/RELIABILITY.md, "Sanitizers" and "Fuzzing").
#
# CANOPY_SANITIZE=address,undefined (any list -fsanitize= takes) instruments Canopy's own C and C++
# code with -fsanitize=<list> -fno-omit-frame-pointer; ITK, VTK and the other system libraries stay
# uninstrumented. Undefined behaviour aborts (-fno-sanitize-recover) so ctest reports it as a failure.
# CUDA device code and the host side of .cu files are not instrumented (nvcc does not take the flags);
# running a CUDA build under ASan needs ASAN_OPTIONS=protect_shadow_gap=0 and is not tested here.
#
# CANOPY_BUILD_FUZZERS=ON (clang only) builds the libFuzzer targets of Testing/Fuzz. The whole build
# directory is then compiled with -fsanitize=fuzzer-no-link,address,undefined, so use a build
# directory of its own and build only the fuzz targets (scripts/fuzz does both).
set(CANOPY_SANITIZE "" CACHE STRING "Sanitizers for Canopy's code, e.g. address,undefined (empty: none)")
option(CANOPY_BUILD_FUZZERS "Build the libFuzzer targets in Testing/Fuzz (clang; a build directory of its own)" OFF)

if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  include(${CMAKE_CURRENT_LIST_DIR}/CanopyITKClang.cmake)
endif()

set(_canopy_sanitizers "${CANOPY_SANITIZE}")
if(CANOPY_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "CANOPY_BUILD_FUZZERS needs clang (libFuzzer); configure with CC=clang CXX=clang++")
  endif()
  if(_canopy_sanitizers STREQUAL "")
    set(_canopy_sanitizers "address,undefined")
  endif()
  set(_canopy_sanitizers "fuzzer-no-link,${_canopy_sanitizers}")
endif()

if(NOT _canopy_sanitizers STREQUAL "")
  if(CANOPY_USE_CUDA)
    message(WARNING "CANOPY_SANITIZE: C/C++ code only; CUDA sources (.cu) are built without sanitizers")
  endif()
  set(_canopy_sanitize_flags -fsanitize=${_canopy_sanitizers} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${_canopy_sanitize_flags}>")
  # fuzzer-no-link only instruments; the fuzz targets link libFuzzer themselves (-fsanitize=fuzzer).
  string(REPLACE "fuzzer-no-link," "" _canopy_link_sanitizers "${_canopy_sanitizers}")
  add_link_options(-fsanitize=${_canopy_link_sanitizers})
  message(STATUS "Canopy: -fsanitize=${_canopy_sanitizers}")
endif()
