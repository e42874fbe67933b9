//===- SerializeSPIRV.cpp - OpenCL SPIR-V from a kernel module ------------===//
// Address spaces for OpenCL, then LLVM's SPIR-V backend, in a child process
// (see emitInChild).
#include "KernelSerialization.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/LowerMemIntrinsics.h"

#include <cerrno>
#include <cstdlib>
#include <csignal>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

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

static constexpr unsigned kLocal = 3;

static bool isGenericPointer(Type type) {
  auto pointer = dyn_cast<LLVM::LLVMPointerType>(type);
  return pointer && pointer.getAddressSpace() == 0;
}

static StringRef describeSpace(unsigned space) {
  return space == kLocal ? "work-group memory" : "private memory (a local array)";
}

LogicalResult mlir::hpvm::assignOpenCLAddressSpaces(gpu::GPUModuleOp kernels) {
  // The pointers that are not global: private ones derive from allocas,
  // work-group ones from casts of the kernels' __local parameters, through
  // address arithmetic and branches. Every other pointer is global.
  llvm::DenseMap<Value, unsigned> spaces;
  SmallVector<Value> worklist;
  auto seed = [&](Value value, unsigned space) {
    spaces[value] = space;
    worklist.push_back(value);
  };
  kernels.walk([&](Operation *op) {
    if (auto alloca = dyn_cast<LLVM::AllocaOp>(op))
      seed(alloca.getResult(), 0);
    else if (auto cast = dyn_cast<LLVM::AddrSpaceCastOp>(op);
             cast && isGenericPointer(cast.getType()) &&
             cast.getArg().getType() ==
                 LLVM::LLVMPointerType::get(op->getContext(), kLocal))
      seed(cast.getResult(), kLocal);
  });
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    unsigned space = spaces.lookup(value);
    auto derive = [&](Value derived, Operation *user) -> LogicalResult {
      auto [found, inserted] = spaces.try_emplace(derived, space);
      if (inserted)
        worklist.push_back(derived);
      else if (found->second != space)
        return user->emitError()
               << "joins pointers to " << describeSpace(found->second)
               << " and " << describeSpace(space)
               << ", which OpenCL kernels cannot do without generic pointers";
      return success();
    };
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<LLVM::GEPOp, LLVM::SelectOp>(user)) {
        if (isa<LLVM::GEPOp>(user) && use.getOperandNumber() != 0)
          continue;
        if (failed(derive(user->getResult(0), user)))
          return failure();
      } else if (auto branch = dyn_cast<BranchOpInterface>(user)) {
        for (unsigned s = 0, e = user->getNumSuccessors(); s < e; ++s) {
          SuccessorOperands operands = branch.getSuccessorOperands(s);
          for (unsigned i = 0, n = operands.size(); i < n; ++i)
            if (operands[i] == value &&
                failed(derive(user->getSuccessor(s)->getArgument(
                                  operands.getProducedOperandCount() + i),
                              user)))
              return failure();
        }
      } else if (isa<LLVM::CallOp>(user) ||
                 (isa<LLVM::StoreOp>(user) && use.getOperandNumber() == 0)) {
        // Passed to a function or stored in memory: the callee or the
        // reader would need generic pointers.
        return user->emitError()
               << "passes a pointer to " << describeSpace(space)
               << " to a call or stores it: OpenCL kernels need such "
                  "pointers to stay in the kernel";
      }
    }
  }

  // Constant tables live in global memory.
  kernels.walk([&](LLVM::GlobalOp variable) {
    if (variable.getAddrSpace() == 0)
      variable.setAddrSpace(kGlobal);
  });
  MLIRContext *context = kernels.getContext();
  Type global = LLVM::LLVMPointerType::get(context, kGlobal);
  // Selects and branches that mix a global pointer with another are refused.
  for (auto [value, space] : spaces) {
    if (auto select = value.getDefiningOp<LLVM::SelectOp>())
      for (Value operand : {select.getTrueValue(), select.getFalseValue()})
        if (!spaces.contains(operand))
          return select.emitError()
                 << "selects between pointers to global memory and "
                 << describeSpace(space)
                 << ", which OpenCL kernels cannot do without generic "
                    "pointers";
    auto argument = dyn_cast<BlockArgument>(value);
    if (!argument)
      continue;
    for (Block *pred : argument.getOwner()->getPredecessors()) {
      auto branch = dyn_cast<BranchOpInterface>(pred->getTerminator());
      if (!branch)
        return pred->getTerminator()->emitError()
               << "passes a pointer to " << describeSpace(space)
               << " to a block in a way the address spaces cannot follow";
      for (unsigned s = 0, e = pred->getTerminator()->getNumSuccessors();
           s < e; ++s) {
        if (pred->getTerminator()->getSuccessor(s) != argument.getOwner())
          continue;
        SuccessorOperands operands = branch.getSuccessorOperands(s);
        unsigned index =
            argument.getArgNumber() - operands.getProducedOperandCount();
        if (!spaces.contains(operands[index]))
          return branch->emitError()
                 << "joins pointers to global memory and "
                 << describeSpace(space)
                 << ", which OpenCL kernels cannot do without generic "
                    "pointers";
      }
    }
  }
  auto retype = [&](Value value) {
    if (!isGenericPointer(value.getType()))
      return;
    auto found = spaces.find(value);
    if (found == spaces.end())
      value.setType(global);
    else if (found->second == kLocal)
      value.setType(LLVM::LLVMPointerType::get(context, kLocal));
  };
  kernels.walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          retype(argument);
    for (Value result : op->getResults())
      retype(result);
  });
  // The casts of __local parameters now cast to their own address space.
  kernels.walk([&](LLVM::AddrSpaceCastOp cast) {
    if (cast.getArg().getType() == cast.getType()) {
      cast.getResult().replaceAllUsesWith(cast.getArg());
      cast.erase();
    }
  });
  // Signatures follow their (retyped) entry block arguments and returns.
  kernels.walk([&](LLVM::LLVMFuncOp function) {
    LLVM::LLVMFunctionType type = function.getFunctionType();
    SmallVector<Type> inputs(type.getParams());
    Type output = type.getReturnType();
    if (!function.isExternal())
      for (auto [index, argument] :
           llvm::enumerate(function.getBody().front().getArguments()))
        inputs[index] = argument.getType();
    else
      for (Type &input : inputs)
        if (isGenericPointer(input))
          input = global;
    if (isGenericPointer(output))
      output = global;
    function.setFunctionType(
        LLVM::LLVMFunctionType::get(output, inputs, type.isVarArg()));
  });
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

