#include "canopy/FilterBank.h"
#include "canopy/GreyMorphology.h"

#include "ParallelFor.h"
#include "canopy/Errors.h"
#include "canopy/RecursiveGaussian.h"
#include "canopyConfigure.h"

#if CANOPY_USE_CUDA
#include "canopy/cuda/DeviceBuffer.h"
#endif

#include <algorithm>
#include <cstring>

namespace canopy
{
namespace
{

using Kind = FilterBankChannelSpec::Kind;

/** Runs one filtered channel's recipe, ITK's order of passes, on a backend's buffers:
 *   Gaussian: the last axis first, then 0, 1, ...;
 *   gradient magnitude and Laplacian: per axis d, the derivative along d, then smoothing along the
 *   other axes in increasing order, accumulated per voxel. */
template<typename TOps>
void
FilteredChannel(TOps & ops, const FilterBankGrid & grid, const FilterBankChannelSpec & spec)
{
  const int  D = grid.dimension;
  const auto lines = [&](int axis) { return VolumeLines{ grid.nx, grid.ny, grid.nz, axis }; };
  const auto gaussian = [&](int axis, int order)
  { return MakeRecursiveGaussianCoefficients(spec.sigma, grid.spacing[axis], order); };
  if (spec.kind == Kind::Gaussian)
  {
    ops.Pass(ops.Input(), ops.Output(), lines(D - 1), gaussian(D - 1, 0));
    for (int axis = 0; axis < D - 1; ++axis)
      ops.Pass(ops.Output(), ops.Output(), lines(axis), gaussian(axis, 0));
    return;
  }
  const int order = spec.kind == Kind::GradientMagnitude ? 1 : 2;
  ops.ZeroOutput();
  for (int d = 0; d < D; ++d)
  {
    ops.Pass(ops.Input(), ops.Temporary(), lines(d), gaussian(d, order));
    for (int axis = 0; axis < D; ++axis)
      if (axis != d)
        ops.Pass(ops.Temporary(), ops.Temporary(), lines(axis), gaussian(axis, 0));
    if (order == 1)
      ops.AddSquaredDerivative(grid.spacing[d]);
    else
      ops.AddSecondDerivative(grid.spacing[d] * grid.spacing[d]);
  }
  if (order == 1)
    ops.SquareRoot();
}

/** The CPU's buffers: the caller's input and output, one temporary. */
struct CpuOps
{
  const float *      input;
  float *            output;
  std::vector<float> temporary;
  std::int64_t       count;
  int                threads;

  const float * Input() const { return input; }
  float *       Output() const { return output; }
  float *       Temporary() { return temporary.data(); }
  void          Pass(const float * in, float * out, const VolumeLines & l, const RecursiveGaussianCoefficients & c)
  {
    RecursiveGaussianPassCPU(in, out, l, c, threads);
  }
  void ZeroOutput() { std::fill(output, output + count, 0.0f); }
  template<typename TStep>
  void EachVoxel(TStep && step)
  {
    detail::ParallelForChunks(count,
                              threads,
                              [&](std::int64_t b, std::int64_t e)
                              {
                                for (std::int64_t i = b; i < e; ++i)
                                  step(i);
                              });
  }
  void AddSquaredDerivative(double spacing)
  {
    EachVoxel([&](std::int64_t i) { output[i] = canopy::AddSquaredDerivative(output[i], temporary[i], spacing); });
  }
  void AddSecondDerivative(double spacing2)
  {
    EachVoxel([&](std::int64_t i) { output[i] = canopy::AddSecondDerivative(output[i], temporary[i], spacing2); });
  }
  void SquareRoot()
  {
    EachVoxel([&](std::int64_t i) { output[i] = SquareRootOf(output[i]); });
  }
};

#if CANOPY_USE_CUDA
/** The device's buffers: input, output, temporary and the passes' causal scratch. */
struct CudaOps
{
  cuda::DeviceBuffer<float> &  input;
  cuda::DeviceBuffer<float> &  output;
  cuda::DeviceBuffer<float> &  temporary;
  cuda::DeviceBuffer<double> & scratch;
  std::int64_t                 count;
  cudaStream_t                 stream;

