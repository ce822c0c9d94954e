#ifndef itkScribbleSegmentationImageFilter_h
#define itkScribbleSegmentationImageFilter_h

#include "canopyScribbleClassifier.h"
#include "itkImage.h"
#include "itkImageToImageFilter.h"

#include <memory>
#include <string>
#include <vector>

namespace itk
{
/** \class ScribbleSegmentationImageFilter
 * \brief Segments a 2D or 3D image from sparse labels (scribbles) with a voxel classifier learnt online.
 *
 * Inputs: the image (0, scalar) and the scribbles (1, SetScribbles: a label image of the same grid, 0 =
 * unlabelled, every other value a class). Outputs: the probability of the foreground label at every
 * voxel (0, float) and the most probable label (1, GetLabelOutput: the scribbles' values); both keep
 * the input's geometry. The classifier (canopy::ScribbleClassifier: an adaptive random forest of
 * Hoeffding trees over the filter bank's channels) lives in the filter: an Update after the scribbles
 * changed learns only the voxels labelled since the last Update (or relabelled), then predicts again;
 * nothing is retrained from scratch. SetClassifier installs a saved one (its bank and labels win);
 * GetClassifier gives the current one (to save it). Label values are fixed by the first scribbles
 * learnt; a later new value is an error naming it.
 * \ingroup Canopy
 */
template<typename TInputImage, typename TLabelImage>
class ScribbleSegmentationImageFilter
  : public ImageToImageFilter<TInputImage, Image<float, TInputImage::ImageDimension>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(ScribbleSegmentationImageFilter);

  static constexpr unsigned int ImageDimension = TInputImage::ImageDimension;
  static_assert(ImageDimension == 2 || ImageDimension == 3, "ScribbleSegmentationImageFilter: 2D or 3D");
  using Self = ScribbleSegmentationImageFilter;
  using ProbabilityImageType = Image<float, ImageDimension>;
  using Superclass = ImageToImageFilter<TInputImage, ProbabilityImageType>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;
  using InputImageType = TInputImage;
  using LabelImageType = TLabelImage;
  using LabelPixelType = typename TLabelImage::PixelType;
  using Options = canopy::ScribbleClassifierOptions;

  itkNewMacro(Self);
  itkTypeMacro(ScribbleSegmentationImageFilter, ImageToImageFilter);

  void SetScribbles(const LabelImageType * scribbles) { this->SetNthInput(1, const_cast<LabelImageType *>(scribbles)); }
  const LabelImageType * GetScribbles() const
  {
    return static_cast<const LabelImageType *>(this->ProcessObject::GetInput(1));
  }
  LabelImageType * GetLabelOutput() { return static_cast<LabelImageType *>(this->ProcessObject::GetOutput(1)); }

  /** Classifier settings for a new classifier (bank, trees, grace period, passes, batch, seed, threads;
   * canopyScribbleClassifier.h for the defaults). */
  void SetOptions(const Options & options)
  {
    m_Options = options;
    this->Modified();
  }
  const Options & GetOptions() const { return m_Options; }

  /** The label whose probability output 0 holds; 0 (default): the largest label value. */
  itkSetMacro(ForegroundLabel, int);
  itkGetConstMacro(ForegroundLabel, int);

  /** A saved classifier to continue from (null: a new one from the first scribbles). */
  void SetClassifier(std::shared_ptr<canopy::ScribbleClassifier> classifier)
  {
    m_Classifier = std::move(classifier);
    m_LearntLabels.clear();
    this->Modified();
  }
  std::shared_ptr<canopy::ScribbleClassifier> GetClassifier() const { return m_Classifier; }

  /** Voxels learnt by the last Update (new or relabelled scribbles), and in all. */
  std::int64_t GetNumberOfVoxelsLearntLastUpdate() const { return m_LearntLastUpdate; }

protected:
  ScribbleSegmentationImageFilter();
  ~ScribbleSegmentationImageFilter() override = default;

  using DataObjectPointerArraySizeType = ProcessObject::DataObjectPointerArraySizeType;
  using Superclass::MakeOutput;
  DataObject::Pointer MakeOutput(DataObjectPointerArraySizeType index) override;
  void                GenerateInputRequestedRegion() override;
  void                EnlargeOutputRequestedRegion(DataObject * output) override;
  void                GenerateData() override;
  void                PrintSelf(std::ostream & os, Indent indent) const override;

private:
  Options                                     m_Options;
  int                                         m_ForegroundLabel = 0;
  std::shared_ptr<canopy::ScribbleClassifier> m_Classifier;
  std::vector<LabelPixelType>                 m_LearntLabels; // per voxel: the label learnt there (0: none)
  std::int64_t                                m_LearntLastUpdate = 0;
};
} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#include "itkScribbleSegmentationImageFilter.hxx"
#endif

#endif
