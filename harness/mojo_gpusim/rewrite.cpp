// mojo_gpusim: the NVVM-to-host rewrite (see rewrite.h).
#include "rewrite.h"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DebugInfo.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/ReplaceConstant.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

namespace sb::gpusim {

namespace {

using namespace llvm;

// The host's datalayout for x86-64 (LLVM 19).
constexpr const char* kX86DataLayout =
    "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128";

std::string diag_str(const SMDiagnostic& d) {
  std::string s;
  raw_string_ostream os(s);
  d.print("", os, false);
  return os.str();
}

// Decimal constants of type float that are not exactly a double's decimal: the newer LLVM writes a
// float constant as its shortest decimal (4.471500e-02), which LLVM 19 reads as a double and
// rejects for a float. The constant's type is the nearest floating-point type before it on its
// line (`fmul float %a, 4.471500e-02`, `phi float [ 1.5e-01, %b ]`, `<2 x float> <float ...>`);
// those of float type become the hexadecimal form of the float's value.
std::string float_literals_to_hex(const std::string& text) {
  static const std::regex lit(R"(([\s,\[(<])([-+]?[0-9]+\.[0-9]+e[-+][0-9]+)\b)");
  static const std::regex type(R"(\b(half|bfloat|float|double|fp128|x86_fp80)\b)");
  std::istringstream lines(text);
  std::string out, line;
  while (std::getline(lines, line)) {
    std::string res;
    size_t last = 0;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), lit);
         it != std::sregex_iterator(); ++it) {
      const std::smatch& m = *it;
      const size_t at = m.position(2);
      std::string before = line.substr(0, at), ty;
      for (auto t = std::sregex_iterator(before.begin(), before.end(), type);
           t != std::sregex_iterator(); ++t)
        ty = (*t)[1].str();
      const std::string num = m[2].str();
      const double d = std::strtod(num.c_str(), nullptr);
      const float f = std::strtof(num.c_str(), nullptr);
      if (ty != "float" || static_cast<double>(f) == d) continue;
      res.append(line, last, at - last);
      const double fd = f;
      uint64_t bits;
      std::memcpy(&bits, &fd, sizeof bits);
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%016llX", static_cast<unsigned long long>(bits));
      res += buf;
      last = at + num.size();
    }
    res.append(line, last, std::string::npos);
    out += res;
    out += '\n';
  }
  return out;
}

