//===- TileNodes.cpp - The hpvm-tile-nodes pass ---------------------------===//
// Replaces a replicated leaf child by a grid of tiles (an internal node) whose
// child is the leaf over one tile, keeping every grid query's meaning.
#include "HPVM/Transforms/Passes.h"

#include "HPVM/Dialect/HPVM/Analysis/DataflowGraph.h"
#include "HPVM/Transforms/Analysis/TilingLegality.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMTILENODES
#include "HPVM/Transforms/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;
using namespace mlir::hpvm;

namespace {
/// What one tiling needs: the child, its tile sizes, how each extent is
/// recomputed, and the parent inputs that become extra ports.
struct TilingRequest {
  CreateNodeOp child;
  LeafOp leaf;
  SmallVector<int64_t> sizes;
  SmallVector<ExtentSlice> extents;
  /// Parent inputs the extents need, in port order.
  SmallVector<Value> extraInputs;
  /// Element type of per-tile scratch memory, or null.
  Type scratchElement;
};
} // namespace

static Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// The memref each tile's allocation node returns: the tile's shape, x fastest.
static MemRefType getScratchType(const TilingRequest &request) {
  SmallVector<int64_t> shape(request.sizes.rbegin(), request.sizes.rend());
  return MemRefType::get(shape, request.scratchElement);
}

/// Copies the argument attributes of `from` onto the first ports of `to`.
template <typename FromOp, typename ToOp>
static void copyArgumentAttributes(FromOp from, ToOp to) {
  for (unsigned i = 0; i < from.getNumArguments(); ++i)
    if (DictionaryAttr attrs = from.getArgAttrDict(i))
      to.setArgAttrs(i, attrs);
}

