// The intrinsics registry: every function of the spec language (`exp(x)`, `min(a, b)`,
// `select(c, a, b)`, ...) is one record here. The type checker, the name tables, the reference
// interpreter and every printer read it:
//  - the checker takes the arity and the type rule;
//  - the reference interpreter (harness/run/reference.cpp) takes the reference value and error
//    magnitude (the RefValue rules of harness/run/reference.h);
//  - a backend prints an intrinsic with its own spelling where its language has one, and
//    otherwise receives the call already rewritten by the record's default expansion
//    (lower/expand_intrinsics.h) into other intrinsics and operators.
// Adding an intrinsic is one record below plus the spellings that exist natively.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/ir.h"

namespace sb {

enum class TypeRule {
  Select,       // select(c, a, b): c a comparison, a and b one type, the result that type
  SameNumeric,  // every argument one numeric type (integer or floating), the result that type
  SameFloat,    // every argument one floating-point type (integer literals become float)
};

// A value with its error magnitude, as the reference computes them (harness/run/reference.h).
struct MagValue {
  double value = 0;
  double mag = 0;
};

struct Intrinsic {
  Fn fn;
  std::string_view name;  // the spelling in specs
  int arity;
  TypeRule rule;
  // Reference value and magnitude from the arguments' (in double). Null only for select, whose
  // branches the interpreter evaluates lazily.
  MagValue (*reference)(const MagValue* args);
  // The exact integer result, for intrinsics that take integers (SameNumeric); null otherwise.
  // Wrapping to the result type is the caller's.
  int64_t (*integer_reference)(const int64_t* args);
  // The default expansion: the call rewritten into other intrinsics and operators, typed like
  // the call (its arguments are cloned, so a call may be expanded more than once). Null for an
  // intrinsic every backend spells natively.
  ExprPtr (*expand)(const Expr& call);
  std::string_view doc;  // one line for the language reference (or, internal, for dumps)
  // Made by a lowering pass only: not spelled in specs, not in the language reference.
  bool internal = false;
};

// The record of `fn`; every Fn has one.
const Intrinsic& intrinsic(Fn fn);
// The record spelled `name` in specs ("where" is select's second spelling); nullptr if none
// (internal records are never found by name).
const Intrinsic* find_intrinsic(std::string_view name);
// Every record, in Fn order.
const std::vector<Intrinsic>& all_intrinsics();
// Every spelling in specs, aliases included (internal records have none).
std::vector<std::string_view> intrinsic_spellings();

}  // namespace sb
