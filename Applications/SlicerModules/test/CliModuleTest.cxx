// canopyCliModule: the XML and the parser come from one table, and Main speaks Slicer's protocol.
#include "canopy/Errors.h"
#include "canopyCliModule.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <unistd.h>
#include <vector>

namespace
{
using namespace canopy::slicer;

struct Values
{
  std::string input, output, centres, mode = "fast", name = "a<b & c";
  double      lambda = 1.5;
  int         iterations = 3;
  bool        flag = false;
  // returned
  int         count = 0;
  std::string device;
};

Module
TestModule(Values & v)
{
  Module m;
  m.name = "CanopyTest";
  m.title = "Canopy Test";
  m.description = "Test <module> & friends";
  m.version = "0.1.0";
  m.AddGroup("IO", "Files")
    .Add(Image("inputVolume", &v.input, "In", "Input").Input().Attributes("type=\"scalar\"").Required())
    .Add(Image("outputVolume", &v.output, "Out", "Output").Output().Attributes("type=\"label\""))
    .Add(PointFile("centres", &v.centres, "Centres", "Points")
           .Output()
           .Attributes("type=\"point\" coordinateSystem=\"lps\" fileExtensions=\".mrk.json\""));
  m.AddGroup("Settings", "Numbers", true)
    .Add(Double("lambda", &v.lambda, "Lambda", "Weight").Range(0.0, 20.0, 0.1))
    .Add(Integer("iterations", &v.iterations, "Iterations", "Count").Range(0, 10, 1))
    .Add(Boolean("flag", &v.flag, "Flag", "Switch"))
    .Add(Enumeration("mode", &v.mode, "Mode", "Speed").Elements({ "fast", "slow" }))
    .Add(String("name", &v.name, "Name", "Text"));
  m.AddGroup("Results", "Found")
    .Add(Returned("integer", "count", &v.count, "Count", "How many"))
    .Add(Returned("string", "device", &v.device, "Device", "Which"));
  return m;
}

/** Main with argv, stdout captured. */
int
RunMain(const Module & m, std::vector<std::string> args, const std::function<void()> & run, std::string & out)
{
  args.insert(args.begin(), m.name);
  std::vector<char *> argv;
  for (auto & a : args)
    argv.push_back(a.data());
  std::ostringstream captured;
  auto *             old = std::cout.rdbuf(captured.rdbuf());
  const int          status = m.Main(static_cast<int>(argv.size()), argv.data(), run);
  std::cout.rdbuf(old);
  out = captured.str();
  return status;
}

std::string
TemporaryFile(const std::string & name)
{
  const char * base = std::getenv("CANOPY_TEST_OUTPUT");
  const auto   folder = std::filesystem::path(base ? base : "/tmp") / ("CliModuleTest-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  return (folder / name).string();
}

TEST(CliModule, XmlHasEveryParameterWithItsFlagDefaultAndConstraints)
{
  Values            v;
  const std::string xml = TestModule(v).Xml();
  EXPECT_EQ(xml.rfind("<?xml ", 0), 0u);
  EXPECT_NE(xml.find("<category>Segmentation.Canopy</category>"), std::string::npos);
  EXPECT_NE(xml.find("Test &lt;module&gt; &amp; friends"), std::string::npos);
  EXPECT_NE(xml.find("<parameters advanced=\"true\">"), std::string::npos);
  EXPECT_NE(xml.find("<image type=\"label\">"), std::string::npos);
  EXPECT_NE(xml.find("<pointfile type=\"point\" coordinateSystem=\"lps\" fileExtensions=\".mrk.json\">"),
            std::string::npos);
  EXPECT_NE(xml.find("<longflag>centres</longflag>"), std::string::npos);
  EXPECT_NE(xml.find("<longflag>lambda</longflag>"), std::string::npos);
  EXPECT_NE(xml.find("<default>1.5</default>"), std::string::npos);
  EXPECT_NE(xml.find("<minimum>0</minimum>"), std::string::npos);
  EXPECT_NE(xml.find("<maximum>20</maximum>"), std::string::npos);
  EXPECT_NE(xml.find("<step>0.1</step>"), std::string::npos);
  EXPECT_NE(xml.find("<element>slow</element>"), std::string::npos);
  EXPECT_NE(xml.find("<default>a&lt;b &amp; c</default>"), std::string::npos);
  EXPECT_NE(xml.find("<default>false</default>"), std::string::npos);
  EXPECT_EQ(xml.find("<longflag>count</longflag>"), std::string::npos) << "a returned value has no flag";
}

TEST(CliModule, XmlFirstArgumentPrintsTheDescriptionAndRunsNothing)
{
  Values      v;
  const auto  m = TestModule(v);
  bool        ran = false;
  std::string out;
  EXPECT_EQ(RunMain(
              m, { "--xml" }, [&] { ran = true; }, out),
            0);
  EXPECT_FALSE(ran);
  EXPECT_EQ(out, m.Xml());
}

TEST(CliModule, FlagsReachTheBindingsAndReturnsReachTheFile)
{
  Values            v;
  const auto        m = TestModule(v);
  const std::string returns = TemporaryFile("returns.txt");
  std::string       out;
  const int         status = RunMain(
    m,
    { "--inputVolume",
              "in.nrrd",
              "--centres",
              "c.mrk.json",
              "--lambda",
              "2.5",
              "--iterations",
              "7",
              "--flag",
              "--mode",
              "slow",
              "--returnparameterfile",
              returns },
    [&]
    {
      v.count = 42;
      v.device = "CPU (2 threads)";
    },
    out);
  ASSERT_EQ(status, 0);
  EXPECT_EQ(v.input, "in.nrrd");
  EXPECT_EQ(v.centres, "c.mrk.json");
  EXPECT_EQ(v.lambda, 2.5);
  EXPECT_EQ(v.iterations, 7);
  EXPECT_TRUE(v.flag);
  EXPECT_EQ(v.mode, "slow");
  std::ifstream     in(returns);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "count = 42\ndevice = CPU (2 threads)\n");
  // Slicer's protocol around the run: start, progress from 0 to 1, end.
  const auto start = out.find("<filter-start>"), first = out.find("<filter-progress>0.0000</filter-progress>"),
             last = out.find("<filter-progress>1.0000</filter-progress>"), end = out.find("<filter-end>");
  EXPECT_NE(start, std::string::npos);
  EXPECT_NE(end, std::string::npos);
  EXPECT_LT(start, first);
  EXPECT_LT(first, last);
  EXPECT_LT(last, end);
}

TEST(CliModule, BadValuesAreRefusedBeforeTheRun)
{
  for (const std::vector<std::string> & args : { std::vector<std::string>{ "--inputVolume", "i", "--lambda", "50" },
                                                 { "--inputVolume", "i", "--lambda", "nan" },
                                                 { "--inputVolume", "i", "--iterations", "11" },
                                                 { "--inputVolume", "i", "--mode", "medium" },
                                                 { "--lambda", "1" }, // inputVolume is required
                                                 { "--inputVolume", "i", "--unknown", "1" } })
  {
    Values      v;
    bool        ran = false;
    std::string out;
    const int   status = RunMain(
      TestModule(v), args, [&] { ran = true; }, out);
    EXPECT_GT(status, 0) << args[args.size() - 2];
    EXPECT_LT(status, 128);
    EXPECT_FALSE(ran);
  }
}

TEST(CliModule, AFailedRunExitsOneAndWritesNoReturnFile)
{
  Values            v;
  const std::string returns = TemporaryFile("failed-returns.txt");
  std::filesystem::remove(returns);
  std::string out;
  const int   status = RunMain(
    TestModule(v),
    { "--inputVolume", "in.nrrd", "--returnparameterfile", returns },
    [] { CANOPY_THROW("--inputVolume in.nrrd: no such file"); },
    out);
  EXPECT_EQ(status, 1);
  EXPECT_FALSE(std::filesystem::exists(returns));
  EXPECT_EQ(out.find("<filter-end>"), std::string::npos);
}
} // namespace
