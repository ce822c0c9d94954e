#include "canopyClassifySteps.h"

#include "canopyImageIO.h"
#include "canopyProgress.h"
#include "canopySnapshot.h"
#include "itkCastImageFilter.h"

#include <iostream>

namespace canopy::app
{

FloatVolume::Pointer
ClassifyWithProgress(const FloatVolume *        image,
                     const PBTModelFile &       model,
                     const ResolvedBackend &    backend,
                     bool                       probabilistic,
                     bool                       quiet,
                     PBTClassificationTimings & timings,
                     ProgressShare              share)
{
  PBTEvaluationOptions options;
  options.probabilistic = probabilistic;
  ProgressBar bar("classifying", quiet, share);
  return ClassifyVolume(
    image, model, backend, options, [&bar](double f) { bar.Update(f); }, &timings);
}

nlohmann::json
ToJson(const PBTClassificationTimings & timings)
{
  return { { "prepareSeconds", timings.prepareSeconds },
           { "evaluateSeconds", timings.evaluateSeconds },
           { "resampleSeconds", timings.resampleSeconds },
           { "slabs", timings.slabs },
           { "workingSize", timings.workingSize } };
}

FloatVolume::Pointer
MaskAsFloat(const MaskVolume * mask)
{
  auto cast = itk::CastImageFilter<MaskVolume, FloatVolume>::New();
  cast->SetInput(mask);
  cast->Update();
  return cast->GetOutput();
}

void
WriteSnapshotIfAsked(const FloatVolume * image,
                     const FloatVolume * overlay,
                     const std::string & snapshotPath,
                     const std::string & referencePath)
{
  if (snapshotPath.empty())
  {
    return;
  }
  FloatVolume::Pointer reference;
  if (!referencePath.empty())
  {
    reference = MaskAsFloat(ReadMask(referencePath, "--snapshot-reference", {}));
  }
  WriteOrthogonalSnapshot(image, overlay, snapshotPath, SnapshotOptions{}, reference.GetPointer());
  std::cout << "  snapshot: " << snapshotPath << '\n';
}

} // namespace canopy::app
