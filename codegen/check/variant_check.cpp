#include "check/variant_check.h"

#include "backends/emitter.h"

namespace sb {

Status check_variants(const Spec& spec) {
  for (const auto& [backend, variants] : spec.variants) {
    auto bl = spec.backend_locs.find(backend);
    Loc bloc = bl != spec.backend_locs.end() ? bl->second : spec.loc;
    const Emitter* em = find_emitter(backend);
    if (!em) {
      std::string known;
      for (const Emitter* e : all_emitters())
        if (e->derived_from().empty()) known += (known.empty() ? "" : ", ") + e->backend();
      return make_error(bloc, "unknown backend '" + backend + "' (known: " + known + ")");
    }
    if (!em->derived_from().empty())
      return make_error(bloc, "backend '" + backend + "' takes its variants from the " +
                                  em->derived_from() + " variants (same names, strategies and " +
                                  "parameters); declare them under " + em->derived_from());
    if (!variants.empty()) SB_TRY(em->check_storage(spec, bloc));
    for (const Variant& v : variants) {
      const StrategyInfo* info = find_strategy(*em, v.strategy);
      if (!info) {
        std::string known;
        for (const auto& s : em->strategies()) known += (known.empty() ? "" : ", ") + s.name;
        return make_error(v.strategy_loc, "unknown strategy '" + v.strategy + "' for backend '" +
                                              backend + "' (known: " + known + ")");
      }
      for (const auto& [name, value] : v.params) {
        Loc ploc = v.param_locs.count(name) ? v.param_locs.at(name) : v.loc;
        const ParamInfo* p = nullptr;
        for (const auto& pi : info->params)
          if (pi.name == name) p = &pi;
        if (!p) {
          std::string known;
          for (const auto& pi : info->params) known += (known.empty() ? "" : ", ") + pi.name;
          return make_error(ploc, "strategy '" + v.strategy + "' has no parameter '" + name +
                                      "' (parameters: " + (known.empty() ? "none" : known) + ")");
        }
        if (value < p->min || value > p->max)
          return make_error(ploc, "parameter '" + name + "' of variant '" + v.name + "' is " +
                                      std::to_string(value) + ", outside [" +
                                      std::to_string(p->min) + ", " + std::to_string(p->max) + "]");
        if (p->power_of_two && (value & (value - 1)) != 0)
          return make_error(ploc, "parameter '" + name + "' of variant '" + v.name + "' is " +
                                      std::to_string(value) + ", which is not a power of two");
      }
      SB_TRY(em->check_variant(spec, v));
    }
  }
  return {};
}

}  // namespace sb
