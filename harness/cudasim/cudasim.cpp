// The CUDA simulator: one fiber per CUDA thread, one block at a time per worker OS thread.
#include "cudasim.h"

#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#include <boost/context/detail/fcontext.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <map>
#include <memory>
#include <unordered_map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "include/cuda_runtime.h"

namespace sb::sim {

namespace bctx = boost::context::detail;

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kStackBytes = 64 * 1024;
constexpr int kMaxBlockThreads = 1024;
constexpr size_t kMaxDynamicShared = 227 * 1024;

enum class St { Fresh, Runnable, Barrier, Warp, Done };
enum class WarpOp { Sync, Shuffle, Vote };

// One global-memory access of a simulated thread, for traffic counting: the instruction that made
// it (the return address of its access hook, one per load or store in the compiled module), the
// thread's warp-synchronous points passed before it, and the sectors it touched.
struct Access {
  uintptr_t site = 0;
  uint32_t syncs = 0;
  uint64_t sectors = 0;  // (first 32-byte sector << 8) | number of sectors touched
};

struct Fiber {
  ThreadState ts{};
  int linear = 0;
  int warp = 0;
  int lane = 0;
  St st = St::Fresh;
  bctx::fcontext_t ctx = nullptr;
  bctx::fcontext_t caller = nullptr;
  const char* file = "";
  int line = 0;
  WarpOp op = WarpOp::Sync;
  int kind = 0;  // ShuffleKind or VoteKind
  unsigned mask = 0;
  uint64_t value = 0;
  int arg = 0;
  int width = 32;
  uint64_t result = 0;
  // Warp-synchronous points this thread has passed: barriers and completed warp operations.
  uint32_t syncs = 0;
  // Global-memory accesses in program order while traffic is counted.
  std::vector<Access> accesses;
};

// Fiber stacks for one worker: kMaxBlockThreads stacks, each above a guard page.
struct StackSet {
  char* base = nullptr;
  size_t stride = kStackBytes + kPage;
  StackSet() {
    size_t len = stride * kMaxBlockThreads;
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      std::perror("cudasim: mmap of fiber stacks");
      std::abort();
    }
    base = static_cast<char*>(p);
    for (int i = 0; i < kMaxBlockThreads; ++i) mprotect(base + i * stride, kPage, PROT_NONE);
  }
  void* top(int i) const { return base + (i + 1) * stride; }
};

std::mutex g_pool_mu;
std::vector<StackSet*> g_pool;

StackSet* take_stacks() {
  std::lock_guard<std::mutex> lk(g_pool_mu);
  if (g_pool.empty()) return new StackSet();
  StackSet* s = g_pool.back();
  g_pool.pop_back();
  return s;
}
void give_stacks(StackSet* s) {
  std::lock_guard<std::mutex> lk(g_pool_mu);
  g_pool.push_back(s);
}

struct Launch {
  const char* kernel;
  const char* file;
  int line;
  dim3 grid, block;
  size_t smem;
  void (*tramp)(void*);
  void* body;
  bool gpusim = false;  // a mojo_gpusim launch: global-memory races are tracked
};

struct Block {
  const Launch* launch = nullptr;
  uint3 bid{};
  std::vector<Fiber> fibers;
  std::vector<uint32_t> warp_sync;
  std::vector<unsigned char> dyn;
  std::vector<ShadowCell> dyn_shadow;
  std::string error;
  StackSet* stacks = nullptr;
  uint64_t linear = 0;
  // mojo_gpusim: the block's shared arrays (addrspace(3) globals of a rewritten module), by slot.
  struct GSlot {
    std::unique_ptr<unsigned char[]> mem;
    size_t cap = 0;
    unsigned char* data = nullptr;
    size_t bytes = 0;
    size_t granule = 1;
    std::vector<ShadowCell> shadow;
    std::string name;
    uint64_t gen = 0;  // the block serial that last initialised it
  };
  std::vector<GSlot> gslots;
  uint64_t serial = 0;
};

// Allocation records for guard-page lookups; read by the signal handler without locking.
struct AllocRec {
  char* map = nullptr;
  size_t map_len = 0;
  char* user = nullptr;
  size_t bytes = 0;
};
constexpr int kMaxAllocs = 4096;
AllocRec g_allocs[kMaxAllocs];
std::mutex g_alloc_mu;

std::atomic<int> g_schedule{0};
std::mutex g_err_mu;
std::string g_error;
cudaError_t g_last = cudaSuccess;
std::atomic<uint64_t> g_threads{0}, g_steps{0};
std::atomic<int64_t> g_nanos{0};

// Traffic counting: the global buffers of the current launch as sorted [begin, end) address
// ranges (set before the workers start, read-only while they run) and the running totals.
std::atomic<bool> g_count_traffic{false};
std::vector<std::pair<uintptr_t, uintptr_t>> g_ranges;
std::atomic<uint64_t> g_requests{0}, g_sectors{0}, g_bytes{0};

thread_local Block* t_block = nullptr;
thread_local Fiber* t_fiber = nullptr;
thread_local uint64_t t_epoch = 1;
thread_local sigjmp_buf t_jmp;
thread_local volatile sig_atomic_t t_in_block = 0;
thread_local bool t_altstack = false;

std::string dim_str(uint3 d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}
std::string thread_str(const Fiber& f) {
  return "thread " + dim_str(f.ts.tid);
}

std::string where(const Block& b) {
  if (b.launch->gpusim)
    return std::string("cudasim: kernel ") + b.launch->kernel + " (mojo_gpusim), block " +
           dim_str(b.bid) + ": ";
  return std::string("cudasim: kernel ") + b.launch->kernel + " (launched at " + b.launch->file +
         ":" + std::to_string(b.launch->line) + "), block " + dim_str(b.bid) + ": ";
}

