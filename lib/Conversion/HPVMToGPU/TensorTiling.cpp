//===- TensorTiling.cpp - Tensor products in work-group tiles -------------===//
// The tiled kernels of convolutions and products (TensorTiling.h).
#include "TensorTiling.h"
#include "WorkgroupMemory.h"

#include "HPVM/Conversion/TensorScalars.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::hpvm;

namespace mlir::hpvm::tensor_kernels {
namespace {

/// The work-group is kThreadRows x kThreadColumns threads; thread (ty, tx)
/// computes the rows ty + 16 i and the columns tx + 16 j of its tile (i, j <
/// 4), so that neighbouring threads store neighbouring columns.
constexpr int64_t kThreadRows = 16;
constexpr int64_t kThreadColumns = 16;
constexpr int64_t kRowsPerThread = kTileRows / kThreadRows;
constexpr int64_t kColumnsPerThread = kTileColumns / kThreadColumns;
static_assert(kThreadRows * kThreadColumns == kTileThreads);
static_assert(kTileRows * kTileDepth % kTileThreads == 0 &&
              kTileColumns * kTileDepth % kTileThreads == 0);
/// The lhs slice is stored transposed, [depth][rows + 1]: the extra column
/// puts the stores of neighbouring threads (neighbouring k) in different
/// banks.
constexpr int64_t kLhsStride = kTileRows + 1;

/// Ops an epilogue may apply to the product: elementwise, of its shape.
bool isEpilogueOp(Operation *op) {
  return isa<TensorAddOp, TensorBatchNormOp, TensorMapOp>(op) ||
         scalars::isActivation(op);
}

/// Finds the one convolution or product below `value` through epilogue ops
/// of `shape`; false when there is another reduction, or the product is
/// reshaped or broadcast on the way.
bool findProduct(Value value, ArrayRef<int64_t> shape,
                 ElementwiseValues &known, Operation *&product) {
  if (isElementwise(value, known))
    return true; // no reduction below: a bias, a constant, an input
  Operation *def = value.getDefiningOp();
  if (!def || tensorType(value).getShape() != shape)
    return false;
  if (isa<TensorConv2DOp, TensorMulOp>(def)) {
    if (product && product != def)
      return false;
    product = def;
    return true;
  }
  if (!isEpilogueOp(def))
    return false;
  for (Value operand : def->getOperands())
    if (isa<RankedTensorType>(operand.getType()) &&
        !findProduct(operand, shape, known, product))
      return false;
  return true;
}

/// Finds the one pool below `value` through epilogue ops of `shape`; false
/// when there is another reduction on the way.
bool findPool(Value value, ArrayRef<int64_t> shape, ElementwiseValues &known,
              TensorPoolOp &pool) {
  if (isElementwise(value, known))
    return true;
  Operation *def = value.getDefiningOp();
  if (!def || tensorType(value).getShape() != shape)
    return false;
  if (auto found = dyn_cast<TensorPoolOp>(def)) {
    if (pool && pool != found)
      return false;
    pool = found;
    return true;
  }
  if (!isEpilogueOp(def))
    return false;
  for (Value operand : def->getOperands())
    if (isa<RankedTensorType>(operand.getType()) &&
        !findPool(operand, shape, known, pool))
      return false;
  return true;
}

/// Fills `tiled`'s sizes from its convolution or product; false when the
/// shape is not one the tiles cover.
bool setSizes(TiledProduct &tiled) {
  if (auto conv = dyn_cast<TensorConv2DOp>(tiled.product)) {
    if (conv.getGroups() != 1)
      return false; // a grouped (depthwise) convolution sums few terms
    if (auto knob = conv->getAttrOfType<KnobAttr>(HPVMDialect::getKnobAttrName());
        knob && (knob.getKind() == KnobKind::perforate_rows ||
                 knob.getKind() == KnobKind::perforate_cols))
      return false; // TensorPerforation.h
    ArrayRef<int64_t> filter = tensorType(conv.getFilter()).getShape();
    ArrayRef<int64_t> out = tensorType(conv.getResult()).getShape();
    tiled.rows = filter[0];
    tiled.columns = out[0] * out[2] * out[3];
    tiled.depth = filter[1] * filter[2] * filter[3];
    // sample_filter: the sums run over the kept taps only.
    if (KnobAttr sampling = getSampling(conv, KnobKind::sample_filter))
      tiled.depth = countKept(tiled.depth, sampling);
    if (!tiled.pool)
      return true;
    SmallVector<int64_t> window = getInts(tiled.pool.getWindow());
    ArrayRef<int64_t> pooled = tensorType(tiled.pool.getResult()).getShape();
    tiled.taps = window[0] * window[1];
    if (tiled.taps > kTileColumns)
      return false; // a window wider than a tile
    tiled.pooledPerTile = kTileColumns / tiled.taps;
    tiled.pooledPixels = pooled[0] * pooled[2] * pooled[3];
    return true;
  }
  auto mul = cast<TensorMulOp>(tiled.product);
  ArrayRef<int64_t> lhs = tensorType(mul.getLhs()).getShape();
  ArrayRef<int64_t> rhs = tensorType(mul.getRhs()).getShape();
  ArrayRef<int64_t> out = tensorType(mul.getResult()).getShape();
  if (out.size() < 2 || lhs.size() != out.size() || rhs.size() != out.size() ||
      lhs.drop_back(2) != out.drop_back(2) || rhs.drop_back(2) != out.drop_back(2))
    return false; // broadcast batches
  tiled.rows = out[out.size() - 2];
  tiled.columns = out.back();
  tiled.depth = lhs.back();
  for (int64_t size : out.drop_back(2))
    tiled.batches *= size;
  return true;
}

/// Builds the tiled kernel's body (one work-group's tile).
class TileEmitter {
public:
  TileEmitter(OpBuilder &b, Location loc, ElementEmitter &element,
              const TiledProduct &tiled)
      : b(b), loc(loc), e(element), tiled(tiled),
        elementType(tensorType(tiled.output).getElementType()) {}