// IR from Mojo's newer LLVM, made readable by LLVM 19: hexadecimal float constants written as
// f0x<8 or 16 digits>, the words inf and qnan, and float decimals that are not exact doubles
// become LLVM 19's double-precision hex form; inline comments go; captures(none) becomes nocapture; lifetime markers are dropped; and attribute keywords LLVM 19
// does not know are dropped from attribute lists (found one at a time from the parser's error).
std::string to_llvm19_syntax(std::string text) {
  static const std::regex f32hex(R"(\bf0x([0-9A-Fa-f]{8}|[0-9A-Fa-f]{16})\b)");
  std::string out;
  auto begin = std::sregex_iterator(text.begin(), text.end(), f32hex);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    out.append(text, last, m.position(0) - last);
    if (m[1].length() == 16) {  // a double: the same bits
      out += "0x" + m[1].str();
      last = m.position(0) + m.length(0);
      continue;
    }
    uint32_t bits = static_cast<uint32_t>(std::stoul(m[1].str(), nullptr, 16));
    float f;
    std::memcpy(&f, &bits, sizeof f);
    double d = f;
    uint64_t dbits;
    std::memcpy(&dbits, &d, sizeof d);
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%016llX", static_cast<unsigned long long>(dbits));
    out += buf;
    last = m.position(0) + m.length(0);
  }
  out.append(text, last, std::string::npos);
  // Infinities and quiet NaNs written as words (`-inf`, `+qnan`, in instructions and in debug
  // records) become LLVM 19's hexadecimal form, the bits of the double of the same value.
  static const std::regex special(R"(([\s,\[(])([+-]?)(inf|qnan)\b)");
  std::string res;
  last = 0;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), special);
       it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    res.append(out, last, m.position(0) - last);
    const bool neg = m[2].str() == "-";
    const bool inf = m[3].str() == "inf";
    res += m[1].str();
    res += inf ? (neg ? "0xFFF0000000000000" : "0x7FF0000000000000")
               : (neg ? "0xFFF8000000000000" : "0x7FF8000000000000");
    last = m.position(0) + m.length(0);
  }
  res.append(out, last, std::string::npos);
  // Inline comments (`/* (nan) */ i32 3` in an is.fpclass call) are not LLVM 19 syntax.
  static const std::regex comment(R"(/\*[^*]*\*/ ?)");
  res = std::regex_replace(res, comment, "");
  res = float_literals_to_hex(res);
  // captures(none) is LLVM 19's nocapture; other captures(...) attributes only narrow what the
  // optimiser may assume, and are dropped.
  static const std::regex captures_none(R"(\bcaptures\(none\))");
  static const std::regex captures_any(R"(\bcaptures\([^)]*\) ?)");
  res = std::regex_replace(res, captures_none, "nocapture");
  res = std::regex_replace(res, captures_any, "");
  // Lifetime markers take one operand in the newer LLVM and two in LLVM 19; they are hints to the
  // optimiser, with no effect on what a kernel computes, and are dropped (calls and declarations).
  static const std::regex lifetime(R"(^\s*(call void|declare void) @llvm\.lifetime\.(start|end)\.)");
  std::istringstream lines(res);
  std::string kept, line;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, lifetime)) continue;
    kept += line;
    kept += '\n';
  }
  return kept;
}

// Drops the word at 1-based (line, col) from every attribute list of `text`, if it is a bare
// keyword. Returns false if there is none.
bool drop_unknown_attribute(std::string& text, int line, int col) {
  std::istringstream in(text);
  std::string l;
  for (int i = 1; i <= line && std::getline(in, l); ++i) {
  }
  if (col < 1 || static_cast<size_t>(col) > l.size()) return false;
  size_t b = col - 1, e = b;
  while (e < l.size() && (std::isalnum(static_cast<unsigned char>(l[e])) || l[e] == '_')) ++e;
  if (e == b) return false;
  const std::string word = l.substr(b, e - b);
  if (!std::isalpha(static_cast<unsigned char>(word[0]))) return false;
  const std::regex re("(^attributes #[0-9]+ = \\{.*|^declare .*|^define .*)");
  const std::regex w("\\b" + word + "\\b ?");
  std::istringstream all(text);
  std::string result, row;
  bool changed = false;
  while (std::getline(all, row)) {
    if (std::regex_match(row, re)) {
      std::string r2 = std::regex_replace(row, w, "");
      changed = changed || r2 != row;
      row = r2;
    }
    result += row;
    result += '\n';
  }
  text = result;
  return changed;
}

std::unique_ptr<Module> parse_nvvm(std::string text, LLVMContext& ctx, std::string& error) {
  text = to_llvm19_syntax(std::move(text));
  for (int attempt = 0; attempt < 32; ++attempt) {
    SMDiagnostic d;
    auto m = parseAssemblyString(text, d, ctx);
    if (m) return m;
    const std::string msg = d.getMessage().str();
    if ((msg.find("unterminated attribute group") != std::string::npos ||
         msg.find("expected") != std::string::npos) &&
        drop_unknown_attribute(text, d.getLineNo(), d.getColumnNo() + 1))
      continue;
    error = "cannot read the NVVM IR with LLVM 19: " + diag_str(d);
    return nullptr;
  }
  error = "cannot read the NVVM IR with LLVM 19: too many unknown attributes";
  return nullptr;
}

class Rewriter {
 public:
  Rewriter(Module& m, std::string name) : m_(m), ctx_(m.getContext()), name_(std::move(name)) {
    i32_ = Type::getInt32Ty(ctx_);
    i64_ = Type::getInt64Ty(ctx_);
    ptr_ = PointerType::get(ctx_, 0);
    void_ = Type::getVoidTy(ctx_);
  }

