//===- LaneAnalysis.h - Shapes of a leaf's values across vector lanes -----===//
// The analysis half of hpvm-vectorize's lane variants (the emitter is
// LaneWidening.cpp): for W consecutive x instances of an imported-C leaf, lane
// l being instance x + l, the shape of every value across the lanes, where
// the lanes may still be sent back to the scalar code, the masked regions of
// divergent branches, and what differs between the rows of a block variant.
//
// Shapes:
//   * uniform: one scalar, equal in every lane (the leaf's inputs, ids of
//     other dimensions and levels, what is computed from them only);
//   * strided: lane l holds base + l * stride for a constant stride (the x id
//     has stride 1; indices and addresses computed from it keep a constant
//     stride through add, sub, mul and shifts by constants, casts and GEPs);
//     only the base is computed;
//   * varying: a vector<W x T>.
#ifndef HPVM_LIB_CONVERSION_HPVMTOVECTOR_LANEANALYSIS_H
#define HPVM_LIB_CONVERSION_HPVMTOVECTOR_LANEANALYSIS_H

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>
#include <string>

namespace mlir::hpvm::lanes {

/// How the lanes see a value (see above).
enum class Kind { Uniform, Strided, Varying };

/// A value's kind, and its stride between lanes when strided.
struct Shape {
  Kind kind = Kind::Uniform;
  int64_t stride = 0;
  static Shape uniform() { return {Kind::Uniform, 0}; }
  static Shape varying() { return {Kind::Varying, 0}; }
  static Shape strided(int64_t stride) {
    return stride ? Shape{Kind::Strided, stride} : uniform();
  }
  bool operator==(const Shape &other) const {
    return kind == other.kind && stride == other.stride;
  }
  bool isUniform() const { return kind == Kind::Uniform; }
  bool isVarying() const { return kind == Kind::Varying; }
};

/// The shape of a value that is `a` on one path and `b` on another.
inline Shape join(Shape a, Shape b) { return a == b ? a : Shape::varying(); }

/// The casts and shifts whose strided result is exact only when no lane
/// wraps: the base is checked at run time.
/// What keeps a strided value's lanes linear, checked at run time on the
/// first lane: its operand's lanes must not wrap in the operand's width
/// (Signed, Unsigned), or must not cross a multiple of 2^k (LowBits: the op
/// keeps the k low bits, `and x, 2^k - 1`, as clang writes a non-negative int
/// widened to 64 bits).
enum class WrapCheck { None, Signed, Unsigned, LowBits };

inline bool isStorableScalar(Type type) {
  return type.isIntOrIndexOrFloat() || isa<LLVM::LLVMPointerType>(type);
}

/// Whether `op` writes memory or does anything else that could not be undone
/// by running the instances again one by one.
inline bool writesMemory(Operation *op) {
  if (op->hasTrait<::mlir::OpTrait::IsTerminator>() ||
      isa<LLVM::AssumeOp, InstanceIdOp, NumInstancesOp>(op))
    return false;
  if (isMemoryEffectFree(op))
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return true;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::any_of(instances, [](MemoryEffects::EffectInstance &effect) {
    return !isa<MemoryEffects::Read>(effect.getEffect());
  });
}

/// Ops that run once per lane whatever their operands' shapes: each instance
/// does its own (an atomic add counts every instance; a call may print).
inline bool runsPerLane(Operation *op) {
  if (isa<LLVM::AtomicRMWOp, LLVM::AtomicCmpXchgOp>(op))
    return true;
  return isa<LLVM::CallOp>(op) && writesMemory(op);
}

/// Ops that compute lane by lane and take vectors as they take scalars.
inline bool isElementwise(Operation *op) {
  if (op->hasTrait<::mlir::OpTrait::Elementwise>())
    return true; // arith, math
  return isa<
      // Arithmetic, comparisons and casts.
      LLVM::AddOp, LLVM::SubOp, LLVM::MulOp, LLVM::SDivOp, LLVM::UDivOp,
      LLVM::SRemOp, LLVM::URemOp, LLVM::AndOp, LLVM::OrOp, LLVM::XOrOp,
      LLVM::ShlOp, LLVM::LShrOp, LLVM::AShrOp, LLVM::FAddOp, LLVM::FSubOp,
      LLVM::FMulOp, LLVM::FDivOp, LLVM::FRemOp, LLVM::FNegOp, LLVM::ICmpOp,
      LLVM::FCmpOp, LLVM::SelectOp, LLVM::SExtOp, LLVM::ZExtOp, LLVM::TruncOp,
      LLVM::FPExtOp, LLVM::FPTruncOp, LLVM::SIToFPOp, LLVM::UIToFPOp,
      LLVM::FPToSIOp, LLVM::FPToUIOp, LLVM::PtrToIntOp, LLVM::IntToPtrOp,
      LLVM::FreezeOp, LLVM::GEPOp,
      // Elementwise intrinsics.
      LLVM::FMulAddOp, LLVM::FMAOp, LLVM::SqrtOp, LLVM::FAbsOp, LLVM::MinNumOp,
      LLVM::MaxNumOp, LLVM::MinimumOp, LLVM::MaximumOp, LLVM::FCeilOp,
      LLVM::RoundOp, LLVM::RoundEvenOp, LLVM::FTruncOp, LLVM::ExpOp,
      LLVM::Exp2Op, LLVM::LogOp, LLVM::Log2Op, LLVM::Log10Op, LLVM::PowOp,
      LLVM::SinOp, LLVM::CosOp, LLVM::TanOp, LLVM::TanhOp, LLVM::CopySignOp,
      LLVM::SMaxOp, LLVM::SMinOp, LLVM::UMaxOp, LLVM::UMinOp, LLVM::AbsOp,
      LLVM::CtPopOp>(op);
}

inline std::optional<int64_t> constantInt(Value value) {
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant)))
    return constant.getSExtValue();
  return std::nullopt;
}

