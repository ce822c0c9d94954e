// CANOPY_HD marks math shared by the CPU reference and the CUDA kernels: one definition, two compilers.
#pragma once

#if defined(__CUDACC__)
#  define CANOPY_HD __host__ __device__ __forceinline__
#  define CANOPY_RESTRICT __restrict__
#else
#  define CANOPY_HD inline
#  define CANOPY_RESTRICT __restrict__
#endif