  void emit(ValueRange memory, Value output);

private:
  Value index(int64_t value) { return e.index(value); }
  Value add(Value lhs, Value rhs) { return e.addIndex(lhs, rhs); }
  Value mul(Value lhs, int64_t rhs) { return e.mulIndex(lhs, rhs); }
  Value div(Value lhs, int64_t rhs) {
    return arith::DivUIOp::create(b, loc, lhs, index(rhs));
  }
  Value rem(Value lhs, int64_t rhs) {
    return arith::RemUIOp::create(b, loc, lhs, index(rhs));
  }
  Value below(Value at, int64_t bound) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, at,
                                 index(bound));
  }
  Value both(Value lhs, Value rhs) {
    return arith::AndIOp::create(b, loc, lhs, rhs);
  }
  /// The convolution's output pixel of a column of the product, and whether
  /// the column is one (a pooled kernel's columns are window taps: some fall
  /// in the pool's padding or past the last pooled pixel).
  struct Pixel {
    Value n, h, w, valid;
  };
  Pixel convPixel(Value column);
  /// The lhs matrix's element (row, k) of this work-group's batch, as the
  /// products read it.
  Value lhsAt(Value row, Value k);
  /// The rhs matrix's element (k, column); `pixel` is the column's of a
  /// convolution.
  Value rhsAt(Value k, Value column, const Pixel &pixel);
  /// A product's operand at (batch..., i, j), stored in its precision knob's
  /// format as the per-element kernels read it.
  Value productOperand(Value operand, Value i, Value j);
  /// The index along the depth of the `k`-th term summed: `k`, or the
  /// `k`-th tap a sampling knob keeps (the depth counts the kept taps).
  Value term(Value k) {
    KnobAttr sampling = getSampling(tiled.product, KnobKind::sample_filter);
    return sampling ? e.keptElement(k, sampling) : k;
  }
  /// The output's indices of the matrix element (row, column).
  SmallVector<Value> outputIndices(Value row, Value column);
  /// One step of the depth loop: both slices from k0 on into work-group
  /// memory, then the sums over them.
  SmallVector<Value> step(Value k0, ValueRange sums, Value lhsTile,
                          Value rhsTile);
  /// `fn(localRow, localColumn, sum)` for each of the thread's elements of
  /// the tile (rows threadRow + 16 i, columns threadColumn + 16 j).
  void forThreadElements(ValueRange sums,
                         function_ref<void(Value, Value, Value)> fn);
  /// The epilogue and the stores of the thread's elements.
  void store(ValueRange sums, Value output);
  /// With a pool: the epilogued values into `staged`, then each pooled
  /// pixel's window folded from there, the rest of the epilogue, the stores.
  void storePooled(ValueRange sums, Value staged, Value output);

