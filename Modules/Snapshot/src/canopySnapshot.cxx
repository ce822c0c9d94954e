#include "canopySnapshot.h"

#include "canopy/Errors.h"
#include "canopyImageGrid.h"
#include "canopyIntensityPercentiles.h"

#include "itkImageFileWriter.h"
#include "itkLinearInterpolateImageFunction.h"
#include "itkNearestNeighborInterpolateImageFunction.h"
#include "itkPNGImageIO.h"
#include "itkRGBPixel.h"
#include "itkResampleImageFilter.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <vector>

namespace canopy
{
namespace
{

using ImageType = itk::Image<float, 3>;
using RGBType = itk::RGBPixel<unsigned char>;
using PngType = itk::Image<RGBType, 2>;
using PointType = ImageType::PointType;

// One view: screen columns run along +/- LPS axis `col`, rows (downwards) along +/- LPS axis `row`.
struct View
{
  int    col, row;
  double colSign, rowSign;
};
// Radiological: axial from the feet (L right, A top); coronal from the front (L right, S top);
// sagittal with anterior left, superior top. LPS: +x = left, +y = posterior, +z = superior.
constexpr View kViews[3] = { { 0, 1, +1, +1 }, { 0, 2, +1, -1 }, { 1, 2, +1, -1 } };

// A panel sampled from the volume: grey values and the two overlays, row-major.
struct Panel
{
  int                      w = 0, h = 0;
  std::vector<float>       grey, overlay, reference;
  PointType                origin;    // centre of pixel (0, 0)
  ImageType::DirectionType direction; // columns: screen x, screen y, normal
  double                   pixel = 1; // mm