/// Builds the leaf over one tile: a copy of the original leaf whose grid
/// queries mean what they meant in the untiled grid.
static LeafOp buildTileLeaf(OpBuilder &b, const TilingRequest &request,
                            StringRef name) {
  LeafOp leaf = request.leaf;
  Location loc = leaf.getLoc();
  unsigned rank = request.sizes.size();
  SmallVector<Type> inputs(leaf.getArgumentTypes());
  for (Value extra : request.extraInputs)
    inputs.push_back(extra.getType());
  if (request.scratchElement)
    inputs.push_back(getScratchType(request));
  auto tile = LeafOp::create(b, loc, name,
                             b.getFunctionType(inputs, leaf.getResultTypes()));
  if (Attribute targets = leaf->getAttr(HPVMDialect::getTargetsAttrName()))
    tile->setAttr(HPVMDialect::getTargetsAttrName(), targets);
  if (Attribute budget = leaf->getAttr(HPVMDialect::getErrorAttrName()))
    tile->setAttr(HPVMDialect::getErrorAttrName(), budget);
  copyArgumentAttributes(leaf, tile);

  // The body, with the original inputs mapped to the first ports.
  tile.getBody().getBlocks().clear();
  IRMapping mapping;
  leaf.getBody().cloneInto(&tile.getBody(), mapping);
  Block &entry = tile.getBodyBlock();
  for (Type type : ArrayRef<Type>(inputs).drop_front(leaf.getNumArguments()))
    entry.addArgument(type, loc);

  // The queries to rewrite, collected before the prologue adds its own.
  SmallVector<Operation *> queries;
  tile.walk([&](Operation *op) {
    if (isa<InstanceIdOp, NumInstancesOp>(op))
      queries.push_back(op);
  });
  bool needsExtent[3] = {false, false, false};
  for (Operation *op : queries)
    if (auto count = dyn_cast<NumInstancesOp>(op);
        count && count.getLevel() == 0 &&
        static_cast<unsigned>(count.getDim()) < rank)
      needsExtent[static_cast<unsigned>(count.getDim())] = true;
  SmallVector<bool> partial;
  for (unsigned d = 0; d < rank; ++d) {
    partial.push_back(
        mayHavePartialTile(CreateNodeOp(request.child).getDims()[d], request.sizes[d]));
    needsExtent[d] |= partial.back();
  }

  // Prologue: global ids, and the extents recomputed from the extra inputs.
  OpBuilder pb = OpBuilder::atBlockBegin(&entry);
  IRMapping extentMapping;
  for (auto [index, extra] : llvm::enumerate(request.extraInputs))
    extentMapping.map(extra,
                      entry.getArgument(leaf.getNumArguments() + index));
  Value globalIds[3], extents[3];
  for (unsigned d = 0; d < rank; ++d) {
    auto dim = static_cast<Dim>(d);
    Value tileId = InstanceIdOp::create(pb, loc, dim, /*level=*/1);
    Value localId = InstanceIdOp::create(pb, loc, dim, /*level=*/0);
    Value base = arith::MulIOp::create(
        pb, loc, tileId, indexConstant(pb, loc, request.sizes[d]));
    globalIds[d] = arith::AddIOp::create(pb, loc, base, localId);
    if (!needsExtent[d])
      continue;
    for (Operation *op : request.extents[d].operations)
      if (!extentMapping.contains(op->getResult(0)))
        pb.clone(*op, extentMapping);
    extents[d] = extentMapping.lookup(CreateNodeOp(request.child).getDims()[d]);
  }

  // The guard: instances past the end of a partial tile do nothing.
  Value inside;
  for (unsigned d = 0; d < rank; ++d) {
    if (!partial[d])
      continue;
    Value below = arith::CmpIOp::create(pb, loc, arith::CmpIPredicate::ult,
                                        globalIds[d], extents[d]);
    inside = inside ? arith::AndIOp::create(pb, loc, inside, below).getResult()
                    : below;
  }
  // Everything before the insertion point is the prologue (all of it pure).
  SmallVector<Operation *> prologue;
  for (Operation &op : entry) {
    if (pb.getInsertionPoint() != entry.end() && &op == &*pb.getInsertionPoint())
      break;
    prologue.push_back(&op);
  }
  if (inside) {
    // Legality guarantees one block and a return of inputs passed on (entry
    // block arguments, still in scope after the guard).
    Operation *terminator = entry.getTerminator();
    auto guard = scf::IfOp::create(pb, loc, inside, /*withElseRegion=*/false);
    Block *then = guard.thenBlock();
    then->getOperations().splice(then->begin(), entry.getOperations(),
                                 std::next(guard->getIterator()),
                                 terminator->getIterator());
  }

  for (Operation *op : queries) {
    auto id = dyn_cast<InstanceIdOp>(op);
    auto count = dyn_cast<NumInstancesOp>(op);
    unsigned level = id ? id.getLevel() : count.getLevel();
    unsigned d = static_cast<unsigned>(id ? id.getDim() : count.getDim());
    if (level != 0) {
      // One more level: the tile grid sits between the leaf and its ancestors.
      if (id)
        id.setLevel(level + 1);
      else
        count.setLevel(level + 1);
      continue;
    }
    if (d >= rank)
      continue; // not replicated in d: id 0, extent 1 in both grids
    op->getResult(0).replaceAllUsesWith(id ? globalIds[d] : extents[d]);
    op->erase();
  }
  // Prologue values the body does not use (ids of dimensions it never asks
  // for) go again, last first.
  for (Operation *op : llvm::reverse(prologue))
    if (op->use_empty())
      op->erase();
  return tile;
}

