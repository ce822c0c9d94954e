#include "canopyImageGrid.h"

#include "canopy/Errors.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace canopy
{
namespace
{

bool
Close(double x, double y)
{
  return std::abs(x - y) <= 1e-6;
}

template <typename T>
std::string
Vec(const T & v)
{
  std::ostringstream s;
  s << '[';
  for (unsigned int d = 0; d < 3; ++d)
    s << (d ? ", " : "") << v[d];
  s << ']';
  return s.str();
}

} // namespace

std::string
DescribeGridMismatch(const itk::ImageBase<3> * a, const itk::ImageBase<3> * b)
{
  const auto sizeA = a->GetLargestPossibleRegion().GetSize(), sizeB = b->GetLargestPossibleRegion().GetSize();
  const auto indexA = a->GetLargestPossibleRegion().GetIndex(), indexB = b->GetLargestPossibleRegion().GetIndex();
  if (sizeA != sizeB)
    return "size " + Vec(sizeA) + " vs " + Vec(sizeB);
  if (indexA != indexB)
    return "start index " + Vec(indexA) + " vs " + Vec(indexB);
  for (unsigned int d = 0; d < 3; ++d)
    if (!Close(a->GetSpacing()[d], b->GetSpacing()[d]))
      return "spacing " + Vec(a->GetSpacing()) + " vs " + Vec(b->GetSpacing());
  for (unsigned int d = 0; d < 3; ++d)
    if (!Close(a->GetOrigin()[d], b->GetOrigin()[d]))
      return "origin " + Vec(a->GetOrigin()) + " vs " + Vec(b->GetOrigin());
  for (unsigned int r = 0; r < 3; ++r)
    for (unsigned int c = 0; c < 3; ++c)
      if (!Close(a->GetDirection()[r][c], b->GetDirection()[r][c]))
      {
        std::ostringstream s;
        s << "direction (row " << r << ", column " << c << ": " << a->GetDirection()[r][c] << " vs "
          << b->GetDirection()[r][c] << ')';
        return s.str();
      }
  return {};
}

void
RequireSameGrid(const itk::ImageBase<3> * a, const itk::ImageBase<3> * b, const std::string & context,
                const std::string & nameA, const std::string & nameB)
{
  if (!a)
    CANOPY_THROW(context << ": " << nameA << " is null");
  if (!b)
    CANOPY_THROW(context << ": " << nameB << " is null");
  const std::string mismatch = DescribeGridMismatch(a, b);
  if (!mismatch.empty())
    CANOPY_THROW(context << ": " << nameA << " and " << nameB << " are not on the same grid: " << mismatch);
}

} // namespace canopy
