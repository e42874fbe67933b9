//===- OwnedBuffers.cpp - Free the buffers tensor leaves hand on ----------===//
// A bufferized tensor leaf returns fresh buffers; the graph hands each along
// its edges or to the root's output. Ownership follows a buffer with exactly
// one receiver; a buffer that fans out to several is freed by the receiver
// that runs after all the others, or by the one that finishes last where the
// graph does not order them (see OwnedBuffers.h).
#include "OwnedBuffers.h"
#include "KernelCalls.h"

#include "HPVM/Conversion/RuntimeABI.h"
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::hpvm;

bool mlir::hpvm::mayEscape(Value buffer) {
  for (Operation *user : buffer.getUsers()) {
    if (isa<ReturnOp, func::ReturnOp>(user))
      return true;
    if (isa<ViewLikeOpInterface, memref::CastOp>(user)) {
      for (Value view : user->getResults())
        if (mayEscape(view))
          return true;
      continue;
    }
    if (llvm::any_of(user->getResultTypes(),
                     [](Type type) { return isa<BaseMemRefType>(type); }))
      return true;
    if (auto store = dyn_cast<memref::StoreOp>(user);
        store && store.getValueToStore() == buffer)
      return true;
  }
  return false;
}

namespace {
/// The value a chain of views (and casts) starts from.
Value viewRoot(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(op))
      value = view.getViewSource();
    else if (auto cast = dyn_cast<memref::CastOp>(op))
      value = cast.getSource();
    else
      break;
  }
  return value;
}

/// A port of a child: (its create_node handle, port number).
using Port = std::pair<Value, unsigned>;

struct Ownership {
  Ownership(ModuleOp module, const llvm::SmallPtrSetImpl<Operation *> &converted)
      : module(module), converted(converted), symbols(module) {}

  /// The leaf a handle creates, when it takes part: converted by this pass,
  /// instantiated once in the module, no instance grid, no device version.
  LeafOp takingPart(Value handle) const { return parts.lookup(handle); }

  /// Fills `parts` for every child of the module's internal nodes.
  void findParts() {
    DenseMap<Operation *, unsigned> instances;
    module.walk([&](CreateNodeOp create) {
      if (auto leaf = symbols.lookup<LeafOp>(create.getNode()))
        ++instances[leaf];
    });
    module.walk([&](LaunchOp launch) {
      if (auto leaf = symbols.lookup<LeafOp>(launch.getRoot()))
        instances[leaf] += 2; // launched directly: its outputs go to the host
    });
    module.walk([&](CreateNodeOp create) {
      auto leaf = symbols.lookup<LeafOp>(create.getNode());
      if (leaf && converted.contains(leaf) && create.getDims().empty() &&
          instances.lookup(leaf) == 1 &&
          !leaf->hasAttr(HPVMDialect::getKernelAttrName()) && leaf.getBody().hasOneBlock())
        parts[create.getHandle()] = leaf;
    });
  }

  /// The input of `leaf` that output `port` returns through views, or -1 when
  /// the output is a fresh allocation of the leaf, or -2 when neither (or the
  /// same buffer leaves through two ports).
  static int outputSource(LeafOp leaf, unsigned port) {
    auto ret = cast<ReturnOp>(leaf.getBodyBlock().getTerminator());
    if (port >= ret.getNumOperands())
      return -2;
    Value root = viewRoot(ret.getOperand(port));
    for (auto [i, other] : llvm::enumerate(ret.getOperands()))
      if (i != port && viewRoot(other) == root)
        return -2;
    if (!isa<BaseMemRefType>(root.getType()))
      return -2;
    if (auto arg = dyn_cast<BlockArgument>(root))
      return arg.getOwner() == &leaf.getBodyBlock() ? int(arg.getArgNumber()) : -2;
    if (isa_and_nonnull<memref::AllocOp>(root.getDefiningOp()) &&
        root.getDefiningOp()->getBlock() == &leaf.getBodyBlock())
      return -1;
    return -2;
  }

