#include "check/derive_variants.h"

#include "backends/emitter.h"
#include "lower/pipeline.h"

namespace sb {

void derive_variants(Spec& spec) {
  for (const Emitter* e : all_emitters()) {
    const std::string from = e->derived_from();
    if (from.empty()) continue;
    spec.variants.erase(e->backend());
    auto it = spec.variants.find(from);
    if (it == spec.variants.end()) continue;
    const Spec lowered = lower(spec, [e](Fn fn) { return e->spells(fn); });
    std::vector<Variant> derived;
    for (const Variant& v : lowered.variants.at(from))
      if (e->derives(lowered, v, nullptr)) derived.push_back(v);
    if (!derived.empty()) spec.variants[e->backend()] = std::move(derived);
  }
}

}  // namespace sb