  bool run(std::vector<std::string>& kernels, std::string& error) {
    for (Function& f : m_)
      if (f.getCallingConv() == CallingConv::PTX_Kernel) kernels.push_back(f.getName().str());
    if (kernels.empty()) return fail("no ptx_kernel function (export the kernel with @export)"), take(error);
    for (Function& f : m_) {
      if (f.isDeclaration()) continue;
      instrument_accesses(f);
      rewrite_calls(f);
    }
    if (!errors_.empty()) return take(error);
    replace_shared_globals();
    rename_libdevice();
    for (Function& f : make_early_inc_range(m_)) {
      if (!f.getName().starts_with("llvm.nvvm.")) continue;
      if (!f.use_empty()) fail("not supported yet: " + f.getName().str());
      else f.eraseFromParent();
    }
    if (!errors_.empty()) return take(error);
    for (const std::string& k : kernels) make_entry(*m_.getFunction(k));
    for (Function& f : m_) {
      if (f.getCallingConv() == CallingConv::PTX_Kernel) f.setCallingConv(CallingConv::C);
      f.removeFnAttr("target-cpu");
      f.removeFnAttr("target-features");
    }
    if (NamedMDNode* md = m_.getNamedMetadata("nvvm.annotations")) m_.eraseNamedMetadata(md);
    casts_to_integers();
    StripDebugInfo(m_);
    return take(error);
  }

 private:
  bool take(std::string& error) {
    for (const std::string& e : errors_) error += (error.empty() ? "" : "\n") + e;
    return errors_.empty();
  }
  void fail(const std::string& e) { errors_.push_back(name_ + ": " + e); }

  FunctionCallee hook(const char* n, Type* ret, std::vector<Type*> args) {
    return m_.getOrInsertFunction(n, FunctionType::get(ret, args, false));
  }

  Constant* cstr(const std::string& s) {
    auto it = strings_.find(s);
    if (it != strings_.end()) return it->second;
    IRBuilder<> b(ctx_);
    Constant* init = ConstantDataArray::getString(ctx_, s);
    auto* gv = new GlobalVariable(m_, init->getType(), true, GlobalValue::PrivateLinkage, init,
                                  ".sb_gpusim.str");
    gv->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
    return strings_[s] = gv;
  }

  // Where an instruction is, for messages: the Mojo source line when the IR has debug
  // locations, else the function and a running number.
  std::pair<Constant*, Constant*> site(Instruction& i) {
    if (const DebugLoc& dl = i.getDebugLoc()) {
      // The outermost location: the kernel's own line, not the library code inlined into it.
      DILocation* loc = dl.get();
      while (DILocation* outer = loc->getInlinedAt()) loc = outer;
      std::string file = loc->getFilename().str();
      file = file.substr(file.find_last_of('/') + 1);
      return {cstr(file), ConstantInt::get(i32_, loc->getLine())};
    }
    return {cstr(i.getFunction()->getName().str() + " (no line info), site"),
            ConstantInt::get(i32_, ++site_counter_)};
  }

  static bool on_stack(Value* p) {
    return isa<AllocaInst>(getUnderlyingObject(p, 0));
  }

  Value* generic(IRBuilder<>& b, Value* p) {
    if (p->getType()->getPointerAddressSpace() == 0) return p;
    return b.CreateAddrSpaceCast(p, ptr_);
  }

  void access(Instruction& at, Value* p, Value* size, bool write, bool atomic) {
    if (on_stack(p)) return;
    IRBuilder<> b(&at);
    const unsigned as = p->getType()->getPointerAddressSpace();
    int flags = (write ? 1 : 0) | (atomic ? 2 : 0) | (as == 3 ? 4 : 0);
    auto [file, line] = site(at);
    b.CreateCall(hook("sb_gpusim_access", void_, {ptr_, i64_, i32_, ptr_, i32_}),
                 {generic(b, p), b.CreateZExtOrTrunc(size, i64_), ConstantInt::get(i32_, flags),
                  file, line});
  }

