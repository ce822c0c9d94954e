#ifndef itkScribbleSegmentationImageFilter_hxx
#define itkScribbleSegmentationImageFilter_hxx

#include "canopy/Errors.h"
#include "canopyForestFilterBank.h"
#include "itkImageRegionConstIterator.h"

#include <algorithm>
#include <set>

namespace itk
{
template<typename TInputImage, typename TLabelImage>
ScribbleSegmentationImageFilter<TInputImage, TLabelImage>::ScribbleSegmentationImageFilter()
{
  this->SetNumberOfRequiredInputs(2);
  this->SetNumberOfRequiredOutputs(2);
  this->SetNthOutput(0, this->MakeOutput(0));
  this->SetNthOutput(1, this->MakeOutput(1));
}

template<typename TInputImage, typename TLabelImage>
DataObject::Pointer
ScribbleSegmentationImageFilter<TInputImage, TLabelImage>::MakeOutput(DataObjectPointerArraySizeType index)
{
  if (index == 1)
    return LabelImageType::New().GetPointer();
  return ProbabilityImageType::New().GetPointer();
}

template<typename TInputImage, typename TLabelImage>
void
ScribbleSegmentationImageFilter<TInputImage, TLabelImage>::GenerateInputRequestedRegion()
{
  // The filter bank and the scribbles are whole-image computations.
  for (unsigned int i = 0; i < 2; ++i)
    if (auto * input = dynamic_cast<ImageBase<ImageDimension> *>(this->ProcessObject::GetInput(i)))
      input->SetRequestedRegionToLargestPossibleRegion();
}

template<typename TInputImage, typename TLabelImage>
void
ScribbleSegmentationImageFilter<TInputImage, TLabelImage>::EnlargeOutputRequestedRegion(DataObject * output)
{
  Superclass::EnlargeOutputRequestedRegion(output);
  output->SetRequestedRegionToLargestPossibleRegion();
}

template<typename TInputImage, typename TLabelImage>
void
ScribbleSegmentationImageFilter<TInputImage, TLabelImage>::GenerateData()
{
  const InputImageType * input = this->GetInput();
  const LabelImageType * scribbles = this->GetScribbles();
  const auto             region = input->GetLargestPossibleRegion();
  if (scribbles->GetLargestPossibleRegion().GetSize() != region.GetSize())
    CANOPY_THROW("scribble segmentation: the scribbles' size differs from the image's");
  const std::int64_t voxels = std::int64_t(region.GetNumberOfPixels());

  // The channels: the image as float, through the bank (the classifier's, if one was given).
  auto image = ProbabilityImageType::New();
  image->CopyInformation(input);
  image->SetRegions(region);
  image->Allocate();
  {
    float * out = image->GetBufferPointer();
    for (ImageRegionConstIterator<InputImageType> it(input, region); !it.IsAtEnd(); ++it)
      *out++ = static_cast<float>(it.Get());
  }
  std::vector<LabelPixelType> labels(static_cast<std::size_t>(voxels));
  {
    std::size_t k = 0;
    for (ImageRegionConstIterator<LabelImageType> it(scribbles, scribbles->GetLargestPossibleRegion()); !it.IsAtEnd();
         ++it)
      labels[k++] = it.Get();
  }
  if (!m_Classifier)
  {
    std::set<int> values;
    for (LabelPixelType v : labels)
      if (v != 0)
        values.insert(int(v));
    m_Classifier =
      std::make_shared<canopy::ScribbleClassifier>(std::vector<int>(values.begin(), values.end()), m_Options);
    m_LearntLabels.clear();
  }
  this->UpdateProgress(0.05f);
  const auto                 bank = canopy::ComputeForestFilterBank<ImageDimension>(image, m_Classifier->Bank());
  std::vector<const float *> channels;
  for (const auto & c : bank)
    channels.push_back(c.data());
  this->UpdateProgress(0.3f);

  // Learn the voxels labelled (or relabelled) since the last Update.
  if (m_LearntLabels.size() != labels.size())
    m_LearntLabels.assign(labels.size(), LabelPixelType(0));
  std::vector<std::int64_t> learn;
  std::vector<std::int32_t> classes;
  for (std::int64_t v = 0; v < voxels; ++v)
  {
    const LabelPixelType l = labels[std::size_t(v)];
    if (l == 0 || l == m_LearntLabels[std::size_t(v)])
      continue;
    const int c = m_Classifier->ClassOf(int(l));
    if (c < 0)
      CANOPY_THROW("scribble segmentation: label " << int(l) << " is not one of the classifier's labels");
    learn.push_back(v);
    classes.push_back(c);
    m_LearntLabels[std::size_t(v)] = l;
  }
  m_Classifier->Learn(channels, learn, classes);
  m_LearntLastUpdate = std::int64_t(learn.size());
  this->UpdateProgress(0.5f);

  const std::vector<int> & values = m_Classifier->LabelValues();
  const int                foreground = m_ForegroundLabel != 0 ? m_Classifier->ClassOf(m_ForegroundLabel)
                                                               : int(std::max_element(values.begin(), values.end()) - values.begin());
  if (foreground < 0)
    CANOPY_THROW("scribble segmentation: the foreground label " << m_ForegroundLabel << " is not one of the labels");
  ProbabilityImageType * probability = this->GetOutput();
  LabelImageType *       labelOutput = this->GetLabelOutput();
  for (DataObject * o : { static_cast<DataObject *>(probability), static_cast<DataObject *>(labelOutput) })
  {
    auto * out = static_cast<ImageBase<ImageDimension> *>(o);
    out->CopyInformation(input);
    out->SetBufferedRegion(region);
    out->SetRequestedRegion(region);
  }
  probability->Allocate();
  labelOutput->Allocate();
  std::vector<std::int32_t> predicted(static_cast<std::size_t>(voxels));
  m_Classifier->Predict(channels, voxels, foreground, probability->GetBufferPointer(), predicted.data());
  LabelPixelType * out = labelOutput->GetBufferPointer();
  for (std::int64_t v = 0; v < voxels; ++v)
    out[v] = static_cast<LabelPixelType>(values[std::size_t(predicted[std::size_t(v)])]);
  this->UpdateProgress(1.0f);
}

template<typename TInputImage, typename TLabelImage>
void
ScribbleSegmentationImageFilter<TInputImage, TLabelImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "Trees: " << m_Options.trees << ", grace period " << m_Options.gracePeriod << ", passes "
     << m_Options.passes << ", batch " << m_Options.batch << ", seed " << m_Options.seed << std::endl;
  os << indent << "FilterBank:";
  for (const auto & c : m_Options.bank)
    os << ' ' << c;
  os << std::endl;
  os << indent << "ForegroundLabel: " << m_ForegroundLabel << std::endl;
  os << indent << "Classifier: "
     << (m_Classifier ? "learnt " + std::to_string(m_Classifier->InstancesLearnt()) + " instances"
                      : std::string("none"))
     << std::endl;
  os << indent << "VoxelsLearntLastUpdate: " << m_LearntLastUpdate << std::endl;
}
} // namespace itk

#endif
