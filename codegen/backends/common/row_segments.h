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
  // The element index (memory address / `bytes`) of element `off` of the array at `ptr`, as an
  // operand of `%` (parenthesized where it needs to be).
  std::function<std::string(const std::string& ptr, const std::string& off, int bytes)> element;

  // For the staging copy (staging_copy):
  // a declaration line of `name` = `value`, an element of type `t` read from memory, held in
  // t's compute type (f16 and bf16 widened to f32);
  std::function<std::string(const std::string& name, const std::string& value, DType t)>
      let_value;
  // element `index` of the array `array`;
  std::function<std::string(const std::string& array, const std::string& index)> at;
  // the header of a loop of `var` from `lo` while below `hi`, by `step`;
  std::function<std::string(const std::string& var, const std::string& lo, const std::string& hi,
                            const std::string& step)>
      for_range;
  // the header of a block run where `cond` holds;
  std::function<std::string(const std::string& cond)> if_;
  // a statement line (a store, `continue`) with an optional comment.
  std::function<std::string(const std::string& stmt, const std::string& comment)> stmt;
};

// Where a printer's staging copy writes its lines: one line; a block header, after which lines
// are inside the block; the block's end.
struct SegmentWriter {
  std::function<void(const std::string&)> line;
  std::function<void(const std::string&)> open;
  std::function<void()> close;
};

// The staging copy of a fused row kernel: the `len` elements of global array `src` from element
// `base` on, of type `t`, into shared array `rows` from element `off`. Thread `lane` of `lanes`
// takes every lanes-th slot of the row in segment order. Every lane of a warp that has a slot
// loads (those past the end the last slot's element, in a sector the warp loads anyway), so that
// all its lanes make the same accesses; only real slots are stored. Its variables are named
// after `tag`.
void staging_copy(const SegmentSyntax& s, const SegmentWriter& w, const std::string& tag,
                  const std::string& src, const std::string& base, const std::string& len,
                  const std::string& rows, const std::string& off, const std::string& lane,
                  const std::string& lanes, DType t);

// The lines declaring sb_lead<tag> (the position of the row's first element in its segment),
// sb_head<tag> and sb_body<tag> for the row of `len` elements (type `t`) from element `off` of
// the array at `ptr`.
std::vector<std::string> segment_lines(const SegmentSyntax& s, const std::string& tag,
                                       const std::string& ptr, const std::string& off,
                                       const std::string& len, DType t);

// The element that slot `j` of the row declared under `tag` stands for, in segment order.
std::string segment_element(const SegmentSyntax& s, const std::string& tag, const std::string& j);

}  // namespace sb
