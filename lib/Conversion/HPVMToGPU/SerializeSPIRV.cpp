//===- SerializeSPIRV.cpp - OpenCL SPIR-V from a kernel module ------------===//
// Address spaces for OpenCL, then LLVM's SPIR-V backend, in process.
#include "KernelSerialization.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

#include <memory>
#include <mutex>

extern "C" {
void LLVMInitializeSPIRVTargetInfo();
void LLVMInitializeSPIRVTarget();
void LLVMInitializeSPIRVTargetMC();
void LLVMInitializeSPIRVAsmPrinter();
}

using namespace mlir;

/// SPIR-V 1.0: what OpenCL 2.1 consumes and llvm-spirv-15 translates back to
/// SPIR 1.2 for devices without IL support (PoCL 3.1).
static constexpr llvm::StringLiteral kTriple = "spirv64v1.0-unknown-unknown";
static constexpr unsigned kGlobal = 1;

static bool isPrivatePointer(Type type) {
  auto pointer = dyn_cast<LLVM::LLVMPointerType>(type);
  return pointer && pointer.getAddressSpace() == 0;
}

LogicalResult mlir::hpvm::assignOpenCLAddressSpaces(gpu::GPUModuleOp kernels) {
  // Private: values that derive from allocas through address arithmetic and
  // branches.
  llvm::DenseSet<Value> privateValues;
  SmallVector<Value> worklist;
  kernels.walk([&](LLVM::AllocaOp alloca) {
    privateValues.insert(alloca.getResult());
    worklist.push_back(alloca.getResult());
  });
  Operation *conflict = nullptr;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    auto derive = [&](Value derived) {
      if (privateValues.insert(derived).second)
        worklist.push_back(derived);
    };
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<LLVM::GEPOp, LLVM::SelectOp>(user)) {
        derive(user->getResult(0));
      } else if (auto branch = dyn_cast<BranchOpInterface>(user)) {
        for (unsigned s = 0, e = user->getNumSuccessors(); s < e; ++s) {
          SuccessorOperands operands = branch.getSuccessorOperands(s);
          for (unsigned i = 0, n = operands.size(); i < n; ++i)
            if (operands[i] == value)
              derive(user->getSuccessor(s)->getArgument(
                  operands.getProducedOperandCount() + i));
        }
      } else if (isa<LLVM::CallOp>(user) ||
                 (isa<LLVM::StoreOp>(user) && use.getOperandNumber() == 0)) {
        // A private pointer passed to a function or stored in memory: the
        // callee or the reader would need generic pointers.
        conflict = user;
      }
    }
  }
  if (conflict)
    return conflict->emitError()
           << "passes a pointer to private memory (a local array) to a call "
              "or stores it: OpenCL kernels need such pointers to stay in "
              "the function that allocates them";

  // Constant tables live in global memory.
  kernels.walk([&](LLVM::GlobalOp variable) {
    if (variable.getAddrSpace() == 0)
      variable.setAddrSpace(kGlobal);
  });
  Type global = LLVM::LLVMPointerType::get(kernels.getContext(), kGlobal);
  auto retype = [&](Value value) {
    if (isPrivatePointer(value.getType()) && !privateValues.contains(value))
      value.setType(global);
  };
  // Mixed selects and branches (a private and a global pointer) are refused.
  for (Value value : privateValues)
    if (auto select = value.getDefiningOp<LLVM::SelectOp>())
      for (Value operand : {select.getTrueValue(), select.getFalseValue()})
        if (!privateValues.contains(operand))
          return select.emitError() << "selects between private and global "
                                       "pointers, which OpenCL kernels cannot "
                                       "do without generic pointers";
  kernels.walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          retype(argument);
    for (Value result : op->getResults())
      retype(result);
  });
  for (Value value : privateValues)
    if (auto argument = dyn_cast<BlockArgument>(value))
      for (Block *pred : argument.getOwner()->getPredecessors()) {
        auto branch = cast<BranchOpInterface>(pred->getTerminator());
        for (unsigned s = 0, e = pred->getTerminator()->getNumSuccessors();
             s < e; ++s) {
          if (pred->getTerminator()->getSuccessor(s) != argument.getOwner())
            continue;
          SuccessorOperands operands = branch.getSuccessorOperands(s);
          unsigned index =
              argument.getArgNumber() - operands.getProducedOperandCount();
          if (!privateValues.contains(operands[index]))
            return branch->emitError()
                   << "joins private and global pointers, which OpenCL "
                      "kernels cannot do without generic pointers";
        }
      }
  // Signatures follow their (retyped) entry block arguments and returns.
  WalkResult result = kernels.walk([&](LLVM::LLVMFuncOp function) {
    LLVM::LLVMFunctionType type = function.getFunctionType();
    SmallVector<Type> inputs(type.getParams());
    Type output = type.getReturnType();
    if (!function.isExternal())
      for (auto [index, argument] :
           llvm::enumerate(function.getBody().front().getArguments()))
        inputs[index] = argument.getType();
    else
      for (Type &input : inputs)
        if (isPrivatePointer(input))
          input = global;
    if (isPrivatePointer(output))
      output = global;
    function.setFunctionType(
        LLVM::LLVMFunctionType::get(output, inputs, type.isVarArg()));
    return WalkResult::advance();
  });
  (void)result;
  return success();
}

static const llvm::Target *getSPIRVTarget(std::string &error) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeSPIRVTargetInfo();
    LLVMInitializeSPIRVTarget();
    LLVMInitializeSPIRVTargetMC();
    LLVMInitializeSPIRVAsmPrinter();
  });
  return llvm::TargetRegistry::lookupTarget(llvm::Triple(kTriple), error);
}

FailureOr<std::string>
mlir::hpvm::serializeToOpenCLSPIRV(gpu::GPUModuleOp kernels) {
  std::string error;
  const llvm::Target *target = getSPIRVTarget(error);
  if (!target)
    return kernels.emitError() << "LLVM's SPIR-V backend is missing: " << error;
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> module =
      translateModuleToLLVMIR(kernels, llvmContext, kernels.getName());
  if (!module)
    return kernels.emitError()
           << "could not translate the OpenCL kernels to LLVM IR";
  llvm::Triple triple(kTriple);
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, "", "", llvm::TargetOptions(), std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Default));
  if (!machine)
    return kernels.emitError() << "could not create a SPIR-V target machine";
  module->setTargetTriple(triple);
  module->setDataLayout(machine->createDataLayout());

  // The LLVM optimisation pipeline first: the lowered kernels carry
  // descriptors and redundant address arithmetic.
  {
    llvm::LoopAnalysisManager loops;
    llvm::FunctionAnalysisManager functions;
    llvm::CGSCCAnalysisManager sccs;
    llvm::ModuleAnalysisManager modules;
    llvm::PassBuilder builder(machine.get());
    builder.registerModuleAnalyses(modules);
    builder.registerCGSCCAnalyses(sccs);
    builder.registerFunctionAnalyses(functions);
    builder.registerLoopAnalyses(loops);
    builder.crossRegisterProxies(loops, functions, sccs, modules);
    llvm::ModulePassManager passes =
        builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
    passes.run(*module, modules);
  }

  std::string binary;
  {
    llvm::raw_string_ostream stream(binary);
    llvm::buffer_ostream buffer(stream);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, buffer, nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return kernels.emitError() << "LLVM's SPIR-V backend cannot emit files";
    codegen.run(*module);
  }
  if (binary.size() < 20 || binary.size() % 4)
    return kernels.emitError() << "LLVM's SPIR-V backend produced "
                               << binary.size() << " bytes, not a module";
  return binary;
}
