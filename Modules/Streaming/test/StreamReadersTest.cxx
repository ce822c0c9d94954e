// CSV and ARFF readers: kinds of attributes, missing values, class by name or last, and clear errors
// naming the line for malformed rows, unknown values and empty streams; generator specs.
#include "canopyStreamGenerators.h"
#include "canopyStreamReaders.h"
#include "canopyTesting.h"

#include "canopy/Errors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

using namespace canopy::streaming;

namespace
{
std::unique_ptr<InstanceStream>
Csv(const std::string & text, StreamReaderOptions o = {})
{
  return ReadCsvStream(std::make_unique<std::istringstream>(text), "test.csv", o);
}

std::unique_ptr<InstanceStream>
Arff(const std::string & text, StreamReaderOptions o = {})
{
  return ReadArffStream(std::make_unique<std::istringstream>(text), "test.arff", o);
}

using canopy::testing::ErrorOf;

std::size_t
ReadAll(InstanceStream & s, InstanceBatch & all)
{
  InstanceBatch b;
  all.attributes = s.Schema().NumberOfAttributes();
  while (s.NextBatch(b, 2) > 0)
  {
    all.values.insert(all.values.end(), b.values.begin(), b.values.end());
    all.labels.insert(all.labels.end(), b.labels.begin(), b.labels.end());
  }
  return all.Size();
}
} // namespace

TEST(StreamReaders, CsvKindsMissingValuesAndClasses)
{
  auto         s = Csv("size,colour,label\n1.5,red,yes\n?,blue,no\n3,\"red\",yes\n-2e1,,no\n");
  const auto & schema = s->Schema();
  ASSERT_EQ(schema.NumberOfAttributes(), 2);
  EXPECT_FALSE(schema.attributes[0].nominal);
  EXPECT_TRUE(schema.attributes[1].nominal);
  EXPECT_EQ(schema.attributes[1].values, (std::vector<std::string>{ "red", "blue" }));
  EXPECT_EQ(schema.className, "label");
  EXPECT_EQ(schema.classes, (std::vector<std::string>{ "yes", "no" }));
  InstanceBatch all;
  ASSERT_EQ(ReadAll(*s, all), 4u);
  EXPECT_FLOAT_EQ(all.Row(0)[0], 1.5f);
  EXPECT_TRUE(IsMissing(all.Row(1)[0]));
  EXPECT_FLOAT_EQ(all.Row(1)[1], 1.0f);
  EXPECT_FLOAT_EQ(all.Row(3)[0], -20.0f);
  EXPECT_TRUE(IsMissing(all.Row(3)[1]));
  EXPECT_EQ(all.labels, (std::vector<std::int32_t>{ 0, 1, 0, 1 }));
}

TEST(StreamReaders, CsvClassByNameAndGivenClasses)
{
  StreamReaderOptions o;
  o.classAttribute = "label";
  o.classes = { "no", "yes" };
  auto s = Csv("label,x\nyes,1\nno,2\n", o);
  EXPECT_EQ(s->Schema().attributes[0].name, "x");
  InstanceBatch all;
  ReadAll(*s, all);
  EXPECT_EQ(all.labels, (std::vector<std::int32_t>{ 1, 0 }));
}