  void instrument_accesses(Function& f) {
    const DataLayout& dl = m_.getDataLayout();
    std::vector<Instruction*> todo;
    for (Instruction& i : instructions(f)) todo.push_back(&i);
    for (Instruction* i : todo) {
      auto size_of = [&](Type* t) { return ConstantInt::get(i64_, dl.getTypeStoreSize(t)); };
      if (auto* l = dyn_cast<LoadInst>(i)) {
        access(*l, l->getPointerOperand(), size_of(l->getType()), false, l->isAtomic());
      } else if (auto* s = dyn_cast<StoreInst>(i)) {
        access(*s, s->getPointerOperand(), size_of(s->getValueOperand()->getType()), true,
               s->isAtomic());
      } else if (auto* r = dyn_cast<AtomicRMWInst>(i)) {
        access(*r, r->getPointerOperand(), size_of(r->getValOperand()->getType()), true, true);
        r->setSyncScopeID(SyncScope::System);
      } else if (auto* x = dyn_cast<AtomicCmpXchgInst>(i)) {
        access(*x, x->getPointerOperand(), size_of(x->getNewValOperand()->getType()), true, true);
        x->setSyncScopeID(SyncScope::System);
      } else if (auto* fe = dyn_cast<FenceInst>(i)) {
        fe->setSyncScopeID(SyncScope::System);
      } else if (auto* mt = dyn_cast<MemTransferInst>(i)) {
        access(*mt, mt->getRawSource(), mt->getLength(), false, false);
        access(*mt, mt->getRawDest(), mt->getLength(), true, false);
      } else if (auto* ms = dyn_cast<MemSetInst>(i)) {
        access(*ms, ms->getRawDest(), ms->getLength(), true, false);
      }
    }
  }

  // Host replacements for PTX math written as inline assembly ("ex2.approx.ftz.f32 $0, $1;").
  Value* asm_math(IRBuilder<>& b, const std::string& text, CallInst& c) {
    std::string op = text.substr(0, text.find_first_of(" \t"));
    if (c.arg_size() != 1 || !c.getType()->isFloatingPointTy()) return nullptr;
    const bool f32 = op.size() > 4 && op.compare(op.size() - 4, 4, ".f32") == 0;
    const bool f64 = op.size() > 4 && op.compare(op.size() - 4, 4, ".f64") == 0;
    if (!(f32 && c.getType()->isFloatTy()) && !(f64 && c.getType()->isDoubleTy())) return nullptr;
    Value* x = c.getArgOperand(0);
    Type* t = x->getType();
    auto starts = [&](const char* p) { return op.rfind(p, 0) == 0; };
    auto unary = [&](Intrinsic::ID id) { return b.CreateUnaryIntrinsic(id, x); };
    if (starts("ex2.approx")) return unary(Intrinsic::exp2);
    if (starts("lg2.approx")) return unary(Intrinsic::log2);
    if (starts("sin.approx")) return unary(Intrinsic::sin);
    if (starts("cos.approx")) return unary(Intrinsic::cos);
    if (starts("sqrt.")) return unary(Intrinsic::sqrt);
    if (starts("rcp.")) return b.CreateFDiv(ConstantFP::get(t, 1.0), x);
    if (starts("rsqrt.")) return b.CreateFDiv(ConstantFP::get(t, 1.0), unary(Intrinsic::sqrt));
    if (starts("tanh.approx")) {
      const char* fn = t->isFloatTy() ? "tanhf" : t->isDoubleTy() ? "tanh" : nullptr;
      if (!fn) return nullptr;
      return b.CreateCall(hook(fn, t, {t}), {x});
    }
    return nullptr;
  }

