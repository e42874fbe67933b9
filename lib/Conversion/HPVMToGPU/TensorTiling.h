//===- TensorTiling.h - Tensor products in work-group tiles -----*- C++ -*-===//
// A tensor leaf whose output is a convolution (one group) or a product
// followed by an elementwise epilogue (bias add, activation, batchnorm, map)
// computes it as a matrix product in tiles: each work-group of kTileThreads
// threads computes a kTileRows x kTileColumns block of the output, loading
// kTileDepth-deep slices of both operands into work-group memory once and
// reading them from there kTileRows (kTileColumns) times; each thread keeps a
// 4 x 4 block of sums in registers. The epilogue is applied to each sum where
// it is stored (TensorElements.h's `known`), so the kernel still writes only
// the leaf's output.
//
// A convolution is the product of its filters [F, C*KH*KW] and its input's
// windows [C*KH*KW, N*OH*OW] (an implicit GEMM: the window elements are read
// from the image where they are loaded, padding as zeros).
//
// A convolution whose epilogue feeds a pool in the same leaf (conv + bias +
// activation + pool, then maybe more elementwise ops: the fused layers of
// VGG and AlexNet) is tiled too: a tile's columns are then the window taps of
// whole pooled pixels (kTileColumns / taps of them), the epilogued values go
// to work-group memory, and the threads fold each pooled pixel's window from
// there, in the per-element kernel's order, before the rest of the epilogue.
#ifndef HPVM_CONVERSION_HPVMTOGPU_TENSORTILING_H
#define HPVM_CONVERSION_HPVMTOGPU_TENSORTILING_H

#include "TensorElements.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <optional>

namespace mlir::hpvm::tensor_kernels {

/// Rows and columns of the output per work-group, the depth of the operand
/// slices in work-group memory, and the threads of a work-group (16 x 16,
/// each computing 4 x 4 elements).
constexpr int64_t kTileRows = 64;
constexpr int64_t kTileColumns = 64;
constexpr int64_t kTileDepth = 16;
constexpr int64_t kTileThreads = 256;

/// When a leaf's product is tiled: `Auto` where it is large enough to fill
/// a work-group (rows >= 32, columns >= 64, depth >= 32), `Always` wherever
/// the leaf's shape allows (tests), `Never`.
enum class TilingMode { Auto, Always, Never };

/// The product a tensor leaf computes in tiles, as a (batched) matrix
/// product: the output's element (batch, row, column) sums `depth` terms.
struct TiledProduct {
  /// The hpvm.tensor.conv2d (rows = filters, columns = images x output
  /// pixels, depth = channels x window) or hpvm.tensor.mul (rows, columns
  /// and depth of its matrices, batches = the rest of its shape).
  Operation *product = nullptr;
  /// The leaf's tensor output: `product`, or an elementwise epilogue of it.
  Value output;
  int64_t batches = 1, rows = 0, columns = 0, depth = 0;
  /// The pool between the convolution's epilogue and `output`, if any; its
  /// window's taps, the pooled pixels (images x pooled rows x columns) and
  /// how many of them one tile computes.
  TensorPoolOp pool;
  int64_t taps = 0, pooledPixels = 0, pooledPerTile = 0;

  /// The tiles along the columns (of pooled pixels with a pool).
  int64_t getColumnTiles() const;
  /// The work-groups of the kernel.
  int64_t getWorkgroups() const;
};

/// The product of `leaf` (checked by checkTensorLeaf) to compute in tiles
/// under `mode`, if any: its one tensor output is an elementwise epilogue of
/// one convolution of one group or one product of matrices of one rank,
/// read at the output's own indices, or of one pool of such an epilogue of a
/// convolution.
std::optional<TiledProduct> getTiledProduct(LeafOp leaf, TilingMode mode);

/// The work-group memory the tiled kernel takes (one parameter each,
/// WorkgroupMemory.h): the operand slices, and with a pool the tile's
/// epilogued values.
SmallVector<MemRefType, 3> getTileMemoryTypes(MLIRContext *context,
                                              const TiledProduct &tiled);

/// Emits the body of the tiled kernel at `b`'s insertion point: the product
/// through `memory` (views of getTileMemoryTypes' types), the epilogue (and
/// pool), the stores to `output`. Every thread of the work-group runs it (it
/// holds barriers); elements past the output's end are not stored.
void emitTiledProduct(OpBuilder &b, Location loc, ElementEmitter &emitter,
                      const TiledProduct &tiled, ValueRange memory,
                      Value output);

} // namespace mlir::hpvm::tensor_kernels

#endif // HPVM_CONVERSION_HPVMTOGPU_TENSORTILING_H
