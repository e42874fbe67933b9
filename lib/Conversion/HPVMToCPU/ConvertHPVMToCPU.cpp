//===- ConvertHPVMToCPU.cpp - The convert-hpvm-to-cpu pass ----------------===//
// Checks that the module is within what the CPU backend supports
// (CheckSupport.cpp), then lowers its nodes and its host code.
#include "NodeLowering.h"
#include "StreamingRunner.h"

#include "HPVM/Conversion/HPVMToCPU.h"
#include "HPVM/Conversion/Passes.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_CONVERTHPVMTOCPU
#include "HPVM/Conversion/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::cpu;

namespace {
struct ConvertHPVMToCPUPass
    : public hpvm::impl::ConvertHPVMToCPUBase<ConvertHPVMToCPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    NodeLowering lowering(module);
    lowering.setCollapseGrids(collapseGrids);
    if (failed(checkCPUSupport(module, lowering.getCodeGen())))
      return signalPassFailure();
    lowering.findPerInstancePorts();
    lowering.findGridAccesses();
    if (failed(lowering.prepareKernelSites()) ||
        failed(lowering.createNodeFunctions()) ||
        failed(lowering.lowerInternalNodes()))
      return signalPassFailure();
    // Host code: streaming launches with their push, pop and wait first, then
    // the other launches, waits and tracker ops.
    StreamingRunner pipelines(
        lowering.getCodeGen(), [&](OpBuilder &b, Location loc, NodeOpInterface node,
                      ValueRange dims, ValueRange inputs, Value parentFrame) {
          return lowering.runNode(b, loc, node, dims, inputs, parentFrame);
        });
    CPUStreamingOps streaming(lowering.getCodeGen(), [&](NodeOpInterface root) {
      return pipelines.getPipelineFunction(root);
    });
    CPUHostOps hostOps(lowering.getCodeGen(), [&](NodeOpInterface root) {
      return lowering.getEntryFunction(root);
    });
    if (failed(lowerHPVMStreamingOps(lowering.getHostCode(), streaming)) ||
        failed(lowerHPVMHostOps(lowering.getHostCode(), hostOps)))
      return signalPassFailure();
    if (inlineLeaves)
      lowering.inlineSingleCallLeaves();
    for (Operation &op : llvm::make_early_inc_range(module.getOps()))
      if (isa<NodeOpInterface>(op))
        op.erase();
    // C hosts call the public host functions through their C interface.
    for (auto function : module.getOps<func::FuncOp>())
      if (function.isPublic() && !function.isExternal())
        function->setAttr("llvm.emit_c_interface", UnitAttr::get(&getContext()));
  }
};
} // namespace