void fail(Block& b, const std::string& what) {
  if (b.error.empty()) b.error = where(b) + what;
}

void set_global_error(const std::string& msg, cudaError_t code) {
  std::lock_guard<std::mutex> lk(g_err_mu);
  if (g_error.empty()) g_error = msg;
  if (g_last == cudaSuccess) g_last = code;
}

void fiber_entry(bctx::transfer_t t) {
  Fiber* f = static_cast<Fiber*>(t.data);
  f->caller = t.fctx;
  t_block->launch->tramp(t_block->launch->body);
  f->st = St::Done;
  bctx::jump_fcontext(f->caller, nullptr);
}

void yield(Fiber& f) {
  bctx::transfer_t t = bctx::jump_fcontext(f.caller, nullptr);
  f.caller = t.fctx;
}

void resume(Block& b, Fiber& f) {
  if (f.st == St::Fresh)
    f.ctx = bctx::make_fcontext(b.stacks->top(f.linear), kStackBytes, &fiber_entry);
  f.st = St::Runnable;
  t_fiber = &f;
  g_steps.fetch_add(1, std::memory_order_relaxed);
  bctx::transfer_t t = bctx::jump_fcontext(f.ctx, &f);
  f.ctx = t.fctx;
  t_fiber = nullptr;
}

const char* op_name(const Fiber& f) {
  if (f.op == WarpOp::Sync) return "__syncwarp";
  if (f.op == WarpOp::Vote)
    return f.kind == kVoteBallot ? "__ballot_sync"
           : f.kind == kVoteAny  ? "__any_sync"
                                 : "__all_sync";
  switch (f.kind) {
    case kShflIdx:
      return "__shfl_sync";
    case kShflUp:
      return "__shfl_up_sync";
    case kShflDown:
      return "__shfl_down_sync";
    default:
      return "__shfl_xor_sync";
  }
}

std::string hex(unsigned m) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", m);
  return buf;
}

std::string state_str(const Fiber& f) {
  switch (f.st) {
    case St::Done:
      return "has exited";
    case St::Barrier:
      return std::string("waits at __syncthreads (") + f.file + ":" + std::to_string(f.line) + ")";
    case St::Warp:
      return std::string("waits at ") + op_name(f) + " with mask " + hex(f.mask) + " (" + f.file +
             ":" + std::to_string(f.line) + ")";
    default:
      return "is running";
  }
}

// Completes every warp operation whose mask's lanes have all arrived. Returns true if any did.
bool complete_warp_ops(Block& b) {
  bool progress = false;
  int n = static_cast<int>(b.fibers.size());
  for (int w = 0; w * 32 < n; ++w) {
    int lanes = std::min(32, n - w * 32);
    for (int l = 0; l < lanes; ++l) {
      Fiber& f = b.fibers[w * 32 + l];
      if (f.st != St::Warp) continue;
      unsigned m = f.mask;
      if (lanes < 32 && (m >> lanes) != 0) {
        fail(b, thread_str(f) + " calls " + op_name(f) + " with mask " + hex(m) +
                    ", which names lanes that do not exist in its warp of " +
                    std::to_string(lanes) + " threads (" + f.file + ":" + std::to_string(f.line) +
                    ")");
        return false;
      }
      bool ready = true;
      for (int k = 0; k < lanes && ready; ++k) {
        if (!(m >> k & 1u)) continue;
        const Fiber& g = b.fibers[w * 32 + k];
        ready = g.st == St::Warp && g.mask == m && g.op == f.op && g.kind == f.kind;
      }
      if (!ready) continue;
      uint64_t ballot = 0;
      for (int k = 0; k < lanes; ++k)
        if (m >> k & 1u) ballot |= (b.fibers[w * 32 + k].value != 0 ? 1ull : 0ull) << k;
      for (int k = 0; k < lanes; ++k) {
        if (!(m >> k & 1u)) continue;
        Fiber& g = b.fibers[w * 32 + k];
        if (g.op == WarpOp::Shuffle) {
          int width = g.width;
          int seg = (k / width) * width;
          int src = k;
          switch (g.kind) {
            case kShflIdx:
              src = seg + (g.arg & (width - 1));
              break;
            case kShflUp:
              src = k - g.arg < seg ? k : k - g.arg;
              break;
            case kShflDown:
              src = k + g.arg >= seg + width ? k : k + g.arg;
              break;
            default: {
              int x = k ^ g.arg;
              src = (x < seg || x >= seg + width) ? k : x;
            }
          }
          if (src < 0 || src >= lanes || !(m >> src & 1u)) {
            fail(b, thread_str(g) + " (lane " + std::to_string(k) + ") reads lane " +
                        std::to_string(src) + " through " + op_name(g) + ", but mask " + hex(m) +
                        " does not include that lane (" + g.file + ":" + std::to_string(g.line) +
                        ")");
            return false;
          }
          g.result = b.fibers[w * 32 + src].value;
        } else if (g.op == WarpOp::Vote) {
          unsigned bal = static_cast<unsigned>(ballot);
          g.result = g.kind == kVoteBallot ? bal : g.kind == kVoteAny ? (bal != 0) : (bal == m);
        }
        g.st = St::Runnable;
        ++g.syncs;
      }
      ++b.warp_sync[w];
      progress = true;
    }
  }
  return progress;
}

