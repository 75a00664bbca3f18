#include "run/buffers.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <thread>

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

// Inputs are drawn in chunks of kDrawChunk elements, each chunk from a stream of its own:
// chunk 0 from the tensor's stream (so a tensor of one chunk, as at every verify size, is drawn
// as it always was), chunk c > 0 from one derived from it and c. So the values depend on the
// seed, the tensor and the element alone, and a large tensor is drawn on several threads.
constexpr int64_t kDrawChunk = int64_t{1} << 16;

// Calls fill(rng, first, end) once per chunk of [0, elements), on up to hardware_concurrency
// threads when there are several chunks.
template <typename Fill>
void draw_chunks(int64_t elements, uint64_t stream_seed, const Fill& fill) {
  const int64_t chunks = (elements + kDrawChunk - 1) / kDrawChunk;
  auto run = [&](int64_t c) {
    std::mt19937_64 rng(c == 0 ? stream_seed : mix_seed(stream_seed ^ mix_seed(c)));
    fill(rng, c * kDrawChunk, std::min(elements, (c + 1) * kDrawChunk));
  };
  const int64_t threads =
      std::min<int64_t>(chunks, std::max(1u, std::thread::hardware_concurrency()));
  if (threads <= 1) {
    for (int64_t c = 0; c < chunks; ++c) run(c);
    return;
  }
  std::atomic<int64_t> next{0};
  std::vector<std::thread> pool;
  for (int64_t w = 0; w < threads; ++w)
    pool.emplace_back([&] {
      for (int64_t c = next++; c < chunks; c = next++) run(c);
    });
  for (auto& th : pool) th.join();
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
    if (ten.view_of >= 0) {
      // The base, declared before its view, was drawn (an input) or filled (an output) already.
      h.alias = ten.view_of;
      h.bytes = out[static_cast<size_t>(ten.view_of)].bytes;
      continue;
    }
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

    const uint64_t stream_seed = mix_seed(seed ^ mix_seed(t + 1));
    if (is_integer(ten.type)) {
      const int64_t lo = ten.init_lo_expr ? eval_int(*ten.init_lo_expr, sizes)
                                          : static_cast<int64_t>(std::ceil(ten.init_lo));
      const int64_t hi = ten.init_hi_expr ? eval_int(*ten.init_hi_expr, sizes)
                                          : static_cast<int64_t>(std::floor(ten.init_hi));
      SB_ASSERT(lo <= hi, "empty integer init range for tensor " + ten.name);
      const uint64_t n = static_cast<uint64_t>(hi - lo) + 1;
      draw_chunks(h.elements, stream_seed, [&](std::mt19937_64& rng, int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          set(i, static_cast<double>(lo + static_cast<int64_t>(rng() % n)));
      });
      continue;
    }
    const double scale = kind == InputKind::Large ? 1e3 : 1.0;
    const double lo = ten.init_lo * scale;
    const double hi = ten.init_hi * scale;
    draw_chunks(h.elements, stream_seed, [&](std::mt19937_64& rng, int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) set(i, lo + (hi - lo) * unit_double(rng));
    });
  }
  return out;
}

}  // namespace sb
