// The segment order of a fused row kernel (RowPlan::anchor in lower/gpu_mapping.h), written once
// for both GPU printers, which spell it through a SegmentSyntax. A row of `len` elements is split
// at the kRowSegmentBytes boundaries of memory: its head (the elements before the first
// boundary), its body (the whole segments after it) and its tail. Slot j of the row stands for
// element head + j while j < body (the whole segments, first), then for the head and the tail
// together. A warp's 32 slots are then one whole segment, or the row's two partial ones.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace sb {

// How a GPU printer spells the pieces of the segment order.
struct SegmentSyntax {
  // One declaration line of an integer `name` = `value`.
  std::function<std::string(const std::string& name, const std::string& value)> let;
  // `a` where `cond` holds, else `b`, as a whole expression.
  std::function<std::string(const std::string& cond, const std::string& a, const std::string& b)>
      select;
  std::string idiv;  // integer division of non-negative values
  // The element index (memory address / `bytes`) of element `off` of the array at `ptr`.
  std::function<std::string(const std::string& ptr, const std::string& off, int bytes)> element;
};

// The lines declaring sb_lead<tag> (the position of the row's first element in its segment),
// sb_head<tag> and sb_body<tag> for the row of `len` elements (type `t`) from element `off` of
// the array at `ptr`.
std::vector<std::string> segment_lines(const SegmentSyntax& s, const std::string& tag,
                                       const std::string& ptr, const std::string& off,
                                       const std::string& len, DType t);

// The element that slot `j` of the row declared under `tag` stands for, in segment order.
std::string segment_element(const SegmentSyntax& s, const std::string& tag, const std::string& j);

}  // namespace sb
