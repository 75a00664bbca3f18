#include "frontend/spec_loader.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "frontend/expr_parser.h"
#include "ir/names.h"
#include "support/safe_io.h"

namespace sb {

namespace {

constexpr size_t kMaxFileBytes = 1 << 20;
constexpr int kMaxYamlDepth = 6;  // a spec needs 4: map > variants > list > variant map
constexpr size_t kMaxListLength = 64;
constexpr size_t kMaxRank = 8;
constexpr int64_t kMaxSize = (int64_t{1} << 31) - 1;

// Walks the YAML event stream before building any node tree, so that alias bombs and deep
// nesting are rejected before they can cost memory or stack.
class GuardHandler : public YAML::EventHandler {
 public:
  explicit GuardHandler(std::string file) : file_(std::move(file)) {}
  std::optional<Error> error;
  int documents = 0;

  void OnDocumentStart(const YAML::Mark& m) override {
    if (++documents > 1) fail(m, "a spec file holds exactly one YAML document");
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t a) override { anchor(m, a); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override {
    fail(m, "YAML aliases (*name) are not allowed in specs; write the value out");
  }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t a,
                const std::string&) override {
    anchor(m, a);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a,
                       YAML::EmitterStyle::value) override {
    anchor(m, a);
    open(m);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a,
                  YAML::EmitterStyle::value) override {
    anchor(m, a);
    open(m);
  }
  void OnMapEnd() override { --depth_; }

 private:
  void anchor(const YAML::Mark& m, YAML::anchor_t a) {
    if (a != YAML::NullAnchor) fail(m, "YAML anchors (&name) are not allowed in specs");
  }
  void open(const YAML::Mark& m) {
    if (++depth_ > kMaxYamlDepth)
      fail(m, "YAML is nested too deeply (a spec needs at most " + std::to_string(kMaxYamlDepth) +
                  " levels)");
  }
  void fail(const YAML::Mark& m, std::string msg) {
    if (!error) error = make_error(Loc{file_, m.line + 1, m.column + 1}, std::move(msg));
  }
  std::string file_;
  int depth_ = 0;
};

const char* node_kind(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Null:
      return "nothing";
    default:
      return "an undefined value";
  }
}

// Error messages quote the line they point into, so only a file that is meant to be a spec is
// ever read: its name must end in .yaml, and so must the file a symbolic link leads to. A link
// to /etc/passwd is refused before it is opened, and no line of it can reach a message.
Status spec_file_name(const std::string& path) {
  auto no_excerpt = [&](std::string msg) { return Error{Loc{path, 0, 0}, std::move(msg), ""}; };
  namespace fs = std::filesystem;
  if (fs::path(path).extension() != ".yaml")
    return no_excerpt("a spec file's name must end in .yaml");
  std::error_code ec;
  fs::path real = fs::canonical(path, ec);
  if (!ec && real.extension() != ".yaml")
    return no_excerpt("the spec file is a symbolic link to a file whose name does not end in "
                      ".yaml; it is not read");
  return {};  // a missing file is reported by read_regular_file
}

// A key of an open map (sizes, tensors, variants, variant parameters): its text, its value, and
// its own node (for error positions; looking it up again would be quadratic in the map's size).
struct Entry {
  std::string name;
  YAML::Node value;
  YAML::Node key;
};

class Loader {
 public:
  explicit Loader(std::string path) : path_(std::move(path)) {}

  Result<Spec> run() {
    SB_TRY(spec_file_name(path_));
    auto text = read_regular_file(path_, kMaxFileBytes, "spec file");
    if (!text.ok()) return text.error();
    text_ = std::move(text.value());
    split_lines();
    for (size_t l = 0; l < lines_.size(); ++l) {
      size_t first = lines_[l].find_first_not_of(" \t");
      size_t tab = lines_[l].find('\t');
      if (tab != std::string::npos && (first == std::string::npos || tab < first))
        return make_error(Loc{path_, static_cast<int>(l) + 1, static_cast<int>(tab) + 1},
                          "YAML syntax error: tabs are not allowed for indentation");
    }

    YAML::Node root;
    GuardHandler guard(path_);
    try {
      std::istringstream guard_in(text_);
      YAML::Parser parser(guard_in);
      while (!guard.error && parser.HandleNextDocument(guard)) {
      }
      if (guard.error) return *guard.error;
      root = YAML::Load(text_);
    } catch (const YAML::Exception& e) {
      if (guard.error) return *guard.error;  // found before the parser gave up
      return make_error(Loc{path_, e.mark.line + 1, e.mark.column + 1},
                        "YAML syntax error: " + e.msg);
    }
    if (!root.IsMap())
      return make_error(Loc{path_, 1, 1},
                        std::string("a spec must be a YAML map, found ") + node_kind(root));
    spec_.path = path_;
    spec_.loc = Loc{path_, 1, 1};
    SB_TRY(top(root));
    return std::move(spec_);
  }

