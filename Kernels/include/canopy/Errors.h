// Project exceptions. They derive from itk::ExceptionObject so ITK pipelines and applications catch
// them like any other ITK error; the message names what failed and where.
#pragma once

#include "itkMacro.h"

#include <sstream>

#include <string>

namespace canopy
{

/** A Canopy error: bad input, bad parameter, unusable device. */
class Error : public itk::ExceptionObject
{
public:
  Error(const char * file, unsigned int line, const std::string & message, const char * location = "")
    : itk::ExceptionObject(file, line, message, location)
  {}
  const char * GetNameOfClass() const override { return "canopy::Error"; }
};

/** A failed CUDA runtime call; the description names the call, the CUDA error and the source line. */
class CudaError : public Error
{
public:
  CudaError(const char * file, unsigned int line, const std::string & message, int cudaCode)
    : Error(file, line, message, "CUDA")
    , m_CudaCode(cudaCode)
  {}
  const char * GetNameOfClass() const override { return "canopy::CudaError"; }
  int          GetCudaCode() const { return m_CudaCode; }

private:
  int m_CudaCode;
};

/** The GPU could not provide the memory asked for; the message gives the size requested and free. */
class DeviceOutOfMemoryError : public CudaError
{
public:
  using CudaError::CudaError;
  const char * GetNameOfClass() const override { return "canopy::DeviceOutOfMemoryError"; }
};

} // namespace canopy

#define CANOPY_THROW(message)                                                                                          \
  do                                                                                                                   \
  {                                                                                                                    \
    std::ostringstream canopy_throw_stream;                                                                            \
    canopy_throw_stream << message;                                                                                    \
    throw ::canopy::Error(__FILE__, __LINE__, canopy_throw_stream.str());                                              \
  } while (false)
