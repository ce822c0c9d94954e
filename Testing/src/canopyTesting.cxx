#include "canopyTesting.h"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <type_traits>

#include <sys/wait.h>

namespace canopy::testing
{

template<typename TPixel>
typename itk::Image<TPixel, 3>::Pointer
MakeVolume(int nx, int ny, int nz)
{
  using ImageType = itk::Image<TPixel, 3>;
  auto                           image = ImageType::New();
  typename ImageType::RegionType region;
  region.SetSize({ { static_cast<itk::SizeValueType>(nx),
                     static_cast<itk::SizeValueType>(ny),
                     static_cast<itk::SizeValueType>(nz) } });
  image->SetRegions(region);
  const double spacing[3] = { 1.0, 1.2, 2.5 };
  const double origin[3] = { -10.0, 4.5, 100.0 };
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  typename ImageType::DirectionType direction;
  direction.SetIdentity();
  direction[0][0] = -1.0; // LPS-flipped x, as many scanners write
  image->SetDirection(direction);
  image->Allocate(true);
  return image;
}

template<typename TPixel>
typename itk::Image<TPixel, 3>::Pointer
MakeRandomVolume(int nx, int ny, int nz, double low, double high, std::uint64_t seed)
{
  auto               image = MakeVolume<TPixel>(nx, ny, nz);
  std::mt19937_64    rng(seed);
  TPixel *           p = image->GetBufferPointer();
  const std::int64_t n = static_cast<std::int64_t>(nx) * ny * nz;
  if constexpr (std::is_integral_v<TPixel>)
  {
    std::uniform_int_distribution<long long> dist(static_cast<long long>(low), static_cast<long long>(high));
    for (std::int64_t i = 0; i < n; ++i)
      p[i] = static_cast<TPixel>(dist(rng));
  }
  else
  {
    std::uniform_real_distribution<double> dist(low, high);
    for (std::int64_t i = 0; i < n; ++i)
      p[i] = static_cast<TPixel>(dist(rng));
  }
  return image;
}

itk::Image<float, 3>::Pointer
MakeEllipsoidPhantom(int           nx,
                     int           ny,
                     int           nz,
                     const double  c[3],
                     const double  r[3],
                     float         inside,
                     float         outside,
                     float         noise,
                     std::uint64_t seed)
{
  auto                            image = MakeVolume<float>(nx, ny, nz);
  std::mt19937_64                 rng(seed);
  std::normal_distribution<float> gauss(0.0f, noise > 0 ? noise : 1.0f);
  float *                         p = image->GetBufferPointer();
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
      {
        const double dx = (x - c[0]) / r[0], dy = (y - c[1]) / r[1], dz = (z - c[2]) / r[2];
        float        v = (dx * dx + dy * dy + dz * dz <= 1.0) ? inside : outside;
        if (noise > 0)
          v += gauss(rng);
        *p++ = v;
      }
  return image;
}

OrientedEllipsoidPhantom
MakeOrientedEllipsoidPhantom(int           nx,
                             int           ny,
                             int           nz,
                             double        spacingMm,
                             const double  centerIndex[3],
                             const double  axes[3][3],
                             const double  radiiMm[3],
                             float         inside,
                             float         outside,
                             float         noise,
                             std::uint64_t seed)
{
  OrientedEllipsoidPhantom phantom;
  phantom.image = MakeVolume<float>(nx, ny, nz);
  phantom.image->SetSpacing(spacingMm);
  itk::ContinuousIndex<double, 3> c;
  for (int a = 0; a < 3; ++a)
    c[a] = centerIndex[a];
  itk::Point<double, 3> centre;
  phantom.image->TransformContinuousIndexToPhysicalPoint(c, centre);
  for (int a = 0; a < 3; ++a)
    phantom.centerMm[a] = centre[a];
  std::mt19937_64                 rng(seed);
  std::normal_distribution<float> gauss(0.0f, noise > 0 ? noise : 1.0f);
  float *                         p = phantom.image->GetBufferPointer();
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
      {
        itk::Point<double, 3> w;
        phantom.image->TransformIndexToPhysicalPoint(itk::Index<3>{ { x, y, z } }, w);
        double sum = 0.0;
        for (int a = 0; a < 3; ++a)
        {
          const double along =
            (w[0] - centre[0]) * axes[a][0] + (w[1] - centre[1]) * axes[a][1] + (w[2] - centre[2]) * axes[a][2];
          sum += (along / radiiMm[a]) * (along / radiiMm[a]);
        }
        float v = sum <= 1.0 ? inside : outside;
        if (noise > 0)
          v += gauss(rng);
        *p++ = v;
      }
  return phantom;
}

SizeLabelledBalls
MakeSizeLabelledBalls(int nx, int ny, int nz, std::uint64_t seed)
{
  std::mt19937_64                        rng(seed);
  SizeLabelledBalls                      phantom{ std::vector<float>(std::size_t(nx) * ny * nz, 0.0f),
                             std::vector<std::int32_t>(std::size_t(nx) * ny * nz, 0) };
  std::vector<std::array<double, 4>>     balls; // centre, radius
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int attempt = 0; attempt < 400 && balls.size() < 9; ++attempt)
  {
    const double r = balls.size() < 3 ? 7.0 : 2.5;
    const double c[3] = { r + 1 + u(rng) * (nx - 2 * r - 2),
                          r + 1 + u(rng) * (ny - 2 * r - 2),
                          r + 1 + u(rng) * (nz - 2 * r - 2) };
    bool         free = true;
    for (const auto & b : balls)
      free = free && std::hypot(c[0] - b[0], c[1] - b[1], c[2] - b[2]) > r + b[3] + 3.0;
    if (free)
      balls.push_back({ c[0], c[1], c[2], r });
  }
  std::normal_distribution<float> noise(0.0f, 0.25f);
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
      {
        const std::size_t i = (std::size_t(z) * ny + y) * nx + x;
        for (const auto & b : balls)
          if (std::hypot(x - b[0], y - b[1], z - b[2]) <= b[3])
          {
            phantom.image[i] = 1.0f;
            phantom.labels[i] = b[3] > 5.0 ? 1 : 2;
          }
        phantom.image[i] += noise(rng);
      }
  return phantom;
}