TEST(StreamReaders, CsvErrorsNameTheLine)
{
  StreamReaderOptions small;
  small.lookAheadRows = 2;
  const std::string good = "x,c\n1,a\n2,b\n";
  EXPECT_EQ(ErrorOf([&] { Csv(""); }), "test.csv: empty stream (no header line)");
  EXPECT_EQ(ErrorOf([&] { Csv("x,c\n"); }), "test.csv: empty stream (a header but no rows)");
  EXPECT_EQ(ErrorOf([&] { Csv("x,c\n1,a\n2\n"); }), "test.csv:3: expected 2 values, found 1");
  EXPECT_EQ(ErrorOf([&] { Csv("x,c\n1,a\n1,a\n"); }), "test.csv: the class 'c' has 1 value(s); at least 2 are needed");
  auto read = [&](const std::string & text)
  {
    auto          s = Csv(text, small);
    InstanceBatch b;
    while (s->NextBatch(b, 10) > 0)
    {
    }
  };
  EXPECT_EQ(ErrorOf([&] { read(good + "3,a,9\n"); }), "test.csv:4: expected 2 values, found 3");
  EXPECT_EQ(ErrorOf([&] { read(good + "3,z\n"); }), "test.csv:4: unknown class 'z' (a, b)");
  EXPECT_EQ(ErrorOf([&] { read(good + "abc,a\n"); }), "test.csv:4: attribute 'x': 'abc' is not a number");
  EXPECT_EQ(ErrorOf([&] { read(good + "nan,a\n"); }),
            "test.csv:4: attribute 'x': 'nan' is not a finite number (write ? for missing)");
  EXPECT_EQ(ErrorOf([&] { read(good + "1,?\n"); }), "test.csv:4: the class 'c' is missing ('?')");
  EXPECT_EQ(ErrorOf([&] { read("k,c\nu,a\nv,b\nw,a\n"); }), "test.csv:4: attribute 'k': unknown value 'w' (u, v)");
  EXPECT_EQ(ErrorOf([&] { read(good + "\"1,a\n"); }), "test.csv:4: unterminated quote");
  StreamReaderOptions byName;
  byName.classAttribute = "nope";
  EXPECT_EQ(ErrorOf([&] { Csv(good, byName); }), "test.csv: no column named 'nope' for the class");
}

TEST(StreamReaders, ArffAttributesAndData)
{
  const std::string   text = "% a comment\n@RELATION weather\n@attribute outlook {sunny, overcast, 'rain y'}\n"
                             "@attribute temperature REAL\n@attribute 'play it' {yes,no}\n@attribute humidity integer\n"
                             "@data\nsunny,85,no,85\n% comment\n'rain y',?,yes,96\novercast,64,yes,?\n";
  StreamReaderOptions o;
  o.classAttribute = "play it";
  auto         s = Arff(text, o);
  const auto & schema = s->Schema();
  ASSERT_EQ(schema.NumberOfAttributes(), 3);
  EXPECT_EQ(schema.attributes[0].values, (std::vector<std::string>{ "sunny", "overcast", "rain y" }));
  EXPECT_FALSE(schema.attributes[1].nominal);
  EXPECT_EQ(schema.attributes[2].name, "humidity");
  EXPECT_EQ(schema.classes, (std::vector<std::string>{ "yes", "no" }));
  InstanceBatch all;
  ASSERT_EQ(ReadAll(*s, all), 3u);
  EXPECT_FLOAT_EQ(all.Row(1)[0], 2.0f);
  EXPECT_TRUE(IsMissing(all.Row(1)[1]));
  EXPECT_TRUE(IsMissing(all.Row(2)[2]));
  EXPECT_EQ(all.labels, (std::vector<std::int32_t>{ 1, 0, 0 }));
  // Without a name the class is the last attribute, which must be nominal.
  EXPECT_EQ(ErrorOf([&] { Arff(text); }), "test.arff: the class attribute 'humidity' is numeric; it must be nominal");
}

TEST(StreamReaders, ArffErrorsNameTheLine)
{
  const std::string header = "@relation r\n@attribute a {x,y}\n@attribute c {p,q}\n@data\n";
  auto              read = [&](const std::string & text)
  {
    auto          s = Arff(text);
    InstanceBatch b;
    while (s->NextBatch(b, 10) > 0)
    {
    }
  };
  EXPECT_EQ(ErrorOf([&] { read(""); }), "test.arff: empty stream (no @data section)");
  EXPECT_EQ(ErrorOf([&] { read(header + "x,p\nz,q\n"); }), "test.arff:6: attribute 'a': unknown value 'z' (x, y)");
  EXPECT_EQ(ErrorOf([&] { read(header + "x\n"); }), "test.arff:5: expected 2 values, found 1");
  EXPECT_EQ(ErrorOf([&] { read("@attribute a string\n@attribute c {p,q}\n@data\n"); }),
            "test.arff:1: attribute 'a': type 'string' is not numeric, real, integer or {values}");
  EXPECT_EQ(ErrorOf([&] { read("@relation r\nhello\n"); }),
            "test.arff:2: expected @relation, @attribute or @data, found 'hello'");
  // A header with no rows reads as an empty stream without error; the CLI rejects it.
  auto          s = Arff(header);
  InstanceBatch b;
  EXPECT_EQ(s->NextBatch(b, 10), 0u);
}

