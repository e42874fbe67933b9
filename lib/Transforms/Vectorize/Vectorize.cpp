//===- Vectorize.cpp - Lane variants of replicated leaves -----------------===//
// Chooses the leaves worth a lane variant (replicated along x) and the lane
// count, builds the variants (LaneWidening.cpp for imported C, TileLanes.cpp
// for tile rows of structured leaves) and says what it did.
#include "HPVM/Transforms/Passes.h"

#include "Contraction.h"
#include "LaneWidening.h"
#include "TileLanes.h"

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/TargetParser/Host.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMVECTORIZE
#include "HPVM/Transforms/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;
using namespace mlir::hpvm;

/// The width of the host's widest vector registers, in bits.
static unsigned getHostVectorBits() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  if (features.lookup("avx512f"))
    return 512;
  if (features.lookup("avx"))
    return 256;
  return 128; // SSE2, NEON and the like
}

/// Per leaf, the x extent of its grids when all are the same constant (a
/// tile width); -1 when they differ, are not constants, or the leaf is
/// launched (one instance).
static DenseMap<StringAttr, int64_t> getTileWidths(ModuleOp module) {
  DenseMap<StringAttr, int64_t> widths;
  auto record = [&](StringAttr leaf, int64_t width) {
    auto [it, inserted] = widths.try_emplace(leaf, width);
    if (!inserted && it->second != width)
      it->second = -1;
  };
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto create = dyn_cast<CreateNodeOp>(op)) {
      APInt extent;
      bool constant = create.getRank() != 0 &&
                      matchPattern(create.getDims()[0], m_ConstantInt(&extent));
      record(create.getNodeAttr().getLeafReference(),
             constant ? extent.getSExtValue() : -1);
    } else if (auto launch = dyn_cast<LaunchOp>(op)) {
      record(launch.getRootAttr().getLeafReference(), -1);
    }
    // Leaf bodies hold neither.
    return isa<LeafOp>(op) ? WalkResult::skip() : WalkResult::advance();
  });
  return widths;
}

