#ifndef itkPoseDetectionFilter_h
#define itkPoseDetectionFilter_h

#include "canopyPoseDetector.h"

#include "itkImage.h"
#include "itkProcessObject.h"
#include "itkSimpleDataObjectDecorator.h"

#include <memory>
#include <string>
#include <vector>

namespace itk
{
/** \class PoseDetectionFilter
 * \brief The poses (centre, axes, size in LPS mm) of a detector's structures in an image.
 *
 * Image in, poses out: the ITK front of canopy::PoseDetector (marginal-space learning, issue 9). The
 * input (any scalar 3D image) is cast to float; every structure of the model is detected on the chosen
 * backend, in the order of the model's hierarchical network (a child in the region its parent's pose
 * predicts: PoseDetector::DetectAll); the output is a decorated std::vector<canopy::DetectedStructure>, in the model's
 * order, with `found` false (and no pose) for a structure whose best score is below its threshold. Progress advances
 * per structure. \ingroup Canopy
 */
template<typename TInputImage>
class PoseDetectionFilter : public ProcessObject
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(PoseDetectionFilter);

  using Self = PoseDetectionFilter;
  using Superclass = ProcessObject;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  using InputImageType = TInputImage;
  using PosesType = std::vector<canopy::DetectedStructure>;
  using PosesObjectType = SimpleDataObjectDecorator<PosesType>;
  using ModelType = canopy::DetectorModel;

  static_assert(TInputImage::ImageDimension == 3, "PoseDetectionFilter needs a 3D image");
  static_assert(std::is_arithmetic<typename TInputImage::PixelType>::value,
                "PoseDetectionFilter needs a scalar pixel type");

  itkNewMacro(Self);
  itkTypeMacro(PoseDetectionFilter, ProcessObject);

  void SetInput(const InputImageType * image) { this->SetNthInput(0, const_cast<InputImageType *>(image)); }
  const InputImageType * GetInput() const
  {
    return itkDynamicCastInDebugMode<const InputImageType *>(this->GetPrimaryInput());
  }

  /** The detector (required; validated when the filter runs). */
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
  /** >= 0: replaces every structure's threshold; -1 (default): the model's. */
  itkSetMacro(ThresholdOverride, double);
  itkGetConstMacro(ThresholdOverride, double);

  PosesObjectType * GetPosesOutput() { return static_cast<PosesObjectType *>(this->ProcessObject::GetOutput(0)); }
  const PosesType & GetPoses() const
  {
    return static_cast<const PosesObjectType *>(this->ProcessObject::GetOutput(0))->Get();
  }

  using Superclass::MakeOutput;
  DataObjectPointer MakeOutput(DataObjectPointerArraySizeType) override { return PosesObjectType::New().GetPointer(); }

protected:
  PoseDetectionFilter();
  ~PoseDetectionFilter() override = default;
  void GenerateData() override;
  void PrintSelf(std::ostream & os, Indent indent) const override;

private:
  std::shared_ptr<const ModelType> m_Model;
  std::string                      m_Backend{ "auto" };
  std::string                      m_BackendUsed;
  double                           m_ThresholdOverride{ -1.0 };
};
} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#include "itkPoseDetectionFilter.hxx"
#endif

#endif