/// Replaces `request.child` by a grid of tiles of the tile leaf.
static void tileChild(const TilingRequest &request, SymbolTable &symbols) {
  LeafOp leaf = request.leaf;
  CreateNodeOp child = request.child;
  auto parent = child->getParentOfType<InternalOp>();
  Location loc = child.getLoc();
  unsigned rank = request.sizes.size();
  unsigned numInputs = leaf.getNumArguments();
  Attribute targets = leaf->getAttr(HPVMDialect::getTargetsAttrName());

  OpBuilder b(leaf);
  b.setInsertionPointAfter(leaf);
  LeafOp tileLeaf =
      buildTileLeaf(b, request, (leaf.getSymName() + "_tile").str());
  symbols.insert(tileLeaf);
  LeafOp scratchLeaf;
  if (request.scratchElement) {
    b.setInsertionPointAfter(tileLeaf);
    MemRefType type = getScratchType(request);
    scratchLeaf = LeafOp::create(b, loc, (leaf.getSymName() + "_scratch").str(),
                                 b.getFunctionType({}, {type}));
    if (targets)
      scratchLeaf->setAttr(HPVMDialect::getTargetsAttrName(), targets);
    OpBuilder sb = OpBuilder::atBlockEnd(&scratchLeaf.getBodyBlock());
    Value memory = AllocOp::create(sb, loc, type, ValueRange{});
    ReturnOp::create(sb, loc, memory);
    symbols.insert(scratchLeaf);
  }

  // The internal node: one tile, inputs as the leaf's plus the extra ones.
  b.setInsertionPointAfter(scratchLeaf ? scratchLeaf : tileLeaf);
  SmallVector<Type> inputs(leaf.getArgumentTypes());
  for (Value extra : request.extraInputs)
    inputs.push_back(extra.getType());
  auto tiles = InternalOp::create(b, loc, (leaf.getSymName() + "_tiles").str(),
                                  b.getFunctionType(inputs, leaf.getResultTypes()));
  if (targets)
    tiles->setAttr(HPVMDialect::getTargetsAttrName(), targets);
  if (Attribute budget = leaf->getAttr(HPVMDialect::getErrorAttrName()))
    tiles->setAttr(HPVMDialect::getErrorAttrName(), budget);
  copyArgumentAttributes(leaf, tiles);
  symbols.insert(tiles);
  Block &body = tiles.getBodyBlock();
  OpBuilder ib = OpBuilder::atBlockEnd(&body);
  SmallVector<Value> tileDims;
  for (int64_t size : request.sizes)
    tileDims.push_back(indexConstant(ib, loc, size));
  CreateNodeOp scratchNode;
  if (scratchLeaf)
    scratchNode = CreateNodeOp::create(
        ib, loc, FlatSymbolRefAttr::get(scratchLeaf.getSymNameAttr()), {});
  auto tileNode = CreateNodeOp::create(
      ib, loc, FlatSymbolRefAttr::get(tileLeaf.getSymNameAttr()), tileDims);
  for (unsigned port = 0; port < inputs.size(); ++port)
    BindInOp::create(ib, loc, body.getArgument(port), tileNode.getHandle(), port);
  if (scratchNode)
    EdgeOp::create(ib, loc, scratchNode.getHandle(), 0, tileNode.getHandle(),
                   inputs.size(), Replication::all_to_all);
  for (unsigned output = 0; output < leaf.getNumResults(); ++output)
    BindOutOp::create(ib, loc, tileNode.getHandle(), output, output);

  // In the parent: the tile counts, the tile grid, and the extra inputs.
  OpBuilder gb(child);
  SmallVector<Value> counts;
  for (unsigned d = 0; d < rank; ++d) {
    Value extent = child.getDims()[d];
    int64_t size = request.sizes[d];
    APInt constant;
    if (matchPattern(extent, m_ConstantInt(&constant))) {
      uint64_t n = constant.getZExtValue();
      counts.push_back(indexConstant(gb, loc, static_cast<int64_t>(n / size + (n % size != 0))));
      continue;
    }
    if (size == 1) {
      counts.push_back(extent);
      continue;
    }
    // ceil(extent / size) without arith.ceildivui, which needs expanding.
    Value rounded = arith::AddIOp::create(gb, loc, extent,
                                          indexConstant(gb, loc, size - 1));
    counts.push_back(arith::DivUIOp::create(gb, loc, rounded,
                                            indexConstant(gb, loc, size)));
  }
  auto tileGrid = CreateNodeOp::create(
      gb, loc, FlatSymbolRefAttr::get(tiles.getSymNameAttr()), counts);
  child.getHandle().replaceAllUsesWith(tileGrid.getHandle());
  // After the child's other binds, so that the ports read in order.
  Operation *last = tileGrid;
  for (Operation &op : parent.getBodyBlock())
    if (auto bind = dyn_cast<BindInOp>(op);
        bind && bind.getDest() == tileGrid.getHandle())
      last = bind;
  OpBuilder lb(parent.getContext());
  lb.setInsertionPointAfter(last);
  for (auto [index, extra] : llvm::enumerate(request.extraInputs))
    BindInOp::create(lb, loc, extra, tileGrid.getHandle(), numInputs + index);
  child.erase();
}