 private:
  Loc loc(const YAML::Node& n) const { return Loc{path_, n.Mark().line + 1, n.Mark().column + 1}; }
  Error err(const YAML::Node& n, std::string msg) const {
    return make_error(loc(n), std::move(msg));
  }

  void split_lines() {
    std::string line;
    std::istringstream in(text_);
    while (std::getline(in, line)) lines_.push_back(line);
  }

  // Checks the keys of map `m`: each is a known scalar key, at most once. `required` must all
  // be present. `open` allows other keys (variant parameters) and returns them in `extra`.
  Status keys(const YAML::Node& m, const std::string& what, const std::vector<std::string>& known,
              const std::vector<std::string>& required, bool open = false,
              std::vector<Entry>* extra = nullptr) {
    if (!m.IsMap()) return err(m, what + " must be a map, found " + node_kind(m));
    std::set<std::string> seen;
    for (auto it = m.begin(); it != m.end(); ++it) {
      YAML::Node k = it->first;
      if (!k.IsScalar()) return err(k, "keys of " + what + " must be plain names");
      std::string key = k.Scalar();
      if (!seen.insert(key).second) return err(k, "duplicate key '" + key + "' in " + what);
      bool is_known = false;
      for (const auto& kn : known) is_known = is_known || kn == key;
      if (!is_known) {
        if (open) {
          extra->push_back({key, it->second, k});
          continue;
        }
        std::string list;
        for (size_t i = 0; i < known.size(); ++i) list += (i ? ", " : "") + known[i];
        return err(k, "unknown key '" + key + "' in " + what + " (expected one of: " + list + ")");
      }
    }
    for (const auto& r : required) {
      if (!seen.count(r)) return err(m, what + " is missing the required key '" + r + "'");
    }
    return {};
  }

  Result<std::string> scalar(const YAML::Node& n, const std::string& what) {
    if (!n.IsScalar()) return err(n, what + " must be a scalar, found " + node_kind(n));
    return n.Scalar();
  }

  Result<int64_t> integer(const YAML::Node& n, const std::string& what, int64_t lo, int64_t hi) {
    auto s = scalar(n, what);
    if (!s.ok()) return s.error();
    const std::string& v = s.value();
    size_t i = (!v.empty() && v[0] == '-') ? 1 : 0;
    bool digits = i < v.size() && v.size() - i <= 19;
    for (size_t j = i; j < v.size(); ++j) digits = digits && v[j] >= '0' && v[j] <= '9';
    if (!digits) return err(n, what + " must be an integer, found '" + v + "'");
    errno = 0;
    long long x = std::strtoll(v.c_str(), nullptr, 10);
    if (errno == ERANGE || x < lo || x > hi)
      return err(n, what + " is " + v + ", outside the allowed range [" + std::to_string(lo) +
                        ", " + std::to_string(hi) + "]");
    return static_cast<int64_t>(x);
  }

  Result<double> number(const YAML::Node& n, const std::string& what) {
    auto s = scalar(n, what);
    if (!s.ok()) return s.error();
    const std::string& v = s.value();
    char* end = nullptr;
    errno = 0;
    double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(x))
      return err(n, what + " must be a finite number, found '" + v + "'");
    return x;
  }

  // Maps the text of scalar `n` back to file positions (see TextMap).
  TextMap text_map(const YAML::Node& n) const {
    TextMap m;
    m.file = path_;
    int line0 = n.Mark().line;  // 0-based
    int col0 = n.Mark().column;
    char c =
        (line0 < static_cast<int>(lines_.size()) && col0 < static_cast<int>(lines_[line0].size()))
            ? lines_[line0][col0]
            : ' ';
    if (c == '|' || c == '>') {
      int indent = -1;
      for (size_t l = line0 + 1; l < lines_.size(); ++l) {
        const std::string& s = lines_[l];
        size_t nb = s.find_first_not_of(' ');
        if (nb == std::string::npos) continue;
        indent = static_cast<int>(nb);
        break;
      }
      if (indent < 0) indent = 0;
      for (size_t l = line0 + 1; l <= lines_.size(); ++l)
        m.starts.push_back(Loc{path_, static_cast<int>(l) + 1, indent + 1});
    } else {
      int col = col0 + ((c == '"' || c == '\'') ? 1 : 0);
      m.starts.push_back(Loc{path_, line0 + 1, col + 1});
    }
    return m;
  }

