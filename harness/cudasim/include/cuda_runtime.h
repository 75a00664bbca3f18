// cudasim: the CUDA runtime and device API, simulated on the CPU.
//
// Generated CUDA files are compiled unchanged with a plain C++ compiler and this folder first on
// the include path, so `#include <cuda_runtime.h>` lands here. Each CUDA thread of a block runs
// as a fiber; `__syncthreads()`, warp shuffles and votes are scheduler states, so barriers and
// masked warp operations keep their CUDA semantics. See harness/cudasim/cudasim.h for what the
// simulator checks and how the harness drives it.
#ifndef SPECBENCH_CUDASIM_RUNTIME_H
#define SPECBENCH_CUDASIM_RUNTIME_H

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <tuple>
#include <type_traits>

#define SB_CUDASIM 1

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __constant__ static
// Static shared memory: one instance per OS thread, and a worker runs one block at a time.
#define __shared__ static thread_local

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

#define SB_SIM_VEC2(name, T)           \
  struct alignas(2 * sizeof(T)) name { \
    T x, y;                            \
  };                                   \
  inline name make_##name(T x, T y) {  \
    return name{x, y};                 \
  }
#define SB_SIM_VEC4(name, T)                    \
  struct alignas(4 * sizeof(T)) name {          \
    T x, y, z, w;                               \
  };                                            \
  inline name make_##name(T x, T y, T z, T w) { \
    return name{x, y, z, w};                    \
  }
SB_SIM_VEC2(float2, float)
SB_SIM_VEC4(float4, float)
SB_SIM_VEC2(double2, double)
SB_SIM_VEC2(int2, int)
SB_SIM_VEC4(int4, int)
SB_SIM_VEC2(uint2, unsigned)
SB_SIM_VEC4(uint4, unsigned)
SB_SIM_VEC2(longlong2, long long)
#undef SB_SIM_VEC2
#undef SB_SIM_VEC4

enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchFailure = 719,
};
typedef enum cudaError cudaError_t;
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};
enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrL2CacheSize = 38,
};

cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char* cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaMalloc(void** p, size_t bytes);
template <typename T>
inline cudaError_t cudaMalloc(T** p, size_t bytes) {
  return cudaMalloc(reinterpret_cast<void**>(p), bytes);
}
cudaError_t cudaFree(void* p);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void* p, int value, size_t bytes);
cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t stream = nullptr);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaStreamSynchronize(cudaStream_t stream);

namespace sb::sim {

struct ThreadState {
  uint3 tid;
  uint3 bid;
  dim3 bdim;
  dim3 gdim;
};

// The simulated thread now running on this OS thread.
ThreadState* current();

void syncthreads(const char* file, int line);
void syncwarp(unsigned mask, const char* file, int line);
enum ShuffleKind { kShflIdx, kShflUp, kShflDown, kShflXor };
uint64_t shuffle(ShuffleKind kind, unsigned mask, uint64_t value, int arg, int width,
                 const char* file, int line);
enum VoteKind { kVoteBallot, kVoteAny, kVoteAll };
unsigned vote(VoteKind kind, unsigned mask, int predicate, const char* file, int line);

// Runs `body` once per thread of `grid` x `block`. Failures (deadlock, barrier divergence,
// shared-memory race, out-of-bounds access) become the launch error and its message.
void launch(const char* kernel, dim3 grid, dim3 block, size_t dynamic_smem, const char* file,
            int line, void (*trampoline)(void*), void* body);

// The stream is accepted and ignored: simulated launches run to completion in order.
template <typename F>
void launch_kernel(const char* kernel, dim3 grid, dim3 block, size_t smem, const char* file,
                   int line, F body, cudaStream_t = nullptr) {
  launch(
      kernel, grid, block, smem, file, line, [](void* p) { (*static_cast<F*>(p))(); }, &body);
}

void* dynamic_shared(size_t* bytes);

// Race tracking for shared arrays declared with SB_SHARED_ARRAY / SB_DYNAMIC_SHARED.
struct ShadowCell {
  uint64_t epoch;
  int32_t writer;
  int32_t reader;  // -1 none, -2 several
  // The warp's count of completed warp operations at the last write and at the last read (a
  // thread that reads twice must not hide the write it is ordered after).
  uint32_t write_sync;
  uint32_t read_sync;
};
void shared_access(ShadowCell* cells, size_t count, size_t index, bool write, const char* name,
                   const void* address);

template <typename T>
class SharedRef {
 public:
  SharedRef(T* p, ShadowCell* cells, size_t count, size_t i, const char* name)
      : p_(p), cells_(cells), count_(count), i_(i), name_(name) {}
  operator T() const {
    shared_access(cells_, count_, i_, false, name_, p_);
    return *p_;
  }
  SharedRef& operator=(T v) {
    shared_access(cells_, count_, i_, true, name_, p_);
    *p_ = v;
    return *this;
  }
  SharedRef& operator=(const SharedRef& o) { return *this = static_cast<T>(o); }
  SharedRef& operator+=(T v) { return *this = static_cast<T>(*this) + v; }
  SharedRef& operator-=(T v) { return *this = static_cast<T>(*this) - v; }
  SharedRef& operator*=(T v) { return *this = static_cast<T>(*this) * v; }
  SharedRef& operator/=(T v) { return *this = static_cast<T>(*this) / v; }
  // Addresses feed atomics, which are exempt from race tracking.
  T* operator&() const { return p_; }