namespace {
struct HPVMTileNodesPass
    : public hpvm::impl::HPVMTileNodesBase<HPVMTileNodesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (sizes.empty()) {
      module.emitError() << "hpvm-tile-nodes: expected tile sizes, as "
                            "sizes=<x>[,<y>[,<z>]]";
      return signalPassFailure();
    }
    if (sizes.size() > 3) {
      module.emitError() << "hpvm-tile-nodes: expected at most 3 tile sizes, "
                            "found "
                         << sizes.size();
      return signalPassFailure();
    }
    for (int64_t size : sizes)
      if (size <= 0) {
        module.emitError() << "hpvm-tile-nodes: tile sizes must be positive, "
                              "found "
                           << size;
        return signalPassFailure();
      }
    Type scratchElement;
    if (!scratch.empty()) {
      scratchElement = parseType(scratch, &getContext());
      if (!scratchElement || !scratchElement.isIntOrIndexOrFloat()) {
        module.emitError() << "hpvm-tile-nodes: expected an integer, index or "
                              "float scratch element type, found '"
                           << scratch << "'";
        return signalPassFailure();
      }
    }
    SymbolTable symbols(module);
    for (const std::string &name : nodes) {
      Operation *definition = symbols.lookup(name);
      if (!definition || !isa<NodeOpInterface>(definition)) {
        module.emitError() << "hpvm-tile-nodes: no node definition named @"
                           << name;
        return signalPassFailure();
      }
    }

    // The children to tile, collected first: tiling adds replicated leaves.
    SmallVector<CreateNodeOp> candidates;
    llvm::StringSet<> instantiated;
    for (auto internal : module.getOps<InternalOp>())
      internal.walk([&](CreateNodeOp child) {
        instantiated.insert(child.getNode());
        if (nodes.empty() || llvm::is_contained(nodes, child.getNode().str()))
          candidates.push_back(child);
      });
    for (const std::string &name : nodes)
      if (!instantiated.contains(name))
        symbols.lookup(name)->emitRemark()
            << "not tiled: no hpvm.create_node instantiates @" << name;

    for (CreateNodeOp child : candidates) {
      auto parent = child->getParentOfType<InternalOp>();
      SymbolTableCollection symbolTables;
      DataflowGraph graph(parent, &symbolTables);
      unsigned index = *graph.getChildIndex(child.getHandle());
      NodeOpInterface definition = graph.getDefinition(index);
      // Without a node list only replicated leaves are candidates.
      if (nodes.empty() && (!definition || !definition.isLeafNode() ||
                            child.getRank() == 0))
        continue;
      std::string reason = checkTilingLegality(graph, index, sizes);
      if (!reason.empty()) {
        child.emitRemark() << "not tiled: " << reason;
        continue;
      }
      TilingRequest request;
      request.child = child;
      request.leaf = cast<LeafOp>(definition.getOperation());
      request.sizes.assign(sizes.begin(), sizes.end());
      request.scratchElement = scratchElement;
      llvm::SetVector<Value> extra;
      for (Value extent : child.getDims()) {
        request.extents.push_back(*getExtentSlice(parent, extent));
        extra.insert(request.extents.back().parentInputs.begin(),
                     request.extents.back().parentInputs.end());
      }
      request.extraInputs.assign(extra.begin(), extra.end());
      llvm::sort(request.extraInputs, [](Value a, Value b) {
        return cast<BlockArgument>(a).getArgNumber() <
               cast<BlockArgument>(b).getArgNumber();
      });
      LeafOp leaf = request.leaf;
      tileChild(request, symbols);
      if (SymbolTable::symbolKnownUseEmpty(leaf, module))
        symbols.erase(leaf);
    }
  }
};
} // namespace