void deadlock(Block& b) {
  for (const Fiber& f : b.fibers) {
    if (f.st != St::Warp) continue;
    int w = f.warp;
    std::string missing;
    for (int k = 0; k < 32; ++k) {
      if (!(f.mask >> k & 1u)) continue;
      size_t idx = static_cast<size_t>(w * 32 + k);
      if (idx >= b.fibers.size()) continue;
      const Fiber& g = b.fibers[idx];
      if (g.st == St::Warp && g.mask == f.mask && g.op == f.op) continue;
      missing += (missing.empty() ? "" : "; ") + ("lane " + std::to_string(k) + " " + state_str(g));
    }
    fail(b, "deadlock: " + thread_str(f) + " " + state_str(f) + ", but " + missing);
    return;
  }
  fail(b, "deadlock: no thread can make progress");
}

void barrier(Block& b) {
  const Fiber* waiting = nullptr;
  std::string exited;
  int n_exited = 0;
  for (const Fiber& f : b.fibers) {
    if (f.st == St::Warp) return deadlock(b);
    if (f.st == St::Barrier) {
      if (!waiting) waiting = &f;
      if (f.line != waiting->line || std::strcmp(f.file, waiting->file) != 0) {
        fail(b, "barrier divergence: " + thread_str(*waiting) + " " + state_str(*waiting) +
                    " while " + thread_str(f) + " " + state_str(f));
        return;
      }
    } else if (f.st == St::Done) {
      if (n_exited++ < 4) exited += (exited.empty() ? "" : ", ") + dim_str(f.ts.tid);
    }
  }
  if (n_exited) {
    fail(b, "barrier divergence: " + thread_str(*waiting) + " " + state_str(*waiting) + ", but " +
                std::to_string(n_exited) +
                " thread(s) of the block already exited without reaching it (" + exited +
                (n_exited > 4 ? ", ..." : "") + ")");
    return;
  }
  for (Fiber& f : b.fibers)
    if (f.st == St::Barrier) {
      f.st = St::Runnable;
      ++f.syncs;
    }
  ++t_epoch;
}

std::vector<int> make_order(int n, int schedule, uint64_t block_linear) {
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  if (schedule == 1) {
    std::reverse(order.begin(), order.end());
  } else if (schedule >= 2) {
    std::mt19937_64 rng(static_cast<uint64_t>(schedule) * 0x9E3779B97F4A7C15ull + block_linear);
    for (int i = n - 1; i > 0; --i) std::swap(order[i], order[rng() % (i + 1)]);
  }
  return order;
}

void run_block(Block& b, uint64_t block_linear) {
  const Launch& L = *b.launch;
  int n = static_cast<int>(L.block.x * L.block.y * L.block.z);
  b.fibers.assign(n, Fiber{});
  b.warp_sync.assign((n + 31) / 32, 0);
  if (L.smem) {
    b.dyn.assign(L.smem, 0);
    b.dyn_shadow.clear();
  }
  for (int i = 0; i < n; ++i) {
    Fiber& f = b.fibers[i];
    f.linear = i;
    f.warp = i / 32;
    f.lane = i % 32;
    f.ts.tid = uint3{i % L.block.x, (i / L.block.x) % L.block.y, i / (L.block.x * L.block.y)};
    f.ts.bid = b.bid;
    f.ts.bdim = L.block;
    f.ts.gdim = L.grid;
  }
  g_threads.fetch_add(n, std::memory_order_relaxed);
  ++t_epoch;
  b.linear = block_linear;
  ++b.serial;
  std::vector<int> order = make_order(n, g_schedule.load(), block_linear);
  while (true) {
    for (int i : order) {
      Fiber& f = b.fibers[i];
      if (f.st == St::Fresh || f.st == St::Runnable) resume(b, f);
      if (!b.error.empty()) return;
    }
    if (complete_warp_ops(b)) continue;
    if (!b.error.empty()) return;
    bool all_done = true;
    for (const Fiber& f : b.fibers) all_done = all_done && f.st == St::Done;
    if (all_done) return;
    barrier(b);
    if (!b.error.empty()) return;
  }
}

const AllocRec* find_alloc(const void* addr) {
  const char* a = static_cast<const char*>(addr);
  for (const AllocRec& r : g_allocs)
    if (r.map && a >= r.map && a < r.map + r.map_len) return &r;
  return nullptr;
}

void on_segv(int sig, siginfo_t* si, void*) {
  if (t_in_block && t_block) {
    Block& b = *t_block;
    const AllocRec* r = find_alloc(si->si_addr);
    const char* a = static_cast<const char*>(si->si_addr);
    std::string who = t_fiber ? thread_str(*t_fiber) : std::string("a thread");
    if (r) {
      long long off = a - r->user;
      fail(b, "out-of-bounds global access by " + who + ": byte offset " + std::to_string(off) +
                  " of a buffer of " + std::to_string(r->bytes) + " bytes");
    } else {
      fail(b, "invalid memory access (signal " + std::to_string(sig) + ") by " + who +
                  " at address " + std::to_string(reinterpret_cast<uintptr_t>(a)));
    }
    siglongjmp(t_jmp, 1);
  }
  signal(sig, SIG_DFL);
}

void install_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = &on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, nullptr);
    sigaction(SIGBUS, &sa, nullptr);
  });
  if (!t_altstack) {
    static thread_local std::vector<char> alt(64 * 1024);
    stack_t ss;
    ss.ss_sp = alt.data();
    ss.ss_size = alt.size();
    ss.ss_flags = 0;
    sigaltstack(&ss, nullptr);
    t_altstack = true;
  }
}

