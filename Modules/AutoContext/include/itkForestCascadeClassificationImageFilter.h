#ifndef itkForestCascadeClassificationImageFilter_h
#define itkForestCascadeClassificationImageFilter_h

#include "canopy/ReferenceFrame.h"
#include "canopyForestCascade.h"
#include "itkImageToImageFilter.h"
#include "itkVectorImage.h"

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

namespace itk
{

/** \class ForestCascadeClassificationImageFilter
 * \brief Labels every pixel/voxel of a 2D or 3D image with an auto-context cascade of decision forests
 * (canopy::ForestCascade: stage k reads the image's channels and stage k-1's class probabilities).
 *
 * Input: a scalar image or an itk::VectorImage, filtered into the cascade's filter-bank channels as
 * in training. Output: a VectorImage<float> of the last stage's class probabilities, or a scalar
 * label image (most probable class, ties to the lowest). Origin, spacing, direction and size are the
 * input's. Backend auto | cpu | cuda | cuda:N, for every stage; CPU and GPU outputs are identical.
 * A cascade of one stage gives what itk::RandomForestClassificationImageFilter gives.
 * \ingroup Canopy
 */
template<typename TInputImage, typename TOutputImage>
class ForestCascadeClassificationImageFilter : public ImageToImageFilter<TInputImage, TOutputImage>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(ForestCascadeClassificationImageFilter);

  using Self = ForestCascadeClassificationImageFilter;
  using Superclass = ImageToImageFilter<TInputImage, TOutputImage>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;
  using CascadeType = canopy::ForestCascade;

  static constexpr unsigned int ImageDimension = TInputImage::ImageDimension;
  static_assert(ImageDimension == 2 || ImageDimension == 3, "ForestCascadeClassificationImageFilter: 2D or 3D");
  static_assert(TOutputImage::ImageDimension == ImageDimension, "input and output dimensions must agree");
  static constexpr bool DistributionOutput =
    std::is_same<TOutputImage, VectorImage<typename TOutputImage::InternalPixelType, ImageDimension>>::value;

  itkNewMacro(Self);
  itkTypeMacro(ForestCascadeClassificationImageFilter, ImageToImageFilter);

  /** The cascade (required). */
  void SetCascade(std::shared_ptr<const CascadeType> cascade)
  {
    m_Cascade = std::move(cascade);
    this->Modified();
  }
  std::shared_ptr<const CascadeType> GetCascade() const { return m_Cascade; }

  /** The input's reference pose (canopy/ReferenceFrame.h), required when the model's filter bank has
   * pose channels ("pose:0..2": coordinates in the frame of the model's reference structure);
   * std::nullopt clears it. */
  void SetReferenceFrame(const std::optional<canopy::ReferenceFrame> & frame)
  {
    m_ReferenceFrame = frame;
    this->Modified();
  }
  const std::optional<canopy::ReferenceFrame> & GetReferenceFrame() const { return m_ReferenceFrame; }

  /** Backend: auto (default), cpu, cuda or cuda:N; BackendUsed says what ran. */
  itkSetStringMacro(Backend);
  itkGetStringMacro(Backend);
  itkGetStringMacro(BackendUsed);

  /** Device memory budget in bytes (0: 80% of the free memory). */
  itkSetMacro(MaximumDeviceBytes, SizeValueType);
  itkGetConstMacro(MaximumDeviceBytes, SizeValueType);

  /** Where the last update's time went (channels, each stage's forest, the context channels between). */
  const canopy::ForestPredictionTimes & GetPredictionTimes() const { return m_PredictionTimes; }
  /** The last update's intensities mapped to 0 and 1, per input component, by the model's normalisation
   * (empty without one): what a report shows to check a scan was read on a sensible scale. */
  const std::vector<std::array<double, 2>> & GetNormalizationRanges() const { return m_NormalizationRanges; }

protected:
  ForestCascadeClassificationImageFilter() { this->SetNumberOfRequiredInputs(1); }
  ~ForestCascadeClassificationImageFilter() override = default;

  void GenerateOutputInformation() override;
  void GenerateInputRequestedRegion() override;
  void EnlargeOutputRequestedRegion(DataObject * output) override;
  void GenerateData() override;
  void PrintSelf(std::ostream & os, Indent indent) const override;

private:
  void CheckSetUp() const;

  std::shared_ptr<const CascadeType>    m_Cascade;
  std::string                           m_Backend{ "auto" };
  std::optional<canopy::ReferenceFrame> m_ReferenceFrame;
  std::string                           m_BackendUsed;
  SizeValueType                         m_MaximumDeviceBytes{ 0 };
  canopy::ForestPredictionTimes         m_PredictionTimes;
  std::vector<std::array<double, 2>>    m_NormalizationRanges;
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#include "itkForestCascadeClassificationImageFilter.hxx"
#endif

#endif
