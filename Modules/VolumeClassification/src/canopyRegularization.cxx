#include "canopyRegularization.h"

#include "ParallelFor.h"
#include "canopy/Elapsed.h"
#include "canopy/Errors.h"
#include "canopyGridGraphCut.h"
#include "canopyPBTClassification.h"
#include "itkGraphCutRegularizationImageFilter.h"

#include <chrono>
#include <cmath>

namespace canopy
{
namespace
{
double
Dice(const unsigned char * pa, const unsigned char * pb, std::size_t n)
{
  std::int64_t both = 0, sum = 0;
  for (std::size_t i = 0; i < n; ++i)
  {
    both += (pa[i] != 0) && (pb[i] != 0);
    sum += (pa[i] != 0) + (pb[i] != 0);
  }
  return sum == 0 ? 1.0 : 2.0 * double(both) / double(sum);
}
} // namespace

RegularizedLabels
RegularizeProbabilityMap(const FloatVolume * probability, double lambdaMm, int neighborhood)
{
  auto graphCut = itk::GraphCutRegularizationImageFilter<FloatVolume, MaskVolume>::New();
  graphCut->SetInput(probability);
  graphCut->SetLambda(lambdaMm);
  graphCut->SetNeighborhood(static_cast<unsigned>(neighborhood));
  graphCut->Update();
  RegularizedLabels result;
  result.labels = graphCut->GetOutput();
  result.labels->DisconnectPipeline();
  result.statistics = graphCut->GetStatistics();
  const auto            n = probability->GetLargestPossibleRegion().GetNumberOfPixels();
  const float *         p = probability->GetBufferPointer();
  const unsigned char * l = result.labels->GetBufferPointer();
  for (itk::SizeValueType i = 0; i < n; ++i)
  {
    const bool confident = p[i] >= 0.5f;
    result.confident += confident;
    result.confidentKept += confident && l[i];
    result.labelled += l[i] != 0;
  }
  return result;
}

RegularizationRecommendation
RecommendRegularization(const PBTModelFile &                model,
                        const std::vector<LabelledVolume> & volumes,
                        const ResolvedBackend &             backend,
                        const LambdaSelectionOptions &      options,
                        const std::function<void(double)> & progress)
{
  if (options.grid.empty())
  {
    CANOPY_THROW("lambda selection: the grid of candidates is empty");
  }
  for (std::size_t k = 0; k < options.grid.size(); ++k)
  {
    if (!std::isfinite(options.grid[k]) || options.grid[k] < 0.0 || (k > 0 && !(options.grid[k] > options.grid[k - 1])))
    {
      CANOPY_THROW("lambda selection: candidates must be finite, >= 0 and ascending; got " << options.grid[k]);
    }
  }
  if (volumes.empty() || options.maxVolumes < 1)
  {
    CANOPY_THROW("lambda selection: no volumes to choose lambda on");
  }
  // Evenly spread picks (augmented copies of one subject sit next to each other in the list).
  const std::size_t        count = std::min<std::size_t>(volumes.size(), static_cast<std::size_t>(options.maxVolumes));
  std::vector<std::size_t> picks;
  for (std::size_t k = 0; k < count; ++k)
    picks.push_back(k * volumes.size() / count);

  const auto          start = std::chrono::steady_clock::now();
  double              classifySeconds = 0.0, cutSeconds = 0.0;
  std::vector<double> diceSum(options.grid.size(), 0.0);
  nlohmann::json      names = nlohmann::json::array();
  for (std::size_t k = 0; k < picks.size(); ++k)
  {
    const LabelledVolume & v = volumes[picks[k]];
    names.push_back(v.name);
    auto       t = std::chrono::steady_clock::now();
    const auto probability = ClassifyVolume(v.image, model, backend, options.evaluation);
    classifySeconds += SecondsSince(t);
    t = std::chrono::steady_clock::now();
    // One graph cut per candidate, each one max-flow on one thread: the candidates run side by side
    // (RegularizeProbabilities is the filter's own array layer, which shares nothing between calls).
    const auto          region = probability->GetLargestPossibleRegion();
    const int           size[3] = { int(region.GetSize(0)), int(region.GetSize(1)), int(region.GetSize(2)) };
    const double        spacing[3] = { probability->GetSpacing()[0],
                                       probability->GetSpacing()[1],
                                       probability->GetSpacing()[2] };
    const std::size_t   n = region.GetNumberOfPixels();
    std::vector<double> dice(options.grid.size());
    detail::ParallelForChunks(
      std::int64_t(options.grid.size()),
      0,
      [&](std::int64_t begin, std::int64_t end)
      {
        std::vector<std::uint8_t> labels(n);
        for (std::int64_t g = begin; g < end; ++g)
        {
          GridGraphCutParameters parameters; // the defaults, as the filter that `segment` runs has them
          parameters.lambda = options.grid[g];
          parameters.neighborhood = options.neighborhood;
          RegularizeProbabilities(probability->GetBufferPointer(), size, spacing, parameters, labels.data());
          dice[g] = Dice(labels.data(), v.mask->GetBufferPointer(), n);
        }
      });
    for (std::size_t g = 0; g < options.grid.size(); ++g)
      diceSum[g] += dice[g];
    if (progress)
      progress(double(k + 1) / picks.size());
    cutSeconds += SecondsSince(t);
  }
  std::size_t best = 0;
  for (std::size_t g = 1; g < options.grid.size(); ++g)
    if (diceSum[g] > diceSum[best]) // strict: ties keep the smaller lambda
      best = g;
  std::vector<double> meanDice;
  for (double s : diceSum)
    meanDice.push_back(s / picks.size());

  RegularizationRecommendation r;
  r.lambda = options.grid[best];
  r.neighborhood = options.neighborhood;
  r.selection = { { "method", "highest mean Dice of the graph-cut labels against the training labels" },
                  { "volumes", names },
                  { "grid", options.grid },
                  { "meanDice", meanDice },
                  { "classificationSeconds", classifySeconds },
                  { "graphCutSeconds", cutSeconds },
                  { "seconds", SecondsSince(start) } };
  return r;
}

} // namespace canopy
