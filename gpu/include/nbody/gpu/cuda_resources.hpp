#pragma once
// RAII owners of CUDA resources: device and pinned host buffers, streams and events. Move-only;
// destructors never throw (a failure to free at teardown is not actionable).
#include <cstddef>
#include <utility>

#include <cuda_runtime.h>

#include "nbody/gpu/cuda_check.hpp"

namespace nbody::gpu {

// Owns `size` elements of T in device memory (uninitialised).
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t size) : size_(size) {
    if (size_ > 0) check_cuda(cudaMalloc(reinterpret_cast<void**>(&data_), bytes()));
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (data_ != nullptr) cudaFree(data_);
  }

  T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

// Owns `size` elements of T in page-locked host memory, so copies run at full bus speed and
// asynchronously.
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t size) : size_(size) {
    if (size_ > 0) check_cuda(cudaMallocHost(reinterpret_cast<void**>(&data_), bytes()));
  }
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() {
    if (data_ != nullptr) cudaFreeHost(data_);
  }

  T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }
  T& operator[](std::size_t i) const { return data_[i]; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

class Stream {
 public:
  Stream() { check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  Stream& operator=(Stream&& other) noexcept {
    std::swap(stream_, other.stream_);
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  cudaStream_t get() const { return stream_; }
  void synchronize() const { check_cuda(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  Event() { check_cuda(cudaEventCreate(&event_)); }
  Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  Event& operator=(Event&& other) noexcept {
    std::swap(event_, other.event_);
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() {
    if (event_ != nullptr) cudaEventDestroy(event_);
  }

  void record(const Stream& stream) const { check_cuda(cudaEventRecord(event_, stream.get())); }
  void synchronize() const { check_cuda(cudaEventSynchronize(event_)); }
  // Seconds from `start` to this event; both must have completed.
  double seconds_since(const Event& start) const {
    float milliseconds = 0;
    check_cuda(cudaEventElapsedTime(&milliseconds, start.event_, event_));
    return static_cast<double>(milliseconds) * 1e-3;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

// One captured stream sequence, instantiated: launched as a whole with one call, so a time step's
// kernels cost one launch instead of one each.
class GraphExec {
 public:
  GraphExec() = default;
  // Captures what `enqueue` puts on `stream` (thread-local mode: other threads' CUDA calls are not
  // refused meanwhile) and instantiates it.
  template <class F>
  static GraphExec capture(const Stream& stream, F&& enqueue) {
    check_cuda(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    try {
      std::forward<F>(enqueue)();
    } catch (...) {
      cudaStreamEndCapture(stream.get(), &graph);
      if (graph != nullptr) cudaGraphDestroy(graph);
      throw;
    }
    check_cuda(cudaStreamEndCapture(stream.get(), &graph));
    GraphExec exec;
    const cudaError_t status = cudaGraphInstantiate(&exec.exec_, graph, 0);
    cudaGraphDestroy(graph);
    check_cuda(status);
    return exec;
  }
  GraphExec(GraphExec&& other) noexcept : exec_(std::exchange(other.exec_, nullptr)) {}
  GraphExec& operator=(GraphExec&& other) noexcept {
    std::swap(exec_, other.exec_);
    return *this;
  }
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  ~GraphExec() {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  }

  bool empty() const { return exec_ == nullptr; }
  void launch(const Stream& stream) const { check_cuda(cudaGraphLaunch(exec_, stream.get())); }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace nbody::gpu
