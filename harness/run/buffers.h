// Typed host buffers for a spec's tensors, and how inputs are filled.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace sb {

// One tensor's data on the host: `bytes` holds `elements` values of `type`, row-major.
struct HostTensor {
  DType type = DType::F32;
  int64_t elements = 0;
  std::vector<unsigned char> bytes;
  // A view's base (Tensor::view_of): `bytes` holds a copy of the base's (an output view's is
  // downloaded when a statement writes through it), and a runtime passes the base's buffer for
  // this tensor instead of allocating one. -1: none.
  int alias = -1;
  double get(int64_t i) const;    // converts to double
  void set(int64_t i, double v);  // converts from double (rounds to the tensor's type)
  void* data() { return bytes.data(); }
};

using HostTensors = std::vector<HostTensor>;  // one per spec tensor, spec order

// Input patterns used by verification: seeded uniform random values in each tensor's `init`
// range, all zeros, and large magnitudes (the init range scaled by 1e3; integers unchanged).
enum class InputKind { Random, Zeros, Large };
const char* input_kind_name(InputKind k);

// Allocates every tensor of `spec` at `sizes` and fills the inputs; outputs and temps are filled
// with a NaN sentinel (or INT32_MIN) so that an element a kernel never writes cannot pass.
HostTensors make_host_tensors(const Spec& spec, const SizePoint& sizes, InputKind kind,
                              uint64_t seed);

}  // namespace sb