TEST(StreamReaders, GeneratorsRoundTripThroughCsv)
{
  for (const std::string spec :
       { "randomtree", "sea", "hyperplane", "rbf:speed=0.001", "led", "agrawal:drift_every=100" })
  {
    auto              generator = MakeGenerator(spec, 5);
    std::stringstream csv;
    EXPECT_EQ(WriteCsv(*generator, 300, csv), 300u);
    auto          reread = ReadCsvStream(std::make_unique<std::stringstream>(csv.str()), "g.csv", {});
    auto          again = MakeGenerator(spec, 5);
    InstanceBatch expected, got;
    again->NextBatch(expected, 300);
    ReadAll(*reread, got);
    ASSERT_EQ(got.Size(), 300u) << spec;
    // Nominal values and classes are indexed by first appearance when read back: compare by name.
    const auto & a = again->Schema();
    const auto & b = reread->Schema();
    for (std::size_t i = 0; i < 300; ++i)
    {
      ASSERT_EQ(a.classes[expected.labels[i]], b.classes[got.labels[i]]) << spec << " row " << i;
      for (int k = 0; k < a.NumberOfAttributes(); ++k)
      {
        const float x = expected.Row(i)[k], y = got.Row(i)[k];
        if (a.attributes[k].nominal)
          ASSERT_EQ(a.attributes[k].values[int(x)], b.attributes[k].values[int(y)]) << spec;
        else
          ASSERT_EQ(x, y) << spec << " row " << i << " attribute " << k;
      }
    }
  }
}

TEST(StreamReaders, GeneratorSpecErrors)
{
  EXPECT_EQ(ErrorOf([] { MakeGenerator("bogus", 1); }),
            "--generator: unknown generator 'bogus' (randomtree, sea, hyperplane, rbf, led, agrawal)");
  EXPECT_EQ(ErrorOf([] { MakeGenerator("sea:function=5", 1); }),
            "--generator: sea function=5 is not a number in [1, 4]");
  EXPECT_EQ(ErrorOf([] { MakeGenerator("sea:colour=1", 1); }), "--generator: sea has no parameter 'colour'");
  EXPECT_EQ(ErrorOf([] { MakeGenerator("sea:noise", 1); }), "--generator: 'noise' in 'sea:noise' is not key=value");
  // Same seed, same stream.
  auto          a = MakeGenerator("randomtree", 9), b = MakeGenerator("randomtree", 9);
  InstanceBatch x, y;
  a->NextBatch(x, 100);
  b->NextBatch(y, 100);
  EXPECT_EQ(x.values, y.values);
  EXPECT_EQ(x.labels, y.labels);
}

namespace
{
// Agrawal's attributes, in the generator's order.
enum AgrawalAttribute
{
  Salary,
  Commission,
  Age,
  Elevel,
  Car,
  Zipcode,
  Hvalue,
  Hyears,
  Loan
};

bool
AgrawalF1(const float * x) // groupB for ages 40..59
{
  return x[Age] >= 40 && x[Age] < 60;
}

bool
AgrawalF2(const float * x) // groupA for a salary band that depends on the age band
{
  const double s = x[Salary];
  const bool   a = x[Age] < 40   ? 50000 <= s && s <= 100000
                   : x[Age] < 60 ? 75000 <= s && s <= 125000
                                 : 25000 <= s && s <= 75000;
  return !a;
}
} // namespace