 private:
  T* p_;
  ShadowCell* cells_;
  size_t count_;
  size_t i_;
  const char* name_;
};

void shared_index_error(const char* name, long long index, size_t count);

template <typename T, size_t N>
struct SharedArray {
  explicit SharedArray(const char* name) : name_(name) {}
  SharedRef<T> operator[](long long i) {
    if (i < 0 || static_cast<size_t>(i) >= N) {
      shared_index_error(name_, i, N);
      i = 0;
    }
    return SharedRef<T>(&data_[i], cells_, N, static_cast<size_t>(i), name_);
  }
  T data_[N];
  ShadowCell cells_[N] = {};
  const char* name_;
};

ShadowCell* dynamic_shadow(size_t cells);

template <typename T>
struct DynamicShared {
  explicit DynamicShared(const char* name) : name_(name) {
    size_t bytes = 0;
    data_ = static_cast<T*>(dynamic_shared(&bytes));
    count_ = bytes / sizeof(T);
    cells_ = dynamic_shadow(count_);
  }
  SharedRef<T> operator[](long long i) {
    if (i < 0 || static_cast<size_t>(i) >= count_) {
      shared_index_error(name_, i, count_);
      i = 0;
    }
    return SharedRef<T>(&data_[i], cells_, count_, static_cast<size_t>(i), name_);
  }
  T* data_;
  ShadowCell* cells_;
  size_t count_;
  const char* name_;
};

template <typename T>
inline uint64_t to_bits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>,
                "shuffle of a value over 8 bytes");
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <typename T>
inline T from_bits(uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}

}  // namespace sb::sim

#define threadIdx (::sb::sim::current()->tid)
#define blockIdx (::sb::sim::current()->bid)
#define blockDim (::sb::sim::current()->bdim)
#define gridDim (::sb::sim::current()->gdim)
#define warpSize 32

#define __syncthreads() ::sb::sim::syncthreads(__FILE__, __LINE__)
#define __syncwarp(...) ::sb::sim::syncwarp(SB_SIM_MASK_OR_ALL(__VA_ARGS__), __FILE__, __LINE__)
#define SB_SIM_MASK_OR_ALL(...) (0xffffffffu __VA_OPT__(&0u) __VA_OPT__(| (__VA_ARGS__)))

#define __shfl_sync(mask, v, lane, ...) \
  SB_SIM_SHFL(::sb::sim::kShflIdx, mask, v, lane __VA_OPT__(, ) __VA_ARGS__, 32)