  OpBuilder &b;
  Location loc;
  ElementEmitter &e;
  const TiledProduct &tiled;
  Type elementType;
  Value thread, threadRow, threadColumn, firstRow, firstColumn;
  /// The batch's indices (products of more than two dimensions).
  SmallVector<Value> batch;
};

Value TileEmitter::lhsAt(Value row, Value k) {
  if (auto conv = dyn_cast<TensorConv2DOp>(tiled.product)) {
    ArrayRef<int64_t> filter = tensorType(conv.getFilter()).getShape();
    SmallVector<Value> tap = e.delinearize(k, filter.drop_front());
    Value weight = e.emit(conv.getFilter(), {row, tap[0], tap[1], tap[2]});
    // sample_filter: the kept weights scaled by rate / (rate - 1).
    if (KnobAttr sampling = getSampling(conv, KnobKind::sample_filter))
      weight = arith::MulFOp::create(
          b, loc, weight,
          scalars::floatConstant(b, loc, elementType,
                                 double(sampling.getRate()) /
                                     double(sampling.getRate() - 1)));
    return weight;
  }
  return productOperand(cast<TensorMulOp>(tiled.product).getLhs(), row, k);
}

TileEmitter::Pixel TileEmitter::convPixel(Value column) {
  ArrayRef<int64_t> out = tensorType(tiled.product->getResult(0)).getShape();
  if (!tiled.pool) {
    SmallVector<Value> pixel = e.delinearize(column, {out[0], out[2], out[3]});
    return {pixel[0], pixel[1], pixel[2], below(column, tiled.columns)};
  }
  // Column c of tile t: tap c mod taps of pooled pixel t * perTile + c / taps.
  Value local = rem(column, kTileColumns);
  Value tap = rem(local, tiled.taps);
  Value pooled = add(mul(div(column, kTileColumns), tiled.pooledPerTile),
                     div(local, tiled.taps));
  TensorPoolOp pool = tiled.pool;
  ArrayRef<int64_t> shape = tensorType(pool.getResult()).getShape();
  SmallVector<Value> at = e.delinearize(pooled, {shape[0], shape[2], shape[3]});
  SmallVector<int64_t> window = getInts(pool.getWindow());
  SmallVector<int64_t> strides = getInts(pool.getStrides());
  SmallVector<int64_t> padding = getInts(pool.getPadding());
  Value h = e.windowPosition(at[1], strides[0], padding[0], div(tap, window[1]));
  Value w = e.windowPosition(at[2], strides[1], padding[1], rem(tap, window[1]));
  Value valid = both(both(below(local, tiled.pooledPerTile * tiled.taps),
                          below(pooled, tiled.pooledPixels)),
                     both(e.within(h, out[2]), e.within(w, out[3])));
  return {at[0], h, w, valid};
}

Value TileEmitter::rhsAt(Value k, Value column, const Pixel &pixel) {
  Value zero = scalars::floatConstant(b, loc, elementType, 0.0);
  if (auto conv = dyn_cast<TensorConv2DOp>(tiled.product)) {
    ArrayRef<int64_t> filter = tensorType(conv.getFilter()).getShape();
    SmallVector<Value> tap = e.delinearize(k, filter.drop_front());
    SmallVector<int64_t> padding = getInts(conv.getPadding());
    SmallVector<int64_t> strides = getInts(conv.getStrides());
    Value h = e.windowPosition(pixel.h, strides[0], padding[0], tap[1]);
    Value w = e.windowPosition(pixel.w, strides[1], padding[1], tap[2]);
    return e.padded(conv.getInput(), {pixel.n, tap[0], h, w},
                    isPadded(padding), zero);
  }
  return productOperand(cast<TensorMulOp>(tiled.product).getRhs(), k, column);
}

