#include "results/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <unordered_set>

namespace sb {

namespace {

constexpr size_t kMaxListed = 10;

// `m` distinct indices of [0, n) in ascending order, always including 0 and n - 1 (m >= 2).
// Floyd's algorithm over the interior, so the cost is O(m) whatever n is.
std::vector<int64_t> sample_indices(int64_t n, int64_t m, uint64_t seed) {
  std::vector<int64_t> out{0};
  if (m >= 2) out.push_back(n - 1);
  const int64_t inner = n - 2;  // candidates 1 .. n-2
  const int64_t want = std::min<int64_t>(m - static_cast<int64_t>(out.size()), inner);
  std::mt19937_64 rng(seed);
  std::unordered_set<int64_t> chosen;
  chosen.reserve(static_cast<size_t>(std::max<int64_t>(want, 0)) * 2);
  for (int64_t j = inner - want; j < inner; ++j) {
    const int64_t r = static_cast<int64_t>(rng() % static_cast<uint64_t>(j + 1));
    chosen.insert(chosen.count(r) ? j : r);
  }
  for (int64_t c : chosen) out.push_back(c + 1);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t>& ext) {
  std::vector<int64_t> idx(ext.size());
  for (size_t d = ext.size(); d-- > 0;) {
    idx[d] = flat % ext[d];
    flat /= ext[d];
  }
  return idx;
}

std::string fmt(double v, DType t) {
  char buf[64];
  // Enough digits to read a float back (9 for f32 and for the integers, 17 for f64).
  std::snprintf(buf, sizeof buf, "%.*g", std::max(9, scalar(t).max_digits), v);
  return buf;
}

std::string fmt_tol(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

double tensor_rtol(const Spec& spec, int t) {
  const DType type = spec.tensors[static_cast<size_t>(t)].type;
  if (!is_storage_type(type)) return spec.tol.rtol;
  return std::max(spec.tol.rtol, scalar(type).epsilon);
}

CompareResult compare_tensor(const Spec& spec, const SizePoint& sizes, int t, const HostTensor& got,
                             Reference& ref, int64_t sample, uint64_t seed) {
  SB_ASSERT(t >= 0 && static_cast<size_t>(t) < spec.tensors.size(), "bad tensor id");
  const Tensor& ten = spec.tensors[t];
  const int64_t n = tensor_elements(spec, t, sizes);
  SB_ASSERT(got.elements == n && got.type == ten.type, "buffer does not match tensor " + ten.name);
  const std::vector<int64_t> ext = tensor_extents(spec, t, sizes);
  const bool exact = !is_float(ten.type);
  const double rtol = tensor_rtol(spec, t);
  CompareResult r;

  auto check = [&](int64_t i) {
    const RefValue want = ref.element(t, i);
    const double g = got.get(i);
    double tol = 0;
    bool ok;
    ++r.checked;
    if (exact) {
      ok = g == want.value;
    } else if (!std::isfinite(want.value)) {
      ok = std::isnan(want.value) ? std::isnan(g) : g == want.value;
    } else {
      tol = spec.tol.atol + rtol * want.mag;
      if (std::isnan(tol)) tol = std::numeric_limits<double>::infinity();
      ok = false;
      // An f32 tensor stores a value beyond its range as the infinity it rounds to: where the
      // reference, moved by the tolerance, reaches that far, infinity of its sign is right.
      const double to_inf = scalar(ten.type).rounds_to_inf;
      if (to_inf > 0 && std::isinf(g) && (g > 0) == (want.value > 0) &&
          std::fabs(want.value) + tol >= to_inf)
        ok = true;
      if (std::isfinite(g)) {
        const double err = std::fabs(g - want.value);
        ok = err <= tol;
        r.max_abs_err = std::max(r.max_abs_err, err);
        r.max_rel_err = std::max(r.max_rel_err, err / std::max(std::fabs(want.value),
                                                               std::numeric_limits<double>::min()));
      }
    }
    if (ok) return;
    r.ok = false;
    ++r.mismatches;
    if (r.first.size() < kMaxListed) r.first.push_back({i, unflatten(i, ext), want.value, g, tol});
  };

  if (sample > 0 && sample < n) {
    for (int64_t i : sample_indices(n, sample, seed)) check(i);
  } else {
    for (int64_t i = 0; i < n; ++i) check(i);
  }
  return r;
}

std::string describe_failure(const Spec& spec, const std::string& backend,
                             const std::string& variant, const SizePoint& sizes, int t,
                             const CompareResult& r) {
  SB_ASSERT(t >= 0 && static_cast<size_t>(t) < spec.tensors.size(), "bad tensor id");
  const Tensor& ten = spec.tensors[t];
  const int64_t n = tensor_elements(spec, t, sizes);
  std::string s = spec.name + " " + backend + "/" + variant + " at ";
  for (size_t i = 0; i < spec.sizes.size() && i < sizes.size(); ++i) {
    s += (i ? ", " : "") + spec.sizes[i].name + "=" + std::to_string(sizes[i]);
  }
  if (spec.sizes.empty()) s += "(no sizes)";
  s += ": tensor " + ten.name;
  if (ten.view_of >= 0) s += " (a view of " + spec.tensors[ten.view_of].name + ")";
  s += ": ";
  const std::string scope =
      r.checked < n ? std::to_string(r.checked) + " sampled of " + std::to_string(n) + " elements"
                    : "all " + std::to_string(n) + " elements";
  if (r.mismatches == 0) return s + "no mismatch (" + scope + " checked)\n";
  s += std::to_string(r.mismatches) + " of " + std::to_string(r.checked) +
       " checked elements differ (" + scope + " checked)\n";

  for (const Mismatch& m : r.first) {
    s += "  " + ten.name;
    if (!m.index.empty()) {
      s += "[";
      for (size_t d = 0; d < m.index.size(); ++d) s += (d ? ", " : "") + std::to_string(m.index[d]);
      s += "]";
    }
    s += " (flat " + std::to_string(m.flat) + "): expected " + fmt(m.expected, ten.type) + " got " +
         fmt(m.actual, ten.type);
    if (!is_float(ten.type)) {
      s += " (integers must match exactly)";
      if (m.actual == std::numeric_limits<int32_t>::min()) s += " [the unwritten sentinel]";
    } else if (!std::isfinite(m.expected)) {
      s += " (non-finite values must match exactly)";
    } else if (std::isnan(m.actual)) {
      s += " (NaN: never written, or computed NaN)";
    } else if (!std::isfinite(m.actual)) {
      s += " (non-finite)";
    } else {
      s += ", |diff| " + fmt_tol(std::fabs(m.actual - m.expected)) + " > tolerance " +
           fmt_tol(m.tolerance);
    }
    s += "\n";
  }
  if (r.mismatches > static_cast<int64_t>(r.first.size())) {
    s += "  ... and " + std::to_string(r.mismatches - static_cast<int64_t>(r.first.size())) +
         " more\n";
  }
  if (is_float(ten.type)) {
    s += "  max abs err " + fmt_tol(r.max_abs_err) + ", max rel err " + fmt_tol(r.max_rel_err) +
         " over finite elements; tolerance is atol " + fmt_tol(spec.tol.atol) + " + rtol " +
         fmt_tol(tensor_rtol(spec, t)) + " * mag\n";
  }
  return s;
}

}  // namespace sb