  // NVVM math intrinsics with a host equivalent.
  Value* nvvm_math(IRBuilder<>& b, StringRef n, CallInst& c) {
    auto has = [&](const char* p) { return n.starts_with(p); };
    auto unary = [&](Intrinsic::ID id) {
      return b.CreateUnaryIntrinsic(id, c.getArgOperand(0));
    };
    Value* x = c.arg_size() ? c.getArgOperand(0) : nullptr;
    if (has("llvm.nvvm.sqrt.")) return unary(Intrinsic::sqrt);
    if (has("llvm.nvvm.rsqrt.approx.")) {
      return b.CreateFDiv(ConstantFP::get(x->getType(), 1.0), unary(Intrinsic::sqrt));
    }
    if (has("llvm.nvvm.rcp.")) return b.CreateFDiv(ConstantFP::get(x->getType(), 1.0), x);
    if (has("llvm.nvvm.ex2.approx.")) return unary(Intrinsic::exp2);
    if (has("llvm.nvvm.lg2.approx.")) return unary(Intrinsic::log2);
    if (has("llvm.nvvm.sin.approx.")) return unary(Intrinsic::sin);
    if (has("llvm.nvvm.cos.approx.")) return unary(Intrinsic::cos);
    if (has("llvm.nvvm.fabs.")) return unary(Intrinsic::fabs);
    if (has("llvm.nvvm.fma.rn.")) {
      return b.CreateIntrinsic(Intrinsic::fma, {x->getType()},
                               {x, c.getArgOperand(1), c.getArgOperand(2)});
    }
    if (has("llvm.nvvm.fmax.") && !n.contains("nan") && !n.contains("xorsign"))
      return b.CreateBinaryIntrinsic(Intrinsic::maxnum, x, c.getArgOperand(1));
    if (has("llvm.nvvm.fmin.") && !n.contains("nan") && !n.contains("xorsign"))
      return b.CreateBinaryIntrinsic(Intrinsic::minnum, x, c.getArgOperand(1));
    return nullptr;
  }

