//===- TensorElements.h - Elements of tensor ops in kernels -----*- C++ -*-===//
// The element of a tensor leaf's value at given indices, built as scalar code
// where it is read (TensorKernels.cpp's one-thread-per-element kernels and
// the epilogues and operand loads of TensorTiling.cpp's tiled products).
#ifndef HPVM_CONVERSION_HPVMTOGPU_TENSORELEMENTS_H
#define HPVM_CONVERSION_HPVMTOGPU_TENSORELEMENTS_H

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"

#include <optional>

namespace mlir::hpvm::tensor_kernels {

inline RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

inline SmallVector<int64_t> getInts(ArrayAttr attr) {
  return llvm::map_to_vector(
      attr, [](Attribute a) { return cast<IntegerAttr>(a).getInt(); });
}

/// Whether a window's `padding` (one per dimension) pads anything.
inline bool isPadded(ArrayRef<int64_t> padding) {
  return llvm::any_of(padding, [](int64_t p) { return p != 0; });
}

/// What is known of a leaf's values: whether each element costs a few
/// operations (no reduction computes it), each value decided once.
using ElementwiseValues = DenseMap<Value, bool>;

/// Whether each element of `value` (a tensor of the leaf) costs a few
/// operations: no reduction computes it.
bool isElementwise(Value value, ElementwiseValues &known);

/// A constant tensor a kernel reads from memory (weights: a global the host
/// passes, in the leaf's `hpvm.tensor_kernel`), rather than a splat it folds
/// into a scalar.
bool isTableConstant(arith::ConstantOp constant);

/// How many of `extent` elements the sampling knob `sampling` keeps.
int64_t countKept(int64_t extent, KnobAttr sampling);

/// The storage format of a precision knob (fp16, bf16) on `op`, if any.
std::optional<KnobKind> getPrecision(Operation *op);

/// The sampling knob of `kind` on `op`, if any.
KnobAttr getSampling(Operation *op, KnobKind kind);

/// The product whose precision knob rounds `value`, a leaf's output: the
/// runtime's kernels round a product's result after the bias add and the
/// activation they absorb, so the kernel does where the output is stored.
TensorMulOp getRoundedProduct(Value value);

/// Builds the element of a leaf's tensor values at given indices.
class ElementEmitter {
public:
  /// `memory` maps the leaf's inputs and table constants to the kernel's
  /// memrefs.
  ElementEmitter(OpBuilder &b, Location loc, const IRMapping &memory)
      : b(b), loc(loc), memory(memory) {}

  OpBuilder &builder() { return b; }
  Location location() { return loc; }

  /// The element of the tensor `value` at `indices`.
  Value emit(Value value, ValueRange indices);
  /// `x` (f32) rounded to `format` (fp16 or bf16, to nearest, ties to even)
  /// and widened back, in f32 integer arithmetic (devices need no half
  /// types): what the runtime's half-precision products store.
  Value roundTo(KnobKind format, Value x);
  /// The product whose result the caller rounds itself (at the store).
  TensorMulOp roundedAtStore;
  /// Values whose element at the indices being built is already computed
  /// (a tiled kernel's product, for its epilogue).
  DenseMap<Value, Value> known;
  /// The row-major indices in `shape` of the element at `position`.
  SmallVector<Value> delinearize(Value position, ArrayRef<int64_t> shape);

  // Index arithmetic and the pieces of the ops' elements, for the tiled
  // kernels (TensorTiling.cpp) too.
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value addIndex(Value lhs, Value rhs) {
    return arith::AddIOp::create(b, loc, lhs, rhs);
  }
  Value mulIndex(Value lhs, int64_t rhs) {
    return rhs == 1 ? lhs : Value(arith::MulIOp::create(b, loc, lhs, index(rhs)));
  }
  /// The input position of tap `tap` of a window at output position `out`
  /// (a convolution's or a pool's), before padding `pad` is taken away.
  Value windowPosition(Value out, int64_t stride, int64_t pad, Value tap) {
    Value position = addIndex(mulIndex(out, stride), tap);
    return pad ? Value(arith::SubIOp::create(b, loc, position, index(pad)))
               : position;
  }
  /// The element of the `kept`-th element a sampling knob keeps (those k
  /// with k mod rate != offset, ascending).
  Value keptElement(Value kept, KnobAttr sampling);
  /// Folds `count` steps of `step(i, accumulator)` into `init` (an scf.for).
  Value fold(int64_t count, Value init,
             function_ref<Value(Value, Value)> step);
  /// `inside()` where `condition` holds, else `outside`.
  Value select(Value condition, Value outside, function_ref<Value()> inside);
  /// A pool's element from its window's taps: `tap(r, s, identity)` is the
  /// input under tap (r, s) (`identity`, the pool's, where it is padding),
  /// folded r outer, s inner, then divided by the window for a mean.
  Value poolWindow(TensorPoolOp op,
                   function_ref<Value(Value, Value, Value)> tap);
  /// Whether the position `at` (which may be negative: a window over
  /// padding) lies in [0, size).
  Value within(Value at, int64_t size);
  /// The element of the NCHW image `image` at (n, c, h, w); `outside` where
  /// (h, w) lies outside it, which only a padded window's positions may.
  Value padded(Value image, ArrayRef<Value> nchw, bool padding, Value outside);
private:
  /// The indices of an operand of `type` broadcast to the result's indices.
  SmallVector<Value> broadcast(RankedTensorType type, ValueRange indices);
  /// The region of a map or reduce applied to `arguments`.
  Value applyRegion(Region &region, ValueRange arguments);

  Value conv(TensorConv2DOp op, ValueRange indices);
  Value mul(TensorMulOp op, ValueRange indices);
  Value pool(TensorPoolOp op, ValueRange indices);
  Value softmax(TensorSoftmaxOp op, ValueRange indices);
  Value batchNorm(TensorBatchNormOp op, ValueRange indices);
  Value reduce(TensorReduceOp op, ValueRange indices);
  /// The element of a reshape (the same elements, row-major, in a new shape).
  Value reshape(Value source, RankedTensorType type, ValueRange indices);

  OpBuilder &b;
  Location loc;
  const IRMapping &memory;
};

} // namespace mlir::hpvm::tensor_kernels

#endif // HPVM_CONVERSION_HPVMTOGPU_TENSORELEMENTS_H
