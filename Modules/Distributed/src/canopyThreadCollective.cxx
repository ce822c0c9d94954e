#include "canopyThreadCollective.h"

#include "canopy/Errors.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

namespace canopy
{
namespace
{

struct Group
{
  explicit Group(int n)
    : size(n)
    , slots(n, nullptr)
    , texts(n)
  {
  }
  int                       size;
  std::mutex                mutex;
  std::condition_variable   changed;
  int                       arrived = 0;
  std::uint64_t             generation = 0;
  bool                      failed = false;
  std::vector<const void *> slots;
  std::vector<std::string>  texts;

  void Barrier()
  {
    std::unique_lock<std::mutex> lock(mutex);
    const std::uint64_t          mine = generation;
    if (++arrived == size)
    {
      arrived = 0;
      ++generation;
      changed.notify_all();
    }
    else
      changed.wait(lock, [&] { return generation != mine || failed; });
    if (failed)
      CANOPY_THROW("thread collective: another rank failed");
  }
  /** Whether this is the first failure (the cause; later ones are ranks released by it). */
  bool Fail()
  {
    std::lock_guard<std::mutex> lock(mutex);
    const bool                  first = !failed;
    failed = true;
    changed.notify_all();
    return first;
  }
};

class ThreadCollective final : public Collective
{
public:
  ThreadCollective(Group & group, int rank)
    : m_Group(group)
    , m_Rank(rank)
  {
  }
  int  Rank() const override { return m_Rank; }
  int  Size() const override { return m_Group.size; }
  void SumInPlace(std::uint32_t * d, std::size_t n) override
  {
    Reduce(d, n, [](std::uint32_t a, std::uint32_t b) { return a + b; });
  }
  void SumInPlace(std::int64_t * d, std::size_t n) override
  {
    Reduce(d, n, [](std::int64_t a, std::int64_t b) { return a + b; });
  }
  void MaxInPlace(std::int64_t * d, std::size_t n) override
  {
    Reduce(d, n, [](std::int64_t a, std::int64_t b) { return std::max(a, b); });
  }
  void BitwiseOrInPlace(std::uint32_t * d, std::size_t n) override
  {
    Reduce(d, n, [](std::uint32_t a, std::uint32_t b) { return a | b; });
  }
  void Broadcast(void * data, std::size_t bytes, int root) override
  {
    Count(bytes);
    m_Group.slots[m_Rank] = data;
    m_Group.Barrier();
    if (m_Rank != root)
      std::memcpy(data, m_Group.slots[root], bytes);
    m_Group.Barrier();
  }
  std::vector<std::string> GatherToRoot(const std::string & text, int root) override
  {
    Count(text.size());
    m_Group.texts[m_Rank] = text;
    m_Group.Barrier();
    std::vector<std::string> all;
    if (m_Rank == root)
      all = m_Group.texts;
    m_Group.Barrier();
    return all;
  }

private:
  template<typename T, typename Op>
  void Reduce(T * data, std::size_t n, Op op)
  {
    Count(n * sizeof(T));
    m_Group.slots[m_Rank] = data;
    m_Group.Barrier();
    std::vector<T> result(static_cast<const T *>(m_Group.slots[0]), static_cast<const T *>(m_Group.slots[0]) + n);
    for (int r = 1; r < m_Group.size; ++r) // rank order, as a fixed-order reduction
    {
      const T * other = static_cast<const T *>(m_Group.slots[r]);
      for (std::size_t i = 0; i < n; ++i)
        result[i] = op(result[i], other[i]);
    }
    m_Group.Barrier(); // everyone has read every buffer
    std::copy(result.begin(), result.end(), data);
  }

  Group & m_Group;
  int     m_Rank;
};

} // namespace

void
RunThreadCollective(int size, const std::function<void(Collective &)> & body)
{
  if (size < 1)
    CANOPY_THROW("RunThreadCollective: size " << size << " must be at least 1");
  Group                           group(size);
  std::vector<std::exception_ptr> errors(size);
  int                             cause = -1;
  std::vector<std::thread>        threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back(
      [&, r]
      {
        try
        {
          ThreadCollective collective(group, r);
          body(collective);
        }
        catch (...)
        {
          errors[r] = std::current_exception();
          if (group.Fail())
            cause = r; // written once, before any join
        }
      });
  for (auto & t : threads)
    t.join();
  if (cause >= 0) // the failing rank's own error, not the others' "another rank failed"
    std::rethrow_exception(errors[cause]);
}

} // namespace canopy