/// Zero scalars as constants: LLVM's SPIR-V backend writes every zero as
/// OpConstantNull, which llvm-spirv 15 (the route to SPIR 1.2) rejects for
/// bool, integer and float types (an assertion). Each of those becomes
/// OpConstantFalse or OpConstant 0, the same value; the part after a malformed
/// instruction is copied as it is. (The runtime rewrites the modules it
/// translates itself the same way, with a C copy of its own.)
static std::string zeroScalarsAsConstants(const std::string &binary) {
  enum : uint32_t {
    kTypeBool = 20,
    kTypeInt = 21,
    kTypeFloat = 22,
    kConstantFalse = 42,
    kConstant = 43,
    kConstantNull = 46,
  };
  size_t count = binary.size() / 4;
  std::vector<uint32_t> in(count);
  std::memcpy(in.data(), binary.data(), count * 4);
  if (count < 5 || in[0] != 0x07230203u)
    return binary;
  // Per type id (below the module's id bound): the words of a zero of that
  // scalar type (0 for bool), or -1 when it is not a scalar type.
  std::vector<int8_t> zeroWords(in[3], -1);
  auto zeroOf = [&](uint32_t type) -> int8_t {
    return type < zeroWords.size() ? zeroWords[type] : -1;
  };
  std::vector<uint32_t> out(in.begin(), in.begin() + 5);
  size_t at = 5;
  while (at < count) {
    uint32_t length = in[at] >> 16, opcode = in[at] & 0xFFFFu;
    if (length == 0 || length > count - at)
      break;
    const uint32_t *words = &in[at];
    if ((opcode == kTypeInt || opcode == kTypeFloat) && length >= 3 &&
        words[1] < zeroWords.size())
      zeroWords[words[1]] = words[2] > 32 ? 2 : 1;
    else if (opcode == kTypeBool && length >= 2 && words[1] < zeroWords.size())
      zeroWords[words[1]] = 0;
    int8_t zero = opcode == kConstantNull && length == 3 ? zeroOf(words[1]) : -1;
    if (zero >= 0) {
      // Result type, result id, then the value's words (none for false).
      out.push_back(((3u + zero) << 16) | (zero ? kConstant : kConstantFalse));
      out.push_back(words[1]);
      out.push_back(words[2]);
      out.insert(out.end(), static_cast<size_t>(zero), 0u);
    } else {
      out.insert(out.end(), words, words + length);
    }
    at += length;
  }
  out.insert(out.end(), in.begin() + at, in.end());
  return std::string(reinterpret_cast<const char *>(out.data()), out.size() * 4);
}