inline unsigned bitWidth(Type type) {
  if (type.isIndex())
    return 64;
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.getWidth();
  return 64; // pointers
}

/// The analysis: a shape per value, and where the lanes may still be sent
/// back to the scalar code.
class LaneAnalysis {
public:
  LaneAnalysis(LeafOp leaf, unsigned lanes)
      : leaf(leaf), lanes(lanes), layout(DataLayout::closest(leaf)) {}

  LogicalResult run(std::string &reason, Operation *&where);
  Shape shapeOf(Value value) const { return shapes.lookup(value); }
  /// Whether no side effect can have happened when `op` starts.
  bool isClean(Operation *op);
  /// How the strided result of `op` is checked, when it is strided.
  WrapCheck wrapCheckOf(Operation *op) const { return wrapChecks.lookup(op); }
  ArrayRef<Block *> blockOrder() const { return order; }
  uint64_t sizeOf(Type type) const {
    return layout.getTypeSize(type).getFixedValue();
  }
  const DataLayout &dataLayout() const { return layout; }
  /// Pointers into an instance's own memory (an llvm.alloca): the lanes'
  /// copies are interleaved, element j of lane l at j * lanes + l (elements
  /// of the one size the memory is accessed with).
  Operation *privateRootOf(Value pointer) const {
    return privateRoots.lookup(pointer);
  }
  int64_t privateAccessSize(Operation *alloca) const {
    return privateSizes.lookup(alloca);
  }
  /// The shape of the byte offset of a private pointer from its alloca.
  Shape offsetShapeOf(Value pointer) const { return offsetShapes.lookup(pointer); }
  /// Whether `op` has an effect that running the instances again one by one
  /// would not undo (writes to private memory do not count).
  bool hasSideEffect(Operation *op) const;