  void run() {
    findParts();
    // Consumers of each output port, and the edge into each input port.
    DenseMap<Port, unsigned> consumers;
    DenseMap<Port, Port> edgeInto;
    module.walk([&](EdgeOp edge) {
      Port from{edge.getSource(), unsigned(edge.getSourcePort())};
      ++consumers[from];
      edgeInto[{edge.getDest(), unsigned(edge.getDestPort())}] = from;
    });
    module.walk([&](BindOutOp bind) {
      ++consumers[{bind.getSource(), unsigned(bind.getSourcePort())}];
    });
    // Owned outputs, to a fixpoint (an output owned through an owned input).
    DenseSet<Port> owned;
    auto ownedInput = [&](Value handle, unsigned port) {
      auto it = edgeInto.find({handle, port});
      return it != edgeInto.end() && owned.contains(it->second) &&
             consumers.lookup(it->second) == 1 && takingPart(it->second.first);
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (auto [handle, leaf] : parts) {
        for (unsigned port = 0; port < leaf.getNumResults(); ++port) {
          if (owned.contains({handle, port}))
            continue;
          int source = outputSource(leaf, port);
          if (source == -1 || (source >= 0 && ownedInput(handle, unsigned(source)))) {
            owned.insert({handle, port});
            changed = true;
          }
        }
      }
    }
    // Consumers free the owned inputs they do not hand on.
    for (auto [handle, leaf] : parts) {
      Block &body = leaf.getBodyBlock();
      OpBuilder b(body.getTerminator());
      for (BlockArgument arg : body.getArguments())
        if (isa<MemRefType>(arg.getType()) && ownedInput(handle, arg.getArgNumber()) &&
            !mayEscape(arg))
          memref::DeallocOp::create(b, leaf.getLoc(), arg);
    }
    freeFannedOut(owned, consumers);
    // The host frees what the roots it launched hand it.
    module.walk([&](LaunchOp launch) {
      auto root = symbols.lookup<InternalOp>(launch.getRoot());
      if (!root || !converted.contains(root))
        return;
      SmallVector<bool> ownedOutputs(root.getNumResults(), false);
      root.walk([&](BindOutOp bind) {
        Port from{bind.getSource(), unsigned(bind.getSourcePort())};
        if (bind.getOutput() < ownedOutputs.size() && owned.contains(from) &&
            consumers.lookup(from) == 1 && takingPart(from.first))
          ownedOutputs[bind.getOutput()] = true;
      });
      for (Operation *user : launch.getGraph().getUsers()) {
        if (!isa<WaitOp, PopOp>(user))
          continue;
        for (OpResult result : user->getResults())
          if (result.getResultNumber() < ownedOutputs.size() &&
              ownedOutputs[result.getResultNumber()])
            freeAfterLastUse(result);
      }
    });
  }