// Adds a finished block's accesses to the totals, as a GPU's load/store units would issue them.
// One warp instruction is one request: the accesses that the lanes of a warp make at one
// instruction (the same access site), between the same two warp-synchronous points (barriers and
// warp operations, counted per thread), on the same visit of that site since the last such point
// (the n-th visit of each lane together). Lanes whose loops run a different number of times
// therefore issue the extra iterations as requests of their own, with only the lanes that run them,
// and later instructions pair up again, as SIMT execution reconverges. A request costs one
// transaction per distinct 32-byte sector its lanes touch.
void fold_traffic(Block& b) {
  uint64_t requests = 0, sectors = 0;
  struct Touch {
    uint32_t syncs;
    uintptr_t site;
    uint32_t visit;
    uint64_t sector;
    bool operator<(const Touch& o) const {
      return std::tie(syncs, site, visit, sector) < std::tie(o.syncs, o.site, o.visit, o.sector);
    }
  };
  std::vector<Touch> touched;
  std::map<std::pair<uint32_t, uintptr_t>, uint32_t> visits;
  for (size_t w0 = 0; w0 < b.fibers.size(); w0 += 32) {
    const size_t w1 = std::min(b.fibers.size(), w0 + 32);
    touched.clear();
    for (size_t i = w0; i < w1; ++i) {
      visits.clear();
      for (const Access& a : b.fibers[i].accesses) {
        const uint32_t visit = visits[{a.syncs, a.site}]++;
        for (uint64_t s = 0; s < (a.sectors & 0xff); ++s)
          touched.push_back(Touch{a.syncs, a.site, visit, (a.sectors >> 8) + s});
      }
    }
    std::sort(touched.begin(), touched.end());
    for (size_t k = 0; k < touched.size(); ++k) {
      const Touch& t = touched[k];
      const bool new_request = k == 0 || t.syncs != touched[k - 1].syncs ||
                               t.site != touched[k - 1].site || t.visit != touched[k - 1].visit;
      if (new_request) ++requests;
      if (new_request || t.sector != touched[k - 1].sector) ++sectors;
    }
  }
  for (Fiber& f : b.fibers) f.accesses.clear();
  g_requests.fetch_add(requests, std::memory_order_relaxed);
  g_sectors.fetch_add(sectors, std::memory_order_relaxed);
}

void worker(const Launch& L, std::atomic<uint64_t>& next, std::atomic<bool>& abort_all) {
  install_handler();
  Block b;
  b.launch = &L;
  b.stacks = take_stacks();
  uint64_t nblocks = static_cast<uint64_t>(L.grid.x) * L.grid.y * L.grid.z;
  t_block = &b;
  while (!abort_all.load()) {
    uint64_t i = next.fetch_add(1);
    if (i >= nblocks) break;
    b.bid =
        uint3{static_cast<unsigned>(i % L.grid.x), static_cast<unsigned>((i / L.grid.x) % L.grid.y),
              static_cast<unsigned>(i / (static_cast<uint64_t>(L.grid.x) * L.grid.y))};
    b.error.clear();
    if (sigsetjmp(t_jmp, 1) == 0) {
      t_in_block = 1;
      run_block(b, i);
    }
    t_in_block = 0;
    t_fiber = nullptr;
    if (g_count_traffic.load(std::memory_order_relaxed)) fold_traffic(b);
    if (!b.error.empty()) {
      set_global_error(b.error, cudaErrorLaunchFailure);
      abort_all = true;
    }
  }
  t_block = nullptr;
  give_stacks(b.stacks);
}

}  // namespace

ThreadState* current() {
  static thread_local ThreadState host{};  // host code sees zeros
  return t_fiber ? &t_fiber->ts : &host;
}

void syncthreads(const char* file, int line) {
  Fiber* f = t_fiber;
  if (!f) return;
  f->st = St::Barrier;
  f->file = file;
  f->line = line;
  yield(*f);
}

static uint64_t warp_op(WarpOp op, int kind, unsigned mask, uint64_t value, int arg, int width,
                        const char* file, int line) {
  Fiber* f = t_fiber;
  if (!f) return value;
  Block& b = *t_block;
  f->op = op;
  f->kind = kind;
  f->mask = mask;
  f->value = value;
  f->arg = arg;
  f->width = width;
  f->file = file;
  f->line = line;
  if (!(mask >> f->lane & 1u)) {
    fail(b, thread_str(*f) + " (lane " + std::to_string(f->lane) + ") calls " + op_name(*f) +
                " with mask " + hex(mask) + ", which does not include its own lane (" + file + ":" +
                std::to_string(line) + ")");
  }
  if (width <= 0 || width > 32 || (width & (width - 1)) != 0)
    fail(b, thread_str(*f) + " calls " + op_name(*f) + " with width " + std::to_string(width) +
                " (must be a power of two up to 32)");
  f->st = St::Warp;
  yield(*f);
  return f->result;
}

void syncwarp(unsigned mask, const char* file, int line) {
  warp_op(WarpOp::Sync, 0, mask, 0, 0, 32, file, line);
}

uint64_t shuffle(ShuffleKind kind, unsigned mask, uint64_t value, int arg, int width,
                 const char* file, int line) {
  return warp_op(WarpOp::Shuffle, kind, mask, value, arg, width, file, line);
}

unsigned vote(VoteKind kind, unsigned mask, int predicate, const char* file, int line) {
  return static_cast<unsigned>(
      warp_op(WarpOp::Vote, kind, mask, predicate != 0, 0, 32, file, line));
}

void* dynamic_shared(size_t* bytes) {
  if (!t_block) {
    *bytes = 0;
    return nullptr;
  }
  *bytes = t_block->dyn.size();
  return t_block->dyn.data();
}

ShadowCell* dynamic_shadow(size_t cells) {
  Block& b = *t_block;
  if (b.dyn_shadow.size() < cells) b.dyn_shadow.assign(cells, ShadowCell{0, -1, -1, 0, 0});
  return b.dyn_shadow.data();
}

