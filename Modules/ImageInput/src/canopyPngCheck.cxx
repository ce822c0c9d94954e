// A PNG read through libpng with its errors caught (setjmp), before ITK reads it: ITK 5.2's PNGImageIO
// sets no error jump for the header, so libpng aborts the process on a corrupt chunk
// ("libpng error: ...: invalid chunk type", exit 134; found by Testing/Fuzz, docs/RELIABILITY.md).
#include "canopyPngCheck.h"

#include "canopy/Errors.h"

#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace canopy
{
namespace
{
struct PngErrors
{
  std::string message;
};

void
OnPngError(png_structp png, png_const_charp message)
{
  static_cast<PngErrors *>(png_get_error_ptr(png))->message = message ? message : "unknown error";
  png_longjmp(png, 1);
}

void
OnPngWarning(png_structp, png_const_charp)
{
}
} // namespace

void
CheckPngFile(const std::string & path, const std::string & where)
{
  std::unique_ptr<FILE, int (*)(FILE *)> file(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!file)
  {
    CANOPY_THROW(where << ": cannot be opened for reading");
  }
  PngErrors   errors;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &errors, OnPngError, OnPngWarning);
  png_infop   info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info)
  {
    png_destroy_read_struct(&png, &info, nullptr);
    CANOPY_THROW(where << ": libpng could not start");
  }
  // Buffers live on the heap behind a pointer set before setjmp: automatic variables changed between
  // setjmp and the longjmp of an error would have indeterminate values afterwards.
  struct Buffers
  {
    std::vector<png_byte>  pixels;
    std::vector<png_bytep> rows;
  };
  const auto buffers = std::make_unique<Buffers>();
  if (setjmp(png_jmpbuf(png)))
  {
    png_destroy_read_struct(&png, &info, nullptr);
    CANOPY_THROW(where << ": not a valid PNG image (libpng: " << errors.message << ")");
  }
  png_init_io(png, file.get());
  png_read_info(png, info);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const png_size_t  rowBytes = png_get_rowbytes(png, info);
  const png_uint_32 height = png_get_image_height(png, info);
  buffers->pixels.resize(rowBytes * height);
  buffers->rows.resize(height);
  for (png_uint_32 y = 0; y < height; ++y)
    buffers->rows[y] = buffers->pixels.data() + y * rowBytes;
  png_read_image(png, buffers->rows.data()); // the pixel data too: a truncated or corrupt stream stops here
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
}

} // namespace canopy
