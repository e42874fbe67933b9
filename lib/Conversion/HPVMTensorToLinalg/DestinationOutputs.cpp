//===- DestinationOutputs.cpp - Leaves write into the host's destination --===//
// A tensor graph's output reaches the caller through a copy: the leaf that
// computes it allocates a buffer, the host waits for it and copies it into the
// destination the function was given. When the host promises that destination
// is not aliased (`restrict`) and nothing else touches it, the leaf can write
// there directly: the copy and the buffer go away (destination passing).
#include "DestinationOutputs.h"
#include "OwnedBuffers.h"

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::hpvm;

SmallVector<DestinationOutput> mlir::hpvm::findDestinationOutputs(ModuleOp module) {
  SmallVector<DestinationOutput> outputs;
  for (auto function : module.getOps<func::FuncOp>()) {
    if (function.isExternal())
      continue;
    function.walk([&](bufferization::MaterializeInDestinationOp store) {
      auto wait = store.getSource().getDefiningOp<WaitOp>();
      auto destination = dyn_cast<BlockArgument>(store.getDest());
      if (!wait || !store.getRestrict() || !store.getWritable() || !destination ||
          destination.getOwner() != &function.getBody().front() ||
          !destination.hasOneUse() || !store.getSource().hasOneUse())
        return;
      outputs.push_back({wait, unsigned(cast<OpResult>(store.getSource()).getResultNumber()),
                         destination.getArgNumber()});
    });
  }
  return outputs;
}

namespace {
/// Whether `symbol` is referenced exactly once in `module`.
bool usedOnce(Operation *symbol, ModuleOp module) {
  std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(symbol, module);
  return uses && llvm::hasSingleElement(*uses);
}

/// Rewrites one destination output, or leaves everything as it is.
void forward(const DestinationOutput &output, ModuleOp module, SymbolTable &symbols,
             const llvm::SmallPtrSetImpl<Operation *> &converted) {
  WaitOp wait = output.wait;
  auto function = wait->getParentOfType<func::FuncOp>();
  Value result = wait->getResult(output.port);
  BlockArgument destination = function.getArgument(output.destination);
  auto type = dyn_cast<MemRefType>(destination.getType());
  if (!type || result.getType() != type || !result.hasOneUse() || !destination.hasOneUse())
    return;
  auto copy = dyn_cast<memref::CopyOp>(*result.getUsers().begin());
  if (!copy || copy.getSource() != result || copy.getTarget() != destination)
    return;
  auto launch = wait.getGraph().getDefiningOp<LaunchOp>();
  if (!launch || launch.getStreaming() || launch.getPushed() ||
      !wait.getGraph().hasOneUse() || launch->getBlock() != copy->getBlock())
    return;
  auto root = symbols.lookup<InternalOp>(launch.getRoot());
  if (!root || !converted.contains(root) || !usedOnce(root, module))
    return;
  // The child bound to the output, and nothing else reading that port.
  BindOutOp bind;
  for (auto candidate : root.getBody().getOps<BindOutOp>())
    if (candidate.getOutput() == output.port) {
      if (bind)
        return;
      bind = candidate;
    }
  if (!bind)
    return;
  auto create = bind.getSource().getDefiningOp<CreateNodeOp>();
  if (!create || !create.getDims().empty())
    return;
  for (Operation *user : create.getHandle().getUsers()) {
    if (auto edge = dyn_cast<EdgeOp>(user);
        edge && edge.getSource() == create.getHandle() &&
        edge.getSourcePort() == bind.getSourcePort())
      return;
    if (auto other = dyn_cast<BindOutOp>(user);
        other && other != bind && other.getSourcePort() == bind.getSourcePort())
      return;
  }
  auto leaf = symbols.lookup<LeafOp>(create.getNode());
  if (!leaf || !converted.contains(leaf) || !usedOnce(leaf, module) ||
      leaf->hasAttr(HPVMDialect::getKernelAttrName()) || !leaf.getBody().hasOneBlock())
    return;
  // The leaf returns, at that port only, a fresh buffer of the destination's
  // type that it never frees.
  Block &body = leaf.getBodyBlock();
  auto ret = cast<ReturnOp>(body.getTerminator());
  unsigned port = bind.getSourcePort();
  if (port >= ret.getNumOperands())
    return;
  Value buffer = ret.getOperand(port);
  // The buffer, reached through the reshapes an elementwise loop over merged
  // dimensions writes it by, each a view of the one before.
  SmallVector<Value> views = reshapeChain(buffer);
  auto alloc = views.back().getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != &body || alloc.getType() != type)
    return;
  for (Value view : views)
    for (OpOperand &use : view.getUses())
      if (isa<memref::DeallocOp>(use.getOwner()) ||
          (use.getOwner() == ret && (view != buffer || use.getOperandNumber() != port)))
        return;

  // The root and the leaf take a new input (the root's first: nothing changes
  // when it cannot)...
  MLIRContext *context = module.getContext();
  unsigned rootInput = root.getNumArguments(), leafInput = leaf.getNumArguments();
  if (failed(root.insertArgument(rootInput, type, DictionaryAttr::get(context, {}),
                                 root.getLoc())))
    return;
  NamedAttribute access(HPVMDialect::getAccessAttrName(),
                        AccessAttr::get(context, Access::out));
  if (failed(leaf.insertArgument(leafInput, type, DictionaryAttr::get(context, {access}),
                                 alloc.getLoc()))) {
    (void)root.eraseArgument(rootInput);
    return;
  }
  // ...which the leaf writes instead of its buffer...
  alloc.getResult().replaceAllUsesWith(body.getArgument(leafInput));
  alloc.erase();
  // ...bound after the child's other binds, so that its ports read in order...
  Operation *last = create;
  for (Operation *user : create.getHandle().getUsers())
    if (auto bindIn = dyn_cast<BindInOp>(user);
        bindIn && bindIn.getDest() == create.getHandle() && last->isBeforeInBlock(bindIn))
      last = bindIn;
  OpBuilder b(context);
  b.setInsertionPointAfter(last);
  BindInOp::create(b, bind.getLoc(), root.getBody().front().getArgument(rootInput),
                   create.getHandle(), leafInput);
  // ...that the host passes its destination to, copying nothing back.
  launch.getArgsMutable().append(destination);
  copy.erase();
}
} // namespace

void mlir::hpvm::writeIntoDestinations(ModuleOp module, ArrayRef<DestinationOutput> outputs,
                                       const llvm::SmallPtrSetImpl<Operation *> &converted) {
  SymbolTable symbols(module);
  for (const DestinationOutput &output : outputs)
    forward(output, module, symbols, converted);
}
