#include "canopyShapeTraining.h"

#include "canopy/Errors.h"
#include "canopyLabelMesh.h"
#include "canopyMeshDistance.h"
#include "canopyShapeTemplate.h"

#include "itk_eigen.h" // ITK's own Eigen: one Eigen in every unit that also includes ITK IO
#include ITK_EIGEN(Eigenvalues)
#include <vtkCleanPolyData.h>
#include <vtkIdTypeArray.h>
#include <vtkNew.h>
#include <vtkPolyDataConnectivityFilter.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <mutex>
#include <numeric>
#include <thread>

namespace canopy
{
vtkSmartPointer<vtkPolyData>
TrainingSurface(const LabelImage *             labels,
                int                            label,
                const std::string &            subject,
                const TrainingSurfaceOptions & options,
                TrainingSurfaceInfo *          info)
{
  if (!labels || !labels->GetBufferPointer())
    CANOPY_THROW(subject << ": the label map is empty");
  const auto  n = labels->GetLargestPossibleRegion().GetNumberOfPixels();
  const int * p = labels->GetBufferPointer();
  if (std::find(p, p + n, label) == p + n)
    CANOPY_THROW(subject << ": no voxel has label " << label << " (an empty label cannot train a shape model)");
  LabelMeshOptions meshOptions;
  meshOptions.label = label;
  meshOptions.smoothingIterations = options.smoothingIterations;
  meshOptions.smoothingPassBand = options.smoothingPassBand;
  const auto mesh = LabelToMesh(labels, meshOptions);

  vtkNew<vtkPolyDataConnectivityFilter> connectivity;
  connectivity->SetInputData(mesh);
  connectivity->SetExtractionModeToLargestRegion();
  connectivity->Update();
  const int pieces = connectivity->GetNumberOfExtractedRegions();
  double    dropped = 0;
  if (pieces > 1)
  {
    vtkIdTypeArray * sizes = connectivity->GetRegionSizes();
    double           total = 0, largest = 0;
    for (vtkIdType r = 0; r < sizes->GetNumberOfTuples(); ++r)
    {
      total += double(sizes->GetValue(r));
      largest = std::max(largest, double(sizes->GetValue(r)));
    }
    dropped = total > 0 ? 1.0 - largest / total : 0.0;
    if (!options.keepLargestPiece)
      CANOPY_THROW(subject << ": label " << label << " is in " << pieces << " pieces (the largest holds "
                           << std::lround(100.0 * (1.0 - dropped))
                           << "% of the surface); a shape model needs one piece per subject (or keep the largest)");
  }
  if (info)
    *info = { pieces, dropped };
  vtkNew<vtkCleanPolyData> clean; // the largest region still carries every point
  clean->SetInputConnection(connectivity->GetOutputPort());
  clean->Update();
  vtkSmartPointer<vtkPolyData> surface = clean->GetOutput();
  return surface;
}

Eigen::MatrixXd
GeneralisedProcrustes(const Eigen::MatrixXd &   shapes,
                      Eigen::Index              reference,
                      std::vector<Similarity> * poses,
                      Eigen::Matrix3Xd *        meanOut)
{
  const Eigen::Index count = shapes.cols(), n = shapes.rows() / 3;
  if (count < 1 || shapes.rows() != 3 * n || reference < 0 || reference >= count)
    CANOPY_THROW("GeneralisedProcrustes: " << count << " shapes of " << shapes.rows() << " rows, reference "
                                           << reference);
  auto   shape = [&](Eigen::Index s) { return Eigen::Map<const Eigen::Matrix3Xd>(shapes.col(s).data(), 3, n); };
  auto   centred = [](const Eigen::Matrix3Xd & x) -> Eigen::Matrix3Xd { return x.colwise() - x.rowwise().mean(); };
  double averageSize = 0;
  for (Eigen::Index s = 0; s < count; ++s)
    averageSize += std::sqrt(centred(shape(s)).colwise().squaredNorm().mean()) / double(count);
  auto normalised = [&](const Eigen::Matrix3Xd & x) -> Eigen::Matrix3Xd
  {
    const Eigen::Matrix3Xd c = centred(x);
    return c * (averageSize / std::sqrt(c.colwise().squaredNorm().mean()));
  };
  const Eigen::Matrix3Xd  referenceShape = normalised(shape(reference));
  Eigen::Matrix3Xd        mean = referenceShape;
  std::vector<Similarity> toMean(static_cast<std::size_t>(count));
  for (int it = 0; it < 200; ++it)
  {
    Eigen::Matrix3Xd sum = Eigen::Matrix3Xd::Zero(3, n);
    for (Eigen::Index s = 0; s < count; ++s)
    {
      toMean[std::size_t(s)] = FitSimilarity(shape(s), mean);
      sum += toMean[std::size_t(s)].Apply(Eigen::Matrix3Xd(shape(s)));
    }
    Eigen::Matrix3Xd next = normalised(sum / double(count));
    // The mean's rotation is free; hold it to the reference's orientation (the model frame's axes).
    Similarity rotation = FitSimilarity(next, referenceShape, Eigen::VectorXd(), false);
    rotation.translation.setZero();
    next = rotation.Apply(next);
    const double change = RmsDistance(next, mean);
    mean = next;
    if (change < 1e-10 * averageSize)
      break;
  }
  Eigen::MatrixXd aligned(shapes.rows(), count);
  if (poses)
    poses->resize(std::size_t(count));
  for (Eigen::Index s = 0; s < count; ++s)
  {
    const Similarity       t = FitSimilarity(shape(s), mean);
    const Eigen::Matrix3Xd moved = t.Apply(Eigen::Matrix3Xd(shape(s)));
    aligned.col(s) = Eigen::Map<const Eigen::VectorXd>(moved.data(), 3 * n);
    if (poses)
      (*poses)[std::size_t(s)] = t.Inverse();
  }
  if (meanOut)
    *meanOut = mean;
  return aligned;
}

PrincipalModes
ComputePrincipalModes(const Eigen::MatrixXd & shapes, Eigen::Index keep)
{
  PrincipalModes     result;
  const Eigen::Index count = shapes.cols();
  result.mean = shapes.rowwise().mean();
  if (count < 2)
  {
    result.eigenvalues = Eigen::VectorXd();
    result.modes = Eigen::MatrixXd(shapes.rows(), 0);
    return result;
  }
  const Eigen::MatrixXd deviations = shapes.colwise() - result.mean;
  // The S x S Gram matrix has the covariance's non-zero eigenvalues; S is far smaller than 3N.
  const Eigen::MatrixXd                          gram = deviations.transpose() * deviations / double(count - 1);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(gram);
  const Eigen::VectorXd                          values = eigen.eigenvalues().reverse();
  const double                                   total = std::max(values.sum(), 0.0);
  Eigen::Index                                   nonzero = 0;
  while (nonzero < values.size() && values(nonzero) > 1e-12 * total && values(nonzero) > 0)
    ++nonzero;
  result.eigenvalues = values.head(nonzero);
  const Eigen::Index kept = keep < 0 ? nonzero : std::min(keep, nonzero);
  result.modes.resize(shapes.rows(), kept);
  for (Eigen::Index k = 0; k < kept; ++k)
  {
    const Eigen::VectorXd u = eigen.eigenvectors().col(count - 1 - k);
    result.modes.col(k) = (deviations * u).normalized();
  }
  return result;
}

Eigen::Index
ModesForVarianceShare(const Eigen::VectorXd & eigenvalues, double share)
{
  const double total = eigenvalues.sum();
  if (!(total > 0))
    return 0;
  double cumulative = 0;
  for (Eigen::Index k = 0; k < eigenvalues.size(); ++k)
  {
    cumulative += eigenvalues(k);
    if (cumulative >= share * total * (1.0 - 1e-12))
      return k + 1;
  }
  return eigenvalues.size();
}

std::vector<double>
LeaveOneOutGeneralisation(const Eigen::MatrixXd & alignedShapes, Eigen::Index maxModes)
{
  const Eigen::Index  count = alignedShapes.cols(), n = alignedShapes.rows() / 3;
  std::vector<double> error(std::size_t(std::max<Eigen::Index>(maxModes, 0)), 0.0);
  if (count < 3 || maxModes < 1)
    return error;
  for (Eigen::Index s = 0; s < count; ++s)
  {
    Eigen::MatrixXd others(alignedShapes.rows(), count - 1);
    others << alignedShapes.leftCols(s), alignedShapes.rightCols(count - 1 - s);
    const PrincipalModes  model = ComputePrincipalModes(others, maxModes);
    const Eigen::VectorXd y = alignedShapes.col(s) - model.mean;
    Eigen::VectorXd       reconstruction = Eigen::VectorXd::Zero(y.size());
    for (Eigen::Index k = 0; k < maxModes; ++k)
    {
      if (k < model.modes.cols())
        reconstruction += model.modes.col(k) * model.modes.col(k).dot(y);
      const Eigen::VectorXd residual = y - reconstruction;
      error[std::size_t(k)] +=
        Eigen::Map<const Eigen::Matrix3Xd>(residual.data(), 3, n).colwise().norm().mean() / double(count);
    }
  }
  return error;
}

namespace
{
// Runs work(i) for i in [0, count) on `threads` workers; the first exception is re-thrown.
template<typename TWork>
void
ParallelOver(std::size_t count, unsigned threads, TWork && work)
{
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  threads = unsigned(std::min<std::size_t>(threads, std::max<std::size_t>(count, 1)));
  std::atomic<std::size_t> next{ 0 };
  std::exception_ptr       failure;
  std::mutex               mutex;
  auto                     worker = [&]
  {
    for (std::size_t i = next++; i < count; i = next++)
    {
      try
      {
        work(i);
      }
      catch (...)
      {
        const std::lock_guard<std::mutex> lock(mutex);
        if (!failure)
          failure = std::current_exception();
        next = count;
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (auto & t : pool)
    t.join();
  if (failure)
    std::rethrow_exception(failure);
}
} // namespace

ShapeTrainingResult
TrainShapeModel(const std::vector<ShapeTrainingSubject> & subjects,
                const std::string &                       structure,
                int                                       label,
                const ShapeTrainingOptions &              options)
{
  const auto        start = std::chrono::steady_clock::now();
  const std::size_t count = subjects.size();
  if (count < 3)
    CANOPY_THROW("TrainShapeModel: \"" << structure << "\" has " << count << " training subjects; give at least 3");
  if (!(options.varianceShare > 0 && options.varianceShare <= 1))
    CANOPY_THROW("TrainShapeModel: the variance share must be in (0, 1], got " << options.varianceShare);
  if (options.passes < 1 || options.passes > 5)
    CANOPY_THROW("TrainShapeModel: passes must be 1 to 5, got " << options.passes);
  std::vector<double> volumes(count);
  for (std::size_t s = 0; s < count; ++s)
  {
    if (!subjects[s].surface || subjects[s].surface->GetNumberOfPolys() == 0)
      CANOPY_THROW(subjects[s].name << ": the training surface is empty");
    volumes[s] = ComputeMeshMeasures(subjects[s].surface).volumeMm3;
  }
  std::size_t templateIndex = std::size_t(options.templateSubject);
  if (options.templateSubject < 0)
  {
    std::vector<std::size_t> order(count);
    std::iota(order.begin(), order.end(), 0);
    std::nth_element(order.begin(),
                     order.begin() + long(count / 2),
                     order.end(),
                     [&](std::size_t a, std::size_t b) { return volumes[a] < volumes[b]; });
    templateIndex = order[count / 2];
  }
  else if (templateIndex >= count)
    CANOPY_THROW("TrainShapeModel: template subject " << options.templateSubject << " of " << count);

  ShapeTrainingResult result;
  result.templateSubject = subjects[templateIndex].name;
  ShapeModel & model = result.model;
  model.structure = structure;
  model.label = label;
  model.levels = BuildTemplateHierarchy(subjects[templateIndex].surface, options.levelVertices);
  const Eigen::Matrix3Xi triangles = model.Finest().triangles;
  const Eigen::Index     n = model.Finest().Vertices();

  Eigen::MatrixXd fitted(3 * n, Eigen::Index(count));
  result.subjects.resize(count);
  auto fitAll = [&](const Eigen::Matrix3Xd & templatePoints)
  {
    ParallelOver(count,
                 options.threads,
                 [&](std::size_t s)
                 {
                   const TargetSurface target(subjects[s].surface);
                   const Similarity    pose = FitSimilarityIcp(templatePoints, target);
                   const auto          fit = FitNonrigid(pose.Apply(templatePoints), triangles, target, options.fit);
                   fitted.col(Eigen::Index(s)) = Eigen::Map<const Eigen::VectorXd>(fit.points.data(), 3 * n);
                   const auto distances =
                     ComputeMeshDistances(MakeTriangleMesh(fit.points, triangles), target.Surface());
                   ShapeSubjectFit & report = result.subjects[s];
                   report.name = subjects[s].name;
                   report.fitToSurfaceMeanMm = distances.meanTestToReference;
                   report.surfaceToFitMeanMm = distances.meanReferenceToTest;
                   report.fitHausdorffMm = distances.maximum;
                 });
  };
  fitAll(model.Finest().mean);
  Eigen::Matrix3Xd        mean;
  std::vector<Similarity> poses;
  result.alignedShapes = GeneralisedProcrustes(fitted, Eigen::Index(templateIndex), &poses, &mean);
  for (int pass = 1; pass < options.passes; ++pass)
  {
    fitAll(mean);
    result.alignedShapes = GeneralisedProcrustes(fitted, Eigen::Index(templateIndex), &poses, &mean);
  }
  for (std::size_t s = 0; s < count; ++s)
  {
    result.subjects[s].pose = poses[s];
    result.subjects[s].procrustesRmsMm =
      RmsDistance(Eigen::Map<const Eigen::Matrix3Xd>(result.alignedShapes.col(Eigen::Index(s)).data(), 3, n), mean);
  }
  for (auto & level : model.levels)
    for (Eigen::Index i = 0; i < level.Vertices(); ++i)
      level.mean.col(i) = mean.col(level.finestVertex[std::size_t(i)]);

  const PrincipalModes pca = ComputePrincipalModes(result.alignedShapes);
  const Eigen::Index   keep = ModesForVarianceShare(pca.eigenvalues, options.varianceShare);
  model.modes = pca.modes.leftCols(keep);
  model.variances = pca.eigenvalues.head(keep);
  model.spectrum = pca.eigenvalues;
  model.requestedVarianceShare = options.varianceShare;
  model.UpdateLevelModes();
  model.Validate("TrainShapeModel");

  nlohmann::json names = nlohmann::json::array();
  for (const auto & subject : subjects)
    names.push_back(subject.name);
  nlohmann::json levelCounts = nlohmann::json::array();
  for (int v : options.levelVertices)
    levelCounts.push_back(v);
  model.training = { { "subjects", names },
                     { "templateSubject", result.templateSubject },
                     { "requestedLevelVertices", levelCounts },
                     { "passes", options.passes },
                     { "nonrigidStiffness", options.fit.stiffness },
                     { "meanFitToSurfaceMm", 0.0 } };
  double meanFit = 0;
  for (const auto & s : result.subjects)
    meanFit += 0.5 * (s.fitToSurfaceMeanMm + s.surfaceToFitMeanMm) / double(count);
  model.training["meanFitToSurfaceMm"] = meanFit;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}
} // namespace canopy
