//===- DebugScopes.cpp - Source locations fit for LLVM's debug info -------===//
#include "HPVM/Conversion/DebugScopes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/AttrTypeSubElements.h"

using namespace mlir;

bool mlir::hpvm::hasSubprogram(FunctionOpInterface function) {
  return isa<FusedLocWith<LLVM::DISubprogramAttr>>(function->getLoc());
}

/// `annotation` without its start and end locations.
static LLVM::LoopAnnotationAttr withoutLocations(LLVM::LoopAnnotationAttr annotation) {
  return LLVM::LoopAnnotationAttr::get(
      annotation.getContext(), annotation.getDisableNonforced(),
      annotation.getVectorize(), annotation.getInterleave(),
      annotation.getUnroll(), annotation.getUnrollAndJam(),
      annotation.getLicm(), annotation.getDistribute(), annotation.getPipeline(),
      annotation.getPeeled(), annotation.getUnswitch(),
      annotation.getMustProgress(), annotation.getIsVectorized(), FusedLoc(),
      FusedLoc(), annotation.getParallelAccesses());
}

void mlir::hpvm::dropDebugScopes(
    Operation *root, llvm::function_ref<bool(FunctionOpInterface)> select,
    bool globals) {
  AttrTypeReplacer replacer;
  replacer.addReplacement([](FusedLoc loc) -> std::optional<Location> {
    if (!loc.getMetadata() || !isa<LLVM::DIScopeAttr>(loc.getMetadata()))
      return std::nullopt;
    return FusedLoc::get(loc.getContext(), loc.getLocations());
  });
  // Functions and globals sit at the top of their module: the walk stops at
  // each function, whose body the replacer and the walk below go through.
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto global = dyn_cast<LLVM::GlobalOp>(op)) {
      if (globals)
        global.removeDbgExprsAttr();
      return WalkResult::skip();
    }
    auto function = dyn_cast<FunctionOpInterface>(op);
    if (!function)
      return WalkResult::advance();
    if (!select(function))
      return WalkResult::skip();
    replacer.recursivelyReplaceElementsIn(function, /*replaceAttrs=*/false,
                                          /*replaceLocs=*/true,
                                          /*replaceTypes=*/false);
    function->walk([](Operation *inner) {
      constexpr StringLiteral name = "loop_annotation";
      auto annotation = inner->getAttrOfType<LLVM::LoopAnnotationAttr>(name);
      if (annotation && (annotation.getStartLoc() || annotation.getEndLoc()))
        inner->setAttr(name, withoutLocations(annotation));
    });
    return WalkResult::skip();
  });
}
