//===- LaneAnalysis.cpp - Shapes of a leaf's values across vector lanes ---===//
// See LaneAnalysis.h. The lanes never part: a branch whose condition differs
// between lanes (divergent) checks at run time whether all lanes agree and
// otherwise makes the variant return false, so that its caller runs the
// instances one by one. That is only allowed before the first side effect on
// every path (nothing to undo then); after one, the branch needs a masked
// region. The same check keeps strides exact where a cast or shift could
// wrap between lanes (sign extension of a 32-bit index, say): the base is
// tested against the bound, and after a side effect such a value is simply
// varying.
#include "LaneAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/RegionGraphTraits.h"
#include "llvm/ADT/PostOrderIterator.h"

namespace mlir::hpvm::lanes {

bool forEachGEPIndex(LLVM::GEPOp gep, const DataLayout &layout, bool structs,
                     function_ref<void(GEPIndex, int64_t)> step) {
  Type current = gep.getElemType();
  unsigned position = 0;
  for (GEPIndex index : gep.getIndices()) {
    if (position++ != 0) {
      if (auto array = dyn_cast<LLVM::LLVMArrayType>(current)) {
        current = array.getElementType();
      } else if (auto structType = dyn_cast<LLVM::LLVMStructType>(current);
                 structType && structs && isa<IntegerAttr>(index)) {
        current = structType.getBody()[cast<IntegerAttr>(index).getInt()];
        continue;
      } else {
        return false;
      }
    }
    step(index, layout.getTypeSize(current).getFixedValue());
  }
  return true;
}

bool LaneAnalysis::hasSideEffect(Operation *op) const {
  if (isa<LLVM::AllocaOp>(op))
    return false;
  if (isa<LLVM::LifetimeStartOp, LLVM::LifetimeEndOp>(op) ||
      isa<LLVM::StoreOp>(op))
    if (privateRootOf(isa<LLVM::StoreOp>(op) ? cast<LLVM::StoreOp>(op).getAddr()
                                             : op->getOperand(0)))
      return false;
  return writesMemory(op);
}

LogicalResult LaneAnalysis::collectPrivateMemory(std::string &reason,
                                                 Operation *&where) {
  WalkResult walk = leaf.walk([&](LLVM::AllocaOp alloca) -> WalkResult {
    where = alloca;
    std::optional<int64_t> count = constantInt(alloca.getArraySize());
    if (!count || *count <= 0) {
      reason = "a local array whose size is known only at run time";
      return WalkResult::interrupt();
    }
    int64_t size = 0;
    SmallVector<Value> pointers{alloca.getResult()};
    SmallVector<LLVM::GEPOp> geps;
    privateRoots[alloca.getResult()] = alloca;
    auto access = [&](Type type) {
      int64_t bytes = sizeOf(type);
      if (!type.isIntOrFloat() || type.getIntOrFloatBitWidth() != bytes * 8 ||
          (size && size != bytes))
        return false;
      size = bytes;
      return true;
    };
    while (!pointers.empty()) {
      Value pointer = pointers.pop_back_val();
      for (OpOperand &use : pointer.getUses()) {
        Operation *user = use.getOwner();
        where = user;
        bool ok = false;
        if (auto load = dyn_cast<LLVM::LoadOp>(user))
          ok = access(load.getType());
        else if (auto store = dyn_cast<LLVM::StoreOp>(user))
          ok = use.get() == store.getAddr() && use.get() != store.getValue() &&
               access(store.getValue().getType());
        else if (isa<LLVM::LifetimeStartOp, LLVM::LifetimeEndOp>(user))
          ok = true;
        else if (auto gep = dyn_cast<LLVM::GEPOp>(user);
                 gep && use.get() == gep.getBase()) {
          ok = true;
          privateRoots[gep.getResult()] = alloca;
          pointers.push_back(gep.getResult());
          geps.push_back(gep);
        }
        if (!ok) {
          reason = "a local variable or array is used other than by loads "
                   "and stores of one size (its address escapes, or it is "
                   "reinterpreted)";
          return WalkResult::interrupt();
        }
      }
    }
    size = size ? size : 1;
    privateSizes[alloca] = size;
    // Offsets into private memory must be whole elements.
    for (LLVM::GEPOp gep : geps) {
      where = gep;
      bool whole = true;
      bool arrays = forEachGEPIndex(
          gep, layout, /*structs=*/false, [&](GEPIndex index, int64_t scale) {
            Value dynamic = llvm::dyn_cast_if_present<Value>(index);
            std::optional<int64_t> known =
                dynamic ? constantInt(dynamic)
                        : std::optional<int64_t>(cast<IntegerAttr>(index).getInt());
            whole &= (known ? *known * scale : scale) % size == 0;
          });
      if (!arrays) {
        reason = "a local structure (only arrays and scalars are private "
                 "to each lane)";
        return WalkResult::interrupt();
      }
      if (!whole) {
        reason = "a local array accessed at offsets that are not whole "
                 "elements";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  where = nullptr;
  return success();
}

bool LaneAnalysis::isClean(Operation *op) {
  Block *block = op->getBlock();
  if (dirtyAtEntry.lookup(block) || maskedBlocks.contains(block))
    return false;
  Operation *first = firstSideEffect.lookup(block);
  return !first || !first->isBeforeInBlock(op);
}

Operation *LaneAnalysis::findInLoops(function_ref<bool(Block *latch)> loop,
                                     function_ref<bool(Operation &)> match) {
  for (auto [latchIndex, latch] : llvm::enumerate(order)) {
    if (!loop(latch))
      continue;
    for (Block *header : latch->getSuccessors()) {
      unsigned headerIndex = orderIndex.lookup(header);
      if (headerIndex > latchIndex)
        continue; // a forward edge
      for (unsigned i = headerIndex; i <= latchIndex; ++i)
        for (Operation &op : *order[i])
          if (match(op))
            return &op;
    }
  }
  return nullptr;
}

Shape LaneAnalysis::checked(Operation *op, int64_t stride,
                            int64_t operandStride, unsigned width,
                            WrapCheck kind) {
  // The spread of the lanes must fit the operand's type for a check to exist.
  int64_t spread;
  if (__builtin_mul_overflow(operandStride, static_cast<int64_t>(lanes - 1),
                             &spread) ||
      width < 8 || width > 64 || spread == INT64_MIN ||
      (width < 64 && std::abs(spread) >= (int64_t(1) << (width - 1))) ||
      !isClean(op))
    return Shape::varying();
  wrapChecks[op] = kind;
  return Shape::strided(stride);
}

std::optional<int64_t> LaneAnalysis::gepStride(LLVM::GEPOp gep) {
  Shape base = shapeOf(gep.getBase());
  if (base.isVarying())
    return std::nullopt;
  int64_t stride = base.stride;
  bool varies = false;
  if (!forEachGEPIndex(gep, layout, /*structs=*/true,
                       [&](GEPIndex index, int64_t scale) {
                         Value dynamic = llvm::dyn_cast_if_present<Value>(index);
                         Shape shape = dynamic ? shapeOf(dynamic) : Shape::uniform();
                         varies |= shape.isVarying();
                         stride += shape.stride * scale;
                       }) ||
      varies)
    return std::nullopt;
  return stride;
}

Shape LaneAnalysis::transfer(Operation *op) {
  if (auto id = dyn_cast<InstanceIdOp>(op))
    return id.getLevel() == 0 && id.getDim() == Dim::x ? Shape::strided(1)
                                                        : Shape::uniform();
  if (runsPerLane(op))
    return Shape::varying();
  // Private memory: lane l of offset o is at o * lanes + l * size.
  if (auto alloca = dyn_cast<LLVM::AllocaOp>(op)) {
    offsetShapes[alloca.getResult()] = Shape::uniform();
    return Shape::strided(privateSizes.lookup(alloca));
  }
  if (auto gep = dyn_cast<LLVM::GEPOp>(op); gep && privateRootOf(gep.getResult())) {
    // (collectPrivateMemory checked that only arrays are indexed.)
    Shape offset = offsetShapeOf(gep.getBase());
    forEachGEPIndex(gep, layout, /*structs=*/false,
                    [&](GEPIndex index, int64_t scale) {
                      Value dynamic = llvm::dyn_cast_if_present<Value>(index);
                      Shape shape = dynamic ? shapeOf(dynamic) : Shape::uniform();
                      offset = offset.isVarying() || shape.isVarying()
                                   ? Shape::varying()
                                   : Shape::strided(offset.stride +
                                                    shape.stride * scale);
                    });
    offsetShapes[gep.getResult()] = offset;
    if (offset.isVarying())
      return Shape::varying();
    int64_t size = privateSizes.lookup(privateRootOf(gep.getResult()));
    return Shape::strided(offset.stride * static_cast<int64_t>(lanes) + size);
  }
  bool allUniform = llvm::all_of(op->getOperands(), [&](Value operand) {
    return shapeOf(operand).isUniform();
  });
  if (allUniform)
    return Shape::uniform();
  // A strided result needs operands that are all uniform or strided.
  if (op->getNumResults() != 1 ||
      llvm::any_of(op->getOperands(), [&](Value operand) {
        return shapeOf(operand).isVarying();
      }))
    return Shape::varying();
  Type type = op->getResult(0).getType();
  if (!(isa<LLVM::LLVMPointerType>(type) || type.isIndex() ||
        (type.isInteger() && bitWidth(type) >= 8)))
    return Shape::varying();
  auto operandShape = [&](unsigned i) { return shapeOf(op->getOperand(i)); };
  auto isStridedOrUniform = [&](unsigned i) {
    return !operandShape(i).isVarying();
  };

  if (auto gep = dyn_cast<LLVM::GEPOp>(op)) {
    std::optional<int64_t> stride = gepStride(gep);
    return stride ? Shape::strided(*stride) : Shape::varying();
  }
  if (isa<LLVM::AddOp, arith::AddIOp>(op) && isStridedOrUniform(0) &&
      isStridedOrUniform(1))
    return Shape::strided(operandShape(0).stride + operandShape(1).stride);
  if (isa<LLVM::SubOp, arith::SubIOp>(op) && isStridedOrUniform(0) &&
      isStridedOrUniform(1))
    return Shape::strided(operandShape(0).stride - operandShape(1).stride);
  if (auto orOp = dyn_cast<LLVM::OrOp>(op);
      orOp && orOp.getIsDisjoint() && isStridedOrUniform(0) &&
      isStridedOrUniform(1))
    return Shape::strided(operandShape(0).stride + operandShape(1).stride);
  if (isa<LLVM::MulOp, arith::MulIOp>(op)) {
    for (unsigned i = 0; i < 2; ++i)
      if (std::optional<int64_t> factor = constantInt(op->getOperand(1 - i));
          factor && isStridedOrUniform(i))
        return Shape::strided(operandShape(i).stride * *factor);
    return Shape::varying();
  }
  if (isa<LLVM::AndOp, arith::AndIOp>(op)) {
    // x & (2^k - 1): x's lanes, as long as they do not cross a multiple of
    // 2^k (checked on the first lane).
    std::optional<int64_t> mask = constantInt(op->getOperand(1));
    if (!mask || *mask <= 0 || (*mask & (*mask + 1)) != 0)
      return Shape::varying();
    // The spread must stay below 2^k: the check of a (k + 1)-bit width.
    unsigned bits = llvm::countr_one(static_cast<uint64_t>(*mask));
    int64_t stride = operandShape(0).stride;
    return checked(op, stride, stride, bits + 1, WrapCheck::LowBits);
  }
  if (isa<LLVM::ShlOp, arith::ShLIOp>(op)) {
    std::optional<int64_t> amount = constantInt(op->getOperand(1));
    if (amount && *amount >= 0 && *amount < 63 && operandShape(1).isUniform())
      return Shape::strided(operandShape(0).stride << *amount);
    return Shape::varying();
  }
  if (isa<LLVM::AShrOp, LLVM::LShrOp, arith::ShRSIOp, arith::ShRUIOp>(op)) {
    std::optional<int64_t> amount = constantInt(op->getOperand(1));
    int64_t stride = operandShape(0).stride;
    if (!amount || *amount < 0 || *amount >= 63 ||
        stride % (int64_t(1) << *amount) != 0)
      return Shape::varying();
    bool isSigned = isa<LLVM::AShrOp, arith::ShRSIOp>(op);
    return checked(op, stride >> *amount, stride, bitWidth(type),
                   isSigned ? WrapCheck::Signed : WrapCheck::Unsigned);
  }
  if (op->getNumOperands() == 1 &&
      isa<LLVM::TruncOp, LLVM::SExtOp, LLVM::ZExtOp, LLVM::PtrToIntOp,
          LLVM::IntToPtrOp, arith::IndexCastOp, arith::IndexCastUIOp,
          arith::TruncIOp, arith::ExtSIOp, arith::ExtUIOp>(op)) {
    Shape source = operandShape(0);
    unsigned from = bitWidth(op->getOperand(0).getType());
    unsigned to = bitWidth(type);
    // Truncation and same-width casts are exact modulo the width.
    if (to <= from) {
      if (to < 64 && std::abs(source.stride) >= (int64_t(1) << (to - 1)))
        return Shape::varying();
      return source;
    }
    bool isSigned = isa<LLVM::SExtOp, arith::IndexCastOp, arith::ExtSIOp>(op);
    return checked(op, source.stride, source.stride, from,
                   isSigned ? WrapCheck::Signed : WrapCheck::Unsigned);
  }
  return Shape::varying();
}

LogicalResult LaneAnalysis::run(std::string &reason, Operation *&where) {
  Region &body = leaf.getBody();
  for (Block *block : llvm::ReversePostOrderTraversal<Block *>(&body.front()))
    order.push_back(block);

  // What the lanes cannot run: refused before anything is computed.
  if (failed(checkSupportedOps(reason, where)))
    return failure();
  where = nullptr;
  if (failed(collectPrivateMemory(reason, where)))
    return failure();
  // Where side effects may have happened, then the shapes and the masked
  // regions of the divergent branches.
  markDirtyBlocks();
  computeMaskedRegions();

  // Not worth it: a loop whose trip count differs between lanes (a check
  // that they agree at every step) around gathers, which cost about what
  // the scalar loads cost (spmv's row loop).
  Block *divergentLatch = nullptr;
  if (findInLoops(
          [&](Block *latch) {
            auto branch = dyn_cast<LLVM::CondBrOp>(latch->getTerminator());
            divergentLatch = latch;
            return branch && !shapeOf(branch.getCondition()).isUniform();
          },
          [&](Operation &op) {
            auto load = dyn_cast<LLVM::LoadOp>(op);
            return load && shapeOf(load.getAddr()).isVarying();
          })) {
    where = divergentLatch->getTerminator();
    reason = "not profitable: a loop whose trip count differs between "
             "instances gathers (about the cost of the scalar loads, plus a "
             "check per step)";
    return failure();
  }

  // What the lanes must agree on, and values that must fit a vector.
  if (failed(checkLanesAgree(reason, where)))
    return failure();
  where = nullptr;
  return success();
}

LogicalResult LaneAnalysis::checkSupportedOps(std::string &reason,
                                              Operation *&where) {
  for (Block *block : order) {
    for (Operation &op : *block) {
      where = &op;
      if (op.getNumRegions()) {
        reason = "'" + op.getName().getStringRef().str() +
                 "' has regions (structured leaves run tiles in lock-step "
                 "instead: vectorize-tiles)";
        return failure();
      }
      StringRef dialect = op.getName().getDialectNamespace();
      if (dialect != "llvm" && dialect != "arith" && dialect != "math" &&
          dialect != leaf->getDialect()->getNamespace()) {
        reason = "'" + op.getName().getStringRef().str() +
                 "' (leaves of memrefs and structured ops run tiles in "
                 "lock-step instead: vectorize-tiles)";
        return failure();
      }
      if (op.getDialect() == leaf->getDialect() &&
          !isa<InstanceIdOp, NumInstancesOp, ReturnOp>(op)) {
        reason = "'" + op.getName().getStringRef().str() + "' in the leaf";
        return failure();
      }
      if (auto load = dyn_cast<LLVM::LoadOp>(op);
          load && (load.getVolatile_() || load.getOrdering() != LLVM::AtomicOrdering::not_atomic)) {
        reason = "a volatile or atomic load";
        return failure();
      }
      if (auto store = dyn_cast<LLVM::StoreOp>(op);
          store && (store.getVolatile_() || store.getOrdering() != LLVM::AtomicOrdering::not_atomic)) {
        reason = "a volatile or atomic store";
        return failure();
      }
      if (op.hasTrait<::mlir::OpTrait::IsTerminator>() &&
          !isa<LLVM::BrOp, LLVM::CondBrOp, LLVM::SwitchOp, LLVM::UnreachableOp,
               ReturnOp>(op)) {
        reason = "the terminator '" + op.getName().getStringRef().str() + "'";
        return failure();
      }
    }
  }
  return success();
}

void LaneAnalysis::markDirtyBlocks() {
  // Dirty at entry of a block when some predecessor is dirty at its end.
  for (Block *block : order)
    for (Operation &op : *block)
      if (hasSideEffect(&op)) {
        firstSideEffect[block] = &op;
        break;
      }
  bool changed = true;
  while (changed) {
    changed = false;
    for (Block *block : order) {
      bool dirty = dirtyAtEntry.lookup(block) || firstSideEffect.count(block);
      if (!dirty)
        continue;
      for (Block *successor : block->getSuccessors())
        if (!dirtyAtEntry.lookup(successor))
          dirtyAtEntry[successor] = changed = true;
    }
  }
}

void LaneAnalysis::computeMaskedRegions() {
  // The masked regions' joins make values varying: again until no branch is
  // newly divergent.
  for (auto [index, block] : llvm::enumerate(order))
    orderIndex[block] = index;
  PostDominanceInfo postDominance(leaf);
  while (true) {
    computeShapes();
    bool grown = false;
    for (Block *block : order) {
      auto branch = dyn_cast<LLVM::CondBrOp>(block->getTerminator());
      // Before any side effect, lanes that disagree are sent back to the
      // scalar code instead: a wrap check stays possible in both sides.
      if (!branch || shapeOf(branch.getCondition()).isUniform() ||
          maskedRegions.count(branch) || isClean(branch))
        continue;
      std::optional<MaskedRegion> region = findMaskedRegion(branch, postDominance);
      if (!region)
        continue;
      grown = true;
      for (Block *inside : region->blocks) {
        maskedBlocks.insert(inside);
        if (!llvm::hasSingleElement(inside->getUses()))
          for (BlockArgument argument : inside->getArguments())
            joinArguments.insert(argument);
      }
      for (BlockArgument argument : region->join->getArguments())
        joinArguments.insert(argument);
      maskedRegions[branch] = std::move(*region);
    }
    if (!grown)
      break;
    shapes.clear();
    wrapChecks.clear();
    offsetShapes.clear();
  }
}

LogicalResult LaneAnalysis::checkLanesAgree(std::string &reason,
                                            Operation *&where) {
  for (Block *block : order) {
    for (Operation &op : *block) {
      where = &op;
      for (Value result : op.getResults())
        if (shapeOf(result).isVarying() && !isStorableScalar(result.getType())) {
          std::string type;
          llvm::raw_string_ostream(type) << result.getType();
          reason = "'" + op.getName().getStringRef().str() +
                   "' gives each instance a value of type " + type +
                   ", which has no vector form";
          return failure();
        }
      if (isa<LLVM::CondBrOp, LLVM::SwitchOp>(op) &&
          !shapeOf(op.getOperand(0)).isUniform()) {
        if (isa<LLVM::SwitchOp>(op)) {
          reason = "a switch on a value that differs between instances";
          return failure();
        }
        if (!maskedRegions.count(&op) && !isClean(&op)) {
          reason = "a branch that differs between instances after a store "
                   "or call, around a loop (masks cover branches whose "
                   "paths meet again without a loop)";
          return failure();
        }
      }
    }
  }
  return success();
}

std::string LaneAnalysis::rowRefusal() {
  // Row dependence, to a fixed point over the loops' back edges.
  bool changed = true;
  while (changed) {
    changed = false;
    for (Block *block : order) {
      for (Operation &op : *block) {
        if (auto branch = dyn_cast<BranchOpInterface>(op)) {
          for (unsigned s = 0; s < op.getNumSuccessors(); ++s)
            for (auto [argument, operand] : llvm::zip(
                     op.getSuccessor(s)->getArguments(),
                     branch.getSuccessorOperands(s).getForwardedOperands()))
              if (rowDependent.contains(operand) &&
                  rowDependent.insert(argument).second)
                changed = true;
          continue;
        }
        bool dependent = isa<LLVM::AllocaOp>(op) || runsPerLane(&op) ||
                         llvm::any_of(op.getOperands(), [&](Value operand) {
                           return rowDependent.contains(operand);
                         });
        if (auto id = dyn_cast<InstanceIdOp>(op))
          dependent = id.getLevel() == 0 && id.getDim() == Dim::y;
        if (dependent)
          for (Value result : op.getResults())
            changed |= rowDependent.insert(result).second;
      }
    }
  }
  if (!maskedRegions.empty())
    return "branches run under masks";
  if (!leaf.getPassedOnInputs())
    return "an output is computed (only inputs passed on are one value for "
           "every block of rows)";
  bool readsY = false;
  for (Block *block : order)
    for (Operation &op : *block) {
      if (auto id = dyn_cast<InstanceIdOp>(op))
        readsY |= id.getLevel() == 0 && id.getDim() == Dim::y;
      if (isa<LLVM::CondBrOp, LLVM::SwitchOp>(op) &&
          rowDependent.contains(op.getOperand(0)))
        return "a branch on a value that differs between rows";
    }
  if (!readsY)
    return "its instances do not read their y id";
  // Worth it when a loop loads something every row needs: blocks between a
  // loop header and its back edge in the order (a loop's body here).
  bool shared = findInLoops([](Block *) { return true; }, [&](Operation &op) {
    auto load = dyn_cast<LLVM::LoadOp>(op);
    return load && !rowDependent.contains(load.getAddr());
  });
  return shared ? "" : "no loop loads a value that every row needs";
}

std::optional<LaneAnalysis::MaskedRegion>
LaneAnalysis::findMaskedRegion(LLVM::CondBrOp branch,
                               PostDominanceInfo &postDominance) {
  Block *from = branch->getBlock();
  Block *join = postDominance.findNearestCommonDominator(branch.getTrueDest(),
                                                        branch.getFalseDest());
  if (!join || !orderIndex.count(join))
    return std::nullopt;
  SetVector<Block *> inside;
  SmallVector<Block *> worklist{branch.getTrueDest(), branch.getFalseDest()};
  while (!worklist.empty()) {
    Block *block = worklist.pop_back_val();
    if (block == join || !inside.insert(block))
      continue;
    Operation *terminator = block->getTerminator();
    if (!isa<LLVM::BrOp, LLVM::CondBrOp>(terminator))
      return std::nullopt; // a return, switch or unreachable inside
    for (Block *successor : block->getSuccessors()) {
      // Forward edges only: no loop inside.
      if (successor != join &&
          orderIndex.lookup(successor) <= orderIndex.lookup(block))
        return std::nullopt;
      worklist.push_back(successor);
    }
  }
  MaskedRegion region;
  region.join = join;
  for (Block *block : inside) {
    // Entered only from the branch or from inside; nothing private is
    // allocated there.
    for (Block *predecessor : block->getPredecessors())
      if (predecessor != from && !inside.contains(predecessor))
        return std::nullopt;
    for (Operation &op : *block)
      if (isa<LLVM::AllocaOp>(op))
        return std::nullopt;
    region.blocks.push_back(block);
  }
  llvm::sort(region.blocks, [&](Block *a, Block *b) {
    return orderIndex.lookup(a) < orderIndex.lookup(b);
  });
  return region;
}

void LaneAnalysis::computeShapes() {
  for (BlockArgument argument : leaf.getBody().front().getArguments())
    shapes[argument] = Shape::uniform();
  for (Value argument : joinArguments)
    shapes[argument] = Shape::varying();
  bool changed = true;
  while (changed) {
    changed = false;
    for (Block *block : order) {
      for (Operation &op : *block) {
        if (op.hasTrait<::mlir::OpTrait::IsTerminator>()) {
          auto branch = dyn_cast<BranchOpInterface>(op);
          if (!branch)
            continue;
          for (unsigned s = 0; s < op.getNumSuccessors(); ++s) {
            Block *successor = op.getSuccessor(s);
            OperandRange operands =
                branch.getSuccessorOperands(s).getForwardedOperands();
            for (auto [argument, operand] :
                 llvm::zip(successor->getArguments(), operands)) {
              Shape incoming = shapeOf(operand);
              auto [it, inserted] = shapes.try_emplace(argument, incoming);
              if (!inserted && !(it->second == join(it->second, incoming))) {
                it->second = join(it->second, incoming);
                changed = true;
              } else if (inserted) {
                changed = true;
              }
            }
          }
          continue;
        }
        // Recomputed from the operands: only block arguments join.
        Shape shape = transfer(&op);
        for (Value result : op.getResults()) {
          auto [it, inserted] = shapes.try_emplace(result, shape);
          if (!inserted && !(it->second == shape)) {
            it->second = shape;
            changed = true;
          }
        }
      }
    }
  }
}

} // namespace mlir::hpvm::lanes
