// The CPU forest's vote at a leaf whose observed attributes are all nominal: HoeffdingVoteAndScore
// (Kernels/include/canopy/HoeffdingTreeFlat.h) with its naive Bayes computed attribute by attribute
// for all classes at once, instead of class by class. Each class's product sees the same factors in
// the same order, with the same rescaling, so every double equals the shared function's bit for bit
// (NominalLeafVotes.EqualsTheSharedVote); the attribute's value, its row and its missing test are read
// once per attribute instead of once per class, and the classes' multiplication chains interleave.
// The shared function stays the reference, and the only one the CUDA forest runs.
#pragma once

#include "canopy/HoeffdingTreeFlat.h"

#include <cstdint>

namespace canopy::streaming
{

namespace detail
{
/** HoeffdingNaiveBayesVotes's products for a slot whose subspace holds nominal attributes only: the
 * numerator and denominator of every class (before the division). kClasses: the number of classes
 * when known at compile time (2: the compiler keeps both chains in registers), 0: s.classes. */
template<int kClasses>
inline void
NominalNaiveBayesTerms(const HoeffdingTreeShape & s,
                       const HoeffdingTreeView &  t,
                       int                        slot,
                       const float *              x,
                       double *                   numerator,
                       double *                   denominator)
{
  const int             classes = kClasses > 0 ? kClasses : s.classes;
  const std::int64_t    sl = slot;
  const std::uint32_t * counts = t.classCounts + sl * classes;
  const std::int32_t *  subspace = t.subspace + sl * s.subspaceSize;
  const std::uint32_t * nominal = t.nominalCounts + sl * s.nominalStride;
  for (int c = 0; c < classes; ++c)
  {
    numerator[c] = double(counts[c]);
    denominator[c] = 1.0;
  }
  for (int j = 0; j < s.subspaceSize; ++j)
  {
    const int   a = subspace[j];
    const float v = x[a];
    if (HoeffdingIsMissing(v))
      continue;
    const int             values = s.values[a];
    const std::uint32_t * rows = nominal + s.offset[a];
    const std::uint32_t * row = rows + int(v) * classes;
    for (int c = 0; c < classes; ++c)
    {
      // The shared loop stops a class at its first attribute with numerator <= 0; skipping it here
      // from then on leaves the same numerator and denominator.
      if (!(numerator[c] > 0.0))
        continue;
      std::uint64_t classTotal = 0;
      for (int value = 0; value < values; ++value)
        classTotal += rows[value * classes + c];
      numerator[c] *= double(row[c]) + 1.0;
      denominator[c] *= double(classTotal) + double(values);
      if (denominator[c] > 1e200)
      {
        numerator[c] *= 1e-200;
        denominator[c] *= 1e-200;
      }
    }
  }
}

/** NominalNaiveBayesTerms<2> for kLanes instances at once (slots[l], rows x[l]; terms[l]: numerators,
 * then denominators): the lanes take each attribute in turn, so their independent load-and-multiply
 * chains overlap; every lane's operations are those of NominalNaiveBayesTerms<2>, in its order. */
template<int kLanes, bool kBinary = false>
inline void
NominalNaiveBayesTermsOfTwoClasses(const HoeffdingTreeShape & s,
                                   const HoeffdingTreeView &  t,
                                   const int *                slots,
                                   const float * const *      x,
                                   double * const *           terms)
{
  const std::uint32_t * nominal[kLanes];
  const std::int32_t *  subspace[kLanes];
  double                numerator[kLanes][2], denominator[kLanes][2];
  for (int l = 0; l < kLanes; ++l)
  {
    const std::int64_t sl = slots[l];
    nominal[l] = t.nominalCounts + sl * s.nominalStride;
    subspace[l] = t.subspace + sl * s.subspaceSize;
    for (int c = 0; c < 2; ++c)
    {
      numerator[l][c] = double(t.classCounts[sl * 2 + c]);
      denominator[l][c] = 1.0;
    }
  }
  for (int j = 0; j < s.subspaceSize; ++j)
    for (int l = 0; l < kLanes; ++l)
    {
      const int   a = subspace[l][j];
      const float v = x[l][a];
      if (HoeffdingIsMissing(v))
        continue;
      // Binary attributes throughout (kBinary): attribute a's rows start at 4a, two loads fewer on the
      // chain from the leaf to its row.
      const int             values = kBinary ? 2 : s.values[a];
      const std::uint32_t * rows = nominal[l] + (kBinary ? 4 * a : s.offset[a]);
      const std::uint32_t * row = rows + int(v) * 2;
      std::uint64_t         classTotal[2] = { 0, 0 };
      if (values == 2) // binary attributes (the paper's streams): no loop around two rows
      {
        classTotal[0] = std::uint64_t(rows[0]) + rows[2];
        classTotal[1] = std::uint64_t(rows[1]) + rows[3];
      }
      else
        for (int value = 0; value < values; ++value)
        {
          classTotal[0] += rows[value * 2];
          classTotal[1] += rows[value * 2 + 1];
        }
      for (int c = 0; c < 2; ++c)
      {
        if (!(numerator[l][c] > 0.0))
          continue;
        numerator[l][c] *= double(row[c]) + 1.0;
        denominator[l][c] *= double(classTotal[c]) + double(values);
        if (denominator[l][c] > 1e200)
        {
          numerator[l][c] *= 1e-200;
          denominator[l][c] *= 1e-200;
        }
      }
    }
  for (int l = 0; l < kLanes; ++l)
    for (int c = 0; c < 2; ++c)
    {
      terms[l][c] = numerator[l][c];
      terms[l][2 + c] = denominator[l][c];
    }
}

/** HoeffdingVoteAndScore's rest, from the naive-Bayes terms NominalNaiveBayesTerms gave (read only when
 * the leaf uses naive Bayes): the normalised votes, the score bits returned. */
template<int kClasses>
inline std::uint8_t
NominalVoteAndScoreFromTerms(const HoeffdingTreeShape & s,
                             const HoeffdingTreeView &  t,
                             int                        slot,
                             int                        label,
                             const double *             numerator,
                             const double *             denominator,
                             double *                   votes)
{
  const int             classes = kClasses > 0 ? kClasses : s.classes;
  const std::uint32_t * counts = t.classCounts + std::int64_t(slot) * classes;
  const bool            adaptive = s.leafPrediction == HoeffdingLeafPrediction::NaiveBayesAdaptive;
  const bool            bayes = s.leafPrediction == HoeffdingLeafPrediction::NaiveBayes ||
                     (adaptive && t.bayesCorrect[slot] > t.majorityCorrect[slot]);
  double       scratch[kClasses > 0 ? kClasses : kHoeffdingMaxClasses];
  std::uint8_t bits = 0;
  if (bayes || adaptive)
  {
    double largest = 0.0;
    for (int c = 0; c < classes; ++c)
    {
      scratch[c] = numerator[c] / denominator[c];
      largest = scratch[c] > largest ? scratch[c] : largest;
    }
    if (!(largest > 0.0))
      for (int c = 0; c < classes; ++c)
        scratch[c] = double(counts[c]);
  }
  if (adaptive)
  {
    int majority = 0;
    for (int c = 1; c < classes; ++c)
      if (counts[c] > counts[majority])
        majority = c;
    bits = majority == label ? kHoeffdingMajorityRight : 0;
    if (HoeffdingArgMax(scratch, classes) == label)
      bits |= kHoeffdingBayesRight;
  }
  double sum = 0.0;
  for (int c = 0; c < classes; ++c)
  {
    votes[c] = bayes ? scratch[c] : double(counts[c]);
    sum += votes[c];
  }
  for (int c = 0; c < classes; ++c)
    votes[c] = sum > 0.0 ? votes[c] / sum : 0.0;
  return bits;
}

template<int kClasses>
inline std::uint8_t
NominalVoteAndScore(const HoeffdingTreeShape & s,
                    const HoeffdingTreeView &  t,
                    int                        slot,
                    const float *              x,
                    int                        label,
                    double *                   votes)
{
  double numerator[kHoeffdingMaxClasses], denominator[kHoeffdingMaxClasses];
  if (s.leafPrediction != HoeffdingLeafPrediction::MajorityClass)
    NominalNaiveBayesTerms<kClasses>(s, t, slot, x, numerator, denominator);
  return NominalVoteAndScoreFromTerms<kClasses>(s, t, slot, label, numerator, denominator, votes);
}
} // namespace detail

/** HoeffdingVoteAndScore(s, t, slot, x, label, votes, scratch), bit for bit, for a slot whose subspace
 * holds nominal attributes only (every slot's, when the stream has no numeric attribute). */
inline std::uint8_t
NominalVoteAndScore(const HoeffdingTreeShape & s,
                    const HoeffdingTreeView &  t,
                    int                        slot,
                    const float *              x,
                    int                        label,
                    double *                   votes)
{
  if (s.classes == 2)
    return detail::NominalVoteAndScore<2>(s, t, slot, x, label, votes);
  return detail::NominalVoteAndScore<0>(s, t, slot, x, label, votes);
}

} // namespace canopy::streaming
