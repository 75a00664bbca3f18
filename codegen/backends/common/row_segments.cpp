#include "backends/common/row_segments.h"

#include "ir/scalar_types.h"
#include "lower/gpu_mapping.h"

namespace sb {

std::vector<std::string> segment_lines(const SegmentSyntax& s, const std::string& tag,
                                       const std::string& ptr, const std::string& off,
                                       const std::string& len, DType t) {
  const int bytes = dtype_bytes(t);
  const std::string seg = std::to_string(kRowSegmentBytes / bytes);
  const std::string lead = "sb_lead" + tag, head = "sb_head" + tag;
  return {s.let(lead, s.element(ptr, off, bytes) + " % " + seg),
          s.let(head, s.select(lead + " == 0", "0",
                               "(" + s.select(seg + " - " + lead + " < " + len, seg + " - " + lead,
                                              len) +
                                   ")")),
          s.let("sb_body" + tag,
                "(" + len + " - " + head + ") " + s.idiv + " " + seg + " * " + seg)};
}

std::string segment_element(const SegmentSyntax& s, const std::string& tag,
                            const std::string& j) {
  const std::string head = "sb_head" + tag, body = "sb_body" + tag;
  return s.select(j + " < " + body, head + " + " + j,
                  "(" + s.select(j + " < " + body + " + " + head, j + " - " + body, j) + ")");
}

void staging_copy(const SegmentSyntax& s, const SegmentWriter& w, const std::string& tag,
                  const std::string& src, const std::string& base, const std::string& len,
                  const std::string& rows, const std::string& off, const std::string& lane,
                  const std::string& lanes, DType t) {
  for (const std::string& l : segment_lines(s, tag, src, base, len, t)) w.line(l);
  w.open(s.for_range("sb_j0", "0", len, lanes));
  if (lanes != "32") {  // a block of warps: a warp whose first slot is past the end has none
    w.open(s.if_("sb_j0 + " + lane + " " + s.idiv + " 32 * 32 >= " + len));
    w.line(s.stmt("continue", "no slot for this warp"));
    w.close();
  }
  const std::string mine = "sb_j0 + " + lane;
  w.line(s.let("sb_j", s.select(mine + " < " + len, mine, len + " - 1")));
  w.line(s.let("sb_c", segment_element(s, tag, "sb_j")));
  w.line(s.let_value("sb_v", s.at(src, base == "0" ? "sb_c" : base + " + sb_c"), t));
  w.open(s.if_("sb_j == " + mine));
  w.line(s.stmt(s.at(rows, off + " + sb_c") + " = sb_v", ""));
  w.close();
  w.close();
}

}  // namespace sb