void shared_index_error(const char* name, long long index, size_t count) {
  if (!t_block || !t_fiber) return;
  fail(*t_block, thread_str(*t_fiber) + " indexes shared array '" + name + "' at " +
                     std::to_string(index) + ", outside [0, " + std::to_string(count) + ")");
}

void shared_access(ShadowCell* cells, size_t, size_t index, bool write, const char* name,
                   const void* address) {
  Fiber* f = t_fiber;
  if (!f) return;
  Block& b = *t_block;
  ShadowCell& c = cells[index];
  if (c.epoch != t_epoch) c = ShadowCell{t_epoch, -1, -1, 0, 0};
  uint32_t ws = b.warp_sync[f->warp];
  int me = f->linear;
  // Lanes of one warp are ordered by a warp operation completed between their accesses: `at` is
  // the warp's count of completed operations when the other access happened.
  auto ordered = [&](int other, uint32_t at) { return other / 32 == f->warp && ws != at; };
  auto race = [&](int other, const char* other_did) {
    char addr[32];
    std::snprintf(addr, sizeof addr, "%p", address);
    std::string who = other >= 0 ? thread_str(b.fibers[other]) : std::string("other threads");
    fail(b, "shared-memory race on " + std::string(name) + "[" + std::to_string(index) +
                "] (address " + addr + "): " + thread_str(*f) + (write ? " writes" : " reads") +
                " it and " + who + " " + other_did + " it in the same barrier interval");
  };
  if (c.writer >= 0 && c.writer != me && !ordered(c.writer, c.write_sync))
    return race(c.writer, "wrote");
  if (write) {
    if (c.reader == -2) return race(-1, "read");
    if (c.reader >= 0 && c.reader != me && !ordered(c.reader, c.read_sync))
      return race(c.reader, "read");
    c.writer = me;
    c.reader = -1;
    c.write_sync = ws;
  } else {
    c.reader = (c.reader == -1 || c.reader == me) ? me : -2;
    c.read_sync = ws;
  }
}

namespace {
void launch_impl(const Launch& L);
}

void launch(const char* kernel, dim3 grid, dim3 block, size_t smem, const char* file, int line,
            void (*tramp)(void*), void* body) {
  launch_impl(Launch{kernel, file, line, grid, block, smem, tramp, body, false});
}

namespace {
void gpusim_reset_races();

void launch_impl(const Launch& L) {
  const char* kernel = L.kernel;
  const char* file = L.file;
  const int line = L.line;
  const dim3 grid = L.grid, block = L.block;
  const size_t smem = L.smem;
  uint64_t threads = static_cast<uint64_t>(block.x) * block.y * block.z;
  if (threads == 0 || threads > kMaxBlockThreads || grid.x == 0 || grid.y == 0 || grid.z == 0 ||
      grid.y > 65535 || grid.z > 65535 || smem > kMaxDynamicShared) {
    set_global_error(std::string("cudasim: kernel ") + kernel + " (" + file + ":" +
                         std::to_string(line) + "): invalid launch configuration grid (" +
                         std::to_string(grid.x) + "," + std::to_string(grid.y) + "," +
                         std::to_string(grid.z) + ") block (" + std::to_string(block.x) + "," +
                         std::to_string(block.y) + "," + std::to_string(block.z) + ") smem " +
                         std::to_string(smem),
                     cudaErrorInvalidConfiguration);
    return;
  }
  if (L.gpusim) gpusim_reset_races();
  if (g_count_traffic.load() || L.gpusim) {
    std::lock_guard<std::mutex> lk(g_alloc_mu);
    g_ranges.clear();
    for (const AllocRec& r : g_allocs) {
      if (!r.map) continue;
      const auto begin = reinterpret_cast<uintptr_t>(r.user);
      g_ranges.emplace_back(begin, begin + r.bytes);
    }
    std::sort(g_ranges.begin(), g_ranges.end());
  }
  auto t0 = std::chrono::steady_clock::now();
  uint64_t nblocks = static_cast<uint64_t>(grid.x) * grid.y * grid.z;
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  unsigned nw = static_cast<unsigned>(std::min<uint64_t>(hw, nblocks));
  std::atomic<uint64_t> next{0};
  std::atomic<bool> abort_all{false};
  if (nw <= 1) {
    worker(L, next, abort_all);
  } else {
    std::vector<std::thread> ts;
    for (unsigned w = 0; w < nw; ++w) ts.emplace_back([&] { worker(L, next, abort_all); });
    for (auto& t : ts) t.join();
  }
  g_nanos.fetch_add(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
          .count());
}
}  // namespace

void set_schedule(int schedule) {
  g_schedule = schedule;
}

void* alloc(size_t bytes) {
  size_t data_pages = (std::max<size_t>(bytes, 1) + kPage - 1) / kPage;
  size_t len = (data_pages + 2) * kPage;
  void* m = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  char* map = static_cast<char*>(m);
  mprotect(map + kPage, data_pages * kPage, PROT_READ | PROT_WRITE);
  char* user;
  if (g_schedule.load() % 2 == 0) {
    // Against the trailing guard page; 4-byte granularity keeps every f32/i32 element aligned.
    size_t rounded = (bytes + 3) / 4 * 4;
    user = map + kPage + data_pages * kPage - rounded;
  } else {
    user = map + kPage;
  }
  std::lock_guard<std::mutex> lk(g_alloc_mu);
  for (AllocRec& r : g_allocs) {
    if (!r.map) {
      r.user = user;
      r.bytes = bytes;
      r.map_len = len;
      r.map = map;
      return user;
    }
  }
  munmap(map, len);
  return nullptr;
}

void free(void* p) {
  if (!p) return;
  std::lock_guard<std::mutex> lk(g_alloc_mu);
  for (AllocRec& r : g_allocs) {
    if (r.map && r.user == p) {
      char* map = r.map;
      size_t len = r.map_len;
      r.map = nullptr;
      munmap(map, len);
      return;
    }
  }
}