  const float * Input() const { return input.data(); }
  float *       Output() const { return output.data(); }
  float *       Temporary() { return temporary.data(); }
  void          Pass(const float * in, float * out, const VolumeLines & l, const RecursiveGaussianCoefficients & c)
  {
    cuda::LaunchRecursiveGaussianPass(in, out, scratch.data(), l, c, stream);
  }
  void ZeroOutput() { CANOPY_CUDA_CHECK(cudaMemsetAsync(output.data(), 0, count * sizeof(float), stream)); }
  void AddSquaredDerivative(double spacing)
  {
    cuda::LaunchAddSquaredDerivative(output.data(), temporary.data(), count, spacing, stream);
  }
  void AddSecondDerivative(double spacing2)
  {
    cuda::LaunchAddSecondDerivative(output.data(), temporary.data(), count, spacing2, stream);
  }
  void SquareRoot() { cuda::LaunchSquareRoot(output.data(), count, stream); }
};
#endif

void
PositionChannel(const FilterBankGrid & grid, int axis, float * out)
{
  const int    size = axis < grid.dimension ? grid.Size(axis) : 1;
  std::int64_t i = 0;
  for (int z = 0; z < grid.nz; ++z)
    for (int y = 0; y < grid.ny; ++y)
      for (int x = 0; x < grid.nx; ++x)
        out[i++] = PositionValue(axis == 0 ? x : axis == 1 ? y : z, size);
}

void
ReferencePositionChannel(const FilterBankGrid & grid, int axis, float * out)
{
  const ImageGeometry geometry = grid.Geometry();
  std::int64_t        i = 0;
  double              point[3];
  for (int z = 0; z < grid.nz; ++z)
    for (int y = 0; y < grid.ny; ++y)
      for (int x = 0; x < grid.nx; ++x)
      {
        VoxelToPhysical(geometry, x, y, z, point);
        out[i++] = ReferenceFrameCoordinate(*grid.reference, point, axis);
      }
}

void
CheckGrid(const FilterBankGrid &                     grid,
          const std::vector<FilterBankChannelSpec> & channels,
          const std::vector<float *> &               outputs)
{
  if (outputs.size() != channels.size())
  {
    CANOPY_THROW("filter bank: " << outputs.size() << " outputs for " << channels.size() << " channels");
  }
  if (grid.dimension != 2 && grid.dimension != 3)
  {
    CANOPY_THROW("filter bank: dimension " << grid.dimension << ", expected 2 or 3");
  }
  const bool filtered = std::any_of(channels.begin(),
                                    channels.end(),
                                    [](const FilterBankChannelSpec & c) {
                                      return c.kind == Kind::Gaussian || c.kind == Kind::GradientMagnitude ||
                                             c.kind == Kind::LaplacianOfGaussian;
                                    });
  for (int axis = 0; filtered && axis < grid.dimension; ++axis)
  {
    if (grid.Size(axis) < 4)
    {
      CANOPY_THROW("filter bank: the recursive Gaussian filters need at least 4 voxels along every axis, axis "
                   << axis << " has " << grid.Size(axis));
    }
    if (!(grid.spacing[axis] > 0.0))
    {
      CANOPY_THROW("filter bank: spacing " << grid.spacing[axis] << " along axis " << axis << " is not > 0");
    }
  }
  for (const auto & c : channels)
  {
    if (c.kind == Kind::ReferencePosition)
    {
      if (grid.reference == nullptr)
        CANOPY_THROW("filter bank: a reference-frame position channel needs a reference frame (none given)");
      if (c.axis < 0 || c.axis > 2 || !(grid.reference->halfSize[c.axis] > 0.0))
        CANOPY_THROW("filter bank: reference frame axis " << c.axis << " has no positive half size");
      continue;
    }
    const bool needsSigma = c.kind != Kind::Intensity && c.kind != Kind::Position && c.kind != Kind::Zero;
    if (needsSigma && !(c.sigma > 0.0 && std::isfinite(c.sigma)))
    {
      CANOPY_THROW("filter bank: sigma " << c.sigma << " is not a positive number");
    }
  }
}

} // namespace

void
ComputeFilterBank(const float *                              volume,
                  const FilterBankGrid &                     grid,
                  const std::vector<FilterBankChannelSpec> & channels,
                  const std::vector<float *> &               outputs,
                  const ResolvedBackend &                    backend,
                  int                                        cpuThreads)
{
  CheckGrid(grid, channels, outputs);
  const std::int64_t count = grid.Voxels();
  const auto         plain = [&](std::size_t k)
  {
    if (channels[k].kind == Kind::Intensity)
    {
      std::memcpy(outputs[k], volume, count * sizeof(float));
      return true;
    }
    if (channels[k].kind == Kind::Position)
    {
      PositionChannel(grid, channels[k].axis, outputs[k]);
      return true;
    }
    if (channels[k].kind == Kind::ReferencePosition)
    {
      ReferencePositionChannel(grid, channels[k].axis, outputs[k]);
      return true;
    }
    if (channels[k].kind == Kind::Zero)
    {
      std::fill(outputs[k], outputs[k] + count, 0.0f);
      return true;
    }
    if (channels[k].kind == Kind::Closing || channels[k].kind == Kind::BlackTopHat)
    {
      const auto box = BoxGridForRadius(grid.nx, grid.ny, grid.nz, grid.dimension, grid.spacing, channels[k].sigma);
      GreyClosing(volume, outputs[k], box, cpuThreads);
      if (channels[k].kind == Kind::BlackTopHat)
        for (std::int64_t i = 0; i < count; ++i)
          outputs[k][i] -= volume[i];
      return true;
    }
    return false;
  };
  if (!backend.useCuda)
  {
    CpuOps ops{ volume, nullptr, {}, count, cpuThreads };
    for (std::size_t k = 0; k < channels.size(); ++k)
    {
      if (plain(k))
        continue;
      if (ops.temporary.empty() && channels[k].kind != Kind::Gaussian)
        ops.temporary.resize(count);
      ops.output = outputs[k];
      FilteredChannel(ops, grid, channels[k]);
    }
    return;
  }
#if CANOPY_USE_CUDA
  cuda::ScopedDevice         device(backend.deviceIndex);
  cuda::Stream               stream;
  cuda::DeviceBuffer<float>  input, output, temporary;
  cuda::DeviceBuffer<double> scratch;
  CudaOps                    ops{ input, output, temporary, scratch, count, stream.get() };
  for (std::size_t k = 0; k < channels.size(); ++k)
  {
    if (plain(k))
      continue;
    if (input.size() == 0)
    {
      input.Allocate(count, "filter-bank input");
      output.Allocate(count, "filter-bank channel");
      temporary.Allocate(count, "filter-bank temporary");
      scratch.Allocate(count, "filter-bank causal pass");
      input.CopyFromHost(volume, count, stream.get());
    }
    FilteredChannel(ops, grid, channels[k]);
    output.CopyToHost(outputs[k], count, stream.get());
    stream.Synchronize(); // the next channel reuses `output`
  }
#else
  CANOPY_THROW("filter bank: CUDA requested but this build has no CUDA support");
#endif
}

} // namespace canopy