TEST(StreamGenerators, AgrawalAttributesAndFunctions)
{
  auto                 g = MakeGenerator("agrawal:perturbation=0", 3);
  const StreamSchema & s = g->Schema();
  ASSERT_EQ(s.NumberOfAttributes(), 9);
  EXPECT_EQ(s.attributes[Elevel].values.size(), 5u);
  EXPECT_EQ(s.attributes[Car].values.size(), 20u);
  EXPECT_EQ(s.attributes[Zipcode].values.size(), 9u);
  EXPECT_FALSE(s.attributes[Salary].nominal);
  EXPECT_EQ(s.classes, (std::vector<std::string>{ "groupA", "groupB" }));
  InstanceBatch b;
  g->NextBatch(b, 5000);
  int groupB = 0;
  for (std::size_t i = 0; i < b.Size(); ++i)
  {
    const float * x = b.Row(i);
    ASSERT_EQ(b.labels[i], AgrawalF1(x) ? 1 : 0) << "function 1, instance " << i;
    ASSERT_TRUE(x[Salary] >= 20000 && x[Salary] <= 150000);
    ASSERT_EQ(x[Commission] == 0, x[Salary] >= 75000) << "commission only below a salary of 75k";
    ASSERT_TRUE(x[Age] >= 20 && x[Age] <= 80 && x[Age] == std::floor(x[Age]));
    ASSERT_TRUE(x[Hyears] >= 1 && x[Hyears] <= 30);
    const double base = (9.0 - x[Zipcode]) * 100000.0;
    ASSERT_TRUE(x[Hvalue] >= 0.5 * base * 0.999 && x[Hvalue] <= 1.5 * base * 1.001);
    groupB += b.labels[i];
  }
  // 20 of the 61 ages are 40..59.
  EXPECT_NEAR(double(groupB) / 5000.0, 20.0 / 61.0, 0.02);
}

TEST(StreamGenerators, AgrawalDriftsToTheNextFunction)
{
  auto          g = MakeGenerator("agrawal:perturbation=0,drift_every=1000", 4);
  InstanceBatch b;
  g->NextBatch(b, 2000);
  int f2BeforeDrift = 0;
  for (std::size_t i = 0; i < 2000; ++i)
  {
    const float * x = b.Row(i);
    if (i < 1000)
    {
      ASSERT_EQ(b.labels[i], AgrawalF1(x) ? 1 : 0) << i;
      f2BeforeDrift += b.labels[i] == (AgrawalF2(x) ? 1 : 0);
    }
    else
      ASSERT_EQ(b.labels[i], AgrawalF2(x) ? 1 : 0) << i;
  }
  EXPECT_LT(f2BeforeDrift, 800) << "the two concepts must differ for the test to mean something";
}

TEST(StreamGenerators, AgrawalPerturbationAndBalance)
{
  auto          g = MakeGenerator("agrawal", 5); // MOA's default perturbation, 0.05
  InstanceBatch b;
  g->NextBatch(b, 5000);
  int disagree = 0;
  for (std::size_t i = 0; i < b.Size(); ++i)
  {
    const float * x = b.Row(i);
    ASSERT_TRUE(x[Salary] >= 20000 && x[Salary] <= 150000 && x[Age] >= 20 && x[Age] <= 80);
    ASSERT_TRUE(x[Loan] >= 0 && x[Loan] <= 500000);
    disagree += b.labels[i] != (AgrawalF1(x) ? 1 : 0);
  }
  // Ages move by up to 3 years after the class was taken: labels near 40 and 60 disagree.
  EXPECT_GT(disagree, 0);
  EXPECT_LT(disagree, 500);
  auto balanced = MakeGenerator("agrawal:balance=1,function=3", 6);
  balanced->NextBatch(b, 100);
  for (std::size_t i = 0; i < b.Size(); ++i)
    ASSERT_EQ(b.labels[i], std::int32_t(i % 2)) << "balance=1 alternates the classes";
  EXPECT_EQ(ErrorOf([] { MakeGenerator("agrawal:function=11", 1); }),
            "--generator: agrawal function=11 is not a number in [1, 10]");
}
