#include "canopySurfaceMetrics.h"

#include "canopy/Errors.h"
#include "canopyImageGrid.h"

#include "itkRegionOfInterestImageFilter.h"
#include "itkSignedMaurerDistanceMapImageFilter.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

namespace canopy
{
namespace
{
using MaskImage = itk::Image<unsigned char, 3>;
using DistanceImage = itk::Image<float, 3>;

double
Percentile(std::vector<double> & values, double percent)
{
  std::sort(values.begin(), values.end());
  const double position = percent / 100.0 * static_cast<double>(values.size() - 1);
  const auto   below = static_cast<std::size_t>(std::floor(position));
  const auto   above = std::min(below + 1, values.size() - 1);
  return values[below] + (position - static_cast<double>(below)) * (values[above] - values[below]);
}

double
Mean(const std::vector<double> & values)
{
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

MaskImage::Pointer
Crop(const MaskImage * image, const MaskImage::RegionType & region)
{
  auto roi = itk::RegionOfInterestImageFilter<MaskImage, MaskImage>::New();
  roi->SetInput(image);
  roi->SetRegionOfInterest(region);
  roi->Update();
  MaskImage::Pointer out = roi->GetOutput();
  out->DisconnectPipeline();
  return out;
}

// Distance (mm) from every voxel to the nearest non-zero voxel of `surface`. Maurer measures the
// distance to the contour of the foreground; the nearest surface voxel to an outside voxel always
// lies on that contour (a surface voxel whose 26 neighbours are all surface has a neighbour nearer
// to the outside voxel), so clamping the inside values to 0 gives the wanted map exactly.
DistanceImage::Pointer
DistanceToSurface(const MaskImage * surface)
{
  auto maurer = itk::SignedMaurerDistanceMapImageFilter<MaskImage, DistanceImage>::New();
  maurer->SetInput(surface);
  maurer->SetBackgroundValue(0);
  maurer->SetInsideIsPositive(false);
  maurer->SetSquaredDistance(false);
  maurer->SetUseImageSpacing(true);
  maurer->Update();
  DistanceImage::Pointer out = maurer->GetOutput();
  out->DisconnectPipeline();
  return out;
}

std::vector<double>
SampleAtSurface(const MaskImage * surface, const DistanceImage * distance)
{
  std::vector<double>   values;
  const auto            n = surface->GetLargestPossibleRegion().GetNumberOfPixels();
  const unsigned char * s = surface->GetBufferPointer();
  const float *         d = distance->GetBufferPointer();
  for (itk::SizeValueType i = 0; i < n; ++i)
    if (s[i])
      values.push_back(std::max(0.0, static_cast<double>(d[i])));
  return values;
}

// Bounding box of the non-zero voxels of a and b (same grid); empty region when both are empty.
MaskImage::RegionType
BoundingBox(const MaskImage * a, const MaskImage * b)
{
  const auto           region = a->GetLargestPossibleRegion();
  const auto           size = region.GetSize();
  long                 lo[3] = { long(size[0]), long(size[1]), long(size[2]) }, hi[3] = { -1, -1, -1 };
  const unsigned char *pa = a->GetBufferPointer(), *pb = b->GetBufferPointer();
  std::size_t          i = 0;
  for (long z = 0; z < long(size[2]); ++z)
    for (long y = 0; y < long(size[1]); ++y)
      for (long x = 0; x < long(size[0]); ++x, ++i)
        if (pa[i] || pb[i])
        {
          const long p[3] = { x, y, z };
          for (int k = 0; k < 3; ++k)
          {
            lo[k] = std::min(lo[k], p[k]);
            hi[k] = std::max(hi[k], p[k]);
          }
        }
  MaskImage::RegionType box;
  for (int k = 0; k < 3; ++k)
  {
    box.SetIndex(k, region.GetIndex(k) + (hi[k] < 0 ? 0 : lo[k]));
    box.SetSize(k, hi[k] < 0 ? 0 : static_cast<itk::SizeValueType>(hi[k] - lo[k] + 1));
  }
  return box;
}
} // namespace

SurfaceDistances
SummarizeSurfaceDistances(std::vector<double> testToReference, std::vector<double> referenceToTest)
{
  SurfaceDistances d;
  d.testSamples = static_cast<std::int64_t>(testToReference.size());
  d.referenceSamples = static_cast<std::int64_t>(referenceToTest.size());
  if (testToReference.empty() && referenceToTest.empty())
    return d;
  if (testToReference.empty() || referenceToTest.empty())
  {
    const double inf = std::numeric_limits<double>::infinity();
    d.mean = d.percentile95 = d.maximum = d.meanTestToReference = d.meanReferenceToTest = inf;
    return d;
  }
  d.meanTestToReference = Mean(testToReference);
  d.meanReferenceToTest = Mean(referenceToTest);
  d.mean = (d.meanTestToReference * d.testSamples + d.meanReferenceToTest * d.referenceSamples) /
           static_cast<double>(d.testSamples + d.referenceSamples);
  d.maximum = std::max(*std::max_element(testToReference.begin(), testToReference.end()),
                       *std::max_element(referenceToTest.begin(), referenceToTest.end()));
  d.percentile95 = std::max(Percentile(testToReference, 95.0), Percentile(referenceToTest, 95.0));
  return d;
}

nlohmann::json
ToJson(const SurfaceDistances & d)
{
  auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return nlohmann::json{ { "meanMm", finite(d.mean) },
                         { "percentile95Mm", finite(d.percentile95) },
                         { "maximumMm", finite(d.maximum) },
                         { "meanTestToReferenceMm", finite(d.meanTestToReference) },
                         { "meanReferenceToTestMm", finite(d.meanReferenceToTest) },
                         { "testSamples", d.testSamples },
                         { "referenceSamples", d.referenceSamples } };
}

itk::Image<unsigned char, 3>::Pointer
ExtractSurfaceVoxels(const itk::Image<unsigned char, 3> * mask)
{
  if (!mask || !mask->GetBufferPointer())
    CANOPY_THROW("ExtractSurfaceVoxels: the mask is null or has no pixel buffer");
  auto surface = MaskImage::New();
  surface->CopyInformation(mask);
  surface->SetRegions(mask->GetLargestPossibleRegion());
  surface->Allocate();
  const auto            size = mask->GetLargestPossibleRegion().GetSize();
  const long            nx = long(size[0]), ny = long(size[1]), nz = long(size[2]);
  const unsigned char * in = mask->GetBufferPointer();
  unsigned char *       out = surface->GetBufferPointer();
  const long            stride[3] = { 1, nx, nx * ny };
  long                  i = 0;
  for (long z = 0; z < nz; ++z)
    for (long y = 0; y < ny; ++y)
      for (long x = 0; x < nx; ++x, ++i)
      {
        if (!in[i])
        {
          out[i] = 0;
          continue;
        }
        const long p[3] = { x, y, z }, n[3] = { nx, ny, nz };
        bool       onSurface = false;
        for (int k = 0; k < 3 && !onSurface; ++k)
          onSurface = p[k] == 0 || p[k] == n[k] - 1 || !in[i - stride[k]] || !in[i + stride[k]];
        out[i] = onSurface ? 1 : 0;
      }
  return surface;
}

SurfaceDistances
ComputeSurfaceDistances(const itk::Image<unsigned char, 3> * test, const itk::Image<unsigned char, 3> * reference)
{
  RequireSameGrid(test, reference, "ComputeSurfaceDistances", "test mask", "reference mask");
  const auto surfaceT = ExtractSurfaceVoxels(test), surfaceR = ExtractSurfaceVoxels(reference);
  const auto box = BoundingBox(surfaceT, surfaceR);
  if (box.GetNumberOfPixels() == 0)
    return SummarizeSurfaceDistances({}, {});
  const auto cropT = Crop(surfaceT, box), cropR = Crop(surfaceR, box);
  const auto countT = std::count_if(cropT->GetBufferPointer(),
                                    cropT->GetBufferPointer() + box.GetNumberOfPixels(),
                                    [](unsigned char v) { return v != 0; });
  const auto countR = std::count_if(cropR->GetBufferPointer(),
                                    cropR->GetBufferPointer() + box.GetNumberOfPixels(),
                                    [](unsigned char v) { return v != 0; });
  // One surface empty: no distance map to sample; the summary reports infinite distances.
  if (countT == 0 || countR == 0)
    return SummarizeSurfaceDistances(std::vector<double>(countT, 0.0), std::vector<double>(countR, 0.0));
  auto toReference = SampleAtSurface(cropT, DistanceToSurface(cropR));
  auto toTest = SampleAtSurface(cropR, DistanceToSurface(cropT));
  return SummarizeSurfaceDistances(std::move(toReference), std::move(toTest));
}

std::vector<int>
FindLabels(const LabelImage * labels)
{
  if (!labels || !labels->GetBufferPointer())
    CANOPY_THROW("FindLabels: the label map is null or has no pixel buffer");
  std::set<int> found;
  const auto    n = labels->GetLargestPossibleRegion().GetNumberOfPixels();
  const int *   p = labels->GetBufferPointer();
  for (itk::SizeValueType i = 0; i < n; ++i)
    if (p[i] != 0)
      found.insert(p[i]);
  return { found.begin(), found.end() };
}

itk::Image<unsigned char, 3>::Pointer
LabelToMask(const LabelImage * labels, int value)
{
  if (!labels || !labels->GetBufferPointer())
    CANOPY_THROW("LabelToMask: the label map is null or has no pixel buffer");
  auto mask = MaskImage::New();
  mask->CopyInformation(labels);
  mask->SetRegions(labels->GetLargestPossibleRegion());
  mask->Allocate();
  const auto  n = labels->GetLargestPossibleRegion().GetNumberOfPixels();
  const int * in = labels->GetBufferPointer();
  for (itk::SizeValueType i = 0; i < n; ++i)
    mask->GetBufferPointer()[i] = in[i] == value ? 1 : 0;
  return mask;
}

LabelImage::Pointer
RoundToLabels(const itk::Image<float, 3> * image, const std::string & what)
{
  if (!image || !image->GetBufferPointer())
    CANOPY_THROW(what << ": the image is null or has no pixel buffer");
  auto labels = LabelImage::New();
  labels->CopyInformation(image);
  labels->SetRegions(image->GetLargestPossibleRegion());
  labels->Allocate();
  const auto    n = image->GetLargestPossibleRegion().GetNumberOfPixels();
  const float * in = image->GetBufferPointer();
  for (itk::SizeValueType i = 0; i < n; ++i)
  {
    const double v = in[i], r = std::round(v);
    if (!std::isfinite(v) || std::abs(v - r) > 1e-3 || std::abs(r) > std::numeric_limits<int>::max())
      CANOPY_THROW(what << ": voxel " << i << " holds " << v << ", not an integer label (a probability map?)");
    labels->GetBufferPointer()[i] = static_cast<int>(r);
  }
  return labels;
}

std::vector<LabelMetrics>
ComputeLabelMetrics(const LabelImage * test, const LabelImage * reference, std::vector<int> labels)
{
  RequireSameGrid(test, reference, "ComputeLabelMetrics", "test labels", "reference labels");
  // One pass for the bounding box of every label in either map; each label is then measured on its
  // box only: the same counts and distances as on the whole grid, since voxels on the box faces are
  // surface voxels either way.
  std::map<int, std::array<long, 6>> boxes;
  const auto                         size = test->GetLargestPossibleRegion().GetSize();
  const int *                        pt = test->GetBufferPointer();
  const int *                        pr = reference->GetBufferPointer();
  std::size_t                        i = 0;
  for (long z = 0; z < long(size[2]); ++z)
    for (long y = 0; y < long(size[1]); ++y)
      for (long x = 0; x < long(size[0]); ++x, ++i)
        for (int value : { pt[i], pr[i] })
          if (value != 0)
          {
            auto       found = boxes.try_emplace(value, std::array<long, 6>{ x, y, z, x, y, z });
            auto &     b = found.first->second;
            const long p[3] = { x, y, z };
            for (int k = 0; k < 3; ++k)
            {
              b[k] = std::min(b[k], p[k]);
              b[k + 3] = std::max(b[k + 3], p[k]);
            }
          }
  if (labels.empty())
    for (const auto & entry : boxes)
      labels.push_back(entry.first);

  std::vector<LabelMetrics> result;
  for (int label : labels)
  {
    const auto                found = boxes.find(label);
    const std::array<long, 6> box = found != boxes.end() ? found->second : std::array<long, 6>{ 0, 0, 0, 0, 0, 0 };
    LabelImage::RegionType    region;
    for (int k = 0; k < 3; ++k)
    {
      const long lo = box[k], hi = box[k + 3];
      region.SetIndex(k, test->GetLargestPossibleRegion().GetIndex(k) + lo);
      region.SetSize(k, itk::SizeValueType(hi - lo + 1));
    }
    auto crop = [&region](const LabelImage * image)
    {
      auto roi = itk::RegionOfInterestImageFilter<LabelImage, LabelImage>::New();
      roi->SetInput(image);
      roi->SetRegionOfInterest(region);
      roi->Update();
      return LabelImage::Pointer(roi->GetOutput());
    };
    const auto t = LabelToMask(crop(test), label), r = LabelToMask(crop(reference), label);
    result.push_back({ label, ComputeOverlap(t, r), ComputeSurfaceDistances(t, r) });
  }
  return result;
}

nlohmann::json
ToJson(const LabelMetrics & m)
{
  return nlohmann::json{ { "label", m.label }, { "overlap", ToJson(m.overlap) }, { "surface", ToJson(m.surface) } };
}

} // namespace canopy
