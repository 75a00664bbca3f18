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

}  // namespace sb
