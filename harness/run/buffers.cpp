#include "run/buffers.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace sb {

double HostTensor::get(int64_t i) const {
  SB_ASSERT(i >= 0 && i < elements, "HostTensor::get index out of range");
  const ScalarType& s = scalar(type);
  SB_ASSERT(s.load, std::string("HostTensor of unsupported type ") + s.name);
  return s.load(bytes.data() + i * s.bytes);
}

void HostTensor::set(int64_t i, double v) {
  SB_ASSERT(i >= 0 && i < elements, "HostTensor::set index out of range");
  const ScalarType& s = scalar(type);
  SB_ASSERT(s.store, std::string("HostTensor of unsupported type ") + s.name);
  s.store(bytes.data() + i * s.bytes, v);
}

const char* input_kind_name(InputKind k) {
  switch (k) {
    case InputKind::Random:
      return "random";
    case InputKind::Zeros:
      return "zeros";
    case InputKind::Large:
      return "large";
  }
  return "?";
}

namespace {

// splitmix64: derives an independent stream seed per tensor, so that one tensor's values depend
// only on (seed, tensor index) and not on the sizes of the tensors before it.
uint64_t mix_seed(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) from the top 53 bits; identical on every standard library.
double unit_double(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

}  // namespace

HostTensors make_host_tensors(const Spec& spec, const SizePoint& sizes, InputKind kind,
                              uint64_t seed) {
  HostTensors out(spec.tensors.size());
  for (size_t t = 0; t < spec.tensors.size(); ++t) {
    const Tensor& ten = spec.tensors[t];
    HostTensor& h = out[t];
    h.type = ten.type;
    h.elements = tensor_elements(spec, static_cast<int>(t), sizes);
    const int width = dtype_bytes(ten.type);
    SB_ASSERT(width > 0 && scalar(ten.type).tensor_type, "tensor of unsupported type");
    h.bytes.assign(static_cast<size_t>(h.elements) * width, 0);

    // The type's store function, looked up once per tensor rather than per element.
    const ScalarType& st = scalar(ten.type);
    SB_ASSERT(st.store, std::string("HostTensor of unsupported type ") + st.name);
    unsigned char* const data = h.bytes.data();
    const size_t stride = static_cast<size_t>(st.bytes);
    auto set = [&](int64_t i, double v) { st.store(data + static_cast<size_t>(i) * stride, v); };
    if (ten.role != Role::In) {
      // Outputs start as NaN (integers: their minimum), so an unwritten element shows.
      const double sentinel = is_integer(ten.type) ? static_cast<double>(st.min)
                                                   : std::numeric_limits<double>::quiet_NaN();
      if (h.elements > 0) {
        set(0, sentinel);
        for (int64_t i = 1; i < h.elements; ++i)
          std::memcpy(data + static_cast<size_t>(i) * stride, data, stride);
      }
      continue;
    }
    if (kind == InputKind::Zeros) continue;  // already zero bits: 0.0 and 0 alike

    std::mt19937_64 rng(mix_seed(seed ^ mix_seed(t + 1)));
    if (is_integer(ten.type)) {
      const int64_t lo = ten.init_lo_expr ? eval_int(*ten.init_lo_expr, sizes)
                                          : static_cast<int64_t>(std::ceil(ten.init_lo));
      const int64_t hi = ten.init_hi_expr ? eval_int(*ten.init_hi_expr, sizes)
                                          : static_cast<int64_t>(std::floor(ten.init_hi));
      SB_ASSERT(lo <= hi, "empty integer init range for tensor " + ten.name);
      const uint64_t n = static_cast<uint64_t>(hi - lo) + 1;
      for (int64_t i = 0; i < h.elements; ++i) {
        set(i, static_cast<double>(lo + static_cast<int64_t>(rng() % n)));
      }
      continue;
    }
    const double scale = kind == InputKind::Large ? 1e3 : 1.0;
    const double lo = ten.init_lo * scale;
    const double hi = ten.init_hi * scale;
    for (int64_t i = 0; i < h.elements; ++i) set(i, lo + (hi - lo) * unit_double(rng));
  }
  return out;
}

}  // namespace sb
