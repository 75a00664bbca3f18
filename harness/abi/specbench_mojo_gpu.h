/* The launch runtime of mojo_gpu modules: what generated/<spec>/mojo_gpu/<spec>.launch.cpp, the
 * host side of <spec>.mojo, launches its kernels through. It is compiled two ways
 * (harness/scripts/mojo_gpu_module.sh builds both):
 *
 *   SB_MOJO_GPUSIM defined (backend mojo_gpusim): the kernels are the .mojo file's NVVM IR
 *     rewritten for the host by mojo_gpusim and linked into the same module; a launch runs
 *     `<kernel>__sb_gpusim_entry` on the CUDA simulator (sb_gpusim_launch), and device memory,
 *     the device's attributes and errors are cudasim's (its cuda_runtime.h).
 *   otherwise (backend mojo_gpu, on a GPU): the kernels are the .mojo file's PTX and ptxas's
 *     cubin of it, one image per architecture it was compiled for (sb_mojo_ptx_images, linked
 *     in by the build). On the first launch, the cubin of the device's architecture (else the
 *     PTX of the highest architecture the device runs) is loaded with the CUDA driver API
 *     (cuModuleLoadData; libcuda is opened at run time, so a module loads on a
 *     machine without a driver), each kernel is looked up once (cuModuleGetFunction) and
 *     launched with cuLaunchKernel on the harness's stream, the stream the cuda backend's
 *     launches use; memory and the device's attributes come from the CUDA runtime, as in the
 *     cuda backend's launchers.
 *
 * Every kernel argument is a pointer or an integer and is passed in an 8-byte slot (Mojo kernels
 * take Pointer and Int64 parameters). A launcher returns the first error: a cudaError_t, or a
 * CUresult from the driver, with the failing call printed on stderr as file:line.
 */
#ifndef SPECBENCH_MOJO_GPU_H
#define SPECBENCH_MOJO_GPU_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <type_traits>

#include <cuda_runtime.h>

/* One kernel the module's Mojo file exports. */
struct sb_mojo_kernel {
  const char* name;           /* its exported name */
  void (*entry)(void*);       /* the simulator's entry (SB_MOJO_GPUSIM), else null */
  void* function;             /* the CUfunction once looked up (on a GPU), else null */
};

/* Returns the enclosing launcher's error code when `call` (an int: 0 or an error) fails. */
#define SB_MOJO_CHECK(call) SB_MOJO_CHECK_TEXT((call), #call)
#define SB_MOJO_CHECK_TEXT(call, text)                                                  \
  do {                                                                                 \
    const int sb_rc = (call);                                                          \
    if (sb_rc != 0) {                                                                  \
      fprintf(stderr, "%s:%d: error %d in %s\n", __FILE__, __LINE__, sb_rc, text);     \
      return sb_rc;                                                                    \
    }                                                                                  \
  } while (0)

