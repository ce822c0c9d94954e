#include "canopyBoundaryClassifier.h"

#include "canopy/Elapsed.h"
#include "canopy/Errors.h"
#include "canopy/JsonField.h"
#include "canopy/PBTHypotheses.h"

#include "itk_eigen.h"
#include ITK_EIGEN(Geometry) // cross products

#include <chrono>
#include <cmath>

namespace canopy
{
namespace
{
template<typename T>
T
PerLevel(const std::vector<T> & values, std::size_t level)
{
  return values.empty() ? T{} : values[std::min(level, values.size() - 1)];
}

/** The level's vertices taken from a finest-level point set. */
Eigen::Matrix3Xd
LevelPoints(const ShapeLevel & level, const Eigen::Matrix3Xd & finest)
{
  Eigen::Matrix3Xd points(3, level.Vertices());
  for (Eigen::Index i = 0; i < points.cols(); ++i)
    points.col(i) = finest.col(level.finestVertex[std::size_t(i)]);
  return points;
}

void
CheckOptions(const BoundaryClassifierOptions & o)
{
  if (o.searchMm.empty() || o.frameScale.empty())
    CANOPY_THROW("boundary classifiers: searchMm and frameScale need at least one value");
  for (double s : o.searchMm)
    if (!(s > 0 && s < 1000))
      CANOPY_THROW("boundary classifiers: search range " << s << " mm is outside (0, 1000)");
  for (double s : o.frameScale)
    if (!(s > 0 && s < 100))
      CANOPY_THROW("boundary classifiers: frame scale " << s << " is outside (0, 100)");
}
} // namespace

std::vector<double>
BoundaryNegativeOffsets(double searchMm)
{
  std::vector<double> offsets;
  for (int k = 1; k <= 3; ++k)
  {
    offsets.push_back(-searchMm * k / 3.0);
    offsets.push_back(searchMm * k / 3.0);
  }
  return offsets;
}

void
BoundaryClassifiers::Validate(const std::string & where) const
{
  if (levels.empty())
    CANOPY_THROW(where << ": no boundary classifier levels");
  if (normalization != "zscore" && normalization != "none")
    CANOPY_THROW(where << ": normalization '" << normalization << "' is not zscore or none");
  for (std::size_t l = 0; l < levels.size(); ++l)
  {
    const auto &      level = levels[l];
    const std::string here = where + ": level " + std::to_string(l);
    level.pbt.Validate(here);
    if (level.pbt.featureFamily != PBTFeatureFamily::Steerable)
      CANOPY_THROW(here << ": the PBT reads " << PBTFeatureFamilyName(level.pbt.featureFamily)
                        << " features, not steerable ones");
    if (!(level.searchMm > 0 && level.searchMm < 1000) || !(level.frameScale > 0 && level.frameScale < 100))
      CANOPY_THROW(here << ": searchMm " << level.searchMm << " or frameScale " << level.frameScale << " out of range");
    const auto & p = level.pbt.steerable.pyramid;
    if (p.levelSpacingsMm != Pyramid().levelSpacingsMm || p.levelFactors != Pyramid().levelFactors)
      CANOPY_THROW(here << ": its pyramid differs from level 0's");
  }
}

std::vector<SteerablePose>
BoundaryVertexFrames(const Eigen::Matrix3Xd & points, const Eigen::Matrix3Xd & normals, double scale)
{
  if (points.cols() != normals.cols())
    CANOPY_THROW("boundary frames: " << points.cols() << " points but " << normals.cols() << " normals");
  std::vector<SteerablePose> frames(static_cast<std::size_t>(points.cols()));
  for (Eigen::Index i = 0; i < points.cols(); ++i)
  {
    const Eigen::Vector3d n = normals.col(i).normalized();
    Eigen::Index          least = 0;
    n.cwiseAbs().minCoeff(&least);
    const Eigen::Vector3d u = n.cross(Eigen::Vector3d::Unit(least)).normalized();
    const Eigen::Vector3d v = n.cross(u);
    SteerablePose &       f = frames[std::size_t(i)];
    for (int k = 0; k < 3; ++k)
    {
      f.center[k] = float(points(k, i));
      f.axes[0][k] = float(n(k));
      f.axes[1][k] = float(u(k));
      f.axes[2][k] = float(v(k));
      f.scale[k] = float(scale);
    }
  }
  return frames;
}

Eigen::Vector3d
ImageCenterMm(const itk::ImageBase<3> * image)
{
  const auto &                    region = image->GetLargestPossibleRegion();
  itk::ContinuousIndex<double, 3> middle;
  for (int k = 0; k < 3; ++k)
    middle[k] = double(region.GetIndex(k)) + 0.5 * (double(region.GetSize(k)) - 1.0);
  itk::Point<double, 3> centre;
  image->TransformContinuousIndexToPhysicalPoint(middle, centre);
  return Eigen::Vector3d(centre[0], centre[1], centre[2]);
}

SteerablePyramid::ImageType::Pointer
NormalizeBoundaryIntensities(const SteerablePyramid::ImageType * image, const std::string & normalization)
{
  using ImageType = SteerablePyramid::ImageType;
  if (image == nullptr)
    CANOPY_THROW("boundary intensities: no image");
  auto out = ImageType::New();
  out->CopyInformation(image);
  out->SetRegions(image->GetLargestPossibleRegion());
  out->Allocate();
  const std::size_t n = image->GetLargestPossibleRegion().GetNumberOfPixels();
  const float *     in = image->GetBufferPointer();
  float *           o = out->GetBufferPointer();
  double            mean = 0, sd = 1;
  if (normalization == "zscore")
  {
    double sum = 0, squares = 0;
    for (std::size_t k = 0; k < n; ++k)
    {
      sum += in[k];
      squares += double(in[k]) * in[k];
    }
    mean = n ? sum / double(n) : 0.0;
    const double variance = n ? squares / double(n) - mean * mean : 0.0;
    sd = variance > 1e-12 ? std::sqrt(variance) : 1.0; // a constant volume stays constant (0)
  }
  else if (normalization != "none")
    CANOPY_THROW("boundary intensities: normalization '" << normalization << "' is not zscore or none");
  for (std::size_t k = 0; k < n; ++k)
    o[k] = float((in[k] - mean) / sd);
  return out;
}

BoundaryClassifiers
TrainBoundaryClassifiers(const ShapeModel &                           model,
                         const std::vector<BoundaryTrainingSubject> & subjects,
                         const BoundaryClassifierOptions &            options,
                         BoundaryTrainingReport *                     report,
                         const TrainingProgress &                     progress)
{
  const auto start = std::chrono::steady_clock::now();
  CheckOptions(options);
  if (subjects.empty())
    CANOPY_THROW("boundary classifiers of " << model.structure << ": no training subjects");
  BoundaryClassifiers result;
  result.structure = model.structure;
  std::vector<SteerablePyramid> pyramids;
  pyramids.reserve(subjects.size());
  for (const auto & s : subjects)
  {
    if (!s.image)
      CANOPY_THROW("boundary classifiers: " << s.name << ": no image");
    if (s.finest.cols() != model.Finest().Vertices() || !s.finest.allFinite())
      CANOPY_THROW("boundary classifiers: " << s.name << ": the mesh has " << s.finest.cols()
                                            << " vertices (or non-finite ones); the shape model's finest level has "
                                            << model.Finest().Vertices());
    result.offsetFromImageCenterMm +=
      (Eigen::Vector3d(s.finest.rowwise().mean()) - ImageCenterMm(s.image)) / double(subjects.size());
    pyramids.push_back(SteerablePyramid::Build(
      NormalizeBoundaryIntensities(s.image, result.normalization), options.pyramid, options.pbt.threads));
  }

  BoundaryTrainingReport local;
  local.levels.resize(model.levels.size());
  nlohmann::json levelsJson = nlohmann::json::array();
  for (std::size_t l = 0; l < model.levels.size(); ++l)
  {
    const ShapeLevel &      level = model.levels[l];
    BoundaryLevelClassifier classifier;
    classifier.searchMm = PerLevel(options.searchMm, l);
    classifier.frameScale = PerLevel(options.frameScale, l);
    const std::vector<double>         negatives = BoundaryNegativeOffsets(classifier.searchMm);
    std::vector<SteerableTrainingSet> sets(subjects.size());
    for (std::size_t s = 0; s < subjects.size(); ++s)
    {
      const Eigen::Matrix3Xd points = LevelPoints(level, subjects[s].finest);
      const Eigen::Matrix3Xd normals = VertexNormals(points, level.triangles);
      const Eigen::Index     n = points.cols();
      const Eigen::Index     take =
        options.maxVerticesPerSubject <= 0 ? n : std::min<Eigen::Index>(n, options.maxVerticesPerSubject);
      const auto frames = BoundaryVertexFrames(points, normals, classifier.frameScale);
      auto &     set = sets[s];
      set.pyramid = &pyramids[s];
      set.name = subjects[s].name;
      for (Eigen::Index k = 0; k < take; ++k)
      {
        const SteerablePose & frame = frames[std::size_t(k * n / take)]; // evenly spread over the indices
        set.poses.push_back(DisplacedBoundaryFrame(frame, 0.0f));
        set.labels.push_back(1);
        set.weights.push_back(float(negatives.size())); // as much weight on the boundary as off it
        for (double offset : negatives)
        {
          set.poses.push_back(DisplacedBoundaryFrame(frame, float(offset)));
          set.labels.push_back(-1);
          set.weights.push_back(1.0f);
        }
      }
    }
    SteerablePBTTrainingOptions o;
    o.grid = options.grid;
    o.pyramid = options.pyramid;
    o.featureBankSize = options.featureBankSize;
    o.pbt = options.pbt;
    o.pbt.seed = options.pbt.seed + 1000 * l;
    o.backend = options.backend;
    const double from = double(l) / model.levels.size(), width = 1.0 / model.levels.size();
    classifier.pbt = TrainSteerablePBT(sets,
                                       o,
                                       &local.levels[l],
                                       [&](double f, const std::string & stage)
                                       {
                                         if (progress)
                                           progress(from + width * f, "level " + std::to_string(l) + ": " + stage);
                                       });
    const auto & r = local.levels[l];
    levelsJson.push_back({ { "vertices", level.Vertices() },
                           { "samples", r.samples },
                           { "featuresUsed", r.featuresUsed },
                           { "depth", r.depth },
                           { "trainingAccuracy", r.trainingAccuracy },
                           { "negativeOffsetsMm", negatives },
                           { "seconds", r.responseSeconds + r.trainSeconds } });
    result.levels.push_back(std::move(classifier));
  }
  nlohmann::json names = nlohmann::json::array();
  for (const auto & s : subjects)
    names.push_back(s.name);
  local.seconds = SecondsSince(start);
  result.training = { { "subjects", names },
                      { "maxVerticesPerSubject", options.maxVerticesPerSubject },
                      { "featureBankSize", options.featureBankSize },
                      { "levels", levelsJson },
                      { "seconds", local.seconds } };
  result.Validate("boundary classifiers of " + model.structure);
  if (report)
    *report = local;
  return result;
}

nlohmann::json
BoundaryClassifiersToJson(const BoundaryClassifiers & c)
{
  nlohmann::json levels = nlohmann::json::array();
  for (const auto & level : c.levels)
  {
    nlohmann::json pbt;
    PBTModelToJson(level.pbt, pbt);
    levels.push_back({ { "searchMm", level.searchMm }, { "frameScale", level.frameScale }, { "pbt", pbt } });
  }
  const Eigen::Vector3d & o = c.offsetFromImageCenterMm;
  return { { "structure", c.structure },
           { "normalization", c.normalization },
           { "offsetFromImageCenterMm", { o(0), o(1), o(2) } },
           { "levels", levels },
           { "training", c.training } };
}

BoundaryClassifiers
BoundaryClassifiersFromJson(const nlohmann::json & json, const std::string & where, std::size_t levels)
{
  if (!json.is_object())
    CANOPY_THROW(where << ": boundary classifiers must be an object");
  BoundaryClassifiers c;
  const auto &        structure = RequireJsonField(json, "structure", where);
  const auto &        normalization = RequireJsonField(json, "normalization", where);
  const auto &        array = RequireJsonField(json, "levels", where);
  if (!structure.is_string() || !normalization.is_string() || !array.is_array())
    CANOPY_THROW(where << ": \"structure\" and \"normalization\" must be strings, \"levels\" an array");
  c.structure = structure.get<std::string>();
  c.normalization = normalization.get<std::string>();
  if (array.size() != levels)
    CANOPY_THROW(where << ": " << array.size() << " boundary classifier levels for a shape model of " << levels);
  for (std::size_t l = 0; l < array.size(); ++l)
  {
    const std::string here = where + ": boundary level " + std::to_string(l);
    if (!array[l].is_object())
      CANOPY_THROW(here << " must be an object");
    BoundaryLevelClassifier level;
    const auto &            search = RequireJsonField(array[l], "searchMm", here);
    const auto &            scale = RequireJsonField(array[l], "frameScale", here);
    if (!search.is_number() || !scale.is_number())
      CANOPY_THROW(here << ": \"searchMm\" and \"frameScale\" must be numbers");
    level.searchMm = search.get<double>();
    level.frameScale = scale.get<double>();
    level.pbt = PBTModelFromJson(RequireJsonField(array[l], "pbt", here), here + ": pbt");
    c.levels.push_back(std::move(level));
  }
  if (json.contains("training"))
    c.training = json["training"];
  if (json.contains("offsetFromImageCenterMm"))
  {
    const auto & o = json["offsetFromImageCenterMm"];
    if (!o.is_array() || o.size() != 3)
      CANOPY_THROW(where << ": \"offsetFromImageCenterMm\" must be 3 finite numbers");
    for (int k = 0; k < 3; ++k)
    {
      if (!o[std::size_t(k)].is_number() || !std::isfinite(o[std::size_t(k)].get<double>()))
        CANOPY_THROW(where << ": \"offsetFromImageCenterMm\" must be 3 finite numbers");
      c.offsetFromImageCenterMm(k) = o[std::size_t(k)].get<double>();
    }
  }
  c.Validate(where);
  return c;
}

PBTBoundaryScorer::PBTBoundaryScorer(const BoundaryClassifiers & classifiers,
                                     const SteerablePyramid &    pyramid,
                                     const ResolvedBackend &     backend,
                                     int                         cpuThreads)
  : m_Classifiers(classifiers)
{
  classifiers.Validate("boundary scorer");
  for (const auto & level : classifiers.levels)
  {
    auto engine = std::make_unique<SteerableResponseEngine>(backend, cpuThreads);
    engine->SetPyramid(pyramid);
    SetSteerablePBT(*engine, level.pbt);
    m_Engines.push_back(std::move(engine));
  }
}

PBTBoundaryScorer::~PBTBoundaryScorer() = default;

void
PBTBoundaryScorer::Score(std::size_t                 level,
                         const Eigen::Matrix3Xd &    points,
                         const Eigen::Matrix3Xd &    normals,
                         const std::vector<double> & offsetsMm,
                         Eigen::MatrixXf &           scores)
{
  if (level >= m_Engines.size())
    CANOPY_THROW("boundary scorer: level " << level << " of " << m_Engines.size());
  const auto frames = BoundaryVertexFrames(points, normals, m_Classifiers.levels[level].frameScale);
  const auto n = points.cols();
  const auto m = static_cast<Eigen::Index>(offsetsMm.size());
  // Column-major scores(j, i) = scores.data()[i * m + j]: hypothesis h = i * m + j.
  std::vector<BoundaryHypothesis> hypotheses(static_cast<std::size_t>(n * m));
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < m; ++j)
      hypotheses[std::size_t(i * m + j)] = { std::int32_t(i), float(offsetsMm[std::size_t(j)]) };
  scores.resize(m, n);
  const auto start = std::chrono::steady_clock::now();
  m_Engines[level]->EvaluateBoundaryPBT(
    frames.data(), std::int64_t(n), hypotheses.data(), std::int64_t(hypotheses.size()), scores.data());
  m_ScoringSeconds += SecondsSince(start);
}
} // namespace canopy
