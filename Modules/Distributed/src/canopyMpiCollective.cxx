// MPI implementation of canopy::Collective (CANOPY_USE_MPI=ON).
#include "canopyMpiCollective.h"
#include "canopyMpiHooks.h"

#include "canopy/Errors.h"

#include <mpi.h>

#include <cstdlib>
#include <iostream>
#include <limits>

namespace canopy
{
namespace
{

void
Check(int status, const char * call)
{
  if (status == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int  length = 0;
  MPI_Error_string(status, text, &length);
  CANOPY_THROW("MPI: " << call << " failed: " << std::string(text, length));
}
#define CANOPY_MPI(call) Check(call, #call)

/** MPI takes int counts: larger arrays go in pieces (the pieces' results are the same). */
template<typename T, typename F>
void
InPieces(T * data, std::size_t count, F && f)
{
  constexpr std::size_t piece = std::size_t(1) << 30;
  for (std::size_t i = 0; i < count; i += piece)
    f(data + i, static_cast<int>(std::min(piece, count - i)));
}

class MpiCollective final : public Collective
{
public:
  MpiCollective()
  {
    int initialised = 0;
    CANOPY_MPI(MPI_Initialized(&initialised));
    if (!initialised)
    {
      CANOPY_MPI(MPI_Init(nullptr, nullptr));
      std::atexit(
        []
        {
          int finalised = 0;
          MPI_Finalized(&finalised);
          if (!finalised)
            MPI_Finalize();
        });
    }
    CANOPY_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &m_Comm));
    CANOPY_MPI(MPI_Comm_set_errhandler(m_Comm, MPI_ERRORS_RETURN));
    CANOPY_MPI(MPI_Comm_rank(m_Comm, &m_Rank));
    CANOPY_MPI(MPI_Comm_size(m_Comm, &m_Size));
  }
  int  Rank() const override { return m_Rank; }
  int  Size() const override { return m_Size; }
  void SumInPlace(std::uint32_t * d, std::size_t n) override { AllReduce(d, n, MPI_UINT32_T, MPI_SUM); }
  void SumInPlace(std::int64_t * d, std::size_t n) override { AllReduce(d, n, MPI_INT64_T, MPI_SUM); }
  void MaxInPlace(std::int64_t * d, std::size_t n) override { AllReduce(d, n, MPI_INT64_T, MPI_MAX); }
  void BitwiseOrInPlace(std::uint32_t * d, std::size_t n) override { AllReduce(d, n, MPI_UINT32_T, MPI_BOR); }
  void Broadcast(void * data, std::size_t bytes, int root) override
  {
    Count(bytes);
    InPieces(
      static_cast<char *>(data), bytes, [&](char * p, int n) { CANOPY_MPI(MPI_Bcast(p, n, MPI_BYTE, root, m_Comm)); });
  }
  std::vector<std::string> GatherToRoot(const std::string & text, int root) override
  {
    Count(text.size());
    if (text.size() > std::size_t(std::numeric_limits<int>::max()))
      CANOPY_THROW("MPI: a gathered text of " << text.size() << " bytes is over 2 GiB");
    int              length = static_cast<int>(text.size());
    std::vector<int> lengths(m_Rank == root ? m_Size : 0), offsets;
    CANOPY_MPI(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, root, m_Comm));
    std::string all;
    if (m_Rank == root)
    {
      long long total = 0;
      for (int l : lengths)
      {
        offsets.push_back(static_cast<int>(total));
        total += l;
      }
      if (total > std::numeric_limits<int>::max())
        CANOPY_THROW("MPI: gathered texts of " << total << " bytes are over 2 GiB");
      all.resize(static_cast<std::size_t>(total));
    }
    CANOPY_MPI(
      MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, root, m_Comm));
    std::vector<std::string> texts;
    for (std::size_t r = 0; r < lengths.size(); ++r)
      texts.push_back(all.substr(offsets[r], lengths[r]));
    return texts;
  }

private:
  template<typename T>
  void AllReduce(T * data, std::size_t count, MPI_Datatype type, MPI_Op op)
  {
    Count(count * sizeof(T));
    InPieces(data, count, [&](T * p, int n) { CANOPY_MPI(MPI_Allreduce(MPI_IN_PLACE, p, n, type, op, m_Comm)); });
  }

  MPI_Comm m_Comm = MPI_COMM_NULL;
  int      m_Rank = 0, m_Size = 1;
};

MpiCollective * g_World = nullptr;

Collective &
World()
{
  static MpiCollective world; // MPI_Finalize runs at exit, after the statics made later
  g_World = &world;
  return world;
}

int
LocalRank()
{
  static const int local = []
  {
    World(); // initialised
    MPI_Comm node = MPI_COMM_NULL;
    CANOPY_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int rank = 0;
    CANOPY_MPI(MPI_Comm_rank(node, &rank));
    MPI_Comm_free(&node);
    return rank;
  }();
  return local;
}

void
AbortAll(const std::string & message, int code)
{
  int initialised = 0, finalised = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);
  if (!initialised || finalised || !g_World)
    return;
  std::cerr << "canopy: error: rank " << g_World->Rank() << " of " << g_World->Size() << ": " << message
            << "; stopping every rank\n"
            << std::flush;
  MPI_Abort(MPI_COMM_WORLD, code);
}

} // namespace

void
RegisterMpiCollective()
{
  static const detail::MpiHooks hooks{ &World, &LocalRank, &AbortAll };
  detail::SetMpiHooks(&hooks);
}

} // namespace canopy
