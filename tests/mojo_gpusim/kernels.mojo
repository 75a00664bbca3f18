# Hand-written Mojo GPU kernels for mojo_gpusim's tests (tests/mojo_gpusim/gpusim_test.cpp), each
# correct kernel next to its mutations, which the simulator must catch. Compiled with
#   mojo build -g --emit llvm --target-triple nvptx64-nvidia-cuda --target-accelerator nvidia:sm_90
# Kernel integer arguments are Int64; shared arrays hold BLOCK = 64 elements (two warps).
from max.gpu import thread_idx, block_idx, block_dim, barrier
from max.gpu.memory import AddressSpace
from max.gpu.primitives.warp import shuffle_down
from std.atomic import Atomic
from std.memory import stack_allocation


# c = a + b, one thread per element, guarded.
@export("vadd")
def vadd(a: Pointer[Float32, MutAnyOrigin], b: Pointer[Float32, MutAnyOrigin],
         c: Pointer[Float32, MutAnyOrigin], n: Int64) abi("C"):
    var i = Int64(block_idx.x * block_dim.x + thread_idx.x)
    if i < n:
        c[unsafe_offset=i] = a[unsafe_offset=i] + b[unsafe_offset=i]


# Mutation: the guard widened by one (i <= n) reads and writes one element past the end.
@export("vadd_guard_widened")
def vadd_guard_widened(a: Pointer[Float32, MutAnyOrigin], b: Pointer[Float32, MutAnyOrigin],
                       c: Pointer[Float32, MutAnyOrigin], n: Int64) abi("C"):
    var i = Int64(block_idx.x * block_dim.x + thread_idx.x)
    if i <= n:
        c[unsafe_offset=i] = a[unsafe_offset=i] + b[unsafe_offset=i]


# out[block] = the sum of the block's elements of a: a tree reduction in shared memory.
@export("block_sum")
def block_sum(a: Pointer[Float32, MutAnyOrigin], out_: Pointer[Float32, MutAnyOrigin],
              n: Int64) abi("C"):
    var sh = stack_allocation[64, Float32, address_space=AddressSpace.SHARED]()
    var t = Int64(thread_idx.x)
    var i = Int64(block_idx.x * block_dim.x) + t
    var v: Float32 = 0
    if i < n:
        v = a[unsafe_offset=i]
    sh[unsafe_offset=t] = v
    barrier()
    var s: Int64 = 32
    while s > 0:
        if t < s:
            sh[unsafe_offset=t] = sh[unsafe_offset=t] + sh[unsafe_offset=t + s]
        barrier()
        s = s // 2
    if t == 0:
        out_[unsafe_offset=Int64(block_idx.x)] = sh[unsafe_offset=0]


# Mutation: the barrier() inside the reduction loop removed.
@export("block_sum_no_barrier")
def block_sum_no_barrier(a: Pointer[Float32, MutAnyOrigin], out_: Pointer[Float32, MutAnyOrigin],
                         n: Int64) abi("C"):
    var sh = stack_allocation[64, Float32, address_space=AddressSpace.SHARED]()
    var t = Int64(thread_idx.x)
    var i = Int64(block_idx.x * block_dim.x) + t
    var v: Float32 = 0
    if i < n:
        v = a[unsafe_offset=i]
    sh[unsafe_offset=t] = v
    barrier()
    var s: Int64 = 32
    while s > 0:
        if t < s:
            sh[unsafe_offset=t] = sh[unsafe_offset=t] + sh[unsafe_offset=t + s]
        s = s // 2
    if t == 0:
        out_[unsafe_offset=Int64(block_idx.x)] = sh[unsafe_offset=0]


# Mutation: threads past the end return before the block's barriers.
@export("block_sum_early_return")
def block_sum_early_return(a: Pointer[Float32, MutAnyOrigin],
                           out_: Pointer[Float32, MutAnyOrigin], n: Int64) abi("C"):
    var sh = stack_allocation[64, Float32, address_space=AddressSpace.SHARED]()
    var t = Int64(thread_idx.x)
    var i = Int64(block_idx.x * block_dim.x) + t
    if i >= n:
        return
    sh[unsafe_offset=t] = a[unsafe_offset=i]
    barrier()
    var s: Int64 = 32
    while s > 0:
        if t < s:
            sh[unsafe_offset=t] = sh[unsafe_offset=t] + sh[unsafe_offset=t + s]
        barrier()
        s = s // 2
    if t == 0:
        out_[unsafe_offset=Int64(block_idx.x)] = sh[unsafe_offset=0]


# out[warp] = the sum of the warp's 32 elements, by shuffles (one warp per 32 threads).
@export("warp_sum")
def warp_sum(a: Pointer[Float32, MutAnyOrigin], out_: Pointer[Float32, MutAnyOrigin]) abi("C"):
    var i = Int64(block_idx.x * block_dim.x + thread_idx.x)
    var v = a[unsafe_offset=i]
    var off: UInt32 = 16
    while off > 0:
        v += shuffle_down(UInt(0xFFFFFFFF), v, off)
        off = off // 2
    if i % 32 == 0:
        out_[unsafe_offset=i // 32] = v


# Mutation: the shuffle mask narrowed to the low 16 lanes.
@export("warp_sum_narrow_mask")
def warp_sum_narrow_mask(a: Pointer[Float32, MutAnyOrigin],
                         out_: Pointer[Float32, MutAnyOrigin]) abi("C"):
    var i = Int64(block_idx.x * block_dim.x + thread_idx.x)
    var v = a[unsafe_offset=i]
    var off: UInt32 = 16
    while off > 0:
        v += shuffle_down(UInt(0x0000FFFF), v, off)
        off = off // 2
    if i % 32 == 0:
        out_[unsafe_offset=i // 32] = v


# out[0] += the sum of a, over several blocks: a block reduction, then one atomic add per block.
@export("total_sum")
def total_sum(a: Pointer[Float32, MutAnyOrigin], out_: Pointer[Float32, MutAnyOrigin],
              n: Int64) abi("C"):
    var sh = stack_allocation[64, Float32, address_space=AddressSpace.SHARED]()
    var t = Int64(thread_idx.x)
    var i = Int64(block_idx.x * block_dim.x) + t
    var v: Float32 = 0
    if i < n:
        v = a[unsafe_offset=i]
    sh[unsafe_offset=t] = v
    barrier()
    var s: Int64 = 32
    while s > 0:
        if t < s:
            sh[unsafe_offset=t] = sh[unsafe_offset=t] + sh[unsafe_offset=t + s]
        barrier()
        s = s // 2
    if t == 0:
        _ = Atomic.fetch_add(out_, sh[unsafe_offset=0])


# Mutation: every block's thread 0 adds into out[0] without an atomic.
@export("total_sum_no_atomic")
def total_sum_no_atomic(a: Pointer[Float32, MutAnyOrigin], out_: Pointer[Float32, MutAnyOrigin],
                        n: Int64) abi("C"):
    var sh = stack_allocation[64, Float32, address_space=AddressSpace.SHARED]()
    var t = Int64(thread_idx.x)
    var i = Int64(block_idx.x * block_dim.x) + t
    var v: Float32 = 0
    if i < n:
        v = a[unsafe_offset=i]
    sh[unsafe_offset=t] = v
    barrier()
    var s: Int64 = 32
    while s > 0:
        if t < s:
            sh[unsafe_offset=t] = sh[unsafe_offset=t] + sh[unsafe_offset=t + s]
        barrier()
        s = s // 2
    if t == 0:
        out_[unsafe_offset=0] = out_[unsafe_offset=0] + sh[unsafe_offset=0]