  /// An owned buffer that goes along several edges (a residual's skip
  /// connection) is freed by the consumer that every other consumer reaches
  /// through edges: whatever order the graph runs in, it runs last (once,
  /// when it receives it on several inputs); without one, by whichever
  /// finishes last (freeIfLast). Every consumer must take part and keep no
  /// view of it.
  void freeFannedOut(const DenseSet<Port> &owned, const DenseMap<Port, unsigned> &consumers) {
    DenseMap<Port, SmallVector<EdgeOp>> edgesFrom;
    DenseMap<Value, SmallVector<Value>> successors;
    module.walk([&](EdgeOp edge) {
      edgesFrom[{edge.getSource(), unsigned(edge.getSourcePort())}].push_back(edge);
      successors[edge.getSource()].push_back(edge.getDest());
    });
    auto reaches = [&](Value from, Value to) {
      SmallVector<Value> work{from};
      DenseSet<Value> seen;
      while (!work.empty()) {
        Value node = work.pop_back_val();
        if (node == to)
          return true;
        if (seen.insert(node).second)
          llvm::append_range(work, successors.lookup(node));
      }
      return false;
    };
    for (Port from : owned) {
      auto edges = edgesFrom.find(from);
      if (edges == edgesFrom.end() || edges->second.size() < 2 ||
          consumers.lookup(from) != edges->second.size())
        continue; // one consumer (freed above), or also bound out
      SmallVector<Value> receivers; // each once, with the first edge into it
      SmallVector<EdgeOp> firstEdges;
      bool fine = true;
      for (EdgeOp edge : edges->second) {
        LeafOp leaf = takingPart(edge.getDest());
        fine = fine && leaf &&
               !mayEscape(leaf.getBodyBlock().getArgument(edge.getDestPort()));
        if (!llvm::is_contained(receivers, edge.getDest())) {
          receivers.push_back(edge.getDest());
          firstEdges.push_back(edge);
        }
      }
      if (!fine)
        continue;
      bool freed = false;
      for (auto [last, edge] : llvm::zip(receivers, firstEdges)) {
        bool runsLast = llvm::all_of(receivers, [&, last = last](Value other) {
          return other == last || reaches(other, last);
        });
        if (!runsLast)
          continue;
        LeafOp leaf = takingPart(last);
        OpBuilder b(leaf.getBodyBlock().getTerminator());
        memref::DeallocOp::create(b, leaf.getLoc(),
                                  leaf.getBodyBlock().getArgument(edge.getDestPort()));
        freed = true;
        break;
      }
      if (!freed)
        for (auto [receiver, edge] : llvm::zip(receivers, firstEdges))
          freeIfLast(takingPart(receiver), edge.getDestPort(), receivers.size());
    }
  }

  /// Where no receiver of a fanned-out buffer is sure to run after the others
  /// (two branches from one input), each asks the runtime as it returns
  /// whether it is the last of the `receivers` done with the buffer, and that
  /// one frees it: hpvm_rt_buffer_last_use counts the reports per address.
  void freeIfLast(LeafOp leaf, unsigned port, size_t receivers) {
    Location loc = leaf.getLoc();
    Value buffer = leaf.getBodyBlock().getArgument(port);
    OpBuilder b(leaf.getBodyBlock().getTerminator());
    Value count = arith::ConstantIntOp::create(b, loc, int64_t(receivers), 64);
    Value last = abi::call(b, loc, module, abi::RuntimeFn::BufferLastUse,
                           {pointerOf(b, loc, buffer), count});
    if (!last)
      return; // the declaration failed (reported there): the buffer is kept
    Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
    Value isLast = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, last, zero);
    auto ifLast = scf::IfOp::create(b, loc, TypeRange{}, isLast, /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifLast.thenBlock());
    memref::DeallocOp::create(b, loc, buffer);
  }

  /// Frees a host's buffer after its last use, when every use is in its block
  /// and none lets it escape.
  static void freeAfterLastUse(Value buffer) {
    if (!isa<MemRefType>(buffer.getType()) || mayEscape(buffer))
      return;
    Block *block = buffer.getParentBlock();
    Operation *last = buffer.getDefiningOp();
    for (Operation *user : buffer.getUsers()) {
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (!inBlock)
        return;
      if (last->isBeforeInBlock(inBlock))
        last = inBlock;
    }
    if (last->hasTrait<mlir::OpTrait::IsTerminator>())
      return;
    OpBuilder b(last->getContext());
    b.setInsertionPointAfter(last);
    memref::DeallocOp::create(b, buffer.getLoc(), buffer);
  }

  ModuleOp module;
  const llvm::SmallPtrSetImpl<Operation *> &converted;
  SymbolTable symbols;
  /// The children that take part, by handle.
  DenseMap<Value, LeafOp> parts;
};
} // namespace

void mlir::hpvm::freeHandedOnBuffers(ModuleOp module,
                                     const llvm::SmallPtrSetImpl<Operation *> &converted) {
  Ownership(module, converted).run();
}

//===----------------------------------------------------------------------===//
// Copies of owned inputs
//===----------------------------------------------------------------------===//

