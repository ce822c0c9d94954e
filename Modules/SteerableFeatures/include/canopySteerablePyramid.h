// The image pyramid steerable features sample: per level a smoothed, resampled copy of the volume and
// its voxels with world gradients (SteerableVoxel), computed once and shared by every hypothesis.
#pragma once

#include "canopy/PyramidMath.h"
#include "canopy/SteerableFeature.h"

#include "itkImage.h"

#include <array>
#include <vector>

namespace canopy
{

/** Levels of a pyramid, finest first, at most kMaxSteerableLevels. Either isotropic spacings in mm
 * (default 1, 2, 4 mm, as Birkbeck et al. detect on) or, when levelFactors is not empty, factors of
 * the input spacing per axis (1 = the input's own grid). */
struct SteerablePyramidOptions
{
  std::vector<double> levelSpacingsMm{ 1.0, 2.0, 4.0 };
  std::vector<double> levelFactors;
};

class SteerablePyramid
{
public:
  using ImageType = itk::Image<float, 3>;

  /** Level k: the input smoothed by a Gaussian of sigma_a = 0.5 sqrt(max(0, t_a^2 - s_a^2)) mm per
   * axis (s = input spacing, t = level spacing; no smoothing when t <= s), then resampled linearly
   * onto a grid of spacing t with the input's direction, inside the input's physical box (size
   * floor(n_a s_a / t_a), at least 1, box aligned on the input box's lower corner). A level whose spacing equals the
   * input's (within 1e-6 mm) is the input itself. Throws canopy::Error for a null image, no levels, too many, or a
   * spacing or factor that is not finite and > 0. threads <= 0: ITK's default. */
  static SteerablePyramid Build(const ImageType * image, const SteerablePyramidOptions & options = {}, int threads = 0);

  /** How Build makes one level: its grid (an image with geometry, no pixels), whether it is the input
   * itself, and the Gaussian variances (mm^2) applied first when `smooth`. The device pyramid
   * (SteerableResponseEngine::SetImage) follows the same plans. */
  struct LevelPlan
  {
    ImageType::Pointer    grid;
    bool                  sameAsInput = false;
    bool                  smooth = false;
    std::array<double, 3> variance{ { 0.0, 0.0, 0.0 } };
  };
  /** DiscreteGaussianImageFilter's maximum kernel width used by Build (its maximum error: ITK's 0.01). */
  static constexpr unsigned kGaussianMaximumKernelWidth = 64;
  /** The plans of Build's levels; the same checks and errors as Build. */
  static std::vector<LevelPlan> Plan(const ImageType * image, const SteerablePyramidOptions & options);
  /** The taps DiscreteGaussianImageFilter applies along `axis` for a variance in mm^2 on a grid of
   * that spacing (itk::GaussianOperator, offsets -r..r). */
  static std::vector<double> GaussianTaps(double varianceMm2, double spacing, unsigned axis);
  /** ResampleImageFilter's index arithmetic from `in`'s grid onto `out`'s (PyramidMath.h). */
  static ResampleGeometry ResampleGeometryOf(const itk::ImageBase<3> * in, const itk::ImageBase<3> * out);
  /** Geometry of a level on `image`'s grid (voxels null). */
  static SteerableLevelView LevelViewOf(const itk::ImageBase<3> * image);

  /** Appends a level made from `image` as it is (no smoothing or resampling). */
  void AddLevel(const ImageType * image, int threads = 0);

  int                                 GetNumberOfLevels() const { return static_cast<int>(m_Levels.size()); }
  const ImageType *                   GetLevelImage(int level) const { return m_Levels.at(level).image.GetPointer(); }
  const std::vector<SteerableVoxel> & GetLevelVoxels(int level) const { return m_Levels.at(level).voxels; }
  /** Level geometry and voxels with host pointers into this pyramid (valid while it lives). */
  SteerablePyramidView GetView() const;

private:
  static LevelPlan PlanLevel(const ImageType * image, const std::array<double, 3> & target);
  struct Level
  {
    ImageType::Pointer          image;
    std::vector<SteerableVoxel> voxels;
    SteerableLevelView          view; // voxels pointer set by GetView
  };
  std::vector<Level> m_Levels;
};

} // namespace canopy
