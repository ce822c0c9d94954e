#ifndef itkGraphCutRegularizationImageFilter_h
#define itkGraphCutRegularizationImageFilter_h

#include "canopyGridGraphCut.h"
#include "itkImage.h"
#include "itkImageToImageFilter.h"

namespace itk
{

/** \class GraphCutRegularizationImageFilter
 * \brief Binary labels from a probability map by a graph cut (Birkbeck et al. §4.1).
 *
 * Minimises E(l) = sum_v |p_v - l_v| V + Lambda * Area(surface of {l = 1}) with V the voxel volume in
 * mm^3 and Area in mm^2 (Lambda in mm), by Boost.Graph's boykov_kolmogorov_max_flow on a graph over
 * the uncertain voxels (UncertainLow < p < UncertainHigh) and the thresholded surface, dilated by
 * Margin voxels (equal to the full graph's result when Margin x spacing >= ~3 Lambda / (2 UncertainHigh - 1) mm); the
 * other voxels keep their thresholded label (canopyGridGraphCut.cxx says when this equals the full problem; set
 * BandedGraph off for the exact one). Output: 1 inside, 0 outside, on the input's grid.
 * Probabilities are clamped to [0, 1]; NaN or infinite ones are rejected (canopy::Error). Lambda = 0
 * reproduces p >= 0.5 exactly. The image border is not counted as surface.
 * \ingroup Canopy
 */
template<typename TProbabilityImage = Image<float, 3>, typename TLabelImage = Image<unsigned char, 3>>
class GraphCutRegularizationImageFilter : public ImageToImageFilter<TProbabilityImage, TLabelImage>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(GraphCutRegularizationImageFilter);

  using Self = GraphCutRegularizationImageFilter;
  using Superclass = ImageToImageFilter<TProbabilityImage, TLabelImage>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;
  using ProbabilityImageType = TProbabilityImage;
  using LabelImageType = TLabelImage;

  static_assert(TProbabilityImage::ImageDimension == 3 && TLabelImage::ImageDimension == 3,
                "GraphCutRegularizationImageFilter works on 3D images");
  static_assert(std::is_arithmetic<typename TProbabilityImage::PixelType>::value &&
                  std::is_arithmetic<typename TLabelImage::PixelType>::value,
                "GraphCutRegularizationImageFilter needs scalar pixel types");

  itkNewMacro(Self);
  itkTypeMacro(GraphCutRegularizationImageFilter, ImageToImageFilter);

  /** Surface weight in mm: mm^3 of data term per mm^2 of surface (default 1). A confident blob of
   * radius below 3 Lambda / (2p - 1) mm is removed. */
  itkSetMacro(Lambda, double);
  itkGetConstMacro(Lambda, double);
  /** 6 (face-area weights, default) or 26 (Cauchy-Crofton weights, less metrication error). */
  itkSetMacro(Neighborhood, unsigned int);
  itkGetConstMacro(Neighborhood, unsigned int);
  /** The uncertain band (defaults 0.02, 0.98): outside it voxels are fixed to p >= 0.5. */
  itkSetMacro(UncertainLow, float);
  itkGetConstMacro(UncertainLow, float);
  itkSetMacro(UncertainHigh, float);
  itkGetConstMacro(UncertainHigh, float);
  /** Voxels (per axis) by which the band is dilated into the graph (default 3; see above). */
  itkSetMacro(Margin, unsigned int);
  itkGetConstMacro(Margin, unsigned int);
  /** Default on; off builds the graph over every voxel (exact, memory of the whole volume). */
  itkSetMacro(BandedGraph, bool);
  itkGetConstMacro(BandedGraph, bool);
  itkBooleanMacro(BandedGraph);

  /** Statistics of the last run. */
  const canopy::GridGraphCutStatistics & GetStatistics() const { return m_Statistics; }
  std::int64_t                           GetNumberOfGraphNodes() const { return m_Statistics.nodes; }
  std::int64_t                           GetNumberOfGraphEdges() const { return m_Statistics.arcs; }
  double                                 GetMaxFlowSeconds() const { return m_Statistics.maxFlowSeconds; }
  std::int64_t                           GetPeakGraphBytesEstimate() const { return m_Statistics.graphBytes; }
  double                                 GetEnergy() const { return m_Statistics.energy; }

protected:
  GraphCutRegularizationImageFilter() { this->SetNumberOfRequiredInputs(1); }
  ~GraphCutRegularizationImageFilter() override = default;

  void GenerateInputRequestedRegion() override;
  void EnlargeOutputRequestedRegion(DataObject * output) override;
  void GenerateData() override;
  void PrintSelf(std::ostream & os, Indent indent) const override;

private:
  // The array layer's defaults, so the filter and direct callers of canopy::RegularizeProbabilities
  // (train-pbt's lambda choice) cut alike.
  double                         m_Lambda{ canopy::GridGraphCutParameters{}.lambda };
  unsigned int                   m_Neighborhood{ unsigned(canopy::GridGraphCutParameters{}.neighborhood) };
  float                          m_UncertainLow{ canopy::GridGraphCutParameters{}.uncertainLow };
  float                          m_UncertainHigh{ canopy::GridGraphCutParameters{}.uncertainHigh };
  unsigned int                   m_Margin{ unsigned(canopy::GridGraphCutParameters{}.margin) };
  bool                           m_BandedGraph{ canopy::GridGraphCutParameters{}.banded };
  canopy::GridGraphCutStatistics m_Statistics;
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#include "itkGraphCutRegularizationImageFilter.hxx"
#endif

#endif
