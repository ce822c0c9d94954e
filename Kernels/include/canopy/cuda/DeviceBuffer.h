// RAII device memory and streams for .cu files and CUDA-enabled host code.
#pragma once

#include "canopy/CudaCheck.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

namespace canopy::cuda
{

/** Device allocation of `count` elements of T. Out of memory becomes DeviceOutOfMemoryError naming
 * the size asked for and the free memory; other failures become CudaError. */
template <typename T>
class DeviceBuffer
{
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count, const char * what = "buffer") { Allocate(count, what); }
  ~DeviceBuffer() { Release(); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer & operator=(const DeviceBuffer &) = delete;
  DeviceBuffer(DeviceBuffer && other) noexcept
    : m_Data(std::exchange(other.m_Data, nullptr))
    , m_Count(std::exchange(other.m_Count, 0))
  {}
  DeviceBuffer & operator=(DeviceBuffer && other) noexcept
  {
    if (this != &other)
    {
      Release();
      m_Data = std::exchange(other.m_Data, nullptr);
      m_Count = std::exchange(other.m_Count, 0);
    }
    return *this;
  }

  void Allocate(std::size_t count, const char * what = "buffer")
  {
    Release();
    if (count == 0)
    {
      return;
    }
    const std::size_t bytes = count * sizeof(T);
    const cudaError_t status = cudaMalloc(reinterpret_cast<void **>(&m_Data), bytes);
    if (status == cudaErrorMemoryAllocation)
    {
      cudaGetLastError(); // clear the sticky-free error so later calls are not blamed
      std::size_t freeBytes = 0, totalBytes = 0;
      cudaMemGetInfo(&freeBytes, &totalBytes);
      int device = -1;
      cudaGetDevice(&device);
      m_Data = nullptr;
      ThrowDeviceOutOfMemory(bytes, freeBytes, device, what, __FILE__, __LINE__);
    }
    CANOPY_CUDA_CHECK(status);
    m_Count = count;
  }

  void Release() noexcept
  {
    if (m_Data)
    {
      cudaFree(m_Data); // no throw from a destructor path; errors surface at the next checked call
      m_Data = nullptr;
      m_Count = 0;
    }
  }

  T *         data() const { return m_Data; }
  std::size_t size() const { return m_Count; }
  std::size_t bytes() const { return m_Count * sizeof(T); }

  void CopyFromHost(const T * host, std::size_t count, cudaStream_t stream)
  {
    CANOPY_CUDA_CHECK(cudaMemcpyAsync(m_Data, host, count * sizeof(T), cudaMemcpyHostToDevice, stream));
  }
  void CopyToHost(T * host, std::size_t count, cudaStream_t stream) const
  {
    CANOPY_CUDA_CHECK(cudaMemcpyAsync(host, m_Data, count * sizeof(T), cudaMemcpyDeviceToHost, stream));
  }

private:
  T *         m_Data = nullptr;
  std::size_t m_Count = 0;
};

/** An owned, non-blocking CUDA stream. */
class Stream
{
public:
  Stream() { CANOPY_CUDA_CHECK(cudaStreamCreateWithFlags(&m_Stream, cudaStreamNonBlocking)); }
  ~Stream()
  {
    if (m_Stream)
    {
      cudaStreamDestroy(m_Stream);
    }
  }
  Stream(const Stream &) = delete;
  Stream & operator=(const Stream &) = delete;

  cudaStream_t get() const { return m_Stream; }
  void         Synchronize() const { CANOPY_CUDA_CHECK(cudaStreamSynchronize(m_Stream)); }

private:
  cudaStream_t m_Stream = nullptr;
};

/** Makes `device` current for the scope and restores the previous device after. */
class ScopedDevice
{
public:
  explicit ScopedDevice(int device)
  {
    CANOPY_CUDA_CHECK(cudaGetDevice(&m_Previous));
    if (device >= 0 && device != m_Previous)
    {
      CANOPY_CUDA_CHECK(cudaSetDevice(device));
    }
  }
  ~ScopedDevice() { cudaSetDevice(m_Previous); }
  ScopedDevice(const ScopedDevice &) = delete;
  ScopedDevice & operator=(const ScopedDevice &) = delete;

private:
  int m_Previous = 0;
};

} // namespace canopy::cuda