Value TileEmitter::productOperand(Value operand, Value i, Value j) {
  SmallVector<Value> indices(batch);
  indices.append({i, j});
  Value value = e.emit(operand, indices);
  std::optional<KnobKind> precision = getPrecision(tiled.product);
  return precision ? e.roundTo(*precision, value) : value;
}

SmallVector<Value> TileEmitter::outputIndices(Value row, Value column) {
  if (isa<TensorConv2DOp>(tiled.product)) {
    Pixel pixel = convPixel(column);
    return {pixel.n, row, pixel.h, pixel.w};
  }
  SmallVector<Value> indices(batch);
  indices.append({row, column});
  return indices;
}

SmallVector<Value> TileEmitter::step(Value k0, ValueRange sums, Value lhsTile,
                                     Value rhsTile) {
  Value zero = scalars::floatConstant(b, loc, elementType, 0.0);
  // The lhs slice, kTileRows x kTileDepth: thread t loads (t / 16 + 16 q,
  // t mod 16), neighbouring threads neighbouring k (row-major weights).
  for (int64_t q = 0; q < kTileRows * kTileDepth / kTileThreads; ++q) {
    Value localRow = add(div(thread, kTileDepth),
                         index(q * (kTileThreads / kTileDepth)));
    Value localK = rem(thread, kTileDepth);
    Value row = add(firstRow, localRow), k = add(k0, localK);
    Value value = e.select(both(below(row, tiled.rows), below(k, tiled.depth)),
                           zero, [&] { return lhsAt(row, term(k)); });
    memref::StoreOp::create(b, loc, value, lhsTile, ValueRange{localK, localRow});
  }
  // The rhs slice, kTileDepth x kTileColumns: neighbouring threads load
  // neighbouring columns.
  for (int64_t q = 0; q < kTileColumns * kTileDepth / kTileThreads; ++q) {
    Value localK = add(div(thread, kTileColumns),
                       index(q * (kTileThreads / kTileColumns)));
    Value localColumn = rem(thread, kTileColumns);
    Value column = add(firstColumn, localColumn), k = add(k0, localK);
    // A convolution's column: its pixel decoded once, for the check and
    // the load.
    Pixel pixel = isa<TensorConv2DOp>(tiled.product)
                      ? convPixel(column)
                      : Pixel{{}, {}, {}, below(column, tiled.columns)};
    Value value =
        e.select(both(pixel.valid, below(k, tiled.depth)), zero,
                 [&] { return rhsAt(term(k), column, pixel); });
    memref::StoreOp::create(b, loc, value, rhsTile,
                            ValueRange{localK, localColumn});
  }
  gpu::BarrierOp::create(b, loc);
  // The sums over the slices, k ascending as in the per-element kernels.
  auto inner = scf::ForOp::create(
      b, loc, index(0), index(kTileDepth), index(1), sums,
      [&](OpBuilder &nested, Location, Value kk, ValueRange carried) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
        SmallVector<Value> lhs, rhs, next;
        for (int64_t i = 0; i < kRowsPerThread; ++i)
          lhs.push_back(memref::LoadOp::create(
              b, loc, lhsTile,
              ValueRange{kk, add(threadRow, index(i * kThreadRows))}));
        for (int64_t j = 0; j < kColumnsPerThread; ++j)
          rhs.push_back(memref::LoadOp::create(
              b, loc, rhsTile,
              ValueRange{kk, add(threadColumn, index(j * kThreadColumns))}));
        for (int64_t i = 0; i < kRowsPerThread; ++i)
          for (int64_t j = 0; j < kColumnsPerThread; ++j)
            next.push_back(arith::AddFOp::create(
                b, loc, carried[i * kColumnsPerThread + j],
                arith::MulFOp::create(b, loc, lhs[i], rhs[j])));
        scf::YieldOp::create(b, loc, next);
      });
  // The slices are overwritten by the next step once every thread is done.
  gpu::BarrierOp::create(b, loc);
  return SmallVector<Value>(inner.getResults());
}

