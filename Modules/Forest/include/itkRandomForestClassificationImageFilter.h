#ifndef itkRandomForestClassificationImageFilter_h
#define itkRandomForestClassificationImageFilter_h

#include "canopy/ForestFlat.h"
#include "canopy/ReferenceFrame.h"
#include "canopyForestDensePrediction.h"
#include "canopyForestModel.h"
#include "itkImageToImageFilter.h"
#include "itkVectorImage.h"

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

namespace itk
{
/** \class RandomForestClassificationImageFilter
 * \brief Labels every pixel/voxel of a 2D or 3D image with a decision forest (Sharp 2008; CURFIL).
 *
 * Input: a scalar image or an itk::VectorImage (one channel per component). When the model has a
 * filter bank (canopy::ForestModel::filterBank), each component is filtered into the bank's channels
 * first (canopyForestFilterBank.h), exactly as in training. Output, by mode:
 * - Distribution: VectorImage<float> of the class probabilities (mean over trees);
 * - ForestLeaves: VectorImage of the leaf node index reached in each tree;
 * - ArgMax: a scalar label image (most probable class, ties to the lowest);
 * - TreeLeaf: a scalar image of the first tree's leaf index.
 * TOutputImage must be a VectorImage for the first two and a scalar image for the others. Origin,
 * spacing, direction and size are the input's. Backend auto | cpu | cuda | cuda:N; on the GPU large
 * volumes go through in z-slabs with margins (identical results). CPU and GPU outputs are identical.
 * \ingroup Canopy
 */
template<typename TInputImage, typename TOutputImage>
class RandomForestClassificationImageFilter : public ImageToImageFilter<TInputImage, TOutputImage>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(RandomForestClassificationImageFilter);

  using Self = RandomForestClassificationImageFilter;
  using Superclass = ImageToImageFilter<TInputImage, TOutputImage>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;
  using InputImageType = TInputImage;
  using OutputImageType = TOutputImage;
  using ModelType = canopy::ForestModel;
  using OutputMode = canopy::ForestOutputMode;

  static constexpr unsigned int ImageDimension = TInputImage::ImageDimension;
  static_assert(ImageDimension == 2 || ImageDimension == 3, "RandomForestClassificationImageFilter: 2D or 3D");
  static_assert(TOutputImage::ImageDimension == ImageDimension, "input and output dimensions must agree");
  static constexpr bool VectorOutput =
    std::is_same<TOutputImage, VectorImage<typename TOutputImage::InternalPixelType, ImageDimension>>::value;

  itkNewMacro(Self);
  itkTypeMacro(RandomForestClassificationImageFilter, ImageToImageFilter);

  /** The model (required). */
  void SetModel(std::shared_ptr<const ModelType> model)
  {
    m_Model = std::move(model);
    this->Modified();
  }
  std::shared_ptr<const ModelType> GetModel() const { return m_Model; }

  /** Output mode (default: Distribution for a VectorImage output, ArgMax otherwise). */
  itkSetEnumMacro(Mode, OutputMode);
  itkGetEnumMacro(Mode, OutputMode);

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

  /** Device memory budget in bytes (0: 80% of the free memory), and a cap on output planes per GPU
   * slab (0: none; tests use it to force slabs). */
  itkSetMacro(MaximumDeviceBytes, SizeValueType);
  itkGetConstMacro(MaximumDeviceBytes, SizeValueType);
  itkSetMacro(MaximumSlabPlanes, int);
  itkGetConstMacro(MaximumSlabPlanes, int);
  /** GPU slabs used by the last update (0 on the CPU). */
  itkGetConstMacro(NumberOfSlabsUsed, int);

  /** Where the last update's time went (channels, the forest). */
  const canopy::ForestPredictionTimes & GetPredictionTimes() const { return m_PredictionTimes; }
  /** The last update's intensities mapped to 0 and 1, per input component, by the model's normalisation
   * (empty without one): what a report shows to check a scan was read on a sensible scale. */
  const std::vector<std::array<double, 2>> & GetNormalizationRanges() const { return m_NormalizationRanges; }

protected:
  RandomForestClassificationImageFilter()
    : m_Mode(VectorOutput ? OutputMode::Distribution : OutputMode::ArgMax)
  {
    this->SetNumberOfRequiredInputs(1);
  }
  ~RandomForestClassificationImageFilter() override = default;

  void GenerateOutputInformation() override;
  void GenerateInputRequestedRegion() override;
  void EnlargeOutputRequestedRegion(DataObject * output) override;
  void GenerateData() override;
  void PrintSelf(std::ostream & os, Indent indent) const override;

private:
  void CheckSetUp() const;

  std::shared_ptr<const ModelType>      m_Model;
  OutputMode                            m_Mode;
  std::string                           m_Backend{ "auto" };
  std::optional<canopy::ReferenceFrame> m_ReferenceFrame;
  std::string                           m_BackendUsed;
  SizeValueType                         m_MaximumDeviceBytes{ 0 };
  int                                   m_MaximumSlabPlanes{ 0 };
  int                                   m_NumberOfSlabsUsed{ 0 };
  canopy::ForestPredictionTimes         m_PredictionTimes;
  std::vector<std::array<double, 2>>    m_NormalizationRanges;
};
} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#include "itkRandomForestClassificationImageFilter.hxx"
#endif

#endif
