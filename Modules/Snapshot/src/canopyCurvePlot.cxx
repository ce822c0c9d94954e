#include "canopyCurvePlot.h"

#include "canopy/AtomicFile.h"
#include "canopy/Errors.h"

#include "itkImageFileWriter.h"
#include "itkPNGImageIO.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>

namespace canopy
{
namespace
{
using Pixel = itk::RGBPixel<unsigned char>;

Pixel
Rgb(unsigned char r, unsigned char g, unsigned char b)
{
  Pixel p;
  p.Set(r, g, b);
  return p;
}

/** 5 x 7 glyphs (bit 4 is the leftmost column) of the characters tick labels and titles use. */
const std::uint8_t *
Glyph(char c)
{
  static const std::map<char, std::array<std::uint8_t, 7>> glyphs = {
    { '0', { 0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E } },
    { '1', { 0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E } },
    { '2', { 0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F } },
    { '3', { 0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E } },
    { '4', { 0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02 } },
    { '5', { 0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E } },
    { '6', { 0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E } },
    { '7', { 0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08 } },
    { '8', { 0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E } },
    { '9', { 0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C } },
    { '.', { 0, 0, 0, 0, 0, 0x0C, 0x0C } },
    { '-', { 0, 0, 0, 0x1F, 0, 0, 0 } },
    { 'k', { 0x10, 0x10, 0x12, 0x14, 0x18, 0x14, 0x12 } },
    { 'M', { 0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11 } },
    { 'a', { 0, 0, 0x0E, 0x01, 0x0F, 0x11, 0x0F } },
    { 'b', { 0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x1E } },
    { 'c', { 0, 0, 0x0E, 0x10, 0x10, 0x11, 0x0E } },
    { 'd', { 0x01, 0x01, 0x0D, 0x13, 0x11, 0x11, 0x0F } },
    { 'e', { 0, 0, 0x0E, 0x11, 0x1F, 0x10, 0x0E } },
    { 'f', { 0x06, 0x09, 0x08, 0x1C, 0x08, 0x08, 0x08 } },
    { 'g', { 0, 0, 0x0F, 0x11, 0x0F, 0x01, 0x0E } },
    { 'h', { 0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x11 } },
    { 'i', { 0x04, 0, 0x0C, 0x04, 0x04, 0x04, 0x0E } },
    { 'l', { 0x0C, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E } },
    { 'm', { 0, 0, 0x1A, 0x15, 0x15, 0x11, 0x11 } },
    { 'n', { 0, 0, 0x16, 0x19, 0x11, 0x11, 0x11 } },
    { 'o', { 0, 0, 0x0E, 0x11, 0x11, 0x11, 0x0E } },
    { 'p', { 0, 0, 0x1E, 0x11, 0x1E, 0x10, 0x10 } },
    { 'r', { 0, 0, 0x16, 0x19, 0x10, 0x10, 0x10 } },
    { 's', { 0, 0, 0x0E, 0x10, 0x0E, 0x01, 0x1E } },
    { 't', { 0x08, 0x08, 0x1C, 0x08, 0x08, 0x09, 0x06 } },
    { 'u', { 0, 0, 0x11, 0x11, 0x11, 0x13, 0x0D } },
    { 'v', { 0, 0, 0x11, 0x11, 0x11, 0x0A, 0x04 } },
    { 'w', { 0, 0, 0x11, 0x11, 0x15, 0x15, 0x0A } },
    { 'y', { 0, 0, 0x11, 0x11, 0x0F, 0x01, 0x0E } },
    { '(', { 0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02 } },
    { ')', { 0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08 } },
    { ' ', { 0, 0, 0, 0, 0, 0, 0 } },
    { ':', { 0, 0x0C, 0x0C, 0, 0x0C, 0x0C, 0 } }
  };
  static const std::array<std::uint8_t, 7> unknown = { 0x1F, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1F };
  const auto                               it = glyphs.find(c);
  return it == glyphs.end() ? unknown.data() : it->second.data();
}

class Canvas
{
public:
  Canvas(int width, int height, int scale)
    : m_Image(CurvePlotImage::New())
    , m_Width(width)
    , m_Height(height)
    , m_Scale(scale)
  {
    CurvePlotImage::SizeType size;
    size[0] = std::size_t(width);
    size[1] = std::size_t(height);
    m_Image->SetRegions(size);
    m_Image->Allocate();
    m_Image->FillBuffer(Rgb(255, 255, 255));
  }
  void Set(int x, int y, Pixel p)
  {
    if (x >= 0 && y >= 0 && x < m_Width && y < m_Height)
      m_Image->GetBufferPointer()[std::size_t(y) * std::size_t(m_Width) + std::size_t(x)] = p;
  }
  void Rect(int x0, int y0, int x1, int y1, Pixel p)
  {
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x)
        Set(x, y, p);
  }
  /** Bresenham, `thickness` pixels wide (a square pen). */
  void Line(int x0, int y0, int x1, int y1, int thickness, Pixel p)
  {
    const int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int       error = dx + dy;
    for (;;)
    {
      Rect(x0, y0, x0 + thickness - 1, y0 + thickness - 1, p);
      if (x0 == x1 && y0 == y1)
        break;
      const int e2 = 2 * error;
      if (e2 >= dy)
        error += dy, x0 += sx;
      if (e2 <= dx)
        error += dx, y0 += sy;
    }
  }
  int CharWidth() const { return 6 * m_Scale; }
  int CharHeight() const { return 7 * m_Scale; }
  int TextWidth(const std::string & s) const { return int(s.size()) * CharWidth() - m_Scale; }
  /** Text with its top-left corner at (x, y); vertical: rotated a quarter turn, read bottom to top,
   * with its bottom-left corner at (x, y). */
  void Text(int x, int y, const std::string & s, Pixel p, bool vertical = false)
  {
    for (std::size_t k = 0; k < s.size(); ++k)
    {
      const std::uint8_t * g = Glyph(s[k]);
      for (int row = 0; row < 7; ++row)
        for (int col = 0; col < 5; ++col)
          if (g[row] & (0x10 >> col))
          {
            const int u = int(k) * CharWidth() + col * m_Scale, v = row * m_Scale;
            if (vertical)
              Rect(x + v, y - u - m_Scale + 1, x + v + m_Scale - 1, y - u, p);
            else
              Rect(x + u, y + v, x + u + m_Scale - 1, y + v + m_Scale - 1, p);
          }
    }
  }
  CurvePlotImage::Pointer Image() const { return m_Image; }

private:
  CurvePlotImage::Pointer m_Image;
  int                     m_Width, m_Height, m_Scale;
};

/** 1, 2 or 5 times a power of ten, at least raw. */
double
NiceStep(double raw)
{
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : { 1.0, 2.0, 5.0, 10.0 })
    if (m * magnitude >= raw * (1.0 - 1e-9))
      return m * magnitude;
  return 10.0 * magnitude;
}

