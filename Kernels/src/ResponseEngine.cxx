#include "canopy/ResponseEngine.h"

#include "canopy/Errors.h"
#include "canopy/PBTEvaluation.h" // PBTNodesInPreorder
#include "canopyConfigure.h"

#if CANOPY_USE_CUDA
#include "canopy/cuda/DeviceBuffer.h"
#endif

#include <algorithm>
#include <string>
#include <vector>

namespace canopy
{

struct ResponseEngine::Impl
{
  std::string                     name;
  ResolvedBackend                 backend;
  int                             cpuThreads = 0;
  std::size_t                     maxDeviceBytes = 0;
  std::vector<PBTNodeFlat>        nodes; // the tree of SetTree
  std::vector<PBTWeakLearnerFlat> learners;
  std::vector<float>              tables;
  PBTView                         hostTree;
  int                             treeFeatures = 0; // 1 + the largest feature index its learners use
  bool                            hasTree = false;
#if CANOPY_USE_CUDA
  std::unique_ptr<cuda::ScopedDevice>    scopedDevice;
  std::unique_ptr<cuda::Stream>          stream;
  cuda::DeviceBuffer<unsigned char>      inputs;  // one slice's points or poses
  cuda::DeviceBuffer<float>              results; // one slice's responses or scores
  std::vector<float>                     staging; // for layouts that are not feature-major
  cuda::DeviceBuffer<PBTNodeFlat>        deviceNodes;
  cuda::DeviceBuffer<PBTWeakLearnerFlat> deviceLearners;
  cuda::DeviceBuffer<float>              deviceTables;
  PBTView                                deviceTree;
#endif
};

ResponseEngine::ResponseEngine(const char *            name,
                               const ResolvedBackend & backend,
                               int                     cpuThreads,
                               std::size_t             maxDeviceBytes)
  : m_Base(std::make_unique<Impl>())
{
  m_Base->name = name;
  m_Base->backend = backend;
  m_Base->cpuThreads = cpuThreads;
  m_Base->maxDeviceBytes = maxDeviceBytes;
#if CANOPY_USE_CUDA
  if (backend.useCuda)
  {
    m_Base->scopedDevice = std::make_unique<cuda::ScopedDevice>(backend.deviceIndex);
    m_Base->stream = std::make_unique<cuda::Stream>();
  }
#else
  if (backend.useCuda)
  {
    CANOPY_THROW(name << ": a CUDA backend was requested but this build has no CUDA support");
  }
#endif
}

ResponseEngine::~ResponseEngine() = default;

const ResolvedBackend &
ResponseEngine::GetBackend() const
{
  return m_Base->backend;
}

int
ResponseEngine::GetCpuThreads() const
{
  return m_Base->cpuThreads;
}

bool
ResponseEngine::OnCuda() const
{
  return m_Base->backend.useCuda;
}

StreamHandle
ResponseEngine::Stream() const
{
#if CANOPY_USE_CUDA
  if (m_Base->stream)
  {
    return m_Base->stream->get();
  }
#endif
  CANOPY_THROW(m_Base->name << ": no CUDA stream (the engine runs on the CPU)");
}

void
ResponseEngine::Synchronize() const
{
#if CANOPY_USE_CUDA
  if (m_Base->stream)
  {
    m_Base->stream->Synchronize();
  }
#endif
}

void
ResponseEngine::SetTree(const PBTView & tree)
{
  auto & b = *m_Base;
  if (tree.numNodes < 1 || tree.nodes == nullptr)
  {
    CANOPY_THROW(b.name << ": the PBT has no nodes");
  }
  for (int i = 0; i < tree.numNodes; ++i)
  {
    const PBTNodeFlat & node = tree.nodes[i];
    if (node.left >= tree.numNodes || node.right >= tree.numNodes)
    {
      CANOPY_THROW(b.name << ": PBT node " << i << " has a child outside the " << tree.numNodes << " nodes");
    }
  }
  // Preorder numbering (the order PbtPosteriorStack visits nodes in; posteriors unchanged) lets a
  // warp-synchronous traversal expand each node once per warp (PBTHypotheses.h).
  b.nodes = PBTNodesInPreorder(tree.nodes, tree.numNodes);
  int numLearners = 0;
  int numTables = 0;
  for (const PBTNodeFlat & node : b.nodes)
  {
    numLearners = std::max(numLearners, node.firstLearner + node.numLearners);
  }
  b.learners.assign(tree.learners, tree.learners + numLearners);
  b.treeFeatures = 0;
  for (const PBTWeakLearnerFlat & learner : b.learners)
  {
    numTables = std::max(numTables, learner.tableOffset + learner.numBins);
    b.treeFeatures = std::max(b.treeFeatures, learner.feature + 1);
  }
  b.tables.assign(tree.tables, tree.tables + numTables);
  b.hostTree = tree;
  b.hostTree.numNodes = static_cast<int>(b.nodes.size());
  b.hostTree.nodes = b.nodes.data();
  b.hostTree.learners = b.learners.data();
  b.hostTree.tables = b.tables.data();
#if CANOPY_USE_CUDA
  if (OnCuda())
  {
    const auto s = b.stream->get();
    b.deviceNodes.Allocate(b.nodes.size(), "PBT nodes");
    b.deviceNodes.CopyFromHost(b.nodes.data(), b.nodes.size(), s);
    b.deviceLearners.Allocate(b.learners.size(), "PBT weak learners");
    b.deviceLearners.CopyFromHost(b.learners.data(), b.learners.size(), s);
    b.deviceTables.Allocate(b.tables.size(), "PBT weak-learner tables");
    b.deviceTables.CopyFromHost(b.tables.data(), b.tables.size(), s);
    b.deviceTree = b.hostTree;
    b.deviceTree.nodes = b.deviceNodes.data();
    b.deviceTree.learners = b.deviceLearners.data();
    b.deviceTree.tables = b.deviceTables.data();
    b.stream->Synchronize(); // the caller's model may go away after this returns
  }
#endif
  b.hasTree = true;
}

bool
ResponseEngine::HasTree() const
{
  return m_Base->hasTree;
}

const PBTView &
ResponseEngine::HostTree(int numFeatures) const
{
  if (!m_Base->hasTree)
  {
    CANOPY_THROW(m_Base->name << ": no PBT was set (SetTree) before scoring hypotheses");
  }
  if (m_Base->treeFeatures > numFeatures)
  {
    CANOPY_THROW(m_Base->name << ": the PBT uses feature " << m_Base->treeFeatures - 1 << " but the engine's bank has "
                              << numFeatures << " features");
  }
  return m_Base->hostTree;
}

const PBTView &
ResponseEngine::DeviceTree(int numFeatures) const
{
  HostTree(numFeatures); // the same checks
#if CANOPY_USE_CUDA
  return m_Base->deviceTree;
#else
  CANOPY_THROW(m_Base->name << ": no device tree in a CPU-only build");
#endif
}

void
ResponseEngine::RunInSlices(const SlicedWork & work, ResponseLayout out, const SliceLaunch & launch)
{
  if (work.units <= 0 || work.pointsPerUnit <= 0 || work.valuesPerPoint <= 0)
  {
    return;
  }
#if CANOPY_USE_CUDA
  auto &            b = *m_Base;
  const auto        s = b.stream->get();
  const std::size_t resultBytesPerUnit =
    sizeof(float) * static_cast<std::size_t>(work.pointsPerUnit) * work.valuesPerPoint;
  const std::int64_t perSlice = std::max<std::int64_t>(
    1, std::min<std::int64_t>(work.units, b.maxDeviceBytes / (work.inputBytesPerUnit + resultBytesPerUnit)));
  const std::size_t resultCount = static_cast<std::size_t>(perSlice * work.pointsPerUnit) * work.valuesPerPoint;
  if (b.results.size() < resultCount)
  {
    b.results.Allocate(resultCount, "response slice");
  }
  if (work.hostInputs != nullptr && b.inputs.size() < perSlice * work.inputBytesPerUnit)
  {
    b.inputs.Allocate(perSlice * work.inputBytesPerUnit, "slice inputs");
  }
  for (std::int64_t first = 0; first < work.units; first += perSlice)
  {
    const std::int64_t count = std::min(perSlice, work.units - first);
    const std::int64_t points = count * work.pointsPerUnit;
    const void *       deviceInputs = nullptr;
    if (work.hostInputs != nullptr)
    {
      b.inputs.CopyFromHost(static_cast<const unsigned char *>(work.hostInputs) + first * work.inputBytesPerUnit,
                            count * work.inputBytesPerUnit,
                            s);
      deviceInputs = b.inputs.data();
    }
    launch(first, count, deviceInputs, ResponseLayout{ b.results.data(), points, 1 });
    const std::int64_t firstPoint = first * work.pointsPerUnit;
    if (out.pointStride == 1) // each value's row of the slice goes straight into place
    {
      const std::int64_t pitch = work.valuesPerPoint > 1 ? out.featureStride : points;
      CANOPY_CUDA_CHECK(cudaMemcpy2DAsync(out.values + firstPoint,
                                          pitch * sizeof(float),
                                          b.results.data(),
                                          points * sizeof(float),
                                          points * sizeof(float),
                                          work.valuesPerPoint,
                                          cudaMemcpyDeviceToHost,
                                          s));
      continue;
    }
    b.staging.resize(static_cast<std::size_t>(points) * work.valuesPerPoint);
    b.results.CopyToHost(b.staging.data(), b.staging.size(), s);
    b.stream->Synchronize();
    for (int v = 0; v < work.valuesPerPoint; ++v)
    {
      for (std::int64_t p = 0; p < points; ++p)
      {
        out.values[v * out.featureStride + (firstPoint + p) * out.pointStride] = b.staging[v * points + p];
      }
    }
  }
  b.stream->Synchronize();
#else
  (void)out;
  (void)launch;
  CANOPY_THROW(m_Base->name << ": device slices in a CPU-only build");
#endif
}

} // namespace canopy
