// The forest filter on the GPU equals the CPU exactly (all four modes, 2D and 3D, filter-bank
// channels), also when a volume goes through in z-slabs of a few planes with margins.
#include "ForestFilterSupport.h"
#include "canopyTesting.h"
#include "itkRandomForestClassificationImageFilter.h"

#include <gtest/gtest.h>

namespace
{
using namespace canopy;
using canopy::testing::ForestPhantom;

template<unsigned D>
std::shared_ptr<ForestModel>
Train(const std::vector<std::string> & bank)
{
  ForestPhantom<D>    p(D == 3 ? 24 : 64, 7);
  ForestLabelledImage im{ MakeForestImage<D>(p.image, bank, 1), p.labels };
  auto                options = canopy::testing::PhantomTrainingOptions(D);
  options.maxOffset = 6; // features reach several planes: slabs need their margins
  auto model = std::make_shared<ForestModel>(TrainForest(MakeForestTrainingSet({ &im }, 3, {}), options));
  model->filterBank = bank;
  return model;
}

template<typename TOut, typename TIn>
std::vector<typename TOut::InternalPixelType>
Classify(const TIn *                        in,
         std::shared_ptr<const ForestModel> model,
         ForestOutputMode                   mode,
         const std::string &                backend,
         int                                slabPlanes,
         int *                              slabs = nullptr)
{
  auto f = itk::RandomForestClassificationImageFilter<TIn, TOut>::New();
  f->SetInput(in);
  f->SetModel(model);
  f->SetMode(mode);
  f->SetBackend(backend);
  f->SetMaximumSlabPlanes(slabPlanes);
  f->Update();
  if (slabs)
    *slabs = f->GetNumberOfSlabsUsed();
  const auto * out = f->GetOutput();
  const auto   n = out->GetBufferedRegion().GetNumberOfPixels() * out->GetNumberOfComponentsPerPixel();
  return { out->GetBufferPointer(), out->GetBufferPointer() + n };
}

template<unsigned D>
void
CheckParity(int slabPlanes)
{
  const auto       model = Train<D>({ "intensity", "gaussian:1", "log:1.5" });
  ForestPhantom<D> test(D == 3 ? 24 : 64, 8);
  const auto *     in = test.image.GetPointer();
  int              slabs = 0;
  EXPECT_EQ(
    (Classify<itk::VectorImage<float, D>>(in, model, ForestOutputMode::Distribution, "cpu", 0)),
    (Classify<itk::VectorImage<float, D>>(in, model, ForestOutputMode::Distribution, "cuda", slabPlanes, &slabs)));
  if (D == 3 && slabPlanes > 0)
    EXPECT_GE(slabs, 24 / slabPlanes);
  EXPECT_EQ((Classify<itk::Image<std::int32_t, D>>(in, model, ForestOutputMode::ArgMax, "cpu", 0)),
            (Classify<itk::Image<std::int32_t, D>>(in, model, ForestOutputMode::ArgMax, "cuda", slabPlanes)));
  EXPECT_EQ(
    (Classify<itk::VectorImage<std::int32_t, D>>(in, model, ForestOutputMode::ForestLeaves, "cpu", 0)),
    (Classify<itk::VectorImage<std::int32_t, D>>(in, model, ForestOutputMode::ForestLeaves, "cuda", slabPlanes)));
  EXPECT_EQ((Classify<itk::Image<std::int32_t, D>>(in, model, ForestOutputMode::TreeLeaf, "cpu", 0)),
            (Classify<itk::Image<std::int32_t, D>>(in, model, ForestOutputMode::TreeLeaf, "cuda", slabPlanes)));
}

TEST(ForestFilterCuda, Parity2D)
{
  CANOPY_REQUIRE_GPU();
  CheckParity<2>(0);
}

TEST(ForestFilterCuda, Parity3DWhole)
{
  CANOPY_REQUIRE_GPU();
  CheckParity<3>(0);
}

TEST(ForestFilterCuda, Parity3DSlabs)
{
  CANOPY_REQUIRE_GPU();
  CheckParity<3>(1);
  CheckParity<3>(5);
}

} // namespace
