//===- TilingLegality.cpp - When a replicated leaf may be tiled -----------===//
// A leaf without barriers, one_to_one or streaming connections, whose extents
// the tile leaf can recompute; partial tiles need a guardable body.
#include "HPVM/Transforms/Analysis/TilingLegality.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::hpvm;

/// A bound on the ops cloned into the tile leaf per extent: internal nodes
/// hold small extent arithmetic, anything longer is not worth recomputing.
static constexpr unsigned kMaxSliceOperations = 64;

FailureOr<ExtentSlice> mlir::hpvm::getExtentSlice(InternalOp parent,
                                                  Value extent) {
  ExtentSlice slice;
  SmallVector<Value> worklist{extent};
  llvm::SmallPtrSet<Operation *, 8> visited;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      if (argument.getOwner() != &parent.getBodyBlock())
        return failure();
      slice.parentInputs.insert(argument);
      continue;
    }
    Operation *op = value.getDefiningOp();
    if (!op || op->getBlock() != &parent.getBodyBlock())
      return failure();
    if (!visited.insert(op).second)
      continue;
    if (visited.size() > kMaxSliceOperations || op->getNumRegions() != 0 ||
        op->getNumResults() != 1 || !isMemoryEffectFree(op) ||
        isa<HPVMDialect>(op->getDialect()))
      return failure();
    for (Value operand : op->getOperands())
      worklist.push_back(operand);
  }
  // Program order, so that every op follows its operands when cloned.
  for (Operation &op : parent.getBodyBlock())
    if (visited.contains(&op))
      slice.operations.insert(&op);
  // Inputs in port order: the new ports are numbered after them.
  SmallVector<Value> inputs(slice.parentInputs.begin(), slice.parentInputs.end());
  llvm::sort(inputs, [](Value a, Value b) {
    return cast<BlockArgument>(a).getArgNumber() <
           cast<BlockArgument>(b).getArgNumber();
  });
  slice.parentInputs = llvm::SetVector<Value>(inputs.begin(), inputs.end());
  return slice;
}

bool mlir::hpvm::mayHavePartialTile(Value extent, int64_t size) {
  APInt constant;
  return !matchPattern(extent, m_ConstantInt(&constant)) ||
         constant.getSExtValue() % size != 0;
}

std::string mlir::hpvm::checkTilingLegality(const DataflowGraph &graph,
                                            unsigned index,
                                            ArrayRef<int64_t> sizes) {
  NodeOpInterface definition = graph.getDefinition(index);
  CreateNodeOp child = graph.getChild(index);
  if (!definition)
    return "the node definition is not known";
  auto leaf = dyn_cast<LeafOp>(definition.getOperation());
  if (!leaf)
    return "it is not a leaf (only replicated leaves are tiled)";
  unsigned rank = child.getRank();
  if (rank == 0)
    return "it is not replicated (a single instance has nothing to tile)";
  if (sizes.size() != rank)
    return "the grid has rank " + std::to_string(rank) + " but " +
           std::to_string(sizes.size()) + " tile size" +
           (sizes.size() == 1 ? " was" : "s were") + " given";
  if (leaf.getBody().empty())
    return "the leaf has no body";
  bool barrier = false;
  leaf.walk([&](BarrierOp) { barrier = true; });
  if (barrier)
    return "the leaf has a barrier (after tiling it would wait only for the "
           "instances of one tile)";
  for (EdgeOp edge : graph.getIncomingEdges(index)) {
    if (edge.getReplication() == Replication::one_to_one)
      return "a one_to_one edge feeds it (tiling changes its grid)";
    if (edge.getStreaming())
      return "a streaming edge feeds it (streaming stages are not tiled)";
  }
  for (EdgeOp edge : graph.getOutgoingEdges(index)) {
    if (edge.getReplication() == Replication::one_to_one)
      return "a one_to_one edge leaves it (tiling changes its grid)";
    if (edge.getStreaming())
      return "a streaming edge leaves it (streaming stages are not tiled)";
  }
  for (BindInOp bind : graph.getBindIns())
    if (bind.getDest() == child.getHandle() && bind.getStreaming())
      return "a streaming bind_in feeds it (streaming stages are not tiled)";
  for (BindOutOp bind : graph.getBindOuts())
    if (bind.getSource() == child.getHandle() && bind.getStreaming())
      return "a streaming bind_out leaves it (streaming stages are not tiled)";
  bool partial = false;
  for (unsigned d = 0; d < rank; ++d) {
    Value extent = child.getDims()[d];
    if (failed(getExtentSlice(graph.getInternalNode(), extent)))
      return "the extent in dimension " + std::to_string(d) +
             " is not computed from constants and the parent's inputs";
    partial |= mayHavePartialTile(extent, sizes[d]);
  }
  if (partial && !leaf.getPassedOnInputs())
    return "the last tile may be partial and the leaf computes an output (its "
           "out-of-range instances would produce no value; only inputs passed "
           "on are one)";
  if (partial && !leaf.getBody().hasOneBlock())
    return "the last tile may be partial and the leaf has several blocks (the "
           "guard needs one)";
  return "";
}
