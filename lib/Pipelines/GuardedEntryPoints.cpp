//===- GuardedEntryPoints.cpp - Entry points for hpvm_rt_call_guarded ------===//
// hpvm-guarded-entry-points (Passes.td). A C caller cannot catch an error that compiled
// code reports by ending the process; the runtime's guard can, but it calls
// one signature only, which these entry points give every host function.
#include "HPVM/Pipelines/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMGUARDEDENTRYPOINTS
#include "HPVM/Pipelines/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kInterfacePrefix = "_mlir_ciface_";
constexpr llvm::StringLiteral kGuardedPrefix = "__hpvm_guarded_";

struct GuardedEntryPointsPass
    : public hpvm::impl::HPVMGuardedEntryPointsBase<GuardedEntryPointsPass> {

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<LLVM::LLVMFuncOp> interfaces;
    for (auto function : module.getOps<LLVM::LLVMFuncOp>())
      if (function.getSymName().starts_with(kInterfacePrefix) && !function.isExternal())
        interfaces.push_back(function);
    if (interfaces.empty())
      return markAllAnalysesPreserved();
    MLIRContext *context = &getContext();
    auto pointer = LLVM::LLVMPointerType::get(context);
    auto voidType = LLVM::LLVMVoidType::get(context);
    for (LLVM::LLVMFuncOp function : interfaces) {
      std::string name =
          (kGuardedPrefix + function.getSymName().drop_front(kInterfacePrefix.size())).str();
      if (symbols.lookup(name))
        continue;
      Location loc = function.getLoc();
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      auto entry = LLVM::LLVMFuncOp::create(
          b, loc, name, LLVM::LLVMFunctionType::get(voidType, {pointer}));
      Block *body = entry.addEntryBlock(b);
      b.setInsertionPointToStart(body);
      Value args = body->getArgument(0);
      // The pointer in args[index].
      auto slot = [&](int32_t index) -> Value {
        Value address = LLVM::GEPOp::create(b, loc, pointer, pointer, args,
                                            ArrayRef<LLVM::GEPArg>{index});
        return LLVM::LoadOp::create(b, loc, pointer, address);
      };
      LLVM::LLVMFunctionType type = function.getFunctionType();
      SmallVector<Value> operands;
      for (auto [index, param] : llvm::enumerate(type.getParams())) {
        Value at = slot(static_cast<int32_t>(index));
        operands.push_back(isa<LLVM::LLVMPointerType>(param)
                               ? at
                               : LLVM::LoadOp::create(b, loc, param, at).getResult());
      }
      auto call = LLVM::CallOp::create(b, loc, function, operands);
      if (!isa<LLVM::LLVMVoidType>(type.getReturnType()))
        LLVM::StoreOp::create(b, loc, call.getResult(),
                              slot(static_cast<int32_t>(type.getNumParams())));
      LLVM::ReturnOp::create(b, loc, ValueRange{});
    }
  }
};

} // namespace