  void rewrite_calls(Function& f) {
    std::vector<CallInst*> calls;
    for (Instruction& i : instructions(f))
      if (auto* c = dyn_cast<CallInst>(&i)) calls.push_back(c);
    for (CallInst* c : calls) {
      IRBuilder<> b(c);
      Value* repl = nullptr;
      bool erase = false;
      if (c->isInlineAsm()) {
        const std::string text = cast<InlineAsm>(c->getCalledOperand())->getAsmString();
        repl = asm_math(b, text, *c);
        if (!repl) {
          fail("not supported yet: inline PTX \"" + text + "\" in @" + f.getName().str());
          continue;
        }
      } else {
        Function* callee = c->getCalledFunction();
        if (!callee || !callee->getName().starts_with("llvm.nvvm.")) continue;
        StringRef n = callee->getName();
        auto [file, line] = site(*c);
        if (n.consume_front("llvm.nvvm.read.ptx.sreg.")) {
          static const std::map<std::string, int> regs = {
              {"tid.x", 0},     {"tid.y", 1},     {"tid.z", 2},     {"ctaid.x", 4},
              {"ctaid.y", 5},   {"ctaid.z", 6},   {"ntid.x", 8},    {"ntid.y", 9},
              {"ntid.z", 10},   {"nctaid.x", 12}, {"nctaid.y", 13}, {"nctaid.z", 14},
              {"laneid", 16},   {"warpid", 17}};
          if (n == "warpsize") {
            repl = ConstantInt::get(c->getType(), 32);
          } else if (auto it = regs.find(n.str()); it != regs.end()) {
            repl = b.CreateCall(hook("sb_gpusim_sreg", i32_, {i32_}),
                                {ConstantInt::get(i32_, it->second)});
            repl = b.CreateZExtOrTrunc(repl, c->getType());
          }
        } else if (n == "llvm.nvvm.barrier0" || n == "llvm.nvvm.barrier.cta.sync.aligned.all" ||
                   n == "llvm.nvvm.barrier.cta.sync.all" || n == "llvm.nvvm.barrier.sync") {
          auto* id = dyn_cast_or_null<ConstantInt>(c->arg_size() ? c->getArgOperand(0) : nullptr);
          if (c->arg_size() == 0 || (id && id->isZero())) {
            b.CreateCall(hook("sb_gpusim_barrier", void_, {ptr_, i32_}), {file, line});
            erase = true;
          }
        } else if (n == "llvm.nvvm.bar.warp.sync") {
          b.CreateCall(hook("sb_gpusim_syncwarp", void_, {i32_, ptr_, i32_}),
                       {c->getArgOperand(0), file, line});
          erase = true;
        } else if (n.starts_with("llvm.nvvm.shfl.sync.") && !n.ends_with(".p")) {
          int kind = n.contains(".idx.") ? 0 : n.contains(".up.") ? 1 : n.contains(".down.") ? 2
                     : n.contains(".bfly.")                        ? 3
                                                                   : -1;
          Value* v = c->getArgOperand(1);
          if (kind >= 0 && (v->getType()->isIntegerTy(32) || v->getType()->isFloatTy())) {
            Value* bits = b.CreateBitCast(v, i32_);
            Value* r = b.CreateCall(
                hook("sb_gpusim_shfl", i32_, {i32_, i32_, i32_, i32_, i32_, ptr_, i32_}),
                {ConstantInt::get(i32_, kind), c->getArgOperand(0), bits, c->getArgOperand(2),
                 c->getArgOperand(3), file, line});
            repl = b.CreateBitCast(r, v->getType());
          }
        } else if (n.starts_with("llvm.nvvm.vote.") && n.ends_with(".sync")) {
          int kind = n.contains(".ballot.") ? 0 : n.contains(".any.") ? 1 : n.contains(".all.") ? 2
                     : n.contains(".uni.")                            ? 3
                                                                      : -1;
          if (kind >= 0) {
            Value* r = b.CreateCall(hook("sb_gpusim_vote", i32_, {i32_, i32_, i32_, ptr_, i32_}),
                                    {ConstantInt::get(i32_, kind), c->getArgOperand(0),
                                     b.CreateZExt(c->getArgOperand(1), i32_), file, line});
            repl = c->getType()->isIntegerTy(1) ? b.CreateICmpNE(r, ConstantInt::get(i32_, 0))
                                                : r;
          }
        } else if (n.starts_with("llvm.nvvm.membar.") || n.starts_with("llvm.nvvm.fence.")) {
          erase = true;  // fibers of a block share one OS thread; blocks use host atomics
        } else {
          repl = nvvm_math(b, callee->getName(), *c);
        }
        if (!repl && !erase) {
          fail("not supported yet: " + callee->getName().str() + " in @" + f.getName().str());
          continue;
        }
      }
      if (repl) c->replaceAllUsesWith(repl);
      c->eraseFromParent();
    }
  }

  static uint64_t scalar_size(Type* t, const DataLayout& dl) {
    while (auto* a = dyn_cast<ArrayType>(t)) t = a->getElementType();
    if (auto* v = dyn_cast<VectorType>(t)) t = v->getElementType();
    if (t->isStructTy()) return 1;
    uint64_t s = dl.getTypeStoreSize(t);
    return s ? s : 1;
  }

