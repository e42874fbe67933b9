//===- LoweringState.cpp - What the parts of the node lowering share ------===//
// Grid outputs passed on, the checks that a grid fits the arrays its leaves
// index, trace calls, and the helpers of generated functions (linkage,
// inlining, grid queries and allocations lowered).
#include "LoweringState.h"
#include "HPVM/Conversion/ApplyPatternsOnce.h"
#include "HPVM/Conversion/GridQueries.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::cpu;

// #hpvm.access values are hpvm_rt_access_t values (and the C API's
// MlirHPVMAccess): an access mode crosses every layer as the same number.
static_assert(static_cast<int>(Access::in) == HPVM_RT_ACCESS_IN);
static_assert(static_cast<int>(Access::out) == HPVM_RT_ACCESS_OUT);
static_assert(static_cast<int>(Access::inout) == HPVM_RT_ACCESS_INOUT);

Value LoweringState::readGridOutput(OpBuilder &b, Location loc, Operation *node,
                                  unsigned port, ValueRange inputs, Value slots,
                                  TypeRange outputTypes) {
  if (std::optional<unsigned> passedOn = getPassedOnInput(node, port))
    return inputs[*passedOn];
  return cg.fromStorage(
      b, loc, cg.loadField(b, loc, cg.getStorageStruct(outputTypes), slots, port),
      outputTypes[port]);
}

//===----------------------------------------------------------------------===//
// Grids against the arrays their leaves index (shared by every way to run a grid)
//===----------------------------------------------------------------------===//

void LoweringState::findGridAccesses() {
  for (auto leaf : module.getOps<LeafOp>()) {
    if (leaf.getBody().empty())
      continue;
    SmallVector<std::tuple<unsigned, unsigned, unsigned>> accesses;
    Block &entry = leaf.getBodyBlock();
    auto note = [&](Value memref, ValueRange indices) {
      auto input = dyn_cast<BlockArgument>(memref);
      if (!input || input.getOwner() != &entry)
        return;
      for (auto [axis, index] : llvm::enumerate(indices)) {
        auto id = index.getDefiningOp<InstanceIdOp>();
        if (!id || id.getLevel() != 0)
          continue;
        auto access = std::make_tuple(input.getArgNumber(), unsigned(axis),
                                      static_cast<unsigned>(id.getDim()));
        if (!llvm::is_contained(accesses, access))
          accesses.push_back(access);
      }
    };
    // Only the entry block's own ops run in every instance: an access under a
    // condition (`if (i < n)`) may be how the leaf handles a larger grid.
    for (Operation &op : entry) {
      if (auto load = dyn_cast<memref::LoadOp>(op))
        note(load.getMemRef(), load.getIndices());
      else if (auto store = dyn_cast<memref::StoreOp>(op))
        note(store.getMemRef(), store.getIndices());
    }
    if (!accesses.empty())
      gridAccesses[leaf] = std::move(accesses);
  }
}

void LoweringState::checkGridFitsInputs(OpBuilder &b, Location loc, LeafOp leaf,
                                      ValueRange dims, ValueRange inputs,
                                      uint64_t perInstanceInputs) {
  auto found = gridAccesses.find(leaf);
  if (found == gridAccesses.end())
    return;
  for (auto [input, axis, dim] : found->second) {
    // A value per instance is not the array the instances share.
    if (dim >= dims.size() || input >= inputs.size() ||
        (input < 64 && (perInstanceInputs >> input & 1)))
      continue;
    Value array = inputs[input];
    if (!isa<MemRefType>(array.getType()))
      continue;
    Type i64 = b.getI64Type(), i32 = b.getI32Type();
    Value size = arith::IndexCastOp::create(
        b, loc, i64, memref::DimOp::create(b, loc, array, axis).getResult());
    Value extent = arith::IndexCastOp::create(b, loc, i64, dims[dim]);
    auto i32Constant = [&](unsigned value) {
      return arith::ConstantIntOp::create(b, loc, i32, value).getResult();
    };
    Value status = cg.callRuntime(b, loc, RuntimeFn::GridFits,
                                  {cg.nodeNameString(b, loc, leaf), i32Constant(dim), extent,
                                   i32Constant(input), i32Constant(axis), size});
    cg.checkStatus(b, loc, status, "running " + atName(leaf.getSymName()));
  }
}

