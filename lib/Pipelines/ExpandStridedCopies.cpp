//===- ExpandStridedCopies.cpp - strided memref.copy as loops --------------===//
// hpvm-expand-strided-copies (Passes.td): a memref.copy between views that are
// not contiguous becomes loops of loads and stores, so that the lowered
// program calls nothing outside it (upstream lowers such a copy to a call of
// memrefCopy, from MLIR's C runner utilities).
#include "HPVM/Pipelines/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMEXPANDSTRIDEDCOPIES
#include "HPVM/Pipelines/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;

namespace {

/// The copy as a loop nest over the source's extents (equal to the target's,
/// which memref.copy requires).
void expandCopy(memref::CopyOp copy) {
  OpBuilder b(copy);
  Location loc = copy.getLoc();
  Value source = copy.getSource(), target = copy.getTarget();
  auto type = cast<MemRefType>(source.getType());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> indices;
  for (int64_t dim = 0; dim < type.getRank(); ++dim) {
    Value extent = memref::DimOp::create(b, loc, source, dim);
    auto loop = scf::ForOp::create(b, loc, zero, extent, one);
    indices.push_back(loop.getInductionVar());
    b.setInsertionPoint(loop.getBody()->getTerminator());
  }
  Value element = memref::LoadOp::create(b, loc, source, indices);
  memref::StoreOp::create(b, loc, element, target, indices);
  copy.erase();
}

struct ExpandStridedCopies
    : public hpvm::impl::HPVMExpandStridedCopiesBase<ExpandStridedCopies> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp copy) {
      auto source = dyn_cast<MemRefType>(copy.getSource().getType());
      auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
      if (source && target &&
          (!source.getLayout().isIdentity() || !target.getLayout().isIdentity()))
        copies.push_back(copy);
    });
    if (copies.empty())
      return markAllAnalysesPreserved();
    for (memref::CopyOp copy : copies)
      expandCopy(copy);
  }
};

} // namespace