std::string take_error() {
  std::lock_guard<std::mutex> lk(g_err_mu);
  std::string e = std::move(g_error);
  g_error.clear();
  g_last = cudaSuccess;
  return e;
}

Stats stats() {
  Stats s;
  s.threads = g_threads.load();
  s.steps = g_steps.load();
  s.seconds = static_cast<double>(g_nanos.load()) * 1e-9;
  return s;
}

void reset_stats() {
  g_threads = 0;
  g_steps = 0;
  g_nanos = 0;
}

void count_traffic(bool on) {
  g_count_traffic = on;
}

Traffic traffic() {
  return Traffic{g_requests.load(), g_sectors.load(), g_bytes.load()};
}

void reset_traffic() {
  g_requests = 0;
  g_sectors = 0;
  g_bytes = 0;
}

void note_access(uintptr_t addr, size_t size, uintptr_t site) {
  Fiber* f = t_fiber;
  if (!f || size == 0 || !g_count_traffic.load(std::memory_order_relaxed)) return;
  auto it = std::upper_bound(g_ranges.begin(), g_ranges.end(),
                             std::make_pair(addr, std::numeric_limits<uintptr_t>::max()));
  if (it == g_ranges.begin() || addr >= std::prev(it)->second) return;  // not global memory
  const uint64_t first = addr / 32, last = (addr + size - 1) / 32;
  f->accesses.push_back(
      Access{site, f->syncs, first << 8 | std::min<uint64_t>(last - first + 1, 0xff)});
  g_bytes.fetch_add(size, std::memory_order_relaxed);
}

// ---- mojo_gpusim: the C ABI that kernels rewritten from NVVM IR call (harness/mojo_gpusim/) ----

namespace {

// Global-memory race tracking for mojo_gpusim launches: per byte of an alloc() buffer, the last
// writer and the last reader, with their block and barrier interval. Two accesses conflict when
// they come from different threads, at least one writes, not both are atomic, and the threads are
// in different blocks or in the same barrier interval of one block. Only the last reader is kept,
// so a race with an earlier reader can go unreported; none is reported that is not there.
struct GlobalAccess {
  int64_t thread = -1;  // global thread id; -1: none
  uint64_t block = 0;
  uint64_t epoch = 0;
  bool atomic = false;
  const char* file = "";
  int line = 0;
};
struct GlobalCell {
  GlobalAccess writer, reader;
};
constexpr int kRaceShards = 64;
struct RaceShard {
  std::mutex mu;
  std::unordered_map<uintptr_t, GlobalCell> cells;
};
RaceShard g_race[kRaceShards];

void gpusim_reset_races() {
  for (RaceShard& sh : g_race) {
    std::lock_guard<std::mutex> lk(sh.mu);
    sh.cells.clear();
  }
}

bool in_global(uintptr_t addr) {
  auto it = std::upper_bound(g_ranges.begin(), g_ranges.end(),
                             std::make_pair(addr, std::numeric_limits<uintptr_t>::max()));
  return it != g_ranges.begin() && addr < std::prev(it)->second;
}

std::string thread_of(const Block& b, int64_t gid) {
  const Launch& L = *b.launch;
  const uint64_t n = static_cast<uint64_t>(L.block.x) * L.block.y * L.block.z;
  const uint64_t blk = static_cast<uint64_t>(gid) / n, t = static_cast<uint64_t>(gid) % n;
  uint3 tid{static_cast<unsigned>(t % L.block.x), static_cast<unsigned>((t / L.block.x) % L.block.y),
            static_cast<unsigned>(t / (static_cast<uint64_t>(L.block.x) * L.block.y))};
  uint3 bid{static_cast<unsigned>(blk % L.grid.x), static_cast<unsigned>((blk / L.grid.x) % L.grid.y),
            static_cast<unsigned>(blk / (static_cast<uint64_t>(L.grid.x) * L.grid.y))};
  return "thread " + dim_str(tid) + " of block " + dim_str(bid);
}

std::string at(const char* file, int line) {
  return std::string(" (") + file + ":" + std::to_string(line) + ")";
}

void global_access(Block& b, Fiber& f, uintptr_t addr, size_t size, bool write, bool atomic,
                   const char* file, int line) {
  const uint64_t n = b.fibers.size();
  const int64_t me = static_cast<int64_t>(b.linear * n + f.linear);
  for (size_t k = 0; k < size; ++k) {
    const uintptr_t a = addr + k;
    RaceShard& sh = g_race[(a >> 2) % kRaceShards];
    std::string msg;
    {
      std::lock_guard<std::mutex> lk(sh.mu);
      GlobalCell& c = sh.cells[a];
      auto conflicts = [&](const GlobalAccess& o) {
        return o.thread >= 0 && o.thread != me && !(atomic && o.atomic) &&
               (o.block != b.linear || o.epoch == t_epoch);
      };
      auto report = [&](const GlobalAccess& o, const char* did) {
        const int64_t other = o.thread;
        const bool other_atomic = o.atomic;
        const char* ofile = o.file;
        const int oline = o.line;
        const AllocRec* r = find_alloc(reinterpret_cast<const void*>(a));
        const long long off = r ? static_cast<long long>(a - reinterpret_cast<uintptr_t>(r->user)) : 0;
        msg = "global-memory race at byte offset " + std::to_string(off) + " of a buffer of " +
              std::to_string(r ? r->bytes : 0) + " bytes: " + thread_str(f) +
              (write ? (atomic ? " writes it atomically" : " writes it")
                     : (atomic ? " reads it atomically" : " reads it")) +
              at(file, line) + " and " + thread_of(b, other) + " " + did +
              (other_atomic ? " it atomically" : " it") + at(ofile, oline) +
              (b.linear == static_cast<uint64_t>(other) / n ? ", in the same barrier interval"
                                                            : ", with no barrier between blocks") +
              "; at least one is not atomic";
      };
      if (conflicts(c.writer)) {
        report(c.writer, "wrote");
      } else if (write && conflicts(c.reader)) {
        report(c.reader, "read");
      } else {
        (write ? c.writer : c.reader) = GlobalAccess{me, b.linear, t_epoch, atomic, file, line};
        if (write && c.reader.thread == me) c.reader.thread = -1;
      }
    }
    if (!msg.empty()) {
      fail(b, msg);
      return;
    }
  }
}

Block::GSlot* slot_of(Block& b, uintptr_t addr) {
  for (Block::GSlot& s : b.gslots) {
    const auto begin = reinterpret_cast<uintptr_t>(s.data);
    if (s.data && s.gen == b.serial && addr >= begin && addr < begin + s.bytes) return &s;
  }
  return nullptr;
}

}  // namespace

}  // namespace sb::sim

