/* The one C ABI between the harness and every generated kernel module, for every backend.
 *
 * A module is a shared library built from generated/<spec>/<backend>/<spec>.<ext>. It exports
 * `specbench_module()`, returning a table of its variants. The harness allocates every tensor of
 * the spec (inputs, outputs and temporaries, in spec order) in the backend's memory space (host
 * memory for CPU backends, device memory for CUDA) and passes the base pointers and the size
 * parameters (in spec order). A variant function runs the whole computation and returns 0 on
 * success or a backend error code (a cudaError_t for CUDA). CUDA variants enqueue their work on
 * `stream` and do not synchronise.
 */
#ifndef SPECBENCH_ABI_H
#define SPECBENCH_ABI_H

#include <stdint.h>

#define SPECBENCH_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sb_args {
  /* One base pointer per spec tensor, spec order. Each tensor is a separate allocation, except
     that a view (a spec tensor declared as `view: x`) gets its base's pointer. Views are inputs,
     so no two pointers that overlap are written through: generated code may declare them
     non-aliasing (__restrict, llvm.noalias), which constrains only memory that is modified. */
  void* const* tensors;
  const int64_t* sizes; /* one value per size parameter, spec order */
  void* stream;         /* cudaStream_t for CUDA modules; NULL elsewhere */
} sb_args;

typedef int (*sb_variant_fn)(const sb_args* args);

typedef struct sb_variant {
  const char* name;
  sb_variant_fn fn;
} sb_variant;

typedef struct sb_module {
  int abi_version;     /* SPECBENCH_ABI_VERSION */
  const char* spec;    /* spec name */
  const char* backend; /* backend name */
  int num_tensors;
  int num_sizes;
  int num_variants;
  const sb_variant* variants;
} sb_module;

typedef const sb_module* (*sb_module_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* SPECBENCH_ABI_H */