  // addrspace(3) globals become per-block memory from sb_gpusim_shared, fetched at the entry of
  // each function that uses them.
  void replace_shared_globals() {
    const DataLayout& dl = m_.getDataLayout();
    std::vector<GlobalVariable*> shared;
    for (GlobalVariable& g : m_.globals())
      if (g.getAddressSpace() == 3) shared.push_back(&g);
    int slot = 0;
    for (GlobalVariable* g : shared) {
      convertUsersOfConstantsToInstructions({g});
      Type* t = g->getValueType();
      const bool dynamic = g->isDeclaration() || dl.getTypeAllocSize(t) == 0;
      const int64_t bytes = dynamic ? -1 : static_cast<int64_t>(dl.getTypeAllocSize(t));
      const int64_t align = g->getAlign() ? g->getAlign()->value() : 16;
      std::map<Function*, Value*> base;
      for (Use& u : make_early_inc_range(g->uses())) {
        auto* inst = dyn_cast<Instruction>(u.getUser());
        if (!inst) {
          fail("not supported yet: shared global @" + g->getName().str() +
               " used outside a function");
          continue;
        }
        Function* f = inst->getFunction();
        Value*& v = base[f];
        if (!v) {
          IRBuilder<> b(&*f->getEntryBlock().getFirstInsertionPt());
          Value* p = b.CreateCall(hook("sb_gpusim_shared", ptr_, {i32_, i64_, i64_, i64_, ptr_}),
                                  {ConstantInt::get(i32_, slot), ConstantInt::get(i64_, bytes),
                                   ConstantInt::get(i64_, align),
                                   ConstantInt::get(i64_, scalar_size(t, dl)),
                                   cstr(g->getName().str())});
          v = b.CreateAddrSpaceCast(p, g->getType());
        }
        u.set(v);
      }
      if (g->use_empty()) g->eraseFromParent();
      ++slot;
    }
  }

  // libdevice's __nv_<f> calls become the host's <f> (libm).
  void rename_libdevice() {
    for (Function& f : m_) {
      if (!f.isDeclaration() || !f.getName().starts_with("__nv_")) continue;
      std::string host = f.getName().substr(5).str();
      if (Function* existing = m_.getFunction(host)) {
        f.replaceAllUsesWith(existing);
      } else {
        f.setName(host);
      }
    }
  }

  // K__sb_gpusim_entry(ptr argv): K's i-th argument is read from argv + 8 * i.
  void make_entry(Function& k) {
    auto* fn = Function::Create(FunctionType::get(void_, {ptr_}, false),
                                GlobalValue::ExternalLinkage, k.getName() + "__sb_gpusim_entry",
                                m_);
    IRBuilder<> b(BasicBlock::Create(ctx_, "entry", fn));
    std::vector<Value*> args;
    for (Argument& a : k.args()) {
      Value* slot = b.CreateConstGEP1_64(b.getInt8Ty(), fn->getArg(0), 8 * a.getArgNo());
      args.push_back(b.CreateLoad(a.getType(), slot));
    }
    b.CreateCall(&k, args);
    b.CreateRetVoid();
  }

  // Every addrspacecast (instructions, and constant expressions expanded into instructions)
  // becomes ptrtoint + inttoptr, which stays valid once address spaces are stripped.
  void casts_to_integers() {
    std::vector<Constant*> consts;
    std::set<Constant*> seen;
    std::function<bool(Constant*)> has_cast = [&](Constant* c) {
      auto* ce = dyn_cast<ConstantExpr>(c);
      if (!ce) return false;
      if (ce->getOpcode() == Instruction::AddrSpaceCast) return true;
      for (Value* op : ce->operands())
        if (auto* oc = dyn_cast<Constant>(op); oc && has_cast(oc)) return true;
      return false;
    };
    for (Function& f : m_)
      for (Instruction& i : instructions(f))
        for (Value* op : i.operands())
          if (auto* c = dyn_cast<Constant>(op); c && has_cast(c) && seen.insert(c).second)
            consts.push_back(c);
    if (!consts.empty()) convertUsersOfConstantsToInstructions(consts);
    std::vector<AddrSpaceCastInst*> casts;
    for (Function& f : m_)
      for (Instruction& i : instructions(f))
        if (auto* a = dyn_cast<AddrSpaceCastInst>(&i)) casts.push_back(a);
    for (AddrSpaceCastInst* a : casts) {
      IRBuilder<> b(a);
      Value* r = b.CreateIntToPtr(b.CreatePtrToInt(a->getOperand(0), i64_), a->getType());
      a->replaceAllUsesWith(r);
      a->eraseFromParent();
    }
  }

  Module& m_;
  LLVMContext& ctx_;
  std::string name_;
  Type* i32_;
  Type* i64_;
  PointerType* ptr_;
  Type* void_;
  std::vector<std::string> errors_;
  std::map<std::string, Constant*> strings_;
  int site_counter_ = 0;
};

