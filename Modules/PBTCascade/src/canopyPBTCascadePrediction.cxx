#include "canopyPBTCascade.h"

#include "canopy/Errors.h"
#include "canopyHaarChannels.h"
#include "canopyRegularization.h"

#include <algorithm>

namespace canopy
{
namespace
{
FloatVolume::Pointer
VolumeLike(const itk::ImageBase<3> * reference)
{
  auto volume = FloatVolume::New();
  volume->CopyInformation(reference);
  volume->SetRegions(reference->GetLargestPossibleRegion());
  volume->Allocate();
  return volume;
}
} // namespace

void
NormalizePosteriors(const std::vector<FloatVolume::Pointer> & posteriors)
{
  if (posteriors.empty())
    return;
  const auto n = posteriors.front()->GetLargestPossibleRegion().GetNumberOfPixels();
  for (itk::SizeValueType i = 0; i < n; ++i)
  {
    float sum = 0.0f;
    for (const auto & p : posteriors)
      sum += p->GetBufferPointer()[i];
    if (sum > 1.0f)
    {
      for (const auto & p : posteriors)
        p->GetBufferPointer()[i] /= sum;
    }
  }
}

std::vector<FloatVolume::Pointer>
PredictPBTStage(const std::vector<PBTModel> &             trees,
                const FloatVolume *                       prepared,
                const std::vector<FloatVolume::Pointer> & context,
                const ResolvedBackend &                   backend,
                const PBTEvaluationOptions &              options)
{
  const auto           size = prepared->GetLargestPossibleRegion().GetSize();
  const int            nx = int(size[0]), ny = int(size[1]), nz = int(size[2]);
  PBTEvaluationOptions stageOptions = options;
  stageOptions.channels = 1 + int(context.size());
  std::vector<FloatVolume::Pointer> maps;
  std::vector<float>                stack;
  int                               stride = -1;
  for (const PBTModel & tree : trees)
  {
    PBTVolumeEvaluator evaluator(tree, backend, stageOptions);
    const float *      voxels = prepared->GetBufferPointer();
    if (!context.empty())
    {
      // The stride follows the features' reach, so each class's PBT may need its own stack.
      const int treeStride = evaluator.GetChannelStride(nz);
      if (treeStride != stride)
      {
        std::vector<const float *> channels{ prepared->GetBufferPointer() };
        for (const auto & map : context)
          channels.push_back(map->GetBufferPointer());
        stack = StackHaarChannels(channels, nx, ny, nz, treeStride);
        stride = treeStride;
      }
      voxels = stack.data();
    }
    maps.push_back(VolumeLike(prepared));
    evaluator.Evaluate(voxels, nx, ny, nz, maps.back()->GetBufferPointer());
  }
  NormalizePosteriors(maps);
  return maps;
}

std::vector<FloatVolume::Pointer>
PredictPBTCascadePrepared(const PBTClassModel &        model,
                          const FloatVolume *          prepared,
                          const ResolvedBackend &      backend,
                          const PBTEvaluationOptions & options,
                          int                          stages)
{
  const int last = stages <= 0 ? model.NumberOfStages() : std::min(stages, model.NumberOfStages());
  std::vector<FloatVolume::Pointer> maps;
  for (int k = 0; k < last; ++k)
    maps = PredictPBTStage(model.stages[k], prepared, maps, backend, options);
  return maps;
}

std::vector<FloatVolume::Pointer>
ClassifyVolumeClasses(const FloatVolume *                 image,
                      const PBTClassModel &               model,
                      const ResolvedBackend &             backend,
                      const PBTEvaluationOptions &        options,
                      int                                 stages,
                      const std::function<void(double)> & progress)
{
  const auto prepared = PrepareVolume(image, model.workingSpacing, model.normalization);
  if (progress)
    progress(0.1);
  auto maps = PredictPBTCascadePrepared(model, prepared, backend, options, stages);
  if (progress)
    progress(0.9);
  for (auto & map : maps)
    map = ResampleLike(map, image, 0.0f);
  if (progress)
    progress(1.0);
  return maps;
}

MaskVolume::Pointer
JointLabels(const std::vector<FloatVolume::Pointer> & posteriors, const std::vector<int> & labels)
{
  if (posteriors.empty() || posteriors.size() != labels.size())
  {
    CANOPY_THROW("JointLabels: " << posteriors.size() << " posterior maps for " << labels.size() << " classes");
  }
  auto out = MaskVolume::New();
  out->CopyInformation(posteriors.front());
  out->SetRegions(posteriors.front()->GetLargestPossibleRegion());
  out->Allocate();
  const auto n = out->GetLargestPossibleRegion().GetNumberOfPixels();
  for (itk::SizeValueType i = 0; i < n; ++i)
  {
    float sum = 0.0f, best = -1.0f;
    int   label = 0;
    for (std::size_t c = 0; c < posteriors.size(); ++c)
    {
      const float p = posteriors[c]->GetBufferPointer()[i];
      sum += p;
      if (p > best)
      {
        best = p;
        label = labels[c];
      }
    }
    out->GetBufferPointer()[i] = static_cast<unsigned char>(best >= 1.0f - sum ? label : 0);
  }
  return out;
}

itk::VectorImage<float, 3>::Pointer
ClassProbabilityMap(const std::vector<FloatVolume::Pointer> & posteriors, const std::vector<int> & labels)
{
  if (posteriors.empty() || posteriors.size() != labels.size())
  {
    CANOPY_THROW("ClassProbabilityMap: " << posteriors.size() << " posterior maps for " << labels.size() << " classes");
  }
  const int largest = *std::max_element(labels.begin(), labels.end());
  if (*std::min_element(labels.begin(), labels.end()) < 1 || largest > 255)
  {
    CANOPY_THROW("ClassProbabilityMap: class labels must be 1..255 (0 is the background's component)");
  }
  const auto grid = posteriors.front();
  for (const auto & p : posteriors)
  {
    if (p->GetLargestPossibleRegion() != grid->GetLargestPossibleRegion())
      CANOPY_THROW("ClassProbabilityMap: the posterior maps differ in size");
  }
  const auto n = grid->GetLargestPossibleRegion().GetNumberOfPixels();
  const auto components = static_cast<unsigned>(largest + 1);
  auto       map = itk::VectorImage<float, 3>::New();
  map->CopyInformation(grid);
  map->SetRegions(grid->GetLargestPossibleRegion());
  map->SetNumberOfComponentsPerPixel(components);
  map->Allocate();
  float * out = map->GetBufferPointer();
  std::fill_n(out, std::size_t(n) * components, 0.0f);
  for (itk::SizeValueType i = 0; i < n; ++i)
  {
    float * voxel = out + std::size_t(i) * components;
    float   sum = 0.0f; // summed in class order, as JointLabels does, so the argmax is its decision
    for (std::size_t c = 0; c < posteriors.size(); ++c)
    {
      const float p = posteriors[c]->GetBufferPointer()[i];
      sum += p;
      voxel[labels[c]] = p;
    }
    voxel[0] = std::max(0.0f, 1.0f - sum);
  }
  return map;
}

MaskVolume::Pointer
JointLabelsWithGraphCut(const std::vector<FloatVolume::Pointer> & posteriors,
                        const std::vector<int> &                  labels,
                        double                                    lambdaMm,
                        int                                       neighborhood)
{
  auto       out = JointLabels(posteriors, labels); // allocated with the right grid; overwritten below
  const auto n = out->GetLargestPossibleRegion().GetNumberOfPixels();
  std::fill_n(out->GetBufferPointer(), n, 0);
  std::vector<float> best(n, -1.0f);
  for (std::size_t c = 0; c < posteriors.size(); ++c)
  {
    const RegularizedLabels cut = RegularizeProbabilityMap(posteriors[c], lambdaMm, neighborhood);
    const float *           p = posteriors[c]->GetBufferPointer();
    for (itk::SizeValueType i = 0; i < n; ++i)
    {
      if (cut.labels->GetBufferPointer()[i] && p[i] > best[i])
      {
        best[i] = p[i];
        out->GetBufferPointer()[i] = static_cast<unsigned char>(labels[c]);
      }
    }
  }
  return out;
}

} // namespace canopy