namespace {
struct HPVMVectorizePass
    : public hpvm::impl::HPVMVectorizeBase<HPVMVectorizePass> {
  using HPVMVectorizeBase::HPVMVectorizeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The leaves some internal node replicates along x (one walk).
    DenseSet<StringAttr> replicated, replicatedInRows;
    module.walk([&](CreateNodeOp create) {
      if (create.getRank() >= 1)
        replicated.insert(create.getNodeAttr().getLeafReference());
      if (create.getRank() >= 2)
        replicatedInRows.insert(create.getNodeAttr().getLeafReference());
    });
    unsigned bits = vectorBits ? static_cast<unsigned>(vectorBits)
                               : getHostVectorBits();
    SymbolTable symbols(module);
    DenseMap<StringAttr, int64_t> tileWidths;
    if (tiles)
      tileWidths = getTileWidths(module);
    SmallVector<LeafOp> leaves(module.getOps<LeafOp>());
    // Whether a variant was added: a module without any is unchanged (and the
    // pass manager need not verify it again).
    bool changed = false;
    for (size_t next = 0; next < leaves.size(); ++next) {
      LeafOp leaf = leaves[next];
      // A leaf replicated in x and y whose instances each sum products in a
      // loop: every sum at once (a packed contraction in the runtime), then
      // the rest of the leaf reading its sum; the sums variant gets lanes of
      // its own below, the leaf too (for grids the plan declines).
      if (contractions && importedC && replicatedInRows.contains(leaf.getSymNameAttr()) &&
          !leaf->hasAttr(HPVMDialect::getContractionVariantAttrName()) &&
          !leaf->hasAttr(HPVMDialect::getLanesAttrName())) {
        ContractionVariant contraction = buildContraction(leaf, symbols);
        if (contraction.sums) {
          changed = true;
          leaf->setAttr(HPVMDialect::getContractionVariantAttrName(),
                        FlatSymbolRefAttr::get(contraction.sums.getSymNameAttr()));
          leaf->setAttr(HPVMDialect::getContractionPlanAttrName(),
                        FlatSymbolRefAttr::get(contraction.plan.getSymNameAttr()));
          replicated.insert(contraction.sums.getSymNameAttr());
          replicatedInRows.insert(contraction.sums.getSymNameAttr());
          leaves.push_back(contraction.sums);
          if (remarks)
            leaf.emitRemark() << "contraction: every instance's sum computed at once "
                                 "(@"
                              << contraction.plan.getSymName() << ", then @"
                              << contraction.sums.getSymName() << ")";
        } else if (remarks && contraction.reason != "no loop sums products") {
          leaf.emitRemark() << "no contraction: " << contraction.reason;
        }
      }
      if (leaf->hasAttr(HPVMDialect::getLanesAttrName()) ||
          leaf->hasAttr(HPVMDialect::getVectorVariantAttrName()) ||
          leaf->hasAttr(HPVMDialect::getTileVariantAttrName()) ||
          !replicated.contains(leaf.getSymNameAttr()))
        continue;
      // Structured leaves in tiles: a tile row in lock-step, when every grid
      // has the same constant x extent, wide enough to pay for the vector
      // code and narrow enough to unroll per-lane accesses.
      constexpr int64_t kMinTileWidth = 2, kMaxTileWidth = 128;
      int64_t tileWidth = tileWidths.lookup(leaf.getSymNameAttr());
      if (tiles && tileWidth >= kMinTileWidth && tileWidth <= kMaxTileWidth &&
          !leaf.getBody().walk([](BarrierOp) { return WalkResult::interrupt(); })
               .wasInterrupted()) {
        if (LeafOp tile = buildTileVariant(leaf, tileWidth)) {
          symbols.insert(tile);
          leaf->setAttr(HPVMDialect::getTileVariantAttrName(),
                        FlatSymbolRefAttr::get(tile.getSymNameAttr()));
          changed = true;
          if (remarks)
            leaf.emitRemark() << "vectorized: tile rows of " << tileWidth
                              << " instances run in lock-step (@"
                              << tile.getSymName() << ")";
          continue;
        }
      }
      if (!importedC)
        continue;
      unsigned elementBits = getLaneElementBits(leaf);
      unsigned width = lanes ? static_cast<unsigned>(lanes)
                             : getDefaultLaneCount(elementBits, bits);
      if (width < 2) {
        if (remarks)
          leaf.emitRemark() << "not vectorized: " << width << " lane";
        continue;
      }
      // Blocks of rows (instance coarsening) where there is a y to block.
      unsigned blockRows = 1;
      if (replicatedInRows.contains(leaf.getSymNameAttr()))
        blockRows = rows ? static_cast<unsigned>(rows)
                         : getDefaultRowCount(width, elementBits, bits);
      LaneVariants variants = buildLaneVariants(leaf, width, blockRows);
      if (!variants.lanes) {
        if (remarks) {
          InFlightDiagnostic remark =
              leaf.emitRemark() << "not vectorized: " << variants.reason;
          if (variants.where && !isa<UnknownLoc>(variants.where->getLoc()))
            remark.attachNote(variants.where->getLoc()) << "here";
        }
        continue;
      }
      // Unique names in the module (the symbol table renames on a clash).
      changed = true;
      symbols.insert(variants.lanes);
      leaf->setAttr(HPVMDialect::getVectorVariantAttrName(),
                    FlatSymbolRefAttr::get(variants.lanes.getSymNameAttr()));
      symbols.insert(variants.remainder);
      leaf->setAttr(HPVMDialect::getRemainderVariantAttrName(),
                    FlatSymbolRefAttr::get(variants.remainder.getSymNameAttr()));
      if (remarks)
        leaf.emitRemark() << "vectorized: " << width
                          << " instances along x run as vector lanes (@"
                          << variants.lanes.getSymName() << ")";
      if (variants.block) {
        symbols.insert(variants.block);
        leaf->setAttr(HPVMDialect::getBlockVariantAttrName(),
                      FlatSymbolRefAttr::get(variants.block.getSymNameAttr()));
        if (remarks)
          leaf.emitRemark() << "coarsened: blocks of " << width << " x "
                            << blockRows << " instances (@"
                            << variants.block.getSymName() << ")";
      } else if (blockRows > 1 && remarks) {
        leaf.emitRemark() << "no blocks of " << blockRows
                          << " rows: " << variants.blockReason;
      }
    }
    if (!changed)
      markAllAnalysesPreserved();
  }
};
} // namespace
