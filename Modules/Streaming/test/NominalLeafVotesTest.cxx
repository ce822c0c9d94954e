// The CPU forest's vote at nominal leaves (canopyNominalLeafVotes.h) against the shared
// HoeffdingVoteAndScore, bit for bit: random leaf statistics with empty classes, empty leaves, missing
// values, denominators past the 1e200 rescaling, 2 to 5 classes, all three leaf predictions, one
// instance at a time and four lanes at once.
#include "canopyHoeffdingTree.h"
#include "canopyNominalLeafVotes.h"

#include "canopy/CounterRandom.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace canopy;
using namespace canopy::streaming;

namespace
{
StreamSchema
NominalSchema(int attributes, int classes, bool binary = false)
{
  StreamSchema s;
  for (int a = 0; a < attributes; ++a)
  {
    StreamAttribute attribute;
    attribute.name = "a" + std::to_string(a);
    attribute.nominal = true;
    for (int v = 0; v < (binary ? 2 : 2 + a % 4); ++v)
      attribute.values.push_back(std::to_string(v));
    s.attributes.push_back(attribute);
  }
  for (int c = 0; c < classes; ++c)
    s.classes.push_back("c" + std::to_string(c));
  return s;
}

/** A uniform integer in [0, n) from draw k of stream `stream`. */
std::uint32_t
Draw(std::uint64_t stream, std::uint64_t & k, double n)
{
  return std::uint32_t(CounterUniform(5, stream, k++) * n);
}

/** Fills the root slot's statistics at random: counts of 0 to `scale` (a class left empty in a third of
 * the trials, the whole leaf in a tenth), predictor scores either way round. */
void
FillRootSlot(const HoeffdingTree & tree, std::uint64_t trial, double scale)
{
  const HoeffdingTreeShape s = tree.Shape();
  const HoeffdingTreeView  v = tree.View();
  std::uint64_t            k = 0;
  const bool               empty = trial % 10 == 3;
  const int                emptyClass = trial % 3 == 0 ? int(Draw(trial, k, s.classes)) : -1;
  for (int c = 0; c < s.classes; ++c)
    v.classCounts[c] = empty || c == emptyClass ? 0 : Draw(trial, k, scale);
  for (int a = 0; a < s.attributes; ++a)
    for (int value = 0; value < s.values[a]; ++value)
      for (int c = 0; c < s.classes; ++c)
        v.nominalCounts[s.offset[a] + value * s.classes + c] = empty ? 0 : Draw(trial, k, scale);
  v.majorityCorrect[0] = Draw(trial, k, 100.0);
  v.bayesCorrect[0] = Draw(trial, k, 100.0);
}

std::vector<float>
RandomInstance(const HoeffdingTreeShape & s, std::uint64_t trial, std::uint64_t instance)
{
  std::vector<float> x(std::size_t(s.attributes));
  std::uint64_t      k = 1000 * instance;
  for (int a = 0; a < s.attributes; ++a)
    x[std::size_t(a)] = Draw(trial + 7777, k, 8.0) == 0 ? NAN : float(Draw(trial + 7777, k, s.values[a]));
  return x;
}

void
ExpectSameBits(const double * expected, const double * got, int n, const std::string & what)
{
  for (int c = 0; c < n; ++c)
    EXPECT_EQ(0, std::memcmp(expected + c, got + c, sizeof(double)))
      << what << ", class " << c << ": " << expected[c] << " vs " << got[c];
}
} // namespace

