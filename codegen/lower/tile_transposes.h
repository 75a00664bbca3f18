// Lowering pass tile_transposes: elementwise statements that read a tensor across its rows as the
// output is written along its own (y[j, i] = x[i, j]), which a parallel strategy runs in square
// tiles of two output dimensions so that the lines of both tensors a tile touches stay in the
// first-level cache. The one home of that rule; its result is data in the lowered spec
// (Spec::schedule.tiles, ir.h), which the cpu, mojo and mlir printers read.
//
// The rule: a statement of rank >= 2 without reductions, with a read of rank >= 2 whose last,
// contiguous subscript does not use the innermost output index but uses another output index d,
// and some earlier subscript of which uses the innermost one. Walking the innermost index, that
// read then jumps a whole row of its tensor per element, and each cache line it loads serves one
// element before it is evicted. In tiles of dimensions d and the innermost, each line loaded
// serves a whole tile's width of the other dimension. Tiling only reorders the elements of an
// elementwise statement (the checker rejects a statement reading its own output), so every value
// is the plain loop nest's. Among several such reads the first in print order decides d, and
// among the output indices of its last subscript the innermost.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace sb {

// The extents of a tile in elements: `outer` of the tiled outer output dimension (the read's
// contiguous one: each tile reads pieces of `outer` elements of `inner` rows of it), `inner` of
// the innermost output dimension (each tile writes pieces of `inner` elements of `outer` rows of
// the output). The defaults, from one side-by-side run of transpose 2048x4096 f32 under cpu
// omp_simd on the development VM (2 cores, 10 repetitions;
// results/vm/transpose-tile-params-20261202.json, its spec's variants one per pair), medians:
// 512 by 16 3.24 ms, 256 by 16 3.40, 1024 by 16 3.34, 512 by 32 4.70, 32 by 32 6.73, 128 by 8
// 13.2 (loops 44.9). An inner piece of 16 f32 is one 64-byte line, so each non-temporal store is
// a whole line; half a line costs a read of it. A strategy's `tile` and `tile_inner` parameters
// set them.
struct Tiles {
  int64_t outer = 512;
  int64_t inner = 16;
};

// Blocks. Within a tile, a read that moves along the tiled dimension d in its last subscript and
// along the innermost index i in one earlier one, each as `index + offset` (x[i, j] for
// y[j, i]), no other subscript using either, of 4-byte elements without a boundary rule, moves in
// blocks of kBlockInner elements along i by kBlockOuter along d. The printer loads kBlockOuter
// contiguous elements from each of kBlockInner rows of the read, transposes them in registers and
// computes kBlockOuter output pieces of kBlockInner elements (one 64-byte line of f32) from the
// block, instead of gathering each piece's elements one at a time across rows (the cpu, mojo and
// mlir printers). On transpose 2048x4096 f32 on the development VM (2-core Zen 3, AVX2), side by
// side, medians: cpu omp_simd 6.6 ms gathering, 3.0 ms in blocks; mojo vectorize_parallel 10.2
// and 3.4 ms; mlir openmp 7.5 and 3.9 ms (results/vm/transpose-blocks-ab-20261206).
constexpr int64_t kBlockInner = 16;
constexpr int64_t kBlockOuter = 8;

// The shuffles that transpose 8 vectors of 8 lanes (8 rows of a block) in registers, as data for
// the printers that spell shuffles (mojo's SIMD.shuffle, mlir's vector.shuffle; the cpu's
// sb_transpose_8x16_b32 spells the same steps as AVX unpack, shuffle and lane-permute
// intrinsics). Vectors are numbered 0-7 for the rows as loaded, then 8, 9, ... for the steps'
// results in order; a step's mask takes lanes 0-7 from `a` and 8-15 from `b`. Three rounds: rows
// interleaved in pairs, pairs of pairs, then 128-bit halves. `rows_out[q]` is the vector holding
// row q of the transpose (lane p: row p's element q).
struct Shuffle {
  int a = 0, b = 0;
  std::array<int, 8> mask{};
};
struct TransposeNetwork {
  std::vector<Shuffle> steps;
  std::array<int, 8> rows_out{};
};
const TransposeNetwork& transpose_8x8_network();

// Fills spec.schedule.tiles and epilogue_tiles (one TileChoice per statement each) of a
// typechecked spec.
void tile_transposes(Spec& spec);

// The `--dump-ir tile_transposes` text: per statement, e.g.
// `stmt 0 (y[j, i] = x[i, j]): tiles j and i (read x[i, j]); the read in blocks`, or `: no`.
std::string dump_tile_transposes(const Spec& spec);

// The pass's choice for `st` (one of spec.stmts, or the epilogue of one: stmt_slot).
const TileChoice& tile_choice(const Spec& spec, const Statement& st);

// The read the pass tiles `st` for (TileChoice::read; the choice's dim must be >= 0).
const Expr& tiled_read(const Spec& spec, const Statement& st);

// The reads of `st` that a printer takes from a block where the pass moves its read in blocks
// (TileChoice::block_axis >= 0): the pass's read first, then every other read of the same element.
std::vector<const Expr*> block_reads(const Spec& spec, const Statement& st);

}  // namespace sb
