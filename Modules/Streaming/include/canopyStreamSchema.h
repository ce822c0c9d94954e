// What a stream's instances look like (attributes, classes) and how a batch of them is held: values
// row-major as floats (a nominal value is its index; a missing value is NaN), labels as class indices.
// Plain arrays, so a batch can be copied to a device as it is.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace canopy::streaming
{

struct StreamAttribute
{
  std::string              name;
  bool                     nominal = false;
  std::vector<std::string> values; // nominal values, in index order
};

struct StreamSchema
{
  std::vector<StreamAttribute> attributes; // the class attribute is not among them
  std::string                  className = "class";
  std::vector<std::string>     classes;

  int NumberOfAttributes() const { return int(attributes.size()); }
  int NumberOfClasses() const { return int(classes.size()); }
};

/** Missing attribute value ('?' in CSV and ARFF). */
inline bool
IsMissing(float value)
{
  return std::isnan(value);
}

struct InstanceBatch
{
  int                       attributes = 0;
  std::vector<float>        values; // instance i, attribute a: values[i * attributes + a]
  std::vector<std::int32_t> labels;

  std::size_t   Size() const { return labels.size(); }
  const float * Row(std::size_t i) const { return values.data() + i * std::size_t(attributes); }
  void          Clear()
  {
    values.clear();
    labels.clear();
  }
};

/** A source of labelled instances read in order: a file, stdin or a generator. */
class InstanceStream
{
public:
  virtual ~InstanceStream() = default;
  virtual const StreamSchema & Schema() const = 0;
  /** Replaces batch's contents with up to maxInstances next instances; returns how many (0: the end). */
  virtual std::size_t NextBatch(InstanceBatch & batch, std::size_t maxInstances) = 0;
};

} // namespace canopy::streaming