  /// The blocks a divergent branch leads through before its paths meet
  /// again at `join` (acyclic, entered only from the branch), in a
  /// topological order: lanes that disagree run them all under masks.
  struct MaskedRegion {
    Block *join = nullptr;
    SmallVector<Block *> blocks;
  };
  /// Whether `value` differs between the rows of a block variant: it
  /// depends on the y id, or is an instance's own (private memory, a
  /// per-lane op's result).
  bool isRowDependent(Value value) const { return rowDependent.contains(value); }
  /// Why the instances cannot run as blocks of several rows (y), or "".
  std::string rowRefusal();
  const MaskedRegion *maskedRegionOf(Operation *branch) const {
    auto found = maskedRegions.find(branch);
    return found == maskedRegions.end() ? nullptr : &found->second;
  }

private:
  /// Refuses what the lanes cannot run, before anything is computed.
  LogicalResult checkSupportedOps(std::string &reason, Operation *&where);
  /// Where side effects may have happened (dirtyAtEntry, firstSideEffect).
  void markDirtyBlocks();
  /// The shapes, then the masked regions of the divergent branches.
  void computeMaskedRegions();
  /// Checks what the lanes must agree on, and that the values that differ
  /// between them fit a vector.
  LogicalResult checkLanesAgree(std::string &reason, Operation *&where);
  /// The shapes, to a fixed point over the loops' back edges.
  void computeShapes();
  /// The masked region of the divergent `branch`, if it has one.
  std::optional<MaskedRegion> findMaskedRegion(LLVM::CondBrOp branch,
                                               PostDominanceInfo &postDominance);
  /// Finds the allocas and checks that their memory stays private: only
  /// loads and stores of one size, GEPs and lifetime markers use it.
  LogicalResult collectPrivateMemory(std::string &reason, Operation *&where);
  /// The shape of the results of `op` from its operands' shapes.
  Shape transfer(Operation *op);
  /// The stride of a GEP's address, or nullopt when it varies otherwise.
  std::optional<int64_t> gepStride(LLVM::GEPOp gep);
  /// The first op of a loop (a back edge whose latch `loop` accepts) that
  /// `match` accepts, or null. A loop's body lies in the block order
  /// between its header and its latch.
  Operation *findInLoops(function_ref<bool(Block *latch)> loop,
                         function_ref<bool(Operation &)> match);
  /// `stride` for `op`'s result, when the lanes of its operand 0 (`width`
  /// bits, `operandStride`) can be checked not to wrap here; varying
  /// otherwise.
  Shape checked(Operation *op, int64_t stride, int64_t operandStride,
                unsigned width, WrapCheck kind);

  LeafOp leaf;
  unsigned lanes;
  DataLayout layout;
  DenseMap<Value, Shape> shapes;
  DenseMap<Value, Operation *> privateRoots;
  DenseMap<Operation *, int64_t> privateSizes;
  DenseMap<Value, Shape> offsetShapes;
  DenseMap<Operation *, MaskedRegion> maskedRegions;
  DenseSet<Value> rowDependent;
  /// Blocks of masked regions: both sides run there, so nothing in them is
  /// undone by declining; and block arguments where lanes' paths meet.
  DenseSet<Block *> maskedBlocks;
  DenseSet<Value> joinArguments;
  DenseMap<Block *, unsigned> orderIndex;
  DenseMap<Operation *, WrapCheck> wrapChecks;
  DenseMap<Block *, bool> dirtyAtEntry;
  /// Per block, its first op with a side effect (hasSideEffect), if any.
  DenseMap<Block *, Operation *> firstSideEffect;
  SmallVector<Block *> order;
};

/// An index of a GEP: a value, or a constant.
using GEPIndex = llvm::PointerUnion<IntegerAttr, Value>;

/// Calls `step(index, scale)` for each index of `gep` with the bytes one unit
/// of it moves the address, or returns false without finishing at an index
/// into something other than the pointee or an array: a struct field
/// (constant, the same for every lane) is skipped when `structs` holds.
bool forEachGEPIndex(LLVM::GEPOp gep, const DataLayout &layout, bool structs,
                     function_ref<void(GEPIndex, int64_t)> step);

} // namespace mlir::hpvm::lanes

#endif // HPVM_LIB_CONVERSION_HPVMTOVECTOR_LANEANALYSIS_H
