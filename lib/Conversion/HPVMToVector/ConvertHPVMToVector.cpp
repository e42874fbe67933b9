//===- ConvertHPVMToVector.cpp - Lane variants of replicated leaves -------===//
// Chooses the leaves worth a lane variant (replicated along x) and the lane
// count, builds the variants (LaneWidening.cpp) and says what it did.
#include "HPVM/Conversion/Passes.h"

#include "LaneWidening.h"

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/TargetParser/Host.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_CONVERTHPVMTOVECTOR
#include "HPVM/Conversion/Passes.h.inc"
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

namespace {
struct ConvertHPVMToVectorPass
    : public hpvm::impl::ConvertHPVMToVectorBase<ConvertHPVMToVectorPass> {
  using ConvertHPVMToVectorBase::ConvertHPVMToVectorBase;

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
    SmallVector<LeafOp> leaves(module.getOps<LeafOp>());
    for (LeafOp leaf : leaves) {
      if (leaf->hasAttr(HPVMDialect::getLanesAttrName()) ||
          leaf->hasAttr(HPVMDialect::getVectorVariantAttrName()) ||
          !replicated.contains(leaf.getSymNameAttr()))
        continue;
      unsigned width = lanes ? static_cast<unsigned>(lanes)
                             : getDefaultLaneCount(leaf, bits);
      if (width < 2) {
        if (remarks)
          leaf.emitRemark() << "not vectorized: " << width << " lane";
        continue;
      }
      std::string reason;
      Operation *where = nullptr;
      std::string name =
          (leaf.getSymName() + "__lanes" + Twine(width)).str();
      LeafOp variant = buildLaneVariant(leaf, width, 1, name, reason, where);
      if (!variant) {
        if (remarks) {
          InFlightDiagnostic remark =
              leaf.emitRemark() << "not vectorized: " << reason;
          if (where && !isa<UnknownLoc>(where->getLoc()))
            remark.attachNote(where->getLoc()) << "here";
        }
        continue;
      }
      // A unique name in the module (the symbol table renames on clash).
      symbols.insert(variant);
      leaf->setAttr(HPVMDialect::getVectorVariantAttrName(),
                    FlatSymbolRefAttr::get(variant.getSymNameAttr()));
      if (remarks)
        leaf.emitRemark() << "vectorized: " << width
                          << " instances along x run as vector lanes (@"
                          << variant.getSymName() << ")";
      // Instance coarsening: blocks of `rows` rows.
      if (rows < 2 || !replicatedInRows.contains(leaf.getSymNameAttr()))
        continue;
      std::string blockName =
          (leaf.getSymName() + "__lanes" + Twine(width) + "x" + Twine(rows)).str();
      LeafOp block = buildLaneVariant(leaf, width, rows, blockName, reason, where);
      if (!block) {
        if (remarks)
          leaf.emitRemark() << "no blocks of " << static_cast<unsigned>(rows)
                            << " rows: " << reason;
        continue;
      }
      symbols.insert(block);
      leaf->setAttr(HPVMDialect::getBlockVariantAttrName(),
                    FlatSymbolRefAttr::get(block.getSymNameAttr()));
      if (remarks)
        leaf.emitRemark() << "coarsened: blocks of " << width << " x "
                          << static_cast<unsigned>(rows) << " instances (@"
                          << block.getSymName()
                          << ")";
    }
  }
};
} // namespace