/// Memsets of a value or a length not known at compile time as loops. LLVM's
/// SPIR-V backend makes each a function of its own (spirv.llvm_memset_p0_i64),
/// which llvm-spirv 15 reads back as a call of llvm.memset.p0.i64: the opaque
/// pointers' name, which its LLVM of typed pointers refuses ("Intrinsic name
/// not mangled correctly"). The image lost its SPIR 1.2 fallback, so PoCL 3.1
/// (no SPIR-V of its own) ran the node on the CPU. Memsets of constants stay:
/// the backend copies them from a constant (OpCopyMemorySized).
static void expandVariableMemsets(llvm::Module &module) {
  std::vector<llvm::MemSetInst *> memsets;
  for (llvm::Function &function : module)
    for (llvm::BasicBlock &block : function)
      for (llvm::Instruction &instruction : block)
        if (auto *memset = llvm::dyn_cast<llvm::MemSetInst>(&instruction))
          if (!llvm::isa<llvm::Constant>(memset->getValue()) ||
              !llvm::isa<llvm::ConstantInt>(memset->getLength()))
            memsets.push_back(memset);
  for (llvm::MemSetInst *memset : memsets) {
    llvm::expandMemSetAsLoop(memset);
    memset->eraseFromParent();
  }
}

/// Writes all of `bytes` to `fd`; false on an error.
static bool writeAll(int fd, const char *bytes, size_t size) {
  while (size) {
    ssize_t written = ::write(fd, bytes, size);
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0)
      return false;
    bytes += written;
    size -= static_cast<size_t>(written);
  }
  return true;
}