using sb::sim::Block;
using sb::sim::Fiber;

extern "C" {

// Thread and block registers: code = register * 4 + dimension (register 0 tid, 1 ctaid, 2 ntid,
// 3 nctaid; dimension 0 x, 1 y, 2 z); 16 the lane, 17 the warp within the block.
uint32_t sb_gpusim_sreg(uint32_t code) {
  const Fiber* f = sb::sim::t_fiber;
  if (!f) return 0;
  const sb::sim::ThreadState& t = f->ts;
  auto pick3 = [&](uint3 v) { return code % 4 == 0 ? v.x : code % 4 == 1 ? v.y : v.z; };
  auto pickd = [&](dim3 v) { return code % 4 == 0 ? v.x : code % 4 == 1 ? v.y : v.z; };
  switch (code / 4) {
    case 0:
      return pick3(t.tid);
    case 1:
      return pick3(t.bid);
    case 2:
      return pickd(t.bdim);
    case 3:
      return pickd(t.gdim);
  }
  if (code == 16) return static_cast<uint32_t>(f->lane);
  if (code == 17) return static_cast<uint32_t>(f->warp);
  return 0;
}

void sb_gpusim_barrier(const char* file, int32_t line) {
  sb::sim::syncthreads(file, line);
}

void sb_gpusim_syncwarp(uint32_t mask, const char* file, int32_t line) {
  sb::sim::syncwarp(mask, file, line);
}

// kind: 0 idx, 1 up, 2 down, 3 bfly (xor); clamp: NVVM's c operand, whose bits 8-12 hold 32 minus
// the segment width.
uint32_t sb_gpusim_shfl(int32_t kind, uint32_t mask, uint32_t value, int32_t arg, int32_t clamp,
                        const char* file, int32_t line) {
  const int width = 32 - ((clamp >> 8) & 0x1f);
  return static_cast<uint32_t>(sb::sim::shuffle(static_cast<sb::sim::ShuffleKind>(kind), mask,
                                                value, arg, width, file, line));
}

// kind: 0 ballot, 1 any, 2 all, 3 uni (all lanes in the mask agree).
uint32_t sb_gpusim_vote(int32_t kind, uint32_t mask, int32_t pred, const char* file,
                        int32_t line) {
  if (kind == 3) {
    const unsigned ballot = sb::sim::vote(sb::sim::kVoteBallot, mask, pred, file, line);
    return ballot == 0 || ballot == mask;
  }
  return sb::sim::vote(static_cast<sb::sim::VoteKind>(kind), mask, pred, file, line);
}

// The block's instance of shared array `slot` (an addrspace(3) global of the rewritten module):
// `bytes` long (negative: the launch's dynamic shared memory), aligned to `align`, its accesses
// tracked for races per `granule` bytes (the size of its scalar elements). A new block gets fresh
// memory filled with 0xff bytes (NaN, -1), so reading what no thread wrote shows.
void* sb_gpusim_shared(int32_t slot, int64_t bytes, int64_t align, int64_t granule,
                       const char* name) {
  Block* b = sb::sim::t_block;
  if (!b || !sb::sim::t_fiber || slot < 0) return nullptr;
  if (b->gslots.size() <= static_cast<size_t>(slot)) b->gslots.resize(slot + 1);
  Block::GSlot& s = b->gslots[slot];
  if (s.gen == b->serial) return s.data;
  s.gen = b->serial;
  s.name = name;
  s.granule = granule > 0 ? static_cast<size_t>(granule) : 1;
  if (bytes < 0) {
    s.data = b->dyn.data();
    s.bytes = b->dyn.size();
  } else {
    const size_t al = align > 16 ? static_cast<size_t>(align) : 16;
    if (s.cap < static_cast<size_t>(bytes) + al) {
      s.cap = static_cast<size_t>(bytes) + al;
      s.mem.reset(new unsigned char[s.cap]);
    }
    const auto base = reinterpret_cast<uintptr_t>(s.mem.get());
    s.data = reinterpret_cast<unsigned char*>((base + al - 1) / al * al);
    s.bytes = static_cast<size_t>(bytes);
    std::memset(s.data, 0xff, s.bytes);
  }
  s.shadow.assign((s.bytes + s.granule - 1) / s.granule, sb::sim::ShadowCell{0, -1, -1, 0, 0});
  return s.data;
}

// One load or store of `size` bytes at `addr`. flags: 1 a write, 2 atomic, 4 the IR says shared
// (address space 3). Shared accesses are checked for races (atomics exempt) and for addresses
// outside every shared array; global ones (in alloc() buffers) for races, and counted as traffic.
void sb_gpusim_access(void* addr, int64_t size, int32_t flags, const char* file, int32_t line) {
  using namespace sb::sim;
  Fiber* f = t_fiber;
  Block* b = t_block;
  if (!f || !b || size <= 0 || !b->error.empty()) return;
  const auto a = reinterpret_cast<uintptr_t>(addr);
  const bool write = flags & 1, atomic = flags & 2;
  if (Block::GSlot* s = slot_of(*b, a)) {
    if (atomic) return;
    const auto begin = reinterpret_cast<uintptr_t>(s->data);
    const size_t first = (a - begin) / s->granule;
    const size_t last = std::min(s->shadow.size() - 1, (a + size - 1 - begin) / s->granule);
    for (size_t i = first; i <= last && b->error.empty(); ++i)
      shared_access(s->shadow.data(), s->shadow.size(), i, write, s->name.c_str(),
                    s->data + i * s->granule);
    return;
  }
  if (flags & 4) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%p", addr);
    fail(*b, thread_str(*f) + (write ? " writes " : " reads ") + std::to_string(size) +
                 " bytes of shared memory at " + buf + ", outside every shared array" +
                 at(file, line));
    return;
  }
  if (!in_global(a)) return;
  if (b->launch->gpusim) global_access(*b, *f, a, static_cast<size_t>(size), write, atomic, file, line);
  note_access(a, static_cast<size_t>(size), reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}

// Runs `entry(argv)` once per thread of grid x block (a rewritten kernel's entry, which unpacks
// its arguments from 8-byte slots). Returns 0, or 1 with the failure in take_error().
int sb_gpusim_launch(const char* kernel, void (*entry)(void*), void* argv, unsigned gx, unsigned gy,
                     unsigned gz, unsigned bx, unsigned by, unsigned bz, size_t smem) {
  using namespace sb::sim;
  struct Body {
    void (*entry)(void*);
    void* argv;
  } body{entry, argv};
  launch_impl(Launch{kernel, "mojo_gpusim", 0, dim3(gx, gy, gz), dim3(bx, by, bz), smem,
                     [](void* p) {
                       auto* bb = static_cast<Body*>(p);
                       bb->entry(bb->argv);
                     },
                     &body, true});
  std::lock_guard<std::mutex> lk(g_err_mu);
  return g_error.empty() ? 0 : 1;
}

}  // extern "C"