SmallVector<Value> mlir::hpvm::reshapeChain(Value value) {
  SmallVector<Value> chain{value};
  while (Operation *def = chain.back().getDefiningOp()) {
    if (auto collapse = dyn_cast<memref::CollapseShapeOp>(def))
      chain.push_back(collapse.getSrc());
    else if (auto expand = dyn_cast<memref::ExpandShapeOp>(def))
      chain.push_back(expand.getSrc());
    else
      break;
  }
  return chain;
}

/// The block argument `value` is a reshaped view of (collapse_shape /
/// expand_shape, which keep the order of the elements), or null.
static BlockArgument reshapedArgument(Value value) {
  return dyn_cast<BlockArgument>(reshapeChain(value).back());
}

/// Whether `op` is `value` or a view of it (through any view-like op).
static bool isViewOf(Value candidate, Value value) {
  while (candidate != value) {
    auto view = candidate.getDefiningOp<ViewLikeOpInterface>();
    if (!view)
      return false;
    candidate = view.getViewSource();
  }
  return true;
}

/// `copy` of a reshaped owned input into a fresh buffer of the same type: the
/// input itself can stand for the buffer when the leaf frees the input (it
/// owns it) and touches it, or a view of it, after the copy only to free it.
/// Returns the input's dealloc then, or null.
static memref::DeallocOp ownedCopiedInput(memref::CopyOp copy) {
  Block *block = copy->getBlock();
  auto alloc = copy.getTarget().getDefiningOp<memref::AllocOp>();
  BlockArgument input = reshapedArgument(copy.getSource());
  if (!alloc || alloc->getBlock() != block || !input || input.getOwner() != block ||
      copy.getSource().getType() != alloc.getType() || !alloc.getType().getLayout().isIdentity())
    return {};
  memref::DeallocOp free;
  for (Operation *op = copy->getNextNode(); op; op = op->getNextNode()) {
    for (Value operand : op->getOperands()) {
      if (!isa<BaseMemRefType>(operand.getType()) || !isViewOf(operand, input))
        continue;
      auto dealloc = dyn_cast<memref::DeallocOp>(op);
      if (!dealloc || operand != input || free)
        return {};
      free = dealloc;
    }
  }
  // Nested regions after the copy might touch the input too.
  bool nested = false;
  for (Operation *op = copy->getNextNode(); op && !nested; op = op->getNextNode())
    op->walk([&](Operation *inner) {
      if (inner != op && llvm::any_of(inner->getOperands(), [&](Value v) {
            return isa<BaseMemRefType>(v.getType()) && isViewOf(v, input);
          }))
        nested = true;
    });
  return nested ? memref::DeallocOp() : free;
}

void mlir::hpvm::forwardOwnedInputCopies(
    ModuleOp module, const llvm::SmallPtrSetImpl<Operation *> &converted) {
  for (LeafOp leaf : module.getOps<LeafOp>()) {
    if (!converted.contains(leaf) || leaf.getBody().empty())
      continue;
    SmallVector<memref::CopyOp> copies(leaf.getBody().front().getOps<memref::CopyOp>());
    for (memref::CopyOp copy : copies) {
      memref::DeallocOp free = ownedCopiedInput(copy);
      if (!free)
        continue;
      auto alloc = copy.getTarget().getDefiningOp<memref::AllocOp>();
      Value source = copy.getSource();
      copy->erase();
      free->erase();
      // The reshaped view must be defined before every use of the buffer.
      if (Operation *def = source.getDefiningOp(); def && alloc->isBeforeInBlock(def)) {
        SmallVector<Operation *> chain;
        for (Value v = source; Operation *op = v.getDefiningOp(); v = op->getOperand(0))
          chain.push_back(op);
        for (Operation *op : llvm::reverse(chain))
          op->moveBefore(alloc);
      }
      alloc.getResult().replaceAllUsesWith(source);
      alloc->erase();
    }
  }
}