/// The result of `emit` (a SPIR-V binary, or "" with its error in `error`),
/// computed in a child process of this one.
///
/// LLVM's SPIR-V backend keeps its module analysis in a static
/// (SPIRVModuleAnalysis::MAI) whose tables are keyed by pointers to the
/// machine functions and instructions of the last module it emitted. In a
/// process that emits several modules (the Python package compiles graph
/// after graph in one process), a new module's objects land at freed
/// addresses and match stale entries: after a few modules the binaries had
/// ids defined twice and kernels missing (spirv-val: "Id ... is defined more
/// than once"), so OpenCL drivers refused them and the nodes ran on the CPU.
/// A forked child starts from this process's copy of that state, which is
/// never used here: every module is emitted as the first one. A crash of the
/// backend becomes an error instead of the end of the host process.
static std::string emitInChild(function_ref<std::string(std::string &)> emit,
                               std::string &error) {
  int fds[2];
  if (::pipe(fds) != 0) {
    error = std::string("cannot create a pipe: ") + std::strerror(errno);
    return "";
  }
  pid_t child = ::fork();
  if (child < 0) {
    error = std::string("cannot fork: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return "";
  }
  if (child == 0) {
    // The child: 'B' and the binary, or 'E' and the error; no exit handlers.
    ::close(fds[0]);
    std::string childError;
    std::string binary = emit(childError);
    bool ok = !binary.empty();
    const std::string &payload = ok ? binary : childError;
    bool written = writeAll(fds[1], ok ? "B" : "E", 1) &&
                   writeAll(fds[1], payload.data(), payload.size());
    ::_exit(written ? 0 : 1);
  }
  ::close(fds[1]);
  std::string received;
  char buffer[1 << 16];
  for (;;) {
    ssize_t got = ::read(fds[0], buffer, sizeof buffer);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    received.append(buffer, static_cast<size_t>(got));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    error = "LLVM's SPIR-V backend crashed (signal " +
            std::to_string(WTERMSIG(status)) + ")";
    return "";
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || received.empty()) {
    error = "LLVM's SPIR-V backend stopped without a result (exit status " +
            std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
    return "";
  }
  if (received.front() == 'E') {
    error = received.substr(1);
    return "";
  }
  return received.substr(1);
}

/// The LLVM optimisation pipeline and the SPIR-V backend on `module`: the
/// binary, or "" with `error` set.
static std::string emitSPIRV(const llvm::Target &target, llvm::Module &module,
                             std::string &error) {
  llvm::Triple triple(kTriple);
  std::unique_ptr<llvm::TargetMachine> machine(target.createTargetMachine(
      triple, "", "", llvm::TargetOptions(), std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Default));
  if (!machine) {
    error = "could not create a SPIR-V target machine";
    return "";
  }
  module.setTargetTriple(triple);
  module.setDataLayout(machine->createDataLayout());

  // Tests only: the CUDA variants' 32-bit arithmetic on OpenCL devices.
  if (const char *narrow = std::getenv("HPVM_TEST_NARROW_OPENCL");
      narrow && StringRef(narrow) == "1")
    hpvm::narrowOpenCLKernelsForTesting(module);

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
    passes.run(module, modules);
  }
  expandVariableMemsets(module);

  // No CodeGenPrepare: it turns `x == 0` next to `x - 1` into
  // llvm.uadd.with.overflow, which the backend emits as OpIAddCarry, which
  // the SPIR 1.2 translator (llvm-spirv 15, PoCL's route) cannot read — the
  // image would lose its fallback. The driver optimises the kernels anyway.
  // (This runs in the child: the option does not outlive one module.)
  if (auto *disable = static_cast<llvm::cl::opt<bool> *>(
          llvm::cl::getRegisteredOptions().lookup("disable-cgp")))
    disable->setValue(true);

  std::string binary;
  {
    llvm::raw_string_ostream stream(binary);
    llvm::buffer_ostream buffer(stream);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, buffer, nullptr,
                                     llvm::CodeGenFileType::ObjectFile)) {
      error = "LLVM's SPIR-V backend cannot emit files";
      return "";
    }
    codegen.run(module);
  }
  if (binary.size() < 20 || binary.size() % 4) {
    error = "LLVM's SPIR-V backend produced " + std::to_string(binary.size()) +
            " bytes, not a module";
    return "";
  }
  return binary;
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
  std::string binary = emitInChild(
      [&](std::string &childError) {
        return emitSPIRV(*target, *module, childError);
      },
      error);
  if (binary.empty())
    return kernels.emitError()
           << "LLVM's SPIR-V backend failed on the OpenCL kernels: " << error;
  return zeroScalarsAsConstants(binary);
}
