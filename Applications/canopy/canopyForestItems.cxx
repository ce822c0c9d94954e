#include "canopyForestItems.h"

#include "canopy/Errors.h"
#include "canopyCheckedImageReader.h"
#include "canopyForestFilterBank.h"
#include "canopyImageIO.h"
#include "canopyProgress.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>

namespace canopy::app
{
namespace
{
using Image2 = itk::Image<float, 2>;

Image2::Pointer
Read2D(const std::string & path, const std::string & parameter)
{
  return ReadImageChecked<Image2>(path, parameter);
}

/** Plane z of a volume as a 2D image (x, y geometry kept). */
Image2::Pointer
Slice(const FloatVolume * v, int z, const std::string & path)
{
  const auto size = v->GetLargestPossibleRegion().GetSize();
  if (z >= int(size[2]))
  {
    CANOPY_THROW("--slices: slice " << z << " is outside " << path << " (" << size[2] << " planes)");
  }
  auto s = Image2::New();
  s->SetRegions(Image2::SizeType{ { size[0], size[1] } });
  s->SetSpacing(Image2::SpacingType(std::array<double, 2>{ v->GetSpacing()[0], v->GetSpacing()[1] }.data()));
  s->Allocate();
  const std::size_t plane = size[0] * size[1];
  std::copy_n(v->GetBufferPointer() + plane * z, plane, s->GetBufferPointer());
  return s;
}

/** A label image's values rounded to class indices. */
template<typename TImage>
std::vector<std::int32_t>
LabelsOf(const TImage * label)
{
  const float *             p = label->GetBufferPointer();
  std::vector<std::int32_t> l(label->GetBufferedRegion().GetNumberOfPixels());
  for (std::size_t i = 0; i < l.size(); ++i)
    l[i] = std::int32_t(std::lround(p[i]));
  return l;
}
} // namespace

SliceSpec
ParseSlices(const std::string & text, const std::string & parameter)
{
  SliceSpec s;
  if (text.empty())
    return s;
  char               c1 = 0, c2 = 0;
  std::istringstream in(text);
  if (!(in >> s.begin >> c1 >> s.end >> c2 >> s.step) || c1 != ':' || c2 != ':' || !in.eof() || s.begin < 0 ||
      s.end <= s.begin || s.step < 1)
  {
    CANOPY_THROW(parameter << ": '" << text << "' is not A:B:S with 0 <= A < B and S >= 1");
  }
  s.given = true;
  return s;
}

unsigned
ImageFileDimension(const std::string & path, const std::string & parameter)
{
  if (std::filesystem::is_directory(path))
    return 3; // a DICOM series
  const auto     io = OpenImageChecked(path, parameter).io;
  const unsigned dims = io->GetNumberOfDimensions();
  return dims == 3 && io->GetDimensions(2) == 1 ? 2 : std::min(dims, 3u);
}

int
ImageFileComponents(const std::string & path)
{
  if (std::filesystem::is_directory(path))
    return 1;
  auto io = itk::ImageIOFactory::CreateImageIO(path.c_str(), itk::ImageIOFactory::IOFileModeEnum::ReadMode);
  io->SetFileName(path);
  io->ReadImageInformation();
  return int(io->GetNumberOfComponents());
}

void
LoadForestItems(const std::vector<std::string> & images,
                const std::vector<std::string> & labels,
                const ForestItemLoading &        how,
                ForestItems &                    out)
{
  const bool      needsReference = ForestBankNeedsReference(how.bank);
  const SliceSpec slices = how.slices;
  ProgressBar     bar(how.stage, how.quiet);
  const auto      noteRange = [&](const std::string & name, const std::array<double, 2> & range)
  {
    if (how.normalization)
      out.normalized.push_back({ { "image", name }, { "mappedToZeroAndOne", { range[0], range[1] } } });
  };
  for (std::size_t i = 0; i < images.size(); ++i)
  {
    const unsigned dims = ImageFileDimension(images[i], "--image");
    ImageFileDimension(labels[i], "--label");
    const int d = slices.given || dims == 2 ? 2 : 3;
    if (out.dimension != 0 && d != out.dimension)
    {
      CANOPY_THROW("--image " << images[i] << ": " << d << "D, but earlier images are " << out.dimension << "D");
    }
    out.dimension = d;
    if (dims == 2)
    {
      auto im = Read2D(images[i], "--image");
      auto lab = Read2D(labels[i], "--label");
      if (im->GetLargestPossibleRegion() != lab->GetLargestPossibleRegion())
      {
        CANOPY_THROW("--label " << labels[i] << ": size differs from its image " << images[i]);
      }
      std::array<double, 2> range{};
      out.items.push_back({ MakeForestImage<2>(im, how.bank, 0, how.filterBackend, nullptr, how.normalization, &range),
                            LabelsOf(lab.GetPointer()) });
      out.names.push_back(images[i]);
      noteRange(images[i], range);
    }
    else
    {
      auto im = ReadVolume(images[i], "--image");
      auto lab = ReadVolume(labels[i], "--label");
      if (im->GetLargestPossibleRegion() != lab->GetLargestPossibleRegion())
      {
        CANOPY_THROW("--label " << labels[i] << ": size differs from its image " << images[i]);
      }
      // The reference pose: the label's on training volumes with --reference-label (the detector's
      // otherwise), detected on held-out ones (their labels are only for scoring).
      std::optional<ReferenceFrame> frame;
      if (needsReference && !slices.given)
      {
        const bool          fromLabel = how.training && how.reference.label >= 0;
        const StructurePose pose = fromLabel ? ReferencePoseFromLabels(lab, how.reference.label, "--label " + labels[i])
                                             : DetectedReferencePose(how.reference, images[i], im, how.filterBackend);
        frame = ReferenceFrameOf(pose);
        out.poses.push_back({ { "image", images[i] },
                              { "source", fromLabel ? "label" : "detected" },
                              { "center_mm", pose.centerMm },
                              { "size_mm", pose.sizeMm } });
      }
      if (!slices.given)
      {
        std::array<double, 2> range{};
        out.items.push_back(
          { MakeForestImage<3>(
              im, how.bank, 0, how.filterBackend, frame ? &*frame : nullptr, how.normalization, &range),
            LabelsOf(lab.GetPointer()) });
        out.names.push_back(images[i]);
        noteRange(images[i], range);
      }
      for (int z = slices.begin; slices.given && z < slices.end; z += slices.step)
      {
        auto l = Slice(lab, z, labels[i]);
        std::array<double, 2> range{};
        out.items.push_back(
          { MakeForestImage<2>(
              Slice(im, z, images[i]), how.bank, 0, how.filterBackend, nullptr, how.normalization, &range),
            LabelsOf(l.GetPointer()) });
        out.names.push_back(images[i] + "#z" + std::to_string(z));
        noteRange(out.names.back(), range);
      }
    }
    bar.Update(double(i + 1) / images.size());
  }
  bar.Finish();
}

} // namespace canopy::app
