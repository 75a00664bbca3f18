#include "check/check.h"

#include "check/arg_reductions.h"
#include "check/bounds.h"
#include "check/derive_variants.h"
#include "check/typecheck.h"
#include "check/variant_check.h"

namespace sb {

Status check_spec(Spec& spec) {
  SB_TRY(typecheck(spec));
  SB_TRY(check_bounds(spec));
  SB_TRY(rewrite_arg_reductions(spec));
  SB_TRY(check_variants(spec));
  derive_variants(spec);
  return {};
}

}  // namespace sb
