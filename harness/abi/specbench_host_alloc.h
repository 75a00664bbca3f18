/* Host memory for the buffers that kernels and machine probes stream through. Shared by the
 * harness (every host backend's tensors) and the probes it compiles at run time, so that the
 * bandwidth probe and the kernels it bounds see the same kind of pages.
 *
 * sb_host_alloc(bytes) returns memory aligned to 64 bytes, or NULL when it cannot be had; free
 * it with free(). A request of at least 2 MiB is aligned and rounded up to 2 MiB and advised
 * MADV_HUGEPAGE where the platform has it. With transparent huge pages in `madvise` mode (the
 * development VM's kernel default) large buffers otherwise get 4 KiB pages, and a stream over
 * them then ran 10-40% slower and varied from one allocation to the next. The advice is only a
 * hint: where huge pages are off, the buffer is an ordinary aligned allocation.
 */
#ifndef SPECBENCH_HOST_ALLOC_H
#define SPECBENCH_HOST_ALLOC_H

#include <stddef.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define SB_HUGE_PAGE_BYTES ((size_t)2 << 20)

static inline void* sb_host_alloc(size_t bytes) {
  if (bytes < SB_HUGE_PAGE_BYTES) return aligned_alloc(64, (bytes > 0 ? bytes + 63 : 64) / 64 * 64);
  const size_t rounded = (bytes + SB_HUGE_PAGE_BYTES - 1) / SB_HUGE_PAGE_BYTES * SB_HUGE_PAGE_BYTES;
  void* p = aligned_alloc(SB_HUGE_PAGE_BYTES, rounded);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (p) (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return p;
}

#endif /* SPECBENCH_HOST_ALLOC_H */
