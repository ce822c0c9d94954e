// Training a statistical shape model from label maps (issue 10 part 1): training surfaces, the
// template hierarchy, correspondence by fitting the template to every surface (similarity ICP, then
// non-rigid ICP), generalised Procrustes alignment and PCA; compactness and generalisation measures.
#pragma once

#include "canopyShapeModel.h"
#include "canopySurfaceFit.h"
#include "canopySurfaceMetrics.h" // LabelImage

#include <string>
#include <vector>

namespace canopy
{
struct TrainingSurfaceOptions
{
  /** Windowed-sinc smoothing of the voxel surface (removes the staircase; keeps the volume). */
  unsigned smoothingIterations = 20;
  double   smoothingPassBand = 0.05;
  /** A label in several pieces is an error unless this is set; then the largest piece is kept. */
  bool keepLargestPiece = false;
};

/** What TrainingSurface found. */
struct TrainingSurfaceInfo
{
  int    pieces = 1;
  double droppedShare = 0; // share of the surface's triangles in the dropped pieces
};

/** The surface of `label` in a subject's label map (LPS mm), smoothed. canopy::Error naming the
 * subject when no voxel has the label, or when the label is in several pieces (separate surfaces)
 * and keepLargestPiece is off. */
vtkSmartPointer<vtkPolyData>
TrainingSurface(const LabelImage *             labels,
                int                            label,
                const std::string &            subject,
                const TrainingSurfaceOptions & options = {},
                TrainingSurfaceInfo *          info = nullptr);

struct ShapeTrainingSubject
{
  std::string                  name;
  vtkSmartPointer<vtkPolyData> surface; // LPS mm
};

struct ShapeTrainingOptions
{
  std::vector<int> levelVertices{ 600, 1200, 2400 };
  /** Keep the fewest modes whose variances add up to this share of the total, in (0, 1]. */
  double varianceShare = 0.98;
  /** The subject whose surface becomes the template; -1: the one of median volume. */
  int templateSubject = -1;
  /** 2: fit once with the template subject, then again with the mean shape of the first pass as the
   * template (less bias towards one subject's shape); 1: once. */
  int                passes = 2;
  NonrigidFitOptions fit;
  /** Worker threads over subjects; 0 = the hardware's. */
  unsigned threads = 0;
};

/** How one subject was fitted. */
struct ShapeSubjectFit
{
  std::string name;
  Similarity  pose;                   // model frame -> the subject's LPS frame (from Procrustes)
  double      fitToSurfaceMeanMm = 0; // fitted template vertices -> subject surface
  double      surfaceToFitMeanMm = 0; // subject surface vertices -> fitted template
  double      fitHausdorffMm = 0;
  double      procrustesRmsMm = 0; // aligned shape vs the mean shape
};

struct ShapeTrainingResult
{
  ShapeModel                   model;
  std::vector<ShapeSubjectFit> subjects;
  /** Every subject's corresponded finest-level shape in the model frame (after Procrustes), 3N x S. */
  Eigen::MatrixXd alignedShapes;
  std::string     templateSubject;
  double          seconds = 0;
};

/** Trains the model of one structure. canopy::Error for fewer than 3 subjects, an empty surface, or
 * bad options. */
ShapeTrainingResult
TrainShapeModel(const std::vector<ShapeTrainingSubject> & subjects,
                const std::string &                       structure,
                int                                       label,
                const ShapeTrainingOptions &              options = {});

/** Generalised Procrustes alignment of corresponding shapes (3N x S): each shape's similarity onto
 * the mean, the mean re-estimated, until it settles. The mean keeps the orientation of shape
 * `reference`, centroid 0 and the shapes' average RMS radius (mm). Returns the aligned shapes; poses
 * (model frame -> each shape's frame) and the mean when asked. */
Eigen::MatrixXd
GeneralisedProcrustes(const Eigen::MatrixXd &   shapes,
                      Eigen::Index              reference,
                      std::vector<Similarity> * poses = nullptr,
                      Eigen::Matrix3Xd *        mean = nullptr);

/** Principal modes of aligned shapes (3N x S) about their mean: all eigenvalues (descending, mm^2)
 * and the orthonormal modes of the first `keep` of them (all non-zero ones when keep < 0). */
struct PrincipalModes
{
  Eigen::VectorXd mean, eigenvalues;
  Eigen::MatrixXd modes;
};
PrincipalModes
ComputePrincipalModes(const Eigen::MatrixXd & shapes, Eigen::Index keep = -1);

/** The fewest modes whose eigenvalues reach `share` of the total. */
Eigen::Index
ModesForVarianceShare(const Eigen::VectorXd & eigenvalues, double share);

/** Leave-one-out generalisation: each shape reconstructed by the model of the others with
 * 1..maxModes modes (orthogonal projection in the common frame). Returns, per mode count k
 * (index k-1), the mean over shapes of the mean vertex distance (mm). */
std::vector<double>
LeaveOneOutGeneralisation(const Eigen::MatrixXd & alignedShapes, Eigen::Index maxModes);
} // namespace canopy
