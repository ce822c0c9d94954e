// A screen the CPU trees run before a due leaf's split decision (HoeffdingDecideSplit). Most checks of
// a forest's leaves find no split. On RandomTree (200k x 100 trees) 72% of them are of leaves none of
// whose observed attributes has two branches over 1% of the weight (all lie on the leaf's path), so no
// candidate has a finite merit: that needs counts only, no logarithm. Of the rest, the shared decision
// spends a third of its logarithms on the parent's impurity, the same term in every candidate's merit
// (impurity(parent) - the branches' weighted impurity), and one on the Hoeffding bound's ln(1/delta).
// Whether best - second > epsilon depends, up to rounding, only on the two smallest weighted branch
// impurities; so where they differ by clearly less than epsilon (and epsilon is clearly not under tau,
// where a tie splits) the answer is "no split" without the parent's impurity, and with the bound's
// logarithm computed once per tree. Anything
// near a threshold, a likely split, or a numeric attribute is left to the shared decision, which then
// runs as before: the trees are the same bit for bit (HoeffdingTree.SplitScreenNeverHidesASplit). Host
// only; the CUDA forest keeps the shared decision.
#pragma once

#include "canopy/HoeffdingTreeFlat.h"

#include <cmath>
#include <cstdint>

namespace canopy::streaming
{

/** The Hoeffding bound's parts that depend on the tree's options only: HoeffdingBound's range and
 * ln(1/delta), computed by the same functions. */
struct SplitScreenConstants
{
  double range = 1.0, logInverseConfidence = 0.0;
};

inline SplitScreenConstants
SplitScreenConstantsOf(const HoeffdingTreeShape & s)
{
  return { MeritRange(s.criterion, s.classes), PortableLog(1.0 / s.splitConfidence) };
}

/** True only where HoeffdingDecideSplit(s, t, slot, ...) returns false (no split); false: not known,
 * run the shared decision. Margins: epsilon and the branch shares' 1% threshold within 1e-9 of their
 * value, the merits' difference 1e-12 (the rounding of impurities of at most log2(64) bits is ~1e-14). */
inline bool
CertainlyNoSplit(const HoeffdingTreeShape & s, const HoeffdingTreeView & t, int slot, const SplitScreenConstants & k)
{
  constexpr double      kMinBranchFraction = 0.01; // SplitMeritOfCounts's default, the one the decision uses
  constexpr int         kMaxCandidates = 64;
  const std::int64_t    sl = slot;
  const std::int32_t *  subspace = t.subspace + sl * s.subspaceSize;
  const std::uint32_t * nominal = t.nominalCounts + sl * s.nominalStride;
  if (s.subspaceSize > kMaxCandidates)
    return false;
  // First which candidates have a finite merit (two branches over 1% of their weight): no logarithm.
  // A leaf whose observed attributes all lie on its path (constant there: one branch) has none; such
  // leaves, checked every grace period for ever, were most of RandomTree's checks.
  double branchTotals[kMaxCandidates];
  int    finite[kMaxCandidates], finiteCount = 0;
  for (int j = 0; j < s.subspaceSize; ++j)
  {
    const int a = subspace[j];
    const int values = s.values[a];
    if (values <= 0)
      return false; // numeric
    const std::uint32_t * rows = nominal + s.offset[a];
    double                branchTotal = 0.0;
    for (int c = 0; c < values * s.classes; ++c)
      branchTotal += double(rows[c]);
    if (!(branchTotal > 0.0))
      continue; // merit -infinity
    int heavy = 0;
    for (int b = 0; b < values; ++b)
    {
      double branch = 0.0;
      for (int c = 0; c < s.classes; ++c)
        branch += double(rows[b * s.classes + c]);
      const double share = branch / branchTotal;
      if (share > kMinBranchFraction * (1.0 + 1e-9))
        ++heavy;
      else if (share > kMinBranchFraction * (1.0 - 1e-9))
        return false; // at the threshold
    }
    if (heavy >= 2)
    {
      branchTotals[finiteCount] = branchTotal;
      finite[finiteCount++] = j;
    }
  }
  if (finiteCount == 0)
    return true; // no finite merit: no candidate
  if (finiteCount == 1)
    return false; // one finite merit against -infinity: a split
  const double n = double(t.weight[slot]);
  const double epsilon = std::sqrt(k.range * k.range * k.logInverseConfidence / (2.0 * n));
  if (!(epsilon >= s.tieThreshold * (1.0 + 1e-9)))
    return false; // a tie splits
  double smallest = INFINITY, second = INFINITY;
  for (int f = 0; f < finiteCount; ++f)
  {
    const int             a = subspace[finite[f]];
    const std::uint32_t * rows = nominal + s.offset[a];
    double                weighted = 0.0;
    for (int b = 0; b < s.values[a]; ++b)
    {
      const std::uint32_t * counts = rows + b * s.classes;
      double                branch = 0.0;
      for (int c = 0; c < s.classes; ++c)
        branch += double(counts[c]);
      weighted += (branch / branchTotals[f]) * ImpurityOfCounts(s.criterion, counts, s.classes);
    }
    if (weighted < smallest)
    {
      second = smallest;
      smallest = weighted;
    }
    else if (weighted < second)
      second = weighted;
  }
  return second - smallest < epsilon * (1.0 - 1e-9) - 1e-12;
}

} // namespace canopy::streaming