  PointType At(double x, double y) const
  {
    PointType p;
    for (unsigned int d = 0; d < 3; ++d)
      p[d] = origin[d] + pixel * (x * direction[d][0] + y * direction[d][1]);
    return p;
  }
};

void
ValidateOptions(const SnapshotOptions & o)
{
  if (!std::isfinite(o.overlayThreshold))
    CANOPY_THROW("WriteOrthogonalSnapshot: overlayThreshold must be finite, got " << o.overlayThreshold);
  if (!(o.overlayOpacity >= 0.0 && o.overlayOpacity <= 1.0))
    CANOPY_THROW("WriteOrthogonalSnapshot: overlayOpacity must be in [0, 1], got " << o.overlayOpacity);
  if (o.outlineThickness < 0 || o.outlineThickness > 10)
    CANOPY_THROW("WriteOrthogonalSnapshot: outlineThickness must be in [0, 10], got " << o.outlineThickness);
  if (!(o.windowLowPercentile >= 0.0 && o.windowLowPercentile < o.windowHighPercentile &&
        o.windowHighPercentile <= 100.0))
    CANOPY_THROW("WriteOrthogonalSnapshot: window percentiles must satisfy 0 <= low < high <= 100, got "
                 << o.windowLowPercentile << " and " << o.windowHighPercentile);
  if (o.sliceCentreMm)
    for (double v : *o.sliceCentreMm)
      if (!std::isfinite(v))
        CANOPY_THROW("WriteOrthogonalSnapshot: sliceCentreMm must be finite, got " << v);
  for (std::size_t b = 0; b < o.boxes.size(); ++b)
  {
    const SnapshotBox & box = o.boxes[b];
    for (int k = 0; k < 3; ++k)
    {
      double norm2 = 0.0;
      for (int d = 0; d < 3; ++d)
        norm2 += box.axes[k][d] * box.axes[k][d];
      if (!std::isfinite(box.centerMm[k]) || !(std::isfinite(box.sizeMm[k]) && box.sizeMm[k] > 0.0) ||
          !(std::abs(norm2 - 1.0) < 1e-3))
        CANOPY_THROW("WriteOrthogonalSnapshot: box " << b << " needs a finite centre, sizes > 0 and unit axes (axis "
                                                     << k << ": size " << box.sizeMm[k] << " mm, length "
                                                     << std::sqrt(norm2) << ")");
    }
  }
}

// Physical point at the centre of mass of overlay >= threshold, or the image centre when none is.
PointType
SliceCentre(const ImageType * image, const ImageType * overlay, double threshold)
{
  const auto                      region = image->GetLargestPossibleRegion();
  const auto                      size = region.GetSize();
  itk::ContinuousIndex<double, 3> centre;
  for (unsigned int d = 0; d < 3; ++d)
    centre[d] = region.GetIndex()[d] + 0.5 * (static_cast<double>(size[d]) - 1.0);
  if (overlay)
  {
    double        sum[3] = { 0, 0, 0 }, count = 0;
    const float * p = overlay->GetBufferPointer();
    for (itk::SizeValueType z = 0; z < size[2]; ++z)
      for (itk::SizeValueType y = 0; y < size[1]; ++y)
        for (itk::SizeValueType x = 0; x < size[0]; ++x, ++p)
          if (*p >= threshold)
          {
            sum[0] += x;
            sum[1] += y;
            sum[2] += z;
            ++count;
          }
    if (count > 0)
      for (unsigned int d = 0; d < 3; ++d)
        centre[d] = region.GetIndex()[d] + sum[d] / count;
  }
  PointType point;
  image->TransformContinuousIndexToPhysicalPoint(centre, point);
  return point;
}

// The image's physical bounding box (voxel edges, LPS).
std::array<std::array<double, 3>, 2>
BoundingBox(const ImageType * image)
{
  const auto                           region = image->GetLargestPossibleRegion();
  std::array<std::array<double, 3>, 2> box{ { { { HUGE_VAL, HUGE_VAL, HUGE_VAL } },
                                              { { -HUGE_VAL, -HUGE_VAL, -HUGE_VAL } } } };
  for (int corner = 0; corner < 8; ++corner)
  {
    itk::ContinuousIndex<double, 3> index;
    for (unsigned int d = 0; d < 3; ++d)
      index[d] = region.GetIndex()[d] - 0.5 + ((corner >> d) & 1 ? static_cast<double>(region.GetSize()[d]) : 0.0);
    PointType point;
    image->TransformContinuousIndexToPhysicalPoint(index, point);
    for (unsigned int d = 0; d < 3; ++d)
    {
      box[0][d] = std::min(box[0][d], point[d]);
      box[1][d] = std::max(box[1][d], point[d]);
    }
  }
  return box;
}

// Samples `input` on a (w x h x 1) grid with the given origin and axes, row-major into a vector.
std::vector<float>
SampleSlice(const ImageType *                input,
            const PointType &                origin,
            const ImageType::DirectionType & direction,
            double                           pixel,
            int                              w,
            int                              h,
            bool                             nearest,
            float                            outside)
{
  auto filter = itk::ResampleImageFilter<ImageType, ImageType, double>::New();
  filter->SetInput(input);
  if (nearest)
    filter->SetInterpolator(itk::NearestNeighborInterpolateImageFunction<ImageType, double>::New());
  else
    filter->SetInterpolator(itk::LinearInterpolateImageFunction<ImageType, double>::New());
  filter->SetDefaultPixelValue(outside);
  filter->SetOutputOrigin(origin);
  filter->SetOutputDirection(direction);
  ImageType::SpacingType spacing;
  spacing.Fill(pixel);
  filter->SetOutputSpacing(spacing);
  filter->SetSize({ { static_cast<itk::SizeValueType>(w), static_cast<itk::SizeValueType>(h), 1 } });
  filter->Update();
  const float * p = filter->GetOutput()->GetBufferPointer();
  return std::vector<float>(p, p + static_cast<std::size_t>(w) * h);
}

Panel
MakePanel(const View &                                 view,
          const ImageType *                            image,
          const ImageType *                            overlay,
          const ImageType *                            reference,
          const PointType &                            centre,
          const std::array<std::array<double, 3>, 2> & box,
          double                                       pixel,
          float                                        black)
{
  const int fixed = 3 - view.col - view.row;
  Panel     panel;
  panel.w = std::max(1, static_cast<int>(std::ceil((box[1][view.col] - box[0][view.col]) / pixel - 1e-6)));
  panel.h = std::max(1, static_cast<int>(std::ceil((box[1][view.row] - box[0][view.row]) / pixel - 1e-6)));

  ImageType::DirectionType direction;
  direction.Fill(0.0);
  direction[view.col][0] = view.colSign; // columns of the direction matrix: screen x, screen y, normal
  direction[view.row][1] = view.rowSign;
  for (unsigned int d = 0; d < 3; ++d) // normal = screen x cross screen y keeps the frame right-handed
  {
    const unsigned int a = (d + 1) % 3, b = (d + 2) % 3;
    direction[d][2] = direction[a][0] * direction[b][1] - direction[b][0] * direction[a][1];
  }

  PointType origin; // centre of the first pixel
  origin[view.col] = view.colSign > 0 ? box[0][view.col] + 0.5 * pixel : box[1][view.col] - 0.5 * pixel;
  origin[view.row] = view.rowSign > 0 ? box[0][view.row] + 0.5 * pixel : box[1][view.row] - 0.5 * pixel;
  origin[fixed] = centre[fixed];
  panel.origin = origin;
  panel.direction = direction;
  panel.pixel = pixel;

  panel.grey = SampleSlice(image, origin, direction, pixel, panel.w, panel.h, false, black);
  if (overlay)
    panel.overlay = SampleSlice(overlay, origin, direction, pixel, panel.w, panel.h, true, 0.0f);
  if (reference)
    panel.reference = SampleSlice(reference, origin, direction, pixel, panel.w, panel.h, true, 0.0f);
  return panel;
}

// Inside pixels with an outside pixel (or the panel edge) within `thickness` (Chebyshev distance).
std::vector<char>
Outline(const std::vector<char> & inside, int w, int h, int thickness)
{
  std::vector<char> outline(inside.size(), 0);
  if (thickness <= 0)
    return outline;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
    {
      if (!inside[y * w + x])
        continue;
      bool edge = false;
      for (int dy = -thickness; dy <= thickness && !edge; ++dy)
        for (int dx = -thickness; dx <= thickness && !edge; ++dx)
        {
          const int xx = x + dx, yy = y + dy;
          edge = xx < 0 || yy < 0 || xx >= w || yy >= h || !inside[yy * w + xx];
        }
      outline[y * w + x] = edge;
    }
  return outline;
}

bool
InsideBox(const SnapshotBox & box, const PointType & p)
{
  for (int k = 0; k < 3; ++k)
  {
    double along = 0.0;
    for (int d = 0; d < 3; ++d)
      along += (p[d] - box.centerMm[d]) * box.axes[k][d];
    if (std::abs(along) > 0.5 * box.sizeMm[k])
      return false;
  }
  return true;
}

// The box's outline on the panel and a cross at its centre's projection (when the slice meets the box).
void
DrawBox(PngType * png, const Panel & panel, int x0, const SnapshotBox & box, int thickness)
{
  const std::size_t n = static_cast<std::size_t>(panel.w) * panel.h;
  std::vector<char> inside(n, 0);
  bool              meets = false;
  for (int y = 0; y < panel.h; ++y)
    for (int x = 0; x < panel.w; ++x)
    {
      const bool in = InsideBox(box, panel.At(x, y));
      inside[static_cast<std::size_t>(y) * panel.w + x] = in;
      meets = meets || in;
    }
  if (!meets)
    return;
  RGBType colour;
  for (int c = 0; c < 3; ++c)
    colour[c] = box.colour[c];
  const auto edge = Outline(inside, panel.w, panel.h, std::max(1, thickness));
  for (int y = 0; y < panel.h; ++y)
    for (int x = 0; x < panel.w; ++x)
      if (edge[static_cast<std::size_t>(y) * panel.w + x])
        png->SetPixel({ { x0 + x, y } }, colour);
  double screen[2] = { 0.0, 0.0 }; // the centre in pixels of this panel
  for (int a = 0; a < 2; ++a)
    for (unsigned int d = 0; d < 3; ++d)
      screen[a] += (box.centerMm[d] - panel.origin[d]) * panel.direction[d][a] / panel.pixel;
  const long    cx = std::lround(screen[0]), cy = std::lround(screen[1]);
  constexpr int kArm = 3;
  for (int t = -kArm; t <= kArm; ++t)
    for (const auto & [x, y] : { std::pair<long, long>{ cx + t, cy }, std::pair<long, long>{ cx, cy + t } })
      if (x >= 0 && y >= 0 && x < panel.w && y < panel.h)
        png->SetPixel({ { x0 + x, y } }, colour);
}

// Draws a panel into the PNG at column offset x0.
void
Paint(PngType * png, const Panel & panel, int x0, double low, double high, const SnapshotOptions & o)
{
  const std::size_t n = static_cast<std::size_t>(panel.w) * panel.h;
  std::vector<char> overlayIn(n, 0), referenceIn(n, 0);
  for (std::size_t i = 0; i < n; ++i)
  {
    overlayIn[i] = !panel.overlay.empty() && panel.overlay[i] >= o.overlayThreshold;
    referenceIn[i] = !panel.reference.empty() && panel.reference[i] >= o.overlayThreshold;
  }
  const auto overlayEdge = Outline(overlayIn, panel.w, panel.h, o.outlineThickness);
  const auto referenceEdge = Outline(referenceIn, panel.w, panel.h, o.outlineThickness);

  for (int y = 0; y < panel.h; ++y)
    for (int x = 0; x < panel.w; ++x)
    {
      const std::size_t i = static_cast<std::size_t>(y) * panel.w + x;
      const double      g = 255.0 * std::clamp((panel.grey[i] - low) / (high - low), 0.0, 1.0);
      double            rgb[3] = { g, g, g };
      if (overlayIn[i])
      {
        rgb[0] = (1 - o.overlayOpacity) * g + o.overlayOpacity * 255.0;
        rgb[1] = rgb[2] = (1 - o.overlayOpacity) * g;
      }
      if (overlayEdge[i])
        rgb[0] = 255, rgb[1] = rgb[2] = 0;
      if (referenceEdge[i]) // the reference outline is drawn last so it stays visible where both agree
        rgb[1] = 255, rgb[0] = rgb[2] = 0;
      RGBType pixel;
      for (int c = 0; c < 3; ++c)
        pixel[c] = static_cast<unsigned char>(std::lround(rgb[c]));
      png->SetPixel({ { x0 + x, y } }, pixel);
    }
  for (const SnapshotBox & box : o.boxes)
    DrawBox(png, panel, x0, box, o.outlineThickness);
}

bool
EndsWithPng(const std::string & path)
{
  if (path.size() < 4)
    return false;
  std::string ext = path.substr(path.size() - 4);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".png";
}

// Writes to a temporary file beside the target and renames it, so readers never see a partial PNG.
void
WriteAtomically(const PngType * png, const std::string & path)
{
  static std::atomic<unsigned> counter{ 0 };
  const std::string temporary = path + ".partial-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  try
  {
    auto writer = itk::ImageFileWriter<PngType>::New();
    writer->SetImageIO(itk::PNGImageIO::New()); // the temporary name has no .png extension
    writer->SetFileName(temporary);
    writer->SetInput(png);
    writer->Update();
    std::filesystem::rename(temporary, path);
  }
  catch (const itk::ExceptionObject & e)
  {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    CANOPY_THROW("WriteOrthogonalSnapshot: cannot write " << path << ": " << e.GetDescription());
  }
  catch (const std::exception & e)
  {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    CANOPY_THROW("WriteOrthogonalSnapshot: cannot write " << path << ": " << e.what());
  }
}

} // namespace

void
WriteOrthogonalSnapshot(const itk::Image<float, 3> * image,
                        const itk::Image<float, 3> * overlay,
                        const std::string &          pngPath,
                        const SnapshotOptions &      options,
                        const itk::Image<float, 3> * reference)
{
  if (!image || !image->GetBufferPointer())
    CANOPY_THROW("WriteOrthogonalSnapshot: image is null or has no pixel buffer");
  for (const auto & [other, name] : { std::pair{ overlay, "overlay" }, std::pair{ reference, "reference" } })
    if (other)
    {
      RequireSameGrid(image, other, "WriteOrthogonalSnapshot", "image", name);
      if (!other->GetBufferPointer())
        CANOPY_THROW("WriteOrthogonalSnapshot: " << name << " has no pixel buffer");
    }
  ValidateOptions(options);
  if (!EndsWithPng(pngPath))
    CANOPY_THROW("WriteOrthogonalSnapshot: output path '" << pngPath << "' must end in .png");

  const auto   window = ComputeIntensityPercentiles(image, options.windowLowPercentile, options.windowHighPercentile);
  const double low = window.low, high = window.high > window.low ? window.high : window.low + 1.0;
  PointType    centre = SliceCentre(image, overlay, options.overlayThreshold);
  if (options.sliceCentreMm)
    for (unsigned int d = 0; d < 3; ++d)
      centre[d] = (*options.sliceCentreMm)[d];
  const auto   box = BoundingBox(image);
  const auto   spacing = image->GetSpacing();
  const double pixel = std::min({ spacing[0], spacing[1], spacing[2] });

  std::vector<Panel> panels;
  int                width = 0, height = 0;
  for (const View & view : kViews)
  {
    panels.push_back(MakePanel(view, image, overlay, reference, centre, box, pixel, static_cast<float>(low)));
    width += panels.back().w;
    height = std::max(height, panels.back().h);
  }

  auto png = PngType::New();
  png->SetRegions(PngType::RegionType(
    { { 0, 0 } }, { { static_cast<itk::SizeValueType>(width), static_cast<itk::SizeValueType>(height) } }));
  png->Allocate();
  RGBType black;
  black.Fill(0);
  png->FillBuffer(black);
  int x0 = 0;
  for (const Panel & panel : panels)
  {
    Paint(png, panel, x0, low, high, options);
    x0 += panel.w;
  }
  WriteAtomically(png, pngPath);
}

} // namespace canopy