void TileEmitter::forThreadElements(
    ValueRange sums, function_ref<void(Value, Value, Value)> fn) {
  for (int64_t i = 0; i < kRowsPerThread; ++i)
    for (int64_t j = 0; j < kColumnsPerThread; ++j)
      fn(add(threadRow, index(i * kThreadRows)),
         add(threadColumn, index(j * kThreadColumns)),
         sums[i * kColumnsPerThread + j]);
}

void TileEmitter::store(ValueRange sums, Value output) {
  // A product with a precision knob: its result rounded to the format at
  // the store when the bias and activation follow it, else where it is.
  TensorMulOp rounded = getRoundedProduct(tiled.output);
  e.roundedAtStore = rounded;
  std::optional<KnobKind> precision = getPrecision(tiled.product);
  forThreadElements(sums, [&](Value localRow, Value localColumn, Value sum) {
    Value row = add(firstRow, localRow), column = add(firstColumn, localColumn);
    auto inside = scf::IfOp::create(
        b, loc, both(below(row, tiled.rows), below(column, tiled.columns)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&inside.getThenRegion().front());
    if (precision && tiled.product != rounded.getOperation())
      sum = e.roundTo(*precision, sum);
    e.known[tiled.product->getResult(0)] = sum;
    SmallVector<Value> indices = outputIndices(row, column);
    Value element = e.emit(tiled.output, indices);
    if (rounded)
      element = e.roundTo(*getPrecision(rounded), element);
    memref::StoreOp::create(b, loc, element, output, indices);
    e.known.clear();
  });
}

void TileEmitter::storePooled(ValueRange sums, Value staged, Value output) {
  TensorPoolOp pool = tiled.pool;
  Value identity = scalars::floatConstant(
      b, loc, elementType, scalars::poolIdentity(pool.getKind()));
  // Each tap's epilogued value (the pool's identity where it is padding).
  forThreadElements(sums, [&](Value localRow, Value localColumn, Value sum) {
    Value row = add(firstRow, localRow);
    Pixel pixel = convPixel(add(firstColumn, localColumn));
    Value value = e.select(both(below(row, tiled.rows), pixel.valid), identity, [&] {
      e.known[tiled.product->getResult(0)] = sum;
      Value epilogued = e.emit(pool.getInput(), {pixel.n, row, pixel.h, pixel.w});
      e.known.clear();
      return epilogued;
    });
    memref::StoreOp::create(b, loc, value, staged, ValueRange{localRow, localColumn});
  });
  gpu::BarrierOp::create(b, loc);
  // The tile's pooled pixels, kTileRows x perTile, spread over the threads.
  ArrayRef<int64_t> shape = tensorType(pool.getResult()).getShape();
  int64_t items = kTileRows * tiled.pooledPerTile;
  Value firstPooled = mul(div(firstColumn, kTileColumns), tiled.pooledPerTile);
  SmallVector<int64_t> window = getInts(pool.getWindow());
  for (int64_t q = 0, n = llvm::divideCeil(items, kTileThreads); q < n; ++q) {
    Value item = add(thread, index(q * kTileThreads));
    Value localRow = div(item, tiled.pooledPerTile);
    Value localPooled = rem(item, tiled.pooledPerTile);
    Value row = add(firstRow, localRow);
    Value pooled = add(firstPooled, localPooled);
    auto inside = scf::IfOp::create(
        b, loc,
        both(below(item, items),
             both(below(row, tiled.rows), below(pooled, tiled.pooledPixels))),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&inside.getThenRegion().front());
    Value firstTap = mul(localPooled, tiled.taps);
    Value reduced = e.poolWindow(pool, [&](Value r, Value s, Value) -> Value {
      Value tap = add(firstTap, add(mul(r, window[1]), s));
      return memref::LoadOp::create(b, loc, staged, ValueRange{localRow, tap});
    });
    SmallVector<Value> at = e.delinearize(pooled, {shape[0], shape[2], shape[3]});
    SmallVector<Value> indices{at[0], row, at[1], at[2]};
    e.known[pool.getResult()] = reduced;
    memref::StoreOp::create(b, loc, e.emit(tiled.output, indices), output, indices);
    e.known.clear();
  }
}

void TileEmitter::emit(ValueRange memory, Value output) {
  thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value group = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  threadRow = div(thread, kThreadColumns);
  threadColumn = rem(thread, kThreadColumns);
  // Work-group g: column tile g mod C, row tile (g / C) mod R, batch
  // g / (C R).
  int64_t columnTiles = tiled.getColumnTiles();
  int64_t rowTiles = llvm::divideCeil(tiled.rows, kTileRows);
  firstColumn = mul(rem(group, columnTiles), kTileColumns);
  Value rest = div(group, columnTiles);
  firstRow = mul(rem(rest, rowTiles), kTileRows);
  if (auto product = dyn_cast<TensorMulOp>(tiled.product))
    batch = e.delinearize(div(rest, rowTiles),
                          tensorType(product.getResult()).getShape().drop_back(2));
  Value zero = scalars::floatConstant(b, loc, elementType, 0.0);
  SmallVector<Value> init(kRowsPerThread * kColumnsPerThread, zero);
  auto loop = scf::ForOp::create(
      b, loc, index(0), index(tiled.depth), index(kTileDepth), init,
      [&](OpBuilder &nested, Location, Value k0, ValueRange sums) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
        scf::YieldOp::create(b, loc, step(k0, sums, memory[0], memory[1]));
      });
  if (tiled.pool)
    storePooled(loop.getResults(), memory[2], output);
  else
    store(loop.getResults(), output);
}

} // namespace

