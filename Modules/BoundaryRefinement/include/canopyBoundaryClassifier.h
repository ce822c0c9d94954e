// Boundary classifiers of a shape model (issue 10 part 2; Birkbeck §2 "Boundary detection", §4.3):
// per mesh level, a PBT on steerable features sampled in each vertex's frame (first axis = the vertex
// normal, so d of Table 1 is the normal), trained on labelled volumes with positives on the true
// boundary (the training subjects' corresponded meshes) and negatives displaced along the normal.
// PBTBoundaryScorer scores all vertices x displacements of a level in one call (one kernel launch on
// CUDA) through BoundaryFeatureFunc (Kernels/include/canopy/PBTHypotheses.h).
#pragma once

#include "canopy/Device.h"
#include "canopyBoundaryScorer.h"
#include "canopyPBTModel.h"
#include "canopyPBTTraining.h"
#include "canopyShapeModel.h"
#include "canopySteerablePBT.h"
#include "canopySteerablePyramid.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace canopy
{
/** Sampling and training choices of the boundary classifiers (one set for every level). */
struct BoundaryClassifierOptions
{
  SteerableGrid           grid{ 5, 1.0f };
  SteerablePyramidOptions pyramid{ { 1.0, 2.0, 4.0 }, {} };
  /** Per mesh level (coarse to fine): the refinement searches +/- searchMm along each normal, and
   * negatives are trained at +/- {1/3, 2/3, 1} x searchMm (default 6, 4.5, 3 mm: negatives at 2, 4,
   * 6 / 1.5, 3, 4.5 / 1, 2, 3 mm on either side); the positive is the vertex itself (offset 0). A
   * level without an entry takes the last one. */
  std::vector<double> searchMm{ 6.0, 4.5, 3.0 };
  /** Per mesh level: the vertex frame's scale (the sampling grid's extent grows with it). */
  std::vector<double> frameScale{ 2.0, 1.5, 1.0 };
  /** Vertices sampled per subject and level (evenly spaced indices; all when <= 0 or more). */
  int maxVerticesPerSubject = 400;
  /** Candidate features (RandomSteerableFeatures; 0: the exhaustive bank). */
  int                featureBankSize = 1000;
  PBTTrainingOptions pbt;
  ResolvedBackend    backend;
};

/** The negatives' offsets (mm, signed) of a level: +/- {1/3, 2/3, 1} x searchMm. */
std::vector<double>
BoundaryNegativeOffsets(double searchMm);

/** One level's classifier. */
struct BoundaryLevelClassifier
{
  PBTModel pbt; // steerable family
  double   searchMm = 3.0;
  double   frameScale = 1.0;
};

/** The boundary classifiers of one structure, for the levels of its shape model. */
struct BoundaryClassifiers
{
  std::string                          structure;
  std::vector<BoundaryLevelClassifier> levels; // as many as the shape model's levels, coarse to fine
  /** Intensity normalisation applied to every input before the pyramid: "zscore" (whole volume mean
   * and standard deviation) or "none". */
  std::string    normalization = "zscore";
  nlohmann::json training = nlohmann::json::object(); // subjects, sample counts, accuracy, seconds
  /** Mean over the training subjects of (mesh centroid - the image's centre), LPS mm: where the structure
   * lies in volumes cropped like the training ones (segment-shape --init-image-center). */
  Eigen::Vector3d offsetFromImageCenterMm = Eigen::Vector3d::Zero();

  /** The pyramid options every level's PBT was trained with (levels share them). */
  const SteerablePyramidOptions & Pyramid() const { return levels.front().pbt.steerable.pyramid; }
  /** canopy::Error naming `where` when a level's PBT is not a valid steerable PBT or the pyramids differ. */
  void Validate(const std::string & where) const;
};

/** The vertex frames of a mesh: centre = the point, axes[0] = the unit normal, axes[1], axes[2] an
 * orthonormal completion (deterministic: the coordinate axis least aligned with the normal crossed
 * with it), scale `scale` on every axis. */
std::vector<SteerablePose>
BoundaryVertexFrames(const Eigen::Matrix3Xd & points, const Eigen::Matrix3Xd & normals, double scale);

/** A training volume and its structure's corresponded finest-level mesh in its LPS frame. */
struct BoundaryTrainingSubject
{
  std::string                          name;
  SteerablePyramid::ImageType::Pointer image;  // intensities as read (normalised by the trainer)
  Eigen::Matrix3Xd                     finest; // 3 x N, the finest level's vertices, LPS mm
};

struct BoundaryTrainingReport
{
  std::vector<SteerablePBTTrainingReport> levels;
  double                                  seconds = 0;
};

/** Trains one PBT per level of `model`. canopy::Error naming the subject when its mesh does not have
 * the model's finest vertex count or its image is missing; options checked. */
BoundaryClassifiers
TrainBoundaryClassifiers(const ShapeModel &                           model,
                         const std::vector<BoundaryTrainingSubject> & subjects,
                         const BoundaryClassifierOptions &            options,
                         BoundaryTrainingReport *                     report = nullptr,
                         const TrainingProgress &                     progress = {});

/** The physical centre (LPS mm) of an image's largest possible region. */
Eigen::Vector3d
ImageCenterMm(const itk::ImageBase<3> * image);

/** The input normalised as the classifiers ask (a new image; the input is unchanged). */
SteerablePyramid::ImageType::Pointer
NormalizeBoundaryIntensities(const SteerablePyramid::ImageType * image, const std::string & normalization);

nlohmann::json
BoundaryClassifiersToJson(const BoundaryClassifiers & classifiers);

/** canopy::Error naming `where` and the field for anything malformed, or when the level count differs
 * from `levels` (the shape model's). */
BoundaryClassifiers
BoundaryClassifiersFromJson(const nlohmann::json & json, const std::string & where, std::size_t levels);

/** The BoundaryScorer of trained classifiers on one (normalised) volume: Score() builds the vertex
 * frames, one BoundaryHypothesis per vertex and offset, and evaluates the level's PBT on them in one
 * SteerableResponseEngine::EvaluateBoundaryPBT call (CPU threads, or one CUDA launch). */
class PBTBoundaryScorer : public BoundaryScorer
{
public:
  /** `pyramid` must be built with classifiers.Pyramid() on the normalised volume and outlive the scorer. */
  PBTBoundaryScorer(const BoundaryClassifiers & classifiers,
                    const SteerablePyramid &    pyramid,
                    const ResolvedBackend &     backend,
                    int                         cpuThreads = 0);
  ~PBTBoundaryScorer() override;

  void Score(std::size_t                 level,
             const Eigen::Matrix3Xd &    points,
             const Eigen::Matrix3Xd &    normals,
             const std::vector<double> & offsetsMm,
             Eigen::MatrixXf &           scores) override;

  /** Seconds spent in the engine (scoring only) since construction. */
  double ScoringSeconds() const { return m_ScoringSeconds; }

private:
  const BoundaryClassifiers &                           m_Classifiers;
  std::vector<std::unique_ptr<SteerableResponseEngine>> m_Engines; // one per level (its bank and tree resident)
  double                                                m_ScoringSeconds = 0;
};
} // namespace canopy
