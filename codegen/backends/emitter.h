// The one interface every backend emitter implements, and the registry of emitters.
//
// An emitter turns a checked Spec into source files for one backend. Every file it emits for a
// spec is a single translation unit at generated/<spec>/<backend>/<spec>.<ext> that
// includes "specbench_abi.h" and defines `specbench_module()` (see harness/abi/specbench_abi.h).
// Emitters know no kernel by name: everything comes from the Spec's statements.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/diag.h"
#include "ir/ir.h"

namespace sb {

struct ParamInfo {
  std::string name;
  int64_t def = 0;
  int64_t min = 1;
  int64_t max = 1 << 20;
  bool power_of_two = false;
  std::string doc;
};

struct StrategyInfo {
  std::string name;
  std::string doc;
  std::vector<ParamInfo> params;
  // The algorithm class: two strategies of two backends with the same class compute the same
  // schedule in two languages (the harness's "matched" comparison rows pair them; analysis.h).
  // Every strategy has one: "naive", "parallel_simd", "blocked_gemm", ...
  std::string algorithm;
};

// One __global__ function a GPU backend's file launches, as its printer wrote the launch.
struct KernelLaunch {
  std::string kernel;   // the function's name, as written in the file: "sb_tiled_matmul_s0"
  std::string variant;  // the variant whose launcher launches it
  // Threads per block (the product of the block's dimensions), a constant of the printed
  // launch; 0 when the kernel is launched with more than one block size.
  int64_t block_threads = 0;
  // Whether a launch passes dynamic shared memory (an amount known only at run time).
  bool dynamic_shared = false;
};

// A file written beside a backend's translation unit and built with it (mojo_gpu's host
// launchers, <spec>.launch.cpp beside <spec>.mojo); its text is part of the module's cache key.
struct CompanionFile {
  std::string path;  // relative to the generated/ root
  std::string content;
};

struct GeneratedFile {
  std::string path;  // relative to the generated/ root, e.g. "saxpy/cuda/saxpy.cu"
  std::string content;
  // GPU backends whose printer launches kernels itself (cuda): every kernel launched, in the
  // order first launched. Empty elsewhere (a library's kernels are launched by the library).
  std::vector<KernelLaunch> launches = {};
  std::vector<CompanionFile> companions = {};
};

struct GemmTarget;  // lower/blocked_gemm.h

class Emitter {
 public:
  virtual ~Emitter() = default;
  // Backend name as used in specs and on the command line: "cpu", "cuda", ...
  virtual std::string backend() const = 0;
  // File extension of the emitted translation unit, without the dot: "cpp", "cu".
  virtual std::string extension() const = 0;
  virtual std::vector<StrategyInfo> strategies() const = 0;
  // Extra shape checks for a variant whose strategy and parameters are already known to be
  // valid. Returns an error (at the variant's loc) when the strategy does not fit the spec.
  virtual Status check_variant(const Spec& spec, const Variant& v) const;
  // Emits the backend's translation unit for a checked spec. Deterministic, byte for byte.
  // Intrinsics the backend does not spell are expanded first (lower/expand_intrinsics.h); then
  // print() writes the file.
  GeneratedFile emit(const Spec& spec) const;
  // Whether this backend's printer has a native spelling for intrinsic `fn`. Every intrinsic
  // without a default expansion must be spelled by every backend.
  virtual bool spells(Fn fn) const = 0;
  // The register-tile choices of a backend that prints the blocked GEMM's loop IR
  // (lower/blocked_gemm.h), and whether variant `v` calls it; null/false elsewhere.
  virtual const GemmTarget* gemm_target() const { return nullptr; }
  virtual bool uses_blocked_gemm(const Variant&) const { return false; }
  // For a backend whose strategies map kernels onto a GPU (lower/gpu_mapping.h): the mapping of
  // each of its variants of the lowered `spec` as text, for `gen --dump-ir gpu_mapping`; empty
  // elsewhere.
  virtual std::string dump_gpu_mapping(const Spec&) const { return ""; }
  // Likewise the kernel bodies of each variant written once as loop IR (lower/gpu_bodies.h),
  // for `gen --dump-ir gpu_bodies`.
  virtual std::string dump_gpu_bodies(const Spec&) const { return ""; }
  // Whether this backend prints the host kernel bodies written once as loop IR
  // (lower/host_bodies.h), for `gen --dump-ir host_bodies`.
  virtual bool prints_host_bodies() const { return false; }
  // A derived backend (mojo_gpu) has no variants of its own in specs: its variants are those of
  // backend derived_from() ("cuda") that derives() accepts, same names, strategies and
  // parameters, set by the derive_variants stage (check/derive_variants.h). "" elsewhere.
  virtual std::string derived_from() const { return ""; }
  // Whether variant `v` of backend derived_from() of the lowered `spec` has a counterpart here;
  // when it has none, `why` says why (for the generated file's header).
  virtual bool derives(const Spec& /*lowered*/, const Variant& /*v*/, std::string* /*why*/) const {
    return false;
  }
  // Whether this backend prints tensors of storage type `t` (f16, bf16: ScalarType::compute)
  // wherever a spec uses them.
  virtual bool takes_storage(DType /*t*/) const { return false; }
  // The check of a spec that lists variants for this backend, for its storage-type tensors:
  // nothing where the backend takes every use of them, else a located error. By default, an error
  // at the backend's key `backend_loc` naming the first tensor of a type takes_storage() refuses.
  // A backend that takes them in some statements only (vendor_cpu: as the operands of a matrix
  // product, widened) overrides it and locates the first use it cannot take.
  virtual Status check_storage(const Spec& spec, const Loc& backend_loc) const;

 protected:
  // Prints a checked spec whose intrinsics are all ones this backend spells.
  virtual GeneratedFile print(const Spec& spec) const = 0;
};

// All emitters, in a fixed order. Adding a backend means adding its emitter here.
const std::vector<const Emitter*>& all_emitters();
// The emitter for `backend`, or nullptr.
const Emitter* find_emitter(const std::string& backend);

// The language reference's strategy table (specs/README.md), from every emitter's strategies():
// one Markdown row per backend and strategy with its algorithm class, its parameters (default,
// range) and doc.
std::string strategy_table_markdown();

// A variant's parameter value: the spec's, else the strategy's default.
int64_t param(const Variant& v, const StrategyInfo& info, const std::string& name);
// As param() where the strategy has parameter `name`; `fallback` where it has none.
int64_t param_or(const Variant& v, const StrategyInfo& info, const std::string& name,
                 int64_t fallback);
// The StrategyInfo of `strategy` in `e`, or nullptr.
const StrategyInfo* find_strategy(const Emitter& e, const std::string& strategy);

}  // namespace sb
