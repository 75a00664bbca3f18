#include "check/check.h"

#include "check/arg_reductions.h"
#include "check/bounds.h"
#include "check/typecheck.h"
#include "check/variant_check.h"

namespace sb {

Status check_spec(Spec& spec) {
  SB_TRY(typecheck(spec));
  SB_TRY(check_bounds(spec));
  SB_TRY(rewrite_arg_reductions(spec));
  return check_variants(spec);
}

}  // namespace sb