TEST(NominalLeafVotes, EqualsTheSharedVote)
{
  // Attributes of 2 to 5 values, or all binary (the 2-class lanes' path that places rows at 4a).
  for (bool binary : { false, true })
    for (int classes : { 2, 3, 5 })
      for (int attributes : { 3, 10, 40 }) // 40 attributes of large counts pass the 1e200 rescaling
        for (auto prediction :
             { LeafPrediction::NaiveBayesAdaptive, LeafPrediction::NaiveBayes, LeafPrediction::MajorityClass })
        {
          HoeffdingTreeOptions options;
          options.leafPrediction = prediction;
          options.subspaceSize = attributes == 10 ? 3 : 0; // a drawn subset, or all attributes
          const HoeffdingTree      tree(NominalSchema(attributes, classes, binary), options);
          const HoeffdingTreeShape s = tree.Shape();
          const HoeffdingTreeView  v = tree.View();
          for (std::uint64_t trial = 0; trial < 60; ++trial)
          {
            FillRootSlot(tree, trial, trial % 2 ? 4e9 : 50.0);
            std::vector<std::vector<float>> x;
            for (std::uint64_t i = 0; i < 4; ++i)
              x.push_back(RandomInstance(s, trial, i));
            const std::string what = std::to_string(classes) + " classes, " + std::to_string(attributes) +
                                     " attributes, prediction " + std::to_string(int(prediction)) + ", trial " +
                                     std::to_string(trial) + (binary ? ", binary" : "");
            double terms[4][4];
            if (classes == 2)
            {
              const int     slots[4] = { 0, 0, 0, 0 };
              const float * rows[4] = { x[0].data(), x[1].data(), x[2].data(), x[3].data() };
              double *      laneTerms[4] = { terms[0], terms[1], terms[2], terms[3] };
              detail::NominalNaiveBayesTermsOfTwoClasses<4>(s, v, slots, rows, laneTerms);
              if (binary)
              {
                double   binaryTerms[4][4];
                double * binaryLanes[4] = { binaryTerms[0], binaryTerms[1], binaryTerms[2], binaryTerms[3] };
                detail::NominalNaiveBayesTermsOfTwoClasses<4, true>(s, v, slots, rows, binaryLanes);
                for (int i = 0; i < 4; ++i)
                  ExpectSameBits(terms[i], binaryTerms[i], 4, what + ", binary lane " + std::to_string(i));
              }
            }
            for (int i = 0; i < 4; ++i)
            {
              const int  label = int(CounterUniform(9, trial, std::uint64_t(i)) * classes);
              double     expected[kHoeffdingMaxClasses], scratch[kHoeffdingMaxClasses], got[kHoeffdingMaxClasses];
              const auto expectedBits =
                HoeffdingVoteAndScore(s, v, 0, x[std::size_t(i)].data(), label, expected, scratch);
              const auto bits = NominalVoteAndScore(s, v, 0, x[std::size_t(i)].data(), label, got);
              EXPECT_EQ(expectedBits, bits) << what;
              ExpectSameBits(expected, got, classes, what + ", one at a time");
              if (classes == 2 && prediction != LeafPrediction::MajorityClass)
              {
                const auto laneBits =
                  detail::NominalVoteAndScoreFromTerms<2>(s, v, 0, label, terms[i], terms[i] + 2, got);
                EXPECT_EQ(expectedBits, laneBits) << what;
                ExpectSameBits(expected, got, classes, what + ", lane " + std::to_string(i));
              }
            }
          }
        }
}

TEST(NominalLeafVotes, RescalingIsExercised)
{
  // The comparison above reaches the shared function's rescaling (its denominators pass 1e200): 40
  // attributes of counts near 4e9 multiply to about 1e380 before it.
  HoeffdingTreeOptions options;
  options.leafPrediction = LeafPrediction::NaiveBayes;
  const HoeffdingTree tree(NominalSchema(40, 2), options);
  FillRootSlot(tree, 1, 4e9);
  const HoeffdingTreeShape s = tree.Shape();
  const HoeffdingTreeView  v = tree.View();
  std::vector<float>       x(40, 0.0f);
  double                   numerator[2], denominator[2];
  detail::NominalNaiveBayesTerms<2>(s, v, 0, x.data(), numerator, denominator);
  EXPECT_LT(denominator[0], 1e200);
  EXPECT_GT(denominator[0], 1e10);
  double product = 1.0;
  for (int a = 0; a < 40; ++a)
    product *= double(v.nominalCounts[s.offset[a]] + v.nominalCounts[s.offset[a] + 2]) + double(s.values[a]);
  EXPECT_GT(product, 1e200); // without rescaling the denominator would have passed 1e200
}
