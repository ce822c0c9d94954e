// libFuzzer target: bytes -> a temporary file of one format (CANOPY_FUZZ_FORMAT: nifti, nrrd or meta;
// the name says which) -> Canopy's checked reader, as `canopy` reads every input: OpenImageChecked (the
// header and voxel-data checks before ITK reads, ITK's ReadImageInformation), the checks `canopy`
// makes (3D, scalar), and ReadImageChecked into a float volume. Declared sizes above kMaxBytes are
// not read: ITK allocates what the header declares before reading, so any header that declares a
// huge volume is a trivial out-of-memory (docs/RELIABILITY.md, "Fuzzing").
#include "canopyCheckedImageReader.h"
#include "itkImage.h"
#include "itkImageFileReader.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <unistd.h>
#include <utility>

namespace
{
constexpr std::uint64_t kMaxBytes = 4u << 20; // 64 MiB took > 10 s to convert under the sanitizers

/** The file name extension that makes Canopy's reader pick the format under test. */
std::string
FormatExtension()
{
#if CANOPY_FUZZ_FORMAT == 0
  return ".nii";
#elif CANOPY_FUZZ_FORMAT == 1
  return ".nrrd";
#else
  return ".mha";
#endif
}

/** Bytes the reader will allocate for the declared image, saturating; 0 when a size is 0. */
std::uint64_t
DeclaredBytes(const itk::ImageIOBase & io)
{
  std::uint64_t bytes = std::max<std::uint64_t>(io.GetComponentSize(), sizeof(float)) *
                        std::max<std::uint64_t>(io.GetNumberOfComponents(), 1);
  for (unsigned d = 0; d < io.GetNumberOfDimensions(); ++d)
  {
    const std::uint64_t n = io.GetDimensions(d);
    if (n != 0 && bytes > kMaxBytes / n)
    {
      return kMaxBytes + 1;
    }
    bytes *= n;
  }
  return bytes;
}
} // namespace

extern "C" int
LLVMFuzzerInitialize(int *, char ***)
{
  itk::Object::GlobalWarningDisplayOff();
  return 0;
}

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t * data, std::size_t size)
{
  const std::string path = "/tmp/canopy-fuzz-" + std::to_string(getpid()) + FormatExtension();
  if (FILE * f = std::fopen(path.c_str(), "wb"))
  {
    const bool written = std::fwrite(data, 1, size, f) == size;
    std::fclose(f);
    if (!written)
    {
      return 0;
    }
  }
  else
  {
    return 0;
  }
  std::ostringstream warnings; // non-finite voxels: one warning, expected
  try
  {
    // Until 2026-11-23 this target called ITK's NiftiImageIO itself and had to skip headers whose
    // orientation aborts or hangs ITK (findings 2 and 7); the checked reader now refuses them, so a
    // crash here is one a `canopy` user would meet.
    const canopy::CheckedImageFile file = canopy::OpenImageChecked(path, "--image");
    const itk::ImageIOBase &       io = *file.io;
    const unsigned                 dims = io.GetNumberOfDimensions();
    const bool                     volume = dims == 3 || (dims == 4 && io.GetDimensions(3) == 1);
    if (volume && io.GetNumberOfComponents() == 1 && DeclaredBytes(io) <= kMaxBytes)
    {
      canopy::ReadImageChecked<itk::Image<float, 3>>(file, path, "--image", warnings);
    }
  }
  catch (const itk::ExceptionObject &) // canopy::Error derives from it
  {
  }
  std::remove(path.c_str());
  return 0;
}