/* Launches `kernel` (declared with SB_MOJO_KERNEL); `grid` and `block` are numbers or dim3s. */
#define SB_MOJO_LAUNCH(kernel, grid, block, smem, stream, ...)                          \
  SB_MOJO_CHECK_TEXT(sb_mojo_launch(&kernel, (grid), (block), (smem), (stream), __VA_ARGS__), \
                     "launch of " #kernel)

template <class T>
static inline uint64_t sb_mojo_slot(T v) {
  static_assert(std::is_pointer<T>::value || std::is_integral<T>::value,
                "a Mojo GPU kernel argument is a pointer or an integer");
  if constexpr (std::is_pointer<T>::value)
    return (uint64_t)(uintptr_t)v;
  else
    return (uint64_t)(int64_t)v;
}

static inline int sb_mojo_launch_slots(sb_mojo_kernel* k, dim3 grid, dim3 block, size_t smem,
                                       void* stream, uint64_t* slots, int n);

template <class... A>
static inline int sb_mojo_launch(sb_mojo_kernel* k, dim3 grid, dim3 block, size_t smem,
                                 void* stream, A... args) {
  uint64_t slots[] = {sb_mojo_slot(args)...};
  if ((uint64_t)grid.x * grid.y * grid.z == 0 || (uint64_t)block.x * block.y * block.z == 0)
    return (int)cudaErrorInvalidConfiguration;
  return sb_mojo_launch_slots(k, grid, block, smem, stream, slots, (int)sizeof...(A));
}

/* The device's multiprocessor count, for grids capped at SMs * blocks_per_sm. */
static inline int sb_mojo_sm_count(int* n) {
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return (int)e;
  return (int)cudaDeviceGetAttribute(n, cudaDevAttrMultiProcessorCount, device);
}

/* A scratch buffer of `bytes` in device memory, allocated on first use into *slot and kept
   (the cuda file's static __device__ arrays). */
static inline int sb_mojo_scratch(void** slot, size_t bytes, void** out) {
  if (!*slot) {
    cudaError_t e = cudaMalloc(slot, bytes);
    if (e != cudaSuccess) return (int)e;
  }
  *out = *slot;
  return 0;
}

#ifdef SB_MOJO_GPUSIM

extern "C" int sb_gpusim_launch(const char* kernel, void (*entry)(void*), void* argv, unsigned gx,
                                unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                size_t smem);

#define SB_MOJO_KERNEL(name)                     \
  extern "C" void name##__sb_gpusim_entry(void*); \
  static sb_mojo_kernel name = {#name, name##__sb_gpusim_entry, NULL}

static inline int sb_mojo_launch_slots(sb_mojo_kernel* k, dim3 grid, dim3 block, size_t smem,
                                       void* /*stream*/, uint64_t* slots, int /*n*/) {
  /* The simulator reports what failed (sb::sim::take_error); the code stops the launcher. */
  return sb_gpusim_launch(k->name, k->entry, slots, grid.x, grid.y, grid.z, block.x, block.y,
                          block.z, smem) == 0
             ? 0
             : (int)cudaErrorLaunchFailure;
}

#else /* on a GPU, through the CUDA driver API */

#include <dlfcn.h>

struct sb_mojo_ptx_image {
  int arch;                   /* 90 for sm_90 */
  const char* ptx;            /* NUL-terminated PTX text */
  const unsigned char* cubin; /* ptxas's machine code of that PTX for sm_<arch> */
  size_t cubin_size;
};
/* Provided by the build: the module's PTX, one image per architecture, in increasing order. */
extern "C" const sb_mojo_ptx_image sb_mojo_ptx_images[];
extern "C" const int sb_mojo_ptx_image_count;

/* The few driver entry points used, opened from libcuda at run time. */
struct sb_mojo_driver {
  int (*module_load_data)(void** module, const void* image);
  int (*module_get_function)(void** function, void* module, const char* name);
  int (*launch_kernel)(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                       unsigned bz, unsigned smem, void* stream, void** params, void** extra);
  int (*get_error_string)(int error, const char** text);
  void* module;
};

static inline int sb_mojo_fail(const char* what, int code, const sb_mojo_driver* d) {
  const char* text = NULL;
  if (d && d->get_error_string) d->get_error_string(code, &text);
  fprintf(stderr, "mojo_gpu: %s failed: error %d%s%s\n", what, code, text ? ": " : "",
          text ? text : "");
  return code;
}

/* The driver and the module's PTX loaded for this device; 0, or an error (printed). */
static inline int sb_mojo_driver_ready(sb_mojo_driver** out) {
  static sb_mojo_driver d;
  static int state = 0; /* 0 not tried, 1 ready, else the error */
  *out = &d;
  if (state == 1) return 0;
  if (state != 0) return state;
  state = (int)cudaErrorUnknown;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "mojo_gpu: cannot open the CUDA driver (libcuda.so.1): %s\n", dlerror());
    return state;
  }
  d.module_load_data = (int (*)(void**, const void*))dlsym(lib, "cuModuleLoadData");
  d.module_get_function = (int (*)(void**, void*, const char*))dlsym(lib, "cuModuleGetFunction");
  d.launch_kernel = (int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, void*, void**, void**))dlsym(lib, "cuLaunchKernel");
  d.get_error_string = (int (*)(int, const char**))dlsym(lib, "cuGetErrorString");
  if (!d.module_load_data || !d.module_get_function || !d.launch_kernel) {
    fprintf(stderr, "mojo_gpu: the CUDA driver lacks cuModuleLoadData, cuModuleGetFunction or "
                    "cuLaunchKernel\n");
    return state;
  }
  int device = 0, major = 0, minor = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  /* The runtime call also makes the device's primary context current on this thread. */
  if (e == cudaSuccess) e = cudaFree(0);
  if (e != cudaSuccess) {
    fprintf(stderr, "mojo_gpu: %s\n", cudaGetErrorString(e));
    return state = (int)e;
  }
  /* The cubin for the device's own architecture (what ptxas made and reported on), else the
     PTX of the highest architecture the device runs, compiled by the driver. */
  const int cc = major * 10 + minor;
  const sb_mojo_ptx_image* image = NULL;
  for (int i = 0; i < sb_mojo_ptx_image_count; ++i)
    if (sb_mojo_ptx_images[i].arch <= cc) image = &sb_mojo_ptx_images[i];
  if (!image) {
    fprintf(stderr, "mojo_gpu: no PTX for compute capability %d.%d in this module (lowest: "
                    "sm_%d)\n", major, minor,
            sb_mojo_ptx_image_count > 0 ? sb_mojo_ptx_images[0].arch : 0);
    return state = (int)cudaErrorNoKernelImageForDevice;
  }
  const bool exact = image->arch == cc && image->cubin && image->cubin_size > 0;
  const int r = d.module_load_data(&d.module, exact ? (const void*)image->cubin : image->ptx);
  if (r != 0) return state = sb_mojo_fail("cuModuleLoadData", r, &d);
  state = 1;
  return 0;
}

#define SB_MOJO_KERNEL(name) static sb_mojo_kernel name = {#name, NULL, NULL}

static inline int sb_mojo_launch_slots(sb_mojo_kernel* k, dim3 grid, dim3 block, size_t smem,
                                       void* stream, uint64_t* slots, int n) {
  sb_mojo_driver* d = NULL;
  int r = sb_mojo_driver_ready(&d);
  if (r != 0) return r;
  if (!k->function) {
    r = d->module_get_function(&k->function, d->module, k->name);
    if (r != 0) return sb_mojo_fail("cuModuleGetFunction", r, d);
  }
  void* params[64];
  if (n > 64) return (int)cudaErrorInvalidValue;
  for (int i = 0; i < n; ++i) params[i] = &slots[i];
  r = d->launch_kernel(k->function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                       (unsigned)smem, stream, params, NULL);
  if (r != 0) return sb_mojo_fail("cuLaunchKernel", r, d);
  return 0;
}

#endif /* SB_MOJO_GPUSIM */

#endif /* SPECBENCH_MOJO_GPU_H */
