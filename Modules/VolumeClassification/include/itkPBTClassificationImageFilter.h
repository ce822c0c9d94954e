#ifndef itkPBTClassificationImageFilter_h
#define itkPBTClassificationImageFilter_h

#include "canopyPBTModelFile.h"
#include "itkImage.h"
#include "itkImageToImageFilter.h"

#include <memory>
#include <string>

namespace itk
{

/** \class PBTClassificationImageFilter
 * \brief Per-voxel probability of the positive class from a probabilistic boosting tree.
 *
 * The input (any scalar 3D image) is resampled to the model's working spacing and normalised as the
 * model prescribes, every voxel is classified with the PBT's Haar features (Birkbeck et al.,
 * Algorithm 2; on the GPU when the backend allows, in z-slabs when the volume exceeds device memory),
 * and the probabilities are interpolated back onto the input's grid (origin, spacing, direction and
 * size preserved). Output: float in [0, 1].
 * \ingroup Canopy
 */
template <typename TInputImage>
class PBTClassificationImageFilter : public ImageToImageFilter<TInputImage, Image<float, 3>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(PBTClassificationImageFilter);

  using Self = PBTClassificationImageFilter;
  using Superclass = ImageToImageFilter<TInputImage, Image<float, 3>>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;
  using InputImageType = TInputImage;
  using OutputImageType = Image<float, 3>;
  using ModelType = canopy::PBTModelFile;

  static_assert(TInputImage::ImageDimension == 3, "PBTClassificationImageFilter needs a 3D image");
  static_assert(std::is_arithmetic<typename TInputImage::PixelType>::value,
                "PBTClassificationImageFilter needs a scalar pixel type");

  itkNewMacro(Self);
  itkTypeMacro(PBTClassificationImageFilter, ImageToImageFilter);

  /** The model (required). */
  void SetModel(std::shared_ptr<const ModelType> model)
  {
    m_Model = std::move(model);
    this->Modified();
  }
  std::shared_ptr<const ModelType> GetModel() const { return m_Model; }

  /** Backend: auto (default), cpu, cuda or cuda:N. */
  itkSetStringMacro(Backend);
  itkGetStringMacro(Backend);
  itkGetStringMacro(BackendUsed);

  /** Fuzzy descent as in the PBT (default true); false descends one branch (epsilon1 = 0.5). */
  itkSetMacro(Probabilistic, bool);
  itkGetConstMacro(Probabilistic, bool);
  itkBooleanMacro(Probabilistic);

  /** Device memory budget in bytes for the evaluation (0 = 80% of free memory). */
  itkSetMacro(MaximumDeviceBytes, SizeValueType);
  itkGetConstMacro(MaximumDeviceBytes, SizeValueType);

protected:
  PBTClassificationImageFilter() { this->SetNumberOfRequiredInputs(1); }
  ~PBTClassificationImageFilter() override = default;

  void GenerateInputRequestedRegion() override;
  void EnlargeOutputRequestedRegion(DataObject * output) override;
  void GenerateData() override;
  void PrintSelf(std::ostream & os, Indent indent) const override;

private:
  std::shared_ptr<const ModelType> m_Model;
  std::string                      m_Backend{ "auto" };
  std::string                      m_BackendUsed;
  bool                             m_Probabilistic{ true };
  SizeValueType                    m_MaximumDeviceBytes{ 0 };
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkPBTClassificationImageFilter.hxx"
#endif

#endif
