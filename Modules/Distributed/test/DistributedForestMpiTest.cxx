// Distributed forest training over MPI processes (ctest runs it under mpirun -np 2): every rank
// trains on its consecutive share of the phantoms, and the forest equals, bit for bit, the one each
// rank also grows alone on all of them.
#include "DistributedTestSupport.h"
#include "canopyMpiCollective.h"

#include <gtest/gtest.h>

#include <iostream>

namespace
{
using namespace canopy;
using namespace canopy::testing;

void
ExpectSameAsOneProcess(int nz, const ForestTrainingOptions & o)
{
  Collective &          world = MpiWorld();
  const auto            phantoms = MakeDistributedPhantoms(5, nz);
  const ForestModel     single = TrainForest(DistributedSetOf(phantoms, { 0, phantoms.size() }), o);
  ForestTrainingOptions mine = o;
  mine.shards = &world;
  const ForestModel shared =
    TrainForest(DistributedSetOf(phantoms, ContiguousShare(phantoms.size(), world.Rank(), world.Size())), mine);
  EXPECT_TRUE(SameForest(single, shared)) << "rank " << world.Rank() << " of " << world.Size();
  EXPECT_TRUE(world.AllTrue(SameForest(single, shared))) << "another rank's forest differs";
}

TEST(DistributedForestMpi, SameForestAsOneProcess2D)
{
  ExpectSameAsOneProcess(1, DistributedOptions());
}

TEST(DistributedForestMpi, SameForestAsOneProcess3DWithFlipPairs)
{
  auto o = DistributedOptions();
  o.numTrees = 2;
  o.flipPairs = true;
  o.balanceClasses = true;
  ExpectSameAsOneProcess(6, o);
}

TEST(DistributedForestMpi, Collectives)
{
  Collective &               c = MpiWorld();
  std::vector<std::uint32_t> counts{ 1u + c.Rank() };
  c.SumInPlace(counts.data(), counts.size());
  EXPECT_EQ(counts[0], std::uint32_t(c.Size() * (c.Size() + 1) / 2));
  int value = c.Rank() == 0 ? 42 : 0;
  c.Broadcast(&value, sizeof(value), 0);
  EXPECT_EQ(value, 42);
  const auto texts = c.GatherToRoot(std::string(std::size_t(c.Rank() + 1), 'x'), 0);
  if (c.Rank() == 0)
  {
    ASSERT_EQ(texts.size(), std::size_t(c.Size()));
    for (int r = 0; r < c.Size(); ++r)
      EXPECT_EQ(texts[r].size(), std::size_t(r + 1));
  }
}

} // namespace

int
main(int argc, char ** argv)
{
  ::testing::InitGoogleTest(&argc, argv);
  canopy::RegisterMpiCollective();
  canopy::Collective & world = canopy::MpiWorld();
  const int            failed = RUN_ALL_TESTS();
  std::int64_t         anyFailed = failed != 0;
  world.MaxInPlace(&anyFailed, 1);
  if (world.Rank() == 0)
    std::cout << "DistributedForestMpiTest: " << world.Size() << " processes, "
              << (anyFailed ? "a rank failed" : "all ranks passed") << '\n';
  return anyFailed ? 1 : 0;
}