BallPhantom
MakeBallPhantom(int           nx,
                int           ny,
                int           nz,
                const double  c[3],
                double        radiusMm,
                float         inside,
                float         outside,
                float         noise,
                std::uint64_t seed)
{
  const double r[3] = { radiusMm, radiusMm, radiusMm };
  BallPhantom  phantom;
  phantom.image = MakeEllipsoidPhantom(nx, ny, nz, c, r, inside, outside, noise, seed);
  phantom.image->SetSpacing(1.0);
  phantom.mask = MakeVolume<unsigned char>(nx, ny, nz);
  phantom.mask->CopyInformation(phantom.image);
  unsigned char * m = phantom.mask->GetBufferPointer();
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
      {
        const double dx = x - c[0], dy = y - c[1], dz = z - c[2];
        *m++ = dx * dx + dy * dy + dz * dz <= radiusMm * radiusMm;
      }
  return phantom;
}

bool
GpuAvailable()
{
  return !UsableCudaDevices().empty();
}

std::string
OutputPath(const std::string & fileName)
{
  const char *          env = std::getenv("CANOPY_TEST_OUTPUT");
  std::filesystem::path dir = env ? env : std::filesystem::temp_directory_path().string();
  std::filesystem::create_directories(dir);
  return (dir / (ProcessTestPrefix() + fileName)).string();
}

CommandRun
RunCommand(const std::string & executable, const std::string & arguments, const std::string & name)
{
  const std::string outPath = OutputPath(name + ".stdout");
  const std::string errPath = OutputPath(name + ".stderr");
  const std::string command = executable + " " + arguments + " > " + outPath + " 2> " + errPath;
  const int         raw = std::system(command.c_str());
  CommandRun        run;
  run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  std::stringstream out, err;
  out << std::ifstream(outPath).rdbuf();
  err << std::ifstream(errPath).rdbuf();
  run.out = out.str();
  run.err = err.str();
  return run;
}

std::string
ProcessTestPrefix()
{
  if (const auto * info = ::testing::UnitTest::GetInstance()->current_test_info())
    return std::string(info->test_suite_name()) + "." + info->name() + ".";
  return ProcessFilterPrefix();
}

std::string
ProcessFilterPrefix()
{
  // ctest runs every test of a suite as its own process, in parallel, each setting up the suite
  // again (or a whole suite in one process), so the files are named after the process's
  // --gtest_filter to keep those processes from rewriting each other's inputs.
  std::string filter = GTEST_FLAG_GET(filter);
  if (filter == "*")
    return "";
  for (char & c : filter)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_')
      c = '_';
  return filter + ".";
}

#define CANOPY_INSTANTIATE_TEST_VOLUMES(T)                                                                             \
  template itk::Image<T, 3>::Pointer MakeVolume<T>(int, int, int);                                                     \
  template itk::Image<T, 3>::Pointer MakeRandomVolume<T>(int, int, int, double, double, std::uint64_t);
CANOPY_INSTANTIATE_TEST_VOLUMES(unsigned char)
CANOPY_INSTANTIATE_TEST_VOLUMES(short)
CANOPY_INSTANTIATE_TEST_VOLUMES(unsigned short)
CANOPY_INSTANTIATE_TEST_VOLUMES(int)
CANOPY_INSTANTIATE_TEST_VOLUMES(float)
CANOPY_INSTANTIATE_TEST_VOLUMES(double)

} // namespace canopy::testing
