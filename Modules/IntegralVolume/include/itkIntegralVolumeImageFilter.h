#ifndef itkIntegralVolumeImageFilter_h
#define itkIntegralVolumeImageFilter_h

#include "itkImage.h"
#include "itkImageToImageFilter.h"

#include <string>

namespace itk
{

/** \class IntegralVolumeImageFilter
 * \brief Summed-volume table (3D integral image) of a scalar volume, on the CPU or a GPU.
 *
 * The output is an Image<double, 3> with the input's origin, spacing and direction whose largest
 * region starts one index lower on every axis: output(i, j, k) is the sum of all input voxels with
 * index <= (i, j, k), and the plane at index -1 is zero. Its buffer is exactly the padded layout of
 * canopy::IntegralVolumeView, so box sums need no bounds tests (canopy::BoxSum / ClippedBoxSum).
 *
 * Accumulation is in double: exact for integer voxels while sums stay below 2^53. Non-finite voxels
 * (NaN, +-Inf) are read as zero and counted (GetNumberOfNonFiniteVoxels); a warning is issued.
 * The whole input is requested: a summed table cannot be streamed.
 *
 * Backend: "auto" (GPU when one is usable, else CPU with one warning), "cpu", "cuda" or "cuda:N".
 * \ingroup Canopy
 */
template <typename TInputImage>
class IntegralVolumeImageFilter : public ImageToImageFilter<TInputImage, Image<double, 3>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(IntegralVolumeImageFilter);

  using Self = IntegralVolumeImageFilter;
  using Superclass = ImageToImageFilter<TInputImage, Image<double, 3>>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  using InputImageType = TInputImage;
  using InputPixelType = typename TInputImage::PixelType;
  using OutputImageType = Image<double, 3>;

  static_assert(TInputImage::ImageDimension == 3, "IntegralVolumeImageFilter needs a 3D image");
  static_assert(std::is_arithmetic<InputPixelType>::value, "IntegralVolumeImageFilter needs a scalar pixel type");

  itkNewMacro(Self);
  itkTypeMacro(IntegralVolumeImageFilter, ImageToImageFilter);

  /** Backend: auto (default), cpu, cuda or cuda:N. */
  itkSetStringMacro(Backend);
  itkGetStringMacro(Backend);

  /** Backend used by the last update ("cpu" or "cuda:N (name)"). */
  itkGetStringMacro(BackendUsed);

  /** Non-finite input voxels seen by the last update (read as zero). */
  itkGetConstMacro(NumberOfNonFiniteVoxels, SizeValueType);

protected:
  IntegralVolumeImageFilter();
  ~IntegralVolumeImageFilter() override = default;

  void GenerateOutputInformation() override;
  void GenerateInputRequestedRegion() override;
  void EnlargeOutputRequestedRegion(DataObject * output) override;
  void GenerateData() override;
  void PrintSelf(std::ostream & os, Indent indent) const override;

private:
  std::string   m_Backend{ "auto" };
  std::string   m_BackendUsed;
  SizeValueType m_NumberOfNonFiniteVoxels{ 0 };
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkIntegralVolumeImageFilter.hxx"
#endif

#endif