namespace sb::sim {

}  // namespace sb::sim

using namespace sb::sim;

cudaError_t cudaGetLastError() {
  std::lock_guard<std::mutex> lk(g_err_mu);
  cudaError_t e = g_last;
  g_last = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError() {
  std::lock_guard<std::mutex> lk(g_err_mu);
  return g_last;
}

const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument";
    case cudaErrorMemoryAllocation:
      return "out of memory";
    case cudaErrorInvalidConfiguration:
      return "invalid configuration argument";
    case cudaErrorIllegalAddress:
      return "an illegal memory access was encountered";
    case cudaErrorLaunchFailure:
      return "unspecified launch failure (see the cudasim report)";
  }
  return "unknown error";
}

cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int) {
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
      *value = 1024;
      return cudaSuccess;
    case cudaDevAttrWarpSize:
      *value = 32;
      return cudaSuccess;
    case cudaDevAttrMultiProcessorCount:
      *value = 4;
      return cudaSuccess;
    case cudaDevAttrL2CacheSize:
      *value = 1 << 20;
      return cudaSuccess;
  }
  return cudaErrorInvalidValue;
}

cudaError_t cudaMalloc(void** p, size_t bytes) {
  *p = sb::sim::alloc(bytes);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaFree(void* p) {
  sb::sim::free(p);
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind) {
  std::memcpy(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t) {
  return cudaMemcpy(dst, src, bytes, kind);
}

cudaError_t cudaMemset(void* p, int value, size_t bytes) {
  std::memset(p, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t) {
  return cudaMemset(p, value, bytes);
}

cudaError_t cudaDeviceSynchronize() {
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) {
  return cudaSuccess;
}

// Memory-access hooks. Simulated modules are compiled with -fsanitize=kernel-address and
// --param asan-instrumentation-with-call-threshold=0, so GCC calls these before every load and
// store; the simulator counts the global-memory ones (see traffic() in cudasim.h) and checks
// nothing else here (guard pages catch out-of-bounds accesses). A harness built with a real
// address sanitizer would clash with these definitions.
// The site of an access is the hook's return address: one per load or store instruction of the
// instrumented module (each inlined copy its own), the "instruction" that lanes of a warp share.
#define SB_SIM_SITE reinterpret_cast<uintptr_t>(__builtin_return_address(0))
extern "C" {
#define SB_SIM_ACCESS_HOOKS(n)                  \
  void __asan_load##n##_noabort(uintptr_t a) {  \
    sb::sim::note_access(a, n, SB_SIM_SITE);    \
  }                                             \
  void __asan_store##n##_noabort(uintptr_t a) { \
    sb::sim::note_access(a, n, SB_SIM_SITE);    \
  }
SB_SIM_ACCESS_HOOKS(1)
SB_SIM_ACCESS_HOOKS(2)
SB_SIM_ACCESS_HOOKS(4)
SB_SIM_ACCESS_HOOKS(8)
SB_SIM_ACCESS_HOOKS(16)
#undef SB_SIM_ACCESS_HOOKS
void __asan_loadN_noabort(uintptr_t a, size_t n) {
  sb::sim::note_access(a, n, SB_SIM_SITE);
}
void __asan_storeN_noabort(uintptr_t a, size_t n) {
  sb::sim::note_access(a, n, SB_SIM_SITE);
}
void __asan_handle_no_return() {}
}