  Status top(const YAML::Node& root) {
    const std::vector<std::string> known = {"name",    "doc",       "sizes",   "tensors",
                                            "compute", "tolerance", "variants"};
    SB_TRY(keys(root, "the spec", known, {"name", "doc"}));
    auto name = scalar(root["name"], "'name'");
    if (!name.ok()) return name.error();
    std::string why = check_kernel_name(name.value());
    if (!why.empty()) return err(root["name"], why);
    spec_.name = name.value();
    spec_.loc = loc(root["name"]);

    auto doc = scalar(root["doc"], "'doc'");
    if (!doc.ok()) return doc.error();
    if (doc.value().empty() || doc.value().find('\n') != std::string::npos ||
        doc.value().size() > 200)
      return err(root["doc"],
                 "'doc' must be one non-empty line of at most 200 characters"
                 " (is a quote left open?)");
    spec_.doc = doc.value();
    // Checked after name and doc, so that a quote left open in 'doc' is reported there.
    SB_TRY(keys(root, "the spec", known, {"sizes", "tensors", "compute", "variants"}));

    SB_TRY(sizes(root["sizes"]));
    SB_TRY(tensors(root["tensors"]));
    SB_TRY(compute(root["compute"]));
    if (root["tolerance"]) SB_TRY(tolerance(root["tolerance"]));
    return variants(root["variants"]);
  }

  Status sizes(const YAML::Node& n) {
    SB_TRY(keys(n, "'sizes'", {}, {}, true, &extra_));
    auto entries = std::move(extra_);
    extra_.clear();
    if (entries.empty()) return err(n, "'sizes' must declare at least one size parameter");
    size_t bench_len = 1, verify_len = 1;
    for (auto& [name, body, k] : entries) {
      std::string why = check_identifier(name);
      if (!why.empty()) return err(k, "invalid size name: " + why);
      SizeParam p;
      p.name = name;
      p.loc = loc(k);
      std::string what = "size '" + name + "'";
      SB_TRY(keys(body, what, {"bench", "verify"}, {"bench", "verify"}));
      for (const char* field : {"bench", "verify"}) {
        const YAML::Node list = body[field];
        std::string lwhat = "'" + std::string(field) + "' of " + what;
        if (!list.IsSequence())
          return err(list, lwhat + " must be a list of integers, found " + node_kind(list));
        if (list.size() == 0) return err(list, lwhat + " must not be empty");
        if (list.size() > kMaxListLength)
          return err(list, lwhat + " has more than " + std::to_string(kMaxListLength) + " entries");
        auto& out = std::string(field) == "bench" ? p.bench : p.verify;
        for (const auto& v : list) {
          auto x = integer(v, "a value of " + lwhat, 1, kMaxSize);
          if (!x.ok()) return x.error();
          out.push_back(x.value());
        }
        size_t& len = std::string(field) == "bench" ? bench_len : verify_len;
        if (list.size() != 1) {
          if (len != 1 && len != list.size())
            return err(list, lwhat + " has " + std::to_string(list.size()) +
                                 " entries, but another size list has " + std::to_string(len) +
                                 " (lists are zipped; use equal lengths or a single value)");
          len = list.size();
        }
      }
      spec_.sizes.push_back(std::move(p));
    }
    return {};
  }