void LoweringState::traceNode(OpBuilder &b, Location loc, NodeOpInterface node) {
  cg.callRuntime(b, loc, RuntimeFn::TraceNode,
                 {cg.nodeNameString(b, loc, node), cg.nullPointer(b, loc)});
}

void LoweringState::traceNodeDone(OpBuilder &b, Location loc, NodeOpInterface node) {
  cg.callRuntime(b, loc, RuntimeFn::TraceNodeDone, {cg.nodeNameString(b, loc, node)});
}

//===----------------------------------------------------------------------===//
// Generated functions
//===----------------------------------------------------------------------===//

void LoweringState::markAlwaysInline(func::FuncOp function) {
  // An instance function runs once per instance inside a range loop: inlined,
  // the loop sees the body (hoisting, vectorization across instances).
  function->setAttr("passthrough",
                    ArrayAttr::get(context, {StringAttr::get(context, "alwaysinline")}));
}

void LoweringState::markNoInline(func::FuncOp function) {
  function->setAttr("passthrough",
                    ArrayAttr::get(context, {StringAttr::get(context, "noinline")}));
}

void LoweringState::markInternal(func::FuncOp function) {
  // Private to this module in LLVM too: programs linked together must not
  // clash on node names, and inlined copies can be dropped.
  function.setPrivate();
  function->setAttr("llvm.linkage",
                    LLVM::LinkageAttr::get(context, LLVM::Linkage::Internal));
}

void LoweringState::lowerAllocs(func::FuncOp function) {
  function.walk([&](AllocOp alloc) {
    OpBuilder b(alloc);
    Location loc = alloc.getLoc();
    // HPVM-C's __hpvm__malloc: a pointer to the given number of bytes.
    Value memory =
        isa<LLVM::LLVMPointerType>(alloc.getType())
            ? cg.callRuntime(b, loc, RuntimeFn::Malloc,
                             {cg.toI64(b, loc, alloc.getDynamicSizes().front())})
            : memref::AllocOp::create(b, loc, cast<MemRefType>(alloc.getType()),
                                      alloc.getDynamicSizes())
                  .getResult();
    alloc.replaceAllUsesWith(memory);
    alloc.erase();
  });
}

namespace {
/// The CPU's grid: the leaf's own ids and extents are arguments of its
/// instance function; an ancestor's are in its frame, `level` - 1 parent hops
/// from the function's parent frame argument.
struct FrameGridQueries : GridQueryStrategy {
  FrameGridQueries(CPUCodeGen &lowering, Block &entry, unsigned first)
      : lowering(lowering) {
    for (unsigned d = 0; d < 3; ++d) {
      ids[d] = entry.getArgument(first + d);
      extents[d] = entry.getArgument(first + 3 + d);
    }
    parentFrame = entry.getArgument(first + 6);
  }

  Value lowerGridQuery(OpBuilder &b, Operation *query, bool isId, unsigned dim,
                       unsigned level) override {
    if (level == 0)
      return isId ? ids[dim] : extents[dim];
    Location loc = query->getLoc();
    LLVM::LLVMStructType frameType = lowering.getFrameType();
    // Level 1 is the parent's frame; each further level one more hop.
    Value frame = parentFrame;
    for (unsigned k = 1; k < level; ++k)
      frame = LLVM::LoadOp::create(
          b, loc, lowering.getPointerType(),
          lowering.fieldAddress(b, loc, frameType, frame, {FrameParent}));
    Value address =
        lowering.fieldAddress(b, loc, frameType, frame,
                              {isId ? FrameIds : FrameExtents, static_cast<int32_t>(dim)});
    return lowering.toIndex(b, loc,
                            LLVM::LoadOp::create(b, loc, b.getI64Type(), address));
  }

  CPUCodeGen &lowering;
  Value ids[3], extents[3], parentFrame;
};
} // namespace

void LoweringState::lowerGridQueries(func::FuncOp function, unsigned first) {
  SmallVector<Operation *> queries;
  function.walk([&](Operation *op) {
    if (isa<InstanceIdOp, NumInstancesOp>(op))
      queries.push_back(op);
  });
  if (queries.empty())
    return;
  FrameGridQueries strategy(cg, function.front(), first);
  RewritePatternSet patterns(context);
  populateGridQueryPatterns(patterns, strategy);
  (void)applyPatternsOncePerOp(queries, FrozenRewritePatternSet(std::move(patterns)),
                               [](Operation *) {}, /*stopAtFailure=*/false);
}
