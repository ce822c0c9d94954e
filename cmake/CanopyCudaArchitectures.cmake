# The CUDA architectures Canopy compiles for, decided before enable_language(CUDA).
#
# Default: real code (SASS) for every architecture CUDA 13 supports that labs have -- T4 (75),
# A100/A30 (80), RTX 30xx/A40/A10 (86; also runs on Orin 8.7), RTX 40xx/L4/L40 (89), H100/H200 (90),
# B200/B300 (100; 10.3 runs it), RTX 50xx/RTX PRO 6000 (120; GB10 12.1 runs it) -- plus PTX of the
# newest (compute_120), which the driver JIT-compiles on GPUs newer than 12.x.
# Override with the CUDAARCHS environment variable or -DCMAKE_CUDA_ARCHITECTURES=... when a build folder
# is first configured, e.g. CUDAARCHS=90 for H100/H200 only (scripts/gpu-tests' bundle, quick local
# builds). CI (scripts/test) compiles the full list: sm_75 has caught code the newer GPUs accept
# (__reduce_min_sync); the compile-time cost is in docs/BENCHMARKS.md, "Build time".
set(CANOPY_DEFAULT_CUDA_ARCHITECTURES 75-real 80-real 86-real 89-real 90-real 100-real 120-real 120-virtual)
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
  set(CMAKE_CUDA_ARCHITECTURES "${CANOPY_DEFAULT_CUDA_ARCHITECTURES}"
      CACHE STRING "CUDA architectures to compile for (CMake syntax: 90, 90-real, 120-virtual, native)")
endif()

# After enable_language(CUDA): the list the binary reports (canopyConfigure.h), with "native"
# resolved to the architectures CMake detected; "all"/"all-major" stay as written (the runtime probe
# then decides whether a GPU is covered).
macro(canopy_resolve_cuda_architectures)
  set(CANOPY_CUDA_ARCHITECTURES_LIST "${CMAKE_CUDA_ARCHITECTURES}")
  if(CMAKE_CUDA_ARCHITECTURES STREQUAL "native" AND CMAKE_CUDA_ARCHITECTURES_NATIVE)
    set(CANOPY_CUDA_ARCHITECTURES_LIST "${CMAKE_CUDA_ARCHITECTURES_NATIVE}")
  endif()
  message(STATUS "Canopy: CUDA architectures ${CANOPY_CUDA_ARCHITECTURES_LIST}")
endmacro()