  Status tensors(const YAML::Node& n) {
    SB_TRY(keys(n, "'tensors'", {}, {}, true, &extra_));
    auto entries = std::move(extra_);
    extra_.clear();
    if (entries.empty()) return err(n, "'tensors' must declare at least one tensor");
    for (auto& [name, body, k] : entries) {
      std::string why = check_identifier(name);
      if (!why.empty()) return err(k, "invalid tensor name: " + why);
      std::string what = "tensor '" + name + "'";
      Tensor t;
      t.name = name;
      t.loc = loc(k);
      if (body.IsMap() && body["view"]) {
        SB_TRY(keys(body, what + " (a view: its type, role and 'init' are its base's)",
                    {"view", "shape", "boundary"}, {"view", "shape"}));
        SB_TRY(view(body["view"], what, t));
        SB_TRY(shape_and_boundary(body, what, t));
        spec_.tensors.push_back(std::move(t));
        continue;
      }
      SB_TRY(keys(body, what, {"type", "shape", "role", "boundary", "init"},
                  {"type", "shape", "role"}));
      auto type = scalar(body["type"], "'type' of " + what);
      if (!type.ok()) return type.error();
      if (const ScalarType* s = tensor_scalar(type.value()))
        t.type = s->type;
      else
        return err(body["type"], "unknown type '" + type.value() + "' for " + what +
                                     " (expected " + tensor_type_list() + ")");

      auto role = scalar(body["role"], "'role' of " + what);
      if (!role.ok()) return role.error();
      if (role.value() == "in")
        t.role = Role::In;
      else if (role.value() == "out")
        t.role = Role::Out;
      else if (role.value() == "temp")
        t.role = Role::Temp;
      else
        return err(body["role"], "unknown role '" + role.value() + "' for " + what +
                                     " (expected in, out or temp)");

      SB_TRY(shape_and_boundary(body, what, t));
      if (body["init"]) {
        const YAML::Node init = body["init"];
        if (!init.IsSequence() || init.size() != 2)
          return err(init, "'init' of " + what + " must be a list [lo, hi]");
        if (is_integer(t.type)) {
          // Integer ranges may use sizes, e.g. token ids in [0, V - 1].
          for (int i = 0; i < 2; ++i) {
            auto s = scalar(init[i], "a bound of 'init' of " + what);
            if (!s.ok()) return s.error();
            auto e = parse_expression(s.value(), text_map(init[i]));
            if (!e.ok()) return e.error();
            (i == 0 ? t.init_lo_expr : t.init_hi_expr) = std::move(e.value());
          }
          spec_.tensors.push_back(std::move(t));
          continue;
        }
        auto lo = number(init[0], "'init' lower bound");
        if (!lo.ok()) return lo.error();
        auto hi = number(init[1], "'init' upper bound");
        if (!hi.ok()) return hi.error();
        if (!(lo.value() <= hi.value()) || std::abs(lo.value()) > 1e30 ||
            std::abs(hi.value()) > 1e30)
          return err(init, "'init' of " + what + " must satisfy lo <= hi with |lo|, |hi| <= 1e30");
        t.init_lo = lo.value();
        t.init_hi = hi.value();
      }
      spec_.tensors.push_back(std::move(t));
    }
    return {};
  }

  // A tensor's `shape` and its optional `boundary` rule.
  Status shape_and_boundary(const YAML::Node& body, const std::string& what, Tensor& t) {
    const YAML::Node shape = body["shape"];
    if (!shape.IsSequence())
      return err(shape, "'shape' of " + what + " must be a list, found " + node_kind(shape));
    if (shape.size() > kMaxRank)
      return err(shape, what + " has rank " + std::to_string(shape.size()) + "; at most " +
                            std::to_string(kMaxRank) + " dimensions are supported");
    for (const auto& d : shape) {
      auto s = scalar(d, "a dimension of " + what);
      if (!s.ok()) return s.error();
      auto e = parse_expression(s.value(), text_map(d));
      if (!e.ok()) return e.error();
      t.shape.push_back(std::move(e.value()));
    }
    if (body["boundary"]) {
      auto b = scalar(body["boundary"], "'boundary' of " + what);
      if (!b.ok()) return b.error();
      if (b.value() == "zero")
        t.boundary = Boundary::Zero;
      else if (b.value() == "clamp")
        t.boundary = Boundary::Clamp;
      else
        return err(body["boundary"],
                   "unknown boundary rule '" + b.value() + "' (expected zero or clamp)");
    }
    return {};
  }

  // `view: x`: the base is a tensor declared before `t`; a view of a view names the first base.
  // The view takes the base's type, role and `init` (its gathered range, for the bounds proof).
  // How a written storage may be named is the type checker's rule.
  Status view(const YAML::Node& n, const std::string& what, Tensor& t) {
    auto base = scalar(n, "'view' of " + what);
    if (!base.ok()) return base.error();
    int b = -1;
    for (size_t i = 0; i < spec_.tensors.size(); ++i)
      if (spec_.tensors[i].name == base.value()) b = static_cast<int>(i);
    if (b < 0)
      return err(n, what + " is a view of '" + base.value() +
                        "', which is not a tensor declared before it");
    if (spec_.tensors[b].view_of >= 0) b = spec_.tensors[b].view_of;
    const Tensor& bt = spec_.tensors[b];
    t.view_of = b;
    t.type = bt.type;
    t.role = bt.role;
    t.init_lo = bt.init_lo;
    t.init_hi = bt.init_hi;
    if (bt.init_lo_expr) t.init_lo_expr = clone(*bt.init_lo_expr);
    if (bt.init_hi_expr) t.init_hi_expr = clone(*bt.init_hi_expr);
    return {};
  }

