#include "backends/emitter.h"

#include <map>
#include <mutex>

#include "backends/cpu/emit_cpu.h"
#include "backends/cuda/emit_cuda.h"
#include "backends/vendor_cpu/emit_vendor_cpu.h"
#include "backends/vendor_cuda/emit_vendor_cuda.h"
#include "backends/mlir/emit_mlir.h"
#include "backends/mojo/emit_mojo.h"
#include "backends/mojo_gpu/emit_mojo_gpu.h"
#include "lower/pipeline.h"

namespace sb {

GeneratedFile Emitter::emit(const Spec& spec) const {
  return print(lower(spec, [this](Fn fn) { return spells(fn); }));
}

Status Emitter::check_variant(const Spec& /*spec*/, const Variant& /*v*/) const {
  return {};
}

Status Emitter::check_storage(const Spec& spec, const Loc& backend_loc) const {
  for (const Tensor& t : spec.tensors)
    if (is_storage_type(t.type) && !takes_storage(t.type))
      return make_error(backend_loc, "backend '" + backend() + "' does not print " +
                                         dtype_name(t.type) + " tensors yet ('" + t.name +
                                         "' is " + dtype_name(t.type) +
                                         "); f16 and bf16 run on the cpu, cuda, mojo, mojo_gpu "
                                         "and mlir backends, and on vendor_cpu and vendor_cuda "
                                         "as the operands of a matrix product");
  return {};
}

const std::vector<const Emitter*>& all_emitters() {
  static const std::vector<const Emitter*> kEmitters = {&cpu_emitter(), &cuda_emitter(),
                                                        &mojo_emitter(), &vendor_cpu_emitter(),
                                                        &vendor_cuda_emitter(), &mlir_emitter(),
                                                        &mojo_gpu_emitter()};
  return kEmitters;
}

const Emitter* find_emitter(const std::string& backend) {
  for (const Emitter* e : all_emitters())
    if (e->backend() == backend) return e;
  return nullptr;
}

std::string strategy_table_markdown() {
  std::string out =
      "| backend | strategy | algorithm | parameters: default (range) | lowering |\n"
      "|---|---|---|---|---|\n";
  for (const Emitter* e : all_emitters()) {
    if (!e->derived_from().empty()) continue;  // its source's strategies
    for (const StrategyInfo& s : e->strategies()) {
      std::string params;
      for (const ParamInfo& p : s.params) {
        params += (params.empty() ? "" : ", ") + std::string("`") + p.name + "`: " +
                  std::to_string(p.def) + " (" + std::to_string(p.min) + ".." +
                  std::to_string(p.max) + (p.power_of_two ? ", power of 2" : "") + ")";
      }
      std::string doc = s.doc;
      for (const ParamInfo& p : s.params) doc += "; `" + p.name + "`: " + p.doc;
      out += "| `" + e->backend() + "` | `" + s.name + "` | `" + s.algorithm + "` | " +
             (params.empty() ? "—" : params) + " | " + doc + " |\n";
    }
  }
  return out;
}

int64_t param(const Variant& v, const StrategyInfo& info, const std::string& name) {
  auto it = v.params.find(name);
  if (it != v.params.end()) return it->second;
  for (const ParamInfo& p : info.params)
    if (p.name == name) return p.def;
  SB_ASSERT(false, "strategy '" + info.name + "' has no parameter '" + name + "'");
  return 0;
}

int64_t param_or(const Variant& v, const StrategyInfo& info, const std::string& name,
                 int64_t fallback) {
  for (const ParamInfo& p : info.params)
    if (p.name == name) return param(v, info, name);
  return fallback;
}

const StrategyInfo* find_strategy(const Emitter& e, const std::string& strategy) {
  // strategies() returns by value; keep one copy per emitter so the returned pointer stays valid
  // (map nodes never move).
  static std::map<const Emitter*, std::vector<StrategyInfo>> cache;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(&e);
  if (it == cache.end()) it = cache.emplace(&e, e.strategies()).first;
  for (const StrategyInfo& s : it->second)
    if (s.name == strategy) return &s;
  return nullptr;
}

}  // namespace sb