std::string
CountLabel(double v)
{
  char         buffer[32];
  const double a = std::fabs(v);
  if (a >= 1e6)
    std::snprintf(buffer, sizeof buffer, "%gM", v / 1e6);
  else if (a >= 1e3)
    std::snprintf(buffer, sizeof buffer, "%gk", v / 1e3);
  else
    std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}
} // namespace

CurvePlotImage::Pointer
RenderCurvePlot(const std::vector<double> & x, const std::vector<double> & y, const CurvePlotOptions & o)
{
  if (o.width < 200 || o.width > 10000 || o.height < 200 || o.height > 10000)
    CANOPY_THROW("curve plot: size " << o.width << "x" << o.height << " (each 200 to 10000 pixels)");
  if (x.empty() || x.size() != y.size())
    CANOPY_THROW("curve plot: " << x.size() << " x values and " << y.size() << " y values (at least one point)");
  for (std::size_t k = 0; k < x.size(); ++k)
    if (!std::isfinite(x[k]) || !std::isfinite(y[k]))
      CANOPY_THROW("curve plot: point " << k << " is not finite");
  const int scale = o.height >= 400 && o.width >= 400 ? 2 : 1;
  Canvas    canvas(o.width, o.height, scale);
  // Ranges: x from 0 (or the smallest x, if negative) to the largest x or marker; y below.
  double xLow = std::min(0.0, *std::min_element(x.begin(), x.end()));
  double xHigh = *std::max_element(x.begin(), x.end());
  for (double m : o.markers)
    if (std::isfinite(m))
      xHigh = std::max(xHigh, m);
  if (!(xHigh > xLow))
    xHigh = xLow + 1.0;
  const auto [yMinIt, yMaxIt] = std::minmax_element(y.begin(), y.end());
  // Rounded out to tenths with some room, so a flat curve is not drawn on the frame.
  double yLow = std::floor((*yMinIt - 0.05) * 10.0 + 1e-9) / 10.0,
         yHigh = std::ceil((*yMaxIt + 0.05) * 10.0 - 1e-9) / 10.0;
  if (*yMinIt >= 0.0 && *yMaxIt <= 1.0)
    yLow = std::max(yLow, 0.0), yHigh = std::min(yHigh, 1.0);
  if (std::isfinite(o.yMin) && std::isfinite(o.yMax))
  {
    if (!(o.yMax > o.yMin))
      CANOPY_THROW("curve plot: y range " << o.yMin << " to " << o.yMax << " is empty");
    yLow = o.yMin, yHigh = o.yMax;
  }
  const double yStep = yHigh - yLow <= 0.2 ? 0.05 : (yHigh - yLow <= 0.6 ? 0.1 : 0.2);
  const double xStep = NiceStep((xHigh - xLow) / 6.0);

  // Plot area: room for the y title and labels on the left, the x labels and title below.
  const int ch = canvas.CharHeight(), cw = canvas.CharWidth();
  const int left = ch + 3 * scale + 4 * cw + 8 * scale, bottom = 2 * ch + 12 * scale, top = 6 * scale,
            right = o.width - 1 - 3 * cw;
  const int plotBottom = o.height - 1 - bottom;
  auto      px = [&](double v) { return left + int(std::lround((v - xLow) / (xHigh - xLow) * (right - left))); };
  auto py = [&](double v) { return plotBottom - int(std::lround((v - yLow) / (yHigh - yLow) * (plotBottom - top))); };
  const auto black = Rgb(0, 0, 0), grid = Rgb(220, 220, 220), blue = Rgb(20, 70, 200), red = Rgb(220, 30, 30);

  for (double v = std::ceil(yLow / yStep - 1e-9) * yStep; v <= yHigh + 1e-9; v += yStep)
  {
    const int yy = py(v);
    canvas.Line(left, yy, right, yy, 1, grid);
    char label[16];
    std::snprintf(label, sizeof label, yStep < 0.1 ? "%.2f" : "%.1f", v);
    canvas.Line(left - 3 * scale, yy, left, yy, 1, black);
    canvas.Text(left - 5 * scale - canvas.TextWidth(label), yy - ch / 2, label, black);
  }
  for (double v = std::ceil(xLow / xStep) * xStep; v <= xHigh + 1e-9 * xStep; v += xStep)
  {
    const int xx = px(v);
    canvas.Line(xx, top, xx, plotBottom, 1, grid);
    canvas.Line(xx, plotBottom, xx, plotBottom + 3 * scale, 1, black);
    const std::string label = CountLabel(v);
    canvas.Text(xx - canvas.TextWidth(label) / 2, plotBottom + 5 * scale, label, black);
  }
  for (double m : o.markers)
    if (std::isfinite(m))
      canvas.Line(px(m), top, px(m), plotBottom, scale, red);
  canvas.Line(left, top, left, plotBottom, 1, black);
  canvas.Line(left, plotBottom, right, plotBottom, 1, black);
  for (std::size_t k = 0; k + 1 < x.size(); ++k)
    canvas.Line(px(x[k]), py(y[k]), px(x[k + 1]), py(y[k + 1]), scale, blue);
  if (x.size() == 1)
    canvas.Rect(px(x[0]) - scale, py(y[0]) - scale, px(x[0]) + scale, py(y[0]) + scale, blue);
  std::string xTitle = o.xLabel;
  if (!o.markers.empty())
    xTitle += " (red: drift)";
  canvas.Text((left + right - canvas.TextWidth(xTitle)) / 2, o.height - 1 - 3 * scale - ch, xTitle, black);
  canvas.Text(2 * scale, (top + plotBottom + canvas.TextWidth(o.yLabel)) / 2, o.yLabel, black, /*vertical=*/true);
  return canvas.Image();
}

void
WriteCurvePlot(const std::string &         path,
               const std::vector<double> & x,
               const std::vector<double> & y,
               const CurvePlotOptions &    options)
{
  const CurvePlotImage::Pointer image = RenderCurvePlot(x, y, options);
  const std::string             temporary = TemporaryPathFor(path);
  try
  {
    auto writer = itk::ImageFileWriter<CurvePlotImage>::New();
    writer->SetImageIO(itk::PNGImageIO::New());
    writer->SetFileName(temporary);
    writer->SetInput(image);
    writer->Update();
  }
  catch (const itk::ExceptionObject & e)
  {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    CANOPY_THROW("--plot " << path << ": cannot write the PNG: " << e.GetDescription());
  }
  CommitTemporaryFile(temporary, path);
}

} // namespace canopy
