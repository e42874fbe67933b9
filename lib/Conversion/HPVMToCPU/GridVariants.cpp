//===- GridVariants.cpp - The variants a leaf names for its grids ---------===//
// The tile, lane, remainder, block and contraction variants a leaf names
// (hpvm-vectorize makes them): checked and recorded with their node functions,
// for the range functions and collapsed grids that run them.
#include "GridRunner.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::cpu;

/// The leaf that `leaf` names under `attr` (null without the attribute or
/// when it names no leaf) and that leaf's `hpvm.lanes` (0 without).
static std::pair<LeafOp, int64_t>
lookupVariant(SymbolTableCollection &symbolTables, ModuleOp module, LeafOp leaf,
              StringRef attr) {
  auto name = leaf->getAttrOfType<FlatSymbolRefAttr>(attr);
  auto variant =
      name ? symbolTables.lookupNearestSymbolFrom<LeafOp>(module, name) : LeafOp();
  auto lanes = variant ? variant->getAttrOfType<IntegerAttr>(
                             HPVMDialect::getLanesAttrName())
                       : IntegerAttr();
  return {variant, lanes ? lanes.getInt() : 0};
}

LogicalResult GridRunner::collectVariants(LeafOp leaf) {
  auto refused = [&](StringRef attr, StringRef expected) {
    return leaf.emitError() << "'" << attr << "' names " << leaf->getAttr(attr)
                            << ", which is not a " << expected;
  };
  StringRef contractionAttrs[2] = {HPVMDialect::getContractionVariantAttrName(),
                                   HPVMDialect::getContractionPlanAttrName()};
  if (leaf->hasAttr(contractionAttrs[0]) != leaf->hasAttr(contractionAttrs[1]))
    return leaf.emitError() << "'" << contractionAttrs[0] << "' and '"
                            << contractionAttrs[1] << "' go together: only one is here";
  if (leaf->hasAttr(contractionAttrs[0])) {
    auto sums = state.symbolTables.lookupNearestSymbolFrom<LeafOp>(
        module, leaf->getAttrOfType<FlatSymbolRefAttr>(contractionAttrs[0]));
    SmallVector<Type> inputs(leaf.getArgumentTypes());
    inputs.append({pointerType, IntegerType::get(context, 64)});
    if (!sums || sums.getArgumentTypes() != ArrayRef<Type>(inputs) ||
        sums.getResultTypes() != leaf.getResultTypes() || !state.passedOnInputs.count(leaf))
      return refused(contractionAttrs[0],
                     "sums variant of this leaf (a leaf with its inputs, then a "
                     "pointer and an i64, and its outputs; the leaf's outputs "
                     "inputs passed on)");
    auto plan = state.symbolTables.lookupNearestSymbolFrom<LLVM::LLVMFuncOp>(
        module, leaf->getAttrOfType<FlatSymbolRefAttr>(contractionAttrs[1]));
    SmallVector<Type> planInputs(leaf.getArgumentTypes());
    planInputs.append(4, IntegerType::get(context, 64));
    if (!plan || plan.getFunctionType().getParams() != ArrayRef<Type>(planInputs) ||
        plan.getFunctionType().getReturnType() != pointerType)
      return refused(contractionAttrs[1],
                     "plan of this leaf (an llvm.func of the leaf's inputs and "
                     "four i64 extents returning a pointer)");
    contractions[leaf] = {sums, plan};
  }
  if (leaf->hasAttr(HPVMDialect::getTileVariantAttrName())) {
    auto [tile, lanes] = lookupVariant(state.symbolTables, module, leaf,
                                       HPVMDialect::getTileVariantAttrName());
    // A leaf with barriers has phase functions or no CPU version.
    bool hasBarrier = phaseFunctions.count(leaf) || state.noCPUVersion.count(leaf);
    if (!lanes || tile.getArgumentTypes() != leaf.getArgumentTypes() ||
        tile.getResultTypes() != ArrayRef<Type>{IntegerType::get(context, 1)} ||
        !state.passedOnInputs.count(leaf) || hasBarrier)
      return refused(HPVMDialect::getTileVariantAttrName(),
                     "tile variant of this leaf (a leaf with 'hpvm.lanes', the "
                     "same inputs and one i1 output; the leaf without barriers, "
                     "its outputs inputs passed on)");
    laneFunctions[leaf] = {state.nodeFunctions.lookup(tile),
                           static_cast<unsigned>(lanes)};
  }
  if (!leaf->hasAttr(HPVMDialect::getVectorVariantAttrName())) {
    for (StringRef other : {HPVMDialect::getBlockVariantAttrName(),
                            HPVMDialect::getRemainderVariantAttrName()})
      if (leaf->hasAttr(other))
        return leaf.emitError()
               << "'" << other << "' needs the lane variant it extends: "
               << "'hpvm.vector_variant' is missing";
    return success();
  }
  auto [variant, lanes] = lookupVariant(state.symbolTables, module, leaf,
                                        HPVMDialect::getVectorVariantAttrName());
  if (!lanes || variant.getArgumentTypes() != leaf.getArgumentTypes() ||
      variant.getResultTypes().drop_front() != leaf.getResultTypes())
    return refused(HPVMDialect::getVectorVariantAttrName(),
                   "lane variant of this leaf (a leaf with 'hpvm.lanes', the "
                   "same inputs, and the outputs i1 then the leaf's)");
  laneVariants[leaf] = {state.nodeFunctions.lookup(variant),
                        static_cast<unsigned>(lanes)};
  if (leaf->hasAttr(HPVMDialect::getRemainderVariantAttrName())) {
    auto [remainder, remainderLanes] = lookupVariant(
        state.symbolTables, module, leaf, HPVMDialect::getRemainderVariantAttrName());
    SmallVector<Type> inputs(variant.getArgumentTypes());
    inputs.push_back(IntegerType::get(context, 64));
    if (remainderLanes != lanes ||
        remainder.getArgumentTypes() != ArrayRef<Type>(inputs) ||
        remainder.getResultTypes() != variant.getResultTypes())
      return refused(HPVMDialect::getRemainderVariantAttrName(),
                     "remainder variant of this leaf (a leaf with the lanes "
                     "and outputs of its lane variant and its inputs then an "
                     "i64 lane count)");
    // Once per row at most: a call, so that the loops over whole groups keep
    // their registers (inlined, it slowed sgemm's blocks by 20%).
    func::FuncOp remainderFunction = state.nodeFunctions.lookup(remainder);
    state.markNoInline(remainderFunction);
    remainderVariants[leaf] = remainderFunction;
  }
  if (!leaf->hasAttr(HPVMDialect::getBlockVariantAttrName()))
    return success();
  auto [block, blockLanes] = lookupVariant(state.symbolTables, module, leaf,
                                           HPVMDialect::getBlockVariantAttrName());
  auto rows = block ? block->getAttrOfType<IntegerAttr>(HPVMDialect::getRowsAttrName())
                    : IntegerAttr();
  if (!rows || blockLanes != lanes ||
      block.getFunctionType() != variant.getFunctionType() ||
      !state.passedOnInputs.count(leaf))
    return refused(HPVMDialect::getBlockVariantAttrName(),
                   "block variant of this leaf (a leaf with 'hpvm.rows' and "
                   "the lanes and type of its lane variant; the leaf's outputs "
                   "inputs passed on)");
  blockVariants[leaf] = {state.nodeFunctions.lookup(block),
                         static_cast<unsigned>(rows.getInt())};
  return success();
}
