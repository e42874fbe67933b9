//===- TileShape.cpp - Internal nodes that run as one work-group ----------===//
#include "HPVM/Dialect/HPVM/Analysis/TileShape.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::hpvm;

SmallVector<AllocOp> TileShape::getAllocations() const {
  SmallVector<AllocOp> allocations;
  for (const TileAllocator &allocator : allocators)
    allocations.append(allocator.allocations.begin(),
                       allocator.allocations.end());
  return allocations;
}

/// Why `leaf` cannot be an allocation node of a tile, or "".
static std::string checkAllocator(LeafOp leaf,
                                  SmallVectorImpl<AllocOp> &allocations) {
  if (!leaf.getBody().hasOneBlock())
    return "has branches";
  for (Operation &op : leaf.getBody().front()) {
    if (auto alloc = dyn_cast<AllocOp>(op)) {
      // The memory reaches the instances only through the leaf's outputs.
      for (Operation *user : alloc->getUsers())
        if (!isa<ReturnOp>(user))
          return "uses the memory it allocates";
      allocations.push_back(alloc);
      continue;
    }
    // Imported C leaves keep the unused stack slot of their return struct.
    if (isa<ReturnOp>(op) || (isa<LLVM::AllocaOp>(op) && op.use_empty()))
      continue;
    if (op.getNumRegions() || !isMemoryEffectFree(&op))
      return "has the operation '" + op.getName().getStringRef().str() +
             "', which has side effects or regions";
  }
  return "";
}

FailureOr<TileShape> mlir::hpvm::matchTileShape(InternalOp tile,
                                                SymbolTableCollection &symbols,
                                                std::string &reason) {
  TileShape shape;
  shape.tile = tile;
  Block &body = tile.getBodyBlock();
  // Which allocator each create_node result is.
  DenseMap<Value, unsigned> allocatorOf;
  for (CreateNodeOp create : body.getOps<CreateNodeOp>()) {
    auto leaf =
        symbols.lookupNearestSymbolFrom<LeafOp>(create, create.getNodeAttr());
    if (!leaf) {
      reason = "its child @" + create.getNode().str() +
               " is an internal node (a tile kernel's children are leaves)";
      return failure();
    }
    if (create.getRank() != 0) {
      if (shape.instances) {
        reason = "it has several replicated children (a tile kernel runs one "
                 "replicated leaf)";
        return failure();
      }
      shape.instancesCreate = create;
      shape.instances = leaf;
      continue;
    }
    TileAllocator allocator;
    allocator.create = create;
    allocator.leaf = leaf;
    std::string why = checkAllocator(leaf, allocator.allocations);
    if (!why.empty()) {
      reason = "its single-instance child @" + create.getNode().str() +
               " is not an allocation node: it " + why;
      return failure();
    }
    allocator.boundInputs.assign(leaf.getInputTypes().size(), ~0u);
    allocatorOf[create.getHandle()] = shape.allocators.size();
    shape.allocators.push_back(std::move(allocator));
  }
  if (!shape.instances) {
    reason = "it has no replicated leaf child";
    return failure();
  }

  unsigned inputCount = shape.instances.getInputTypes().size();
  shape.inputSources.assign(inputCount, TileInputSource{-2, 0, 0});
  shape.boundOutputs.assign(tile.getNumResults(), 0);
  Value instances = shape.instancesCreate.getHandle();
  for (Operation &op : body) {
    if (auto bind = dyn_cast<BindInOp>(op)) {
      auto argument = dyn_cast<BlockArgument>(bind.getInput());
      if (!argument || bind.getStreaming()) {
        reason = "a child input is not bound to one of its inputs";
        return failure();
      }
      if (bind.getDest() == instances) {
        shape.inputSources[bind.getDestPort()].tileInput =
            argument.getArgNumber();
      } else {
        shape.allocators[allocatorOf.lookup(bind.getDest())]
            .boundInputs[bind.getDestPort()] = argument.getArgNumber();
      }
    } else if (auto edge = dyn_cast<EdgeOp>(op)) {
      auto source = allocatorOf.find(edge.getSource());
      if (source == allocatorOf.end() || edge.getDest() != instances ||
          edge.getStreaming()) {
        reason = "it has an edge that does not go from an allocation node to "
                 "its replicated child";
        return failure();
      }
      shape.inputSources[edge.getDestPort()] = {-1, source->second,
                                                edge.getSourcePort()};
    } else if (auto bind = dyn_cast<BindOutOp>(op)) {
      if (bind.getSource() != instances || bind.getStreaming()) {
        reason = "an output does not come from its replicated child";
        return failure();
      }
      shape.boundOutputs[bind.getOutput()] = bind.getSourcePort();
    }
  }
  for (const TileInputSource &source : shape.inputSources)
    if (source.tileInput == -2) {
      reason = "an input of its replicated child has no source";
      return failure();
    }
  for (const TileAllocator &allocator : shape.allocators)
    if (llvm::is_contained(allocator.boundInputs, ~0u)) {
      reason = "an input of its allocation node @" +
               CreateNodeOp(allocator.create).getNode().str() + " is not bound";
      return failure();
    }
  return shape;
}

SmallVector<Value> mlir::hpvm::cloneFromAllocator(OpBuilder &b,
                                                  const TileAllocator &allocator,
                                                  ValueRange tileInputs,
                                                  ValueRange values,
                                                  IRMapping &mapping) {
  Block &body = LeafOp(allocator.leaf).getBody().front();
  for (auto [argument, input] :
       llvm::zip(body.getArguments(), allocator.boundInputs))
    if (!mapping.contains(argument))
      mapping.map(argument, tileInputs[input]);
  return cloneSliceOf(b, body, values, mapping);
}

SmallVector<Value> mlir::hpvm::cloneSliceOf(OpBuilder &b, Block &body,
                                            ValueRange values,
                                            IRMapping &mapping) {
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> worklist(values.begin(), values.end());
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (mapping.contains(value))
      continue;
    Operation *op = value.getDefiningOp();
    if (!op || !slice.insert(op))
      continue;
    worklist.append(op->operand_begin(), op->operand_end());
  }
  for (Operation &op : body)
    if (slice.contains(&op))
      b.clone(op, mapping);
  return llvm::map_to_vector(values,
                             [&](Value value) { return mapping.lookup(value); });
}

SmallVector<AncestorQuery>
mlir::hpvm::collectAncestorQueries(LeafOp leaf, unsigned firstAncestor) {
  SmallVector<AncestorQuery> queries;
  leaf.walk([&](Operation *op) {
    AncestorQuery query;
    if (auto id = dyn_cast<InstanceIdOp>(op))
      query = {id.getLevel(), static_cast<unsigned>(id.getDim()), true};
    else if (auto count = dyn_cast<NumInstancesOp>(op))
      query = {count.getLevel(), static_cast<unsigned>(count.getDim()), false};
    else
      return;
    if (query.level >= firstAncestor && !llvm::is_contained(queries, query))
      queries.push_back(query);
  });
  llvm::sort(queries);
  return queries;
}
