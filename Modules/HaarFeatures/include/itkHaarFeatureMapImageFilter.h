#ifndef itkHaarFeatureMapImageFilter_h
#define itkHaarFeatureMapImageFilter_h

#include "canopy/HaarFeature.h"
#include "itkImageToImageFilter.h"
#include "itkVectorImage.h"

#include <array>
#include <string>
#include <vector>

namespace itk
{

/** \class HaarFeatureMapImageFilter
 * \brief Dense 3D Haar feature responses: one vector component per feature of a bank.
 *
 * For each voxel, component f is the response of feature f (canopy::HaarResponse) placed on a
 * sample box of SampleBoxSize voxels centred on the voxel. Cuboids reaching outside the image are
 * clipped (outside voxels count as zero). The output has the input's geometry. The integral volume
 * and the responses are computed on the chosen backend; the same response function runs on both.
 * \ingroup Canopy
 */
template <typename TInputImage>
class HaarFeatureMapImageFilter : public ImageToImageFilter<TInputImage, VectorImage<float, 3>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(HaarFeatureMapImageFilter);

  using Self = HaarFeatureMapImageFilter;
  using Superclass = ImageToImageFilter<TInputImage, VectorImage<float, 3>>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;
  using InputImageType = TInputImage;
  using InputPixelType = typename TInputImage::PixelType;
  using OutputImageType = VectorImage<float, 3>;
  using FeatureBankType = std::vector<canopy::HaarFeature>;
  using SampleBoxType = std::array<int, 3>;

  static_assert(TInputImage::ImageDimension == 3, "HaarFeatureMapImageFilter needs a 3D image");
  static_assert(std::is_arithmetic<InputPixelType>::value, "HaarFeatureMapImageFilter needs a scalar pixel type");

  itkNewMacro(Self);
  itkTypeMacro(HaarFeatureMapImageFilter, ImageToImageFilter);

  /** The features to evaluate (at least one). */
  void SetFeatureBank(const FeatureBankType & bank)
  {
    m_FeatureBank = bank;
    this->Modified();
  }
  const FeatureBankType & GetFeatureBank() const { return m_FeatureBank; }

  /** Sample box in voxels (default 16 x 16 x 16). */
  void SetSampleBoxSize(const SampleBoxType & box)
  {
    m_SampleBoxSize = box;
    this->Modified();
  }
  const SampleBoxType & GetSampleBoxSize() const { return m_SampleBoxSize; }

  /** Backend: auto (default), cpu, cuda or cuda:N. */
  itkSetStringMacro(Backend);
  itkGetStringMacro(Backend);
  itkGetStringMacro(BackendUsed);

protected:
  HaarFeatureMapImageFilter() { this->SetNumberOfRequiredInputs(1); }
  ~HaarFeatureMapImageFilter() override = default;

  void GenerateOutputInformation() override;
  void GenerateInputRequestedRegion() override;
  void EnlargeOutputRequestedRegion(DataObject * output) override;
  void GenerateData() override;
  void PrintSelf(std::ostream & os, Indent indent) const override;

private:
  FeatureBankType m_FeatureBank;
  SampleBoxType   m_SampleBoxSize{ { 16, 16, 16 } };
  std::string     m_Backend{ "auto" };
  std::string     m_BackendUsed;
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkHaarFeatureMapImageFilter.hxx"
#endif

#endif