  Status compute(const YAML::Node& n) {
    auto text = scalar(n, "'compute'");
    if (!text.ok()) return text.error();
    auto parsed = parse_statements(text.value(), text_map(n));
    if (!parsed.ok()) return parsed.error();
    if (parsed.value().empty()) return err(n, "'compute' holds no statement");
    for (auto& ps : parsed.value()) {
      Statement st;
      st.loc = ps.loc;
      st.target = ps.target;
      for (auto& idx : ps.indices) {
        IndexVar v;
        v.name = idx.name;
        v.loc = idx.loc;
        st.vars.push_back(std::move(v));
      }
      if (ps.subscripted && ps.indices.empty())
        return make_error(ps.loc, "empty subscript on '" + ps.target + "'; write a scalar as '" +
                                      ps.target + " = ...'");
      st.rhs = std::move(ps.rhs);
      spec_.stmts.push_back(std::move(st));
    }
    return {};
  }

  Status tolerance(const YAML::Node& n) {
    SB_TRY(keys(n, "'tolerance'", {"rtol", "atol"}, {}));
    if (n["rtol"]) {
      auto r = number(n["rtol"], "'rtol'");
      if (!r.ok()) return r.error();
      if (r.value() < 0 || r.value() >= 1) return err(n["rtol"], "'rtol' must be in [0, 1)");
      spec_.tol.rtol = r.value();
    }
    if (n["atol"]) {
      auto a = number(n["atol"], "'atol'");
      if (!a.ok()) return a.error();
      if (a.value() < 0) return err(n["atol"], "'atol' must not be negative");
      spec_.tol.atol = a.value();
    }
    return {};
  }

  Status variants(const YAML::Node& n) {
    SB_TRY(keys(n, "'variants'", {}, {}, true, &extra_));
    auto entries = std::move(extra_);
    extra_.clear();
    if (entries.empty()) return err(n, "'variants' must list at least one backend");
    for (auto& [backend, list, k] : entries) {
      if (!list.IsSequence() || list.size() == 0)
        return err(list, "variants of backend '" + backend + "' must be a non-empty list");
      std::vector<Variant> vs;
      std::set<std::string> names;
      for (const auto& vn : list) {
        std::vector<Entry> params;
        SB_TRY(keys(vn, "a variant of '" + backend + "'", {"name", "strategy"},
                    {"name", "strategy"}, true, &params));
        Variant v;
        v.loc = loc(vn["name"]);
        auto name = scalar(vn["name"], "variant 'name'");
        if (!name.ok()) return name.error();
        std::string why = check_identifier(name.value());
        if (!why.empty()) return err(vn["name"], "invalid variant name: " + why);
        if (!names.insert(name.value()).second)
          return err(vn["name"],
                     "duplicate variant name '" + name.value() + "' for backend '" + backend + "'");
        v.name = name.value();
        auto strategy = scalar(vn["strategy"], "variant 'strategy'");
        if (!strategy.ok()) return strategy.error();
        v.strategy = strategy.value();
        v.strategy_loc = loc(vn["strategy"]);
        for (auto& [pk, pv, pkey] : params) {
          std::string why2 = check_identifier(pk);
          if (!why2.empty()) return err(pkey, "invalid parameter name: " + why2);
          auto x = integer(pv, "parameter '" + pk + "' of variant '" + v.name + "'", -kMaxSize,
                           kMaxSize);
          if (!x.ok()) return x.error();
          v.params[pk] = x.value();
          v.param_locs[pk] = loc(pkey);
        }
        vs.push_back(std::move(v));
      }
      spec_.backend_locs[backend] = loc(k);
      spec_.variants[backend] = std::move(vs);
    }
    return {};
  }

  std::string path_;
  std::string text_;
  std::vector<std::string> lines_;
  Spec spec_;
  std::vector<Entry> extra_;
};

}  // namespace

Result<Spec> load_spec(const std::string& path) {
  Loader l(path);
  return l.run();
}

}  // namespace sb
