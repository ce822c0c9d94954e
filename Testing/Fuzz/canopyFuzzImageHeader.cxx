// libFuzzer target: bytes -> a temporary file -> ITK's ImageIO for one format (CANOPY_FUZZ_FORMAT:
// nifti, nrrd or meta; the name says which) -> ReadImageInformation, the checks `canopy` makes
// (3D, scalar), and a read into a float volume as canopy does. Declared sizes above
// kMaxBytes are skipped: ITK allocates what the header declares before reading, so any header that
// declares a huge volume is a trivial out-of-memory (docs/RELIABILITY.md, "Fuzzing").
#include "itkImage.h"
#include "itkImageFileReader.h"
#include "itkMetaImageIO.h"
#include "itkNiftiImageIO.h"
#include "itkNrrdImageIO.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>
#include <utility>

namespace
{
constexpr std::uint64_t kMaxBytes = 4u << 20; // 64 MiB took > 10 s to convert under the sanitizers

itk::ImageIOBase::Pointer
MakeImageIO(std::string & extension)
{
#if CANOPY_FUZZ_FORMAT == 0
  extension = ".nii";
  return itk::NiftiImageIO::New().GetPointer();
#elif CANOPY_FUZZ_FORMAT == 1
  extension = ".nrrd";
  return itk::NrrdImageIO::New().GetPointer();
#else
  extension = ".mha";
  return itk::MetaImageIO::New().GetPointer();
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
/** ITK 5.2's NiftiImageIO aborts the process (vnl_svd's assert_finite) on a NaN or infinite
 * orientation field (findings/itk-nifti-nonfinite-qform-abort.nii, one NaN in srow_z) and loops
 * forever on a huge one (findings/itk-nifti-svd-hang.nii, -1.7e38 in srow_x). Such headers
 * are skipped so the fuzzer can go on; Canopy's own reader needs the same check (docs/RELIABILITY.md). */
bool
NiftiOrientationIsFinite(const std::uint8_t * data, std::size_t size)
{
#if CANOPY_FUZZ_FORMAT == 0
  if (size < 348)
  {
    return true; // ITK rejects it before looking at the orientation
  }
  std::int32_t headerSize;
  std::memcpy(&headerSize, data, 4);
  const bool swapped = headerSize != 348;
  // pixdim[8] at 76; quatern_b..qoffset_z at 256..279; srow_x, srow_y, srow_z at 280..327.
  const std::pair<int, int> ranges[] = { { 76, 8 }, { 256, 18 } };
  for (const auto & [offset, count] : ranges)
  {
    for (int i = 0; i < count; ++i)
    {
      std::uint8_t bytes[4];
      std::memcpy(bytes, data + offset + 4 * i, 4);
      if (swapped)
      {
        std::swap(bytes[0], bytes[3]);
        std::swap(bytes[1], bytes[2]);
      }
      float value;
      std::memcpy(&value, bytes, 4);
      if (!std::isfinite(value) || std::abs(value) > 1e6f) // huge values hang the SVD: findings/itk-nifti-svd-hang.nii
      {
        return false;
      }
    }
  }
#else
  (void)data;
  (void)size;
#endif
  return true;
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
  if (!NiftiOrientationIsFinite(data, size))
  {
    return 0;
  }
  std::string       extension;
  auto              io = MakeImageIO(extension);
  const std::string path = "/tmp/canopy-fuzz-" + std::to_string(getpid()) + extension;
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
  try
  {
    if (io->CanReadFile(path.c_str()))
    {
      io->SetFileName(path);
      io->ReadImageInformation();
      const unsigned dims = io->GetNumberOfDimensions();
      const bool     volume = dims == 3 || (dims == 4 && io->GetDimensions(3) == 1);
      if (volume && io->GetNumberOfComponents() == 1 && DeclaredBytes(*io) <= kMaxBytes)
      {
        using Volume = itk::Image<float, 3>;
        auto reader = itk::ImageFileReader<Volume>::New();
        reader->SetFileName(path);
        reader->SetImageIO(io);
        reader->Update();
      }
    }
  }
  catch (const itk::ExceptionObject &)
  {
  }
  std::remove(path.c_str());
  return 0;
}