int64_t TiledProduct::getColumnTiles() const {
  return pool ? llvm::divideCeil(pooledPixels, pooledPerTile)
              : llvm::divideCeil(columns, kTileColumns);
}

int64_t TiledProduct::getWorkgroups() const {
  return batches * llvm::divideCeil(rows, kTileRows) * getColumnTiles();
}

std::optional<TiledProduct> getTiledProduct(LeafOp leaf, TilingMode mode) {
  if (mode == TilingMode::Never)
    return std::nullopt;
  auto ret = cast<ReturnOp>(leaf.getBody().front().getTerminator());
  TiledProduct tiled;
  for (Value value : ret.getOperands()) {
    if (!isa<RankedTensorType>(value.getType()))
      continue;
    if (tiled.output)
      return std::nullopt; // one tensor output
    tiled.output = value;
  }
  if (!tiled.output)
    return std::nullopt;
  ElementwiseValues known;
  if (!findProduct(tiled.output, tensorType(tiled.output).getShape(), known,
                   tiled.product)) {
    // A pool of a convolution's epilogue, then elementwise ops.
    tiled.product = nullptr;
    if (!findPool(tiled.output, tensorType(tiled.output).getShape(), known,
                  tiled.pool) ||
        !tiled.pool ||
        !findProduct(tiled.pool.getInput(),
                     tensorType(tiled.pool.getInput()).getShape(), known,
                     tiled.product) ||
        !isa_and_nonnull<TensorConv2DOp>(tiled.product))
      return std::nullopt;
  }
  if (!tiled.product || !setSizes(tiled))
    return std::nullopt;
  if (mode == TilingMode::Auto &&
      (tiled.rows < 32 || tiled.columns < 64 || tiled.depth < 32))
    return std::nullopt;
  return tiled;
}

SmallVector<MemRefType, 3> getTileMemoryTypes(MLIRContext *context,
                                              const TiledProduct &tiled) {
  Type element = tensorType(tiled.output).getElementType();
  auto workgroup = IntegerAttr::get(IntegerType::get(context, 64),
                                    kWorkgroupAddressSpace);
  auto type = [&](ArrayRef<int64_t> shape) {
    return MemRefType::get(shape, element, MemRefLayoutAttrInterface(), workgroup);
  };
  SmallVector<MemRefType, 3> types{type({kTileDepth, kLhsStride}),
                                   type({kTileDepth, kTileColumns})};
  if (tiled.pool)
    types.push_back(type({kTileRows, kTileColumns + 1}));
  return types;
}

void emitTiledProduct(OpBuilder &b, Location loc, ElementEmitter &emitter,
                      const TiledProduct &tiled, ValueRange memory,
                      Value output) {
  TileEmitter(b, loc, emitter, tiled).emit(memory, output);
}

} // namespace mlir::hpvm::tensor_kernels