#define __shfl_up_sync(mask, v, d, ...) \
  SB_SIM_SHFL(::sb::sim::kShflUp, mask, v, d __VA_OPT__(, ) __VA_ARGS__, 32)
#define __shfl_down_sync(mask, v, d, ...) \
  SB_SIM_SHFL(::sb::sim::kShflDown, mask, v, d __VA_OPT__(, ) __VA_ARGS__, 32)
#define __shfl_xor_sync(mask, v, m, ...) \
  SB_SIM_SHFL(::sb::sim::kShflXor, mask, v, m __VA_OPT__(, ) __VA_ARGS__, 32)
#define SB_SIM_SHFL(kind, mask, v, arg, width, ...)                   \
  ::sb::sim::from_bits<std::decay_t<decltype(v)>>(::sb::sim::shuffle( \
      kind, mask, ::sb::sim::to_bits(v), static_cast<int>(arg), width, __FILE__, __LINE__))

#define __ballot_sync(mask, p) \
  ::sb::sim::vote(::sb::sim::kVoteBallot, mask, (p) ? 1 : 0, __FILE__, __LINE__)
#define __any_sync(mask, p) \
  (::sb::sim::vote(::sb::sim::kVoteAny, mask, (p) ? 1 : 0, __FILE__, __LINE__) != 0)
#define __all_sync(mask, p) \
  (::sb::sim::vote(::sb::sim::kVoteAll, mask, (p) ? 1 : 0, __FILE__, __LINE__) != 0)

// Arguments are evaluated once, at the launch, as with <<<...>>>.
#define SB_LAUNCH(kernel, grid, block, smem, stream, ...) \
  ::sb::sim::launch_kernel(                               \
      #kernel, grid, block, smem, __FILE__, __LINE__,     \
      [sb_args_ = std::make_tuple(__VA_ARGS__)]() { std::apply(kernel, sb_args_); }, stream)

// Shared arrays that the simulator checks for races and out-of-range indices. Generated code
// declares shared memory through these; under nvcc they are plain __shared__ arrays.
#define SB_SHARED_ARRAY(T, name, n) static thread_local ::sb::sim::SharedArray<T, (n)> name(#name)
#define SB_DYNAMIC_SHARED(T, name) ::sb::sim::DynamicShared<T> name(#name)

template <typename T>
inline T __ldg(const T* p) {
  return *p;
}

// Atomics. Fibers of one block share an OS thread; blocks run on several, hence atomic_ref.
template <typename T>
inline T atomicAdd(T* p, T v) {
  return std::atomic_ref<T>(*p).fetch_add(v);
}
template <typename T>
inline T atomicSub(T* p, T v) {
  return std::atomic_ref<T>(*p).fetch_sub(v);
}
template <typename T>
inline T atomicExch(T* p, T v) {
  return std::atomic_ref<T>(*p).exchange(v);
}
template <typename T>
inline T atomicCAS(T* p, T expected, T desired) {
  std::atomic_ref<T>(*p).compare_exchange_strong(expected, desired);
  return expected;
}
template <typename T>
inline T atomicMax(T* p, T v) {
  std::atomic_ref<T> a(*p);
  T old = a.load();
  while (old < v && !a.compare_exchange_weak(old, v)) {
  }
  return old;
}
template <typename T>
inline T atomicMin(T* p, T v) {
  std::atomic_ref<T> a(*p);
  T old = a.load();
  while (v < old && !a.compare_exchange_weak(old, v)) {
  }
  return old;
}

inline float __expf(float x) {
  return std::exp(x);
}
inline float __logf(float x) {
  return std::log(x);
}
inline float __fdividef(float a, float b) {
  return a / b;
}
inline float rsqrtf(float x) {
  return 1.0f / std::sqrt(x);
}
inline double rsqrt(double x) {
  return 1.0 / std::sqrt(x);
}

#endif  // SPECBENCH_CUDASIM_RUNTIME_H