// Address spaces stripped from the printed module, intrinsic names mangled for address space 0
// again (llvm.memcpy.p0.p3.i64 -> llvm.memcpy.p0.p0.i64) and their now duplicate declarations
// dropped; the host's triple and datalayout.
std::string strip_address_spaces(const std::string& ir) {
  static const std::regex as(R"( addrspace\(\d+\))");
  static const std::regex intrinsic(R"(@llvm\.[A-Za-z0-9_.]+)");
  static const std::regex pn(R"(\.p\d+)");
  std::string s = std::regex_replace(ir, as, "");
  std::string out;
  size_t last = 0;
  for (auto it = std::sregex_iterator(s.begin(), s.end(), intrinsic); it != std::sregex_iterator();
       ++it) {
    out.append(s, last, it->position(0) - last);
    out += std::regex_replace(it->str(), pn, ".p0");
    last = it->position(0) + it->length(0);
  }
  out.append(s, last, std::string::npos);
  std::istringstream in(out);
  std::string line, result;
  std::set<std::string> declared;
  static const std::regex decl(R"(^declare .*(@[A-Za-z0-9_.$"]+)\()");
  std::smatch m;
  while (std::getline(in, line)) {
    if (line.rfind("target datalayout", 0) == 0) {
      line = std::string("target datalayout = \"") + kX86DataLayout + "\"";
    } else if (line.rfind("target triple", 0) == 0) {
      line = "target triple = \"" + llvm::sys::getDefaultTargetTriple() + "\"";
    } else if (std::regex_search(line, m, decl) && !declared.insert(m[1].str()).second) {
      continue;
    }
    result += line;
    result += '\n';
  }
  return result;
}

}  // namespace

RewriteResult rewrite(const std::string& nvvm_ir, const std::string& name) {
  RewriteResult r;
  LLVMContext ctx;
  std::unique_ptr<Module> m = parse_nvvm(nvvm_ir, ctx, r.error);
  if (!m) return r;
  if (m->getTargetTriple().find("nvptx") == std::string::npos) {
    r.error = name + ": not NVVM IR (target triple \"" + m->getTargetTriple() + "\")";
    return r;
  }
  Rewriter rw(*m, name);
  if (!rw.run(r.kernels, r.error)) return r;
  std::string text;
  raw_string_ostream os(text);
  m->print(os, nullptr);
  os.flush();
  std::string host = strip_address_spaces(text);
  // Read back with LLVM 19 and verify, so that a bad rewrite is reported here, not by clang.
  LLVMContext ctx2;
  SMDiagnostic d;
  auto back = parseAssemblyString(host, d, ctx2);
  if (!back) {
    r.error = name + ": the rewritten IR does not parse: " + diag_str(d);
    return r;
  }
  std::string verr;
  raw_string_ostream vos(verr);
  if (verifyModule(*back, &vos)) {
    r.error = name + ": the rewritten IR does not verify: " + vos.str();
    return r;
  }
  r.ir = std::move(host);
  return r;
}

std::string compile(const std::string& host_ir, const std::string& out_so,
                    const std::string& clang, const std::string& runtime_dir) {
  const std::string ll = out_so + ".host.ll";
  {
    std::ofstream f(ll);
    f << host_ir;
    if (!f) return "cannot write " + ll;
  }
  const std::string log = out_so + ".log";
  const std::string cmd = clang + " -O2 -fPIC -shared -Wno-override-module -x ir '" + ll +
                          "' -o '" + out_so + "' -L'" + runtime_dir +
                          "' -lspecbench_cudasim -lm -Wl,-rpath,'" + runtime_dir + "' > '" +
                          log + "' 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream in(log);
    std::stringstream ss;
    ss << in.rdbuf();
    return "clang failed: " + cmd + "\n" + ss.str();
  }
  return "";
}

}  // namespace sb::gpusim
