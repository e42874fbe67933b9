//===- CPULowering.cpp - The node lowering's state and grid checks --------===//
// What every way to run a node shares: the host code, grid outputs passed on
// and the checks that a grid fits the arrays its leaves index.
#include "CPULowering.h"

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

CPULowering::CPULowering(ModuleOp module)
    : cg(module), module(module), context(module.getContext()),
      pointerType(cg.getPointerType()), frameType(cg.getFrameType()),
      rangeType(InstanceRange::get(context)) {
  for (Operation &op : module.getOps())
    if (op.getNumRegions() && !isa<NodeOpInterface>(op))
      hostCode.push_back(&op);
}

Value CPULowering::readGridOutput(OpBuilder &b, Location loc, Operation *node,
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

void CPULowering::findGridAccesses() {
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

void CPULowering::checkGridFitsInputs(OpBuilder &b, Location loc, LeafOp leaf,
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
