#include "canopySegmentationFile.h"

#include "canopy/AtomicFile.h"
#include "canopy/Errors.h"
#include "itkImageFileWriter.h"
#include "itkImageRegionConstIteratorWithIndex.h"
#include "itkMetaDataObject.h"
#include "itkNrrdImageIO.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>

namespace canopy::app
{
namespace
{
/** Bounding box of one label's voxels, as Slicer's "i0 i1 j0 j1 k0 k1" extent. */
struct Extent
{
  std::array<long, 6> bounds{
    { std::numeric_limits<long>::max(), -1, std::numeric_limits<long>::max(), -1, std::numeric_limits<long>::max(), -1 }
  };
  bool empty = true;

  void Add(const itk::Index<3> & index)
  {
    for (unsigned d = 0; d < 3; ++d)
    {
      bounds[2 * d] = std::min<long>(bounds[2 * d], index[d]);
      bounds[2 * d + 1] = std::max<long>(bounds[2 * d + 1], index[d]);
    }
    empty = false;
  }

  std::string Text() const
  {
    if (empty)
      return "0 -1 0 -1 0 -1"; // Slicer's empty extent
    std::ostringstream out;
    for (unsigned i = 0; i < 6; ++i)
      out << (i ? " " : "") << bounds[i];
    return out.str();
  }
};

template<typename TOut, typename TLabelImage>
typename itk::Image<TOut, 3>::Pointer
CopyAs(const TLabelImage * labels)
{
  auto copy = itk::Image<TOut, 3>::New();
  copy->CopyInformation(labels);
  copy->SetRegions(labels->GetLargestPossibleRegion());
  copy->Allocate();
  const auto   n = labels->GetLargestPossibleRegion().GetNumberOfPixels();
  const auto * in = labels->GetBufferPointer();
  TOut *       out = copy->GetBufferPointer();
  for (itk::SizeValueType i = 0; i < n; ++i)
    out[i] = static_cast<TOut>(in[i]);
  return copy;
}

template<typename TImage>
void
WriteNrrd(TImage *                        image,
          const itk::MetaDataDictionary & fields,
          const std::string &             path,
          const std::string &             parameter)
{
  image->SetMetaDataDictionary(fields);
  const std::string temporary = TemporaryPathFor(path);
  try
  {
    auto writer = itk::ImageFileWriter<TImage>::New();
    writer->SetImageIO(itk::NrrdImageIO::New());
    writer->SetInput(image);
    writer->SetFileName(temporary);
    writer->UseCompressionOn();
    writer->Update();
  }
  catch (const itk::ExceptionObject & e)
  {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    CANOPY_THROW(parameter << " " << path << ": cannot write the segmentation (" << e.GetDescription() << ")");
  }
  CommitTemporaryFile(temporary, path);
}
} // namespace

bool
IsSegmentationPath(const std::string & path)
{
  const std::string suffix = ".seg.nrrd";
  if (path.size() < suffix.size())
    return false;
  std::string tail = path.substr(path.size() - suffix.size());
  std::transform(tail.begin(), tail.end(), tail.begin(), [](unsigned char c) { return std::tolower(c); });
  return tail == suffix;
}

std::array<double, 3>
SegmentColor(int index)
{
  // Distinct, saturated colours (the first is Slicer-like tissue orange).
  static const std::array<std::array<double, 3>, 8> palette{ { { 0.90, 0.35, 0.20 },
                                                               { 0.20, 0.60, 0.90 },
                                                               { 0.30, 0.80, 0.30 },
                                                               { 0.95, 0.80, 0.20 },
                                                               { 0.70, 0.40, 0.85 },
                                                               { 0.20, 0.85, 0.80 },
                                                               { 0.95, 0.50, 0.70 },
                                                               { 0.60, 0.60, 0.60 } } };
  return palette[static_cast<std::size_t>(std::abs(index)) % palette.size()];
}

std::array<double, 3>
ParseSegmentColor(const std::string & text, const std::string & parameter)
{
  std::string spaced = text;
  std::replace(spaced.begin(), spaced.end(), ',', ' ');
  std::istringstream    in(spaced);
  std::array<double, 3> color{};
  for (double & c : color)
  {
    if (!(in >> c) || !std::isfinite(c) || c < 0.0 || c > 1.0)
    {
      CANOPY_THROW(parameter << ": '" << text << "' is not three numbers R,G,B in [0, 1]");
    }
  }
  std::string extra;
  if (in >> extra)
  {
    CANOPY_THROW(parameter << ": '" << text << "' is not three numbers R,G,B in [0, 1]");
  }
  return color;
}

template<typename TLabelImage>
void
WriteSegmentationFile(const TLabelImage *                     labels,
                      const std::vector<SegmentDescription> & segments,
                      const std::string &                     path,
                      const std::string &                     parameter)
{
  std::map<long, Extent> extents;
  long                   largest = 0;
  for (itk::ImageRegionConstIteratorWithIndex<TLabelImage> it(labels, labels->GetLargestPossibleRegion());
       !it.IsAtEnd();
       ++it)
  {
    const long value = static_cast<long>(it.Get());
    if (value == 0)
      continue;
    if (value < 0)
    {
      CANOPY_THROW(parameter << " " << path << ": label " << value << " is negative; a segmentation needs labels >= 0");
    }
    largest = std::max(largest, value);
    // The extent is relative to the largest possible region's start, as Slicer's file extent is.
    auto index = it.GetIndex();
    for (unsigned d = 0; d < 3; ++d)
      index[d] -= labels->GetLargestPossibleRegion().GetIndex()[d];
    extents[value].Add(index);
  }

  itk::MetaDataDictionary fields;
  itk::EncapsulateMetaData<std::string>(fields, "Segmentation_MasterRepresentation", "Binary labelmap");
  itk::EncapsulateMetaData<std::string>(fields, "Segmentation_ContainedRepresentationNames", "Binary labelmap|");
  itk::EncapsulateMetaData<std::string>(fields, "Segmentation_ReferenceImageExtentOffset", "0 0 0");
  for (std::size_t i = 0; i < segments.size(); ++i)
  {
    const SegmentDescription & s = segments[i];
    const std::string          key = "Segment" + std::to_string(i) + "_";
    std::ostringstream         color;
    color << s.color[0] << ' ' << s.color[1] << ' ' << s.color[2];
    const auto extent = extents.find(s.labelValue);
    itk::EncapsulateMetaData<std::string>(fields, key + "ID", "Segment_" + std::to_string(s.labelValue));
    itk::EncapsulateMetaData<std::string>(fields, key + "Name", s.name);
    itk::EncapsulateMetaData<std::string>(fields, key + "Color", color.str());
    itk::EncapsulateMetaData<std::string>(fields, key + "ColorAutoGenerated", "0");
    itk::EncapsulateMetaData<std::string>(fields, key + "NameAutoGenerated", "0");
    itk::EncapsulateMetaData<std::string>(fields, key + "LabelValue", std::to_string(s.labelValue));
    itk::EncapsulateMetaData<std::string>(fields, key + "Layer", "0"); // one labelmap holds every segment
    itk::EncapsulateMetaData<std::string>(
      fields, key + "Extent", extent == extents.end() ? Extent{}.Text() : extent->second.Text());
    itk::EncapsulateMetaData<std::string>(fields, key + "Tags", "Segmentation.Status:completed|");
  }

  if (largest <= std::numeric_limits<std::uint8_t>::max())
  {
    auto copy = CopyAs<std::uint8_t>(labels);
    WriteNrrd(copy.GetPointer(), fields, path, parameter);
  }
  else if (largest <= std::numeric_limits<std::uint16_t>::max())
  {
    auto copy = CopyAs<std::uint16_t>(labels);
    WriteNrrd(copy.GetPointer(), fields, path, parameter);
  }
  else
  {
    CANOPY_THROW(parameter << " " << path << ": label " << largest << " exceeds 65535, too many for a segmentation");
  }
}

template void
WriteSegmentationFile<itk::Image<unsigned char, 3>>(const itk::Image<unsigned char, 3> *,
                                                    const std::vector<SegmentDescription> &,
                                                    const std::string &,
                                                    const std::string &);
template void
WriteSegmentationFile<itk::Image<std::int32_t, 3>>(const itk::Image<std::int32_t, 3> *,
                                                   const std::vector<SegmentDescription> &,
                                                   const std::string &,
                                                   const std::string &);
} // namespace canopy::app
