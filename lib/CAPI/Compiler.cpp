//===- Compiler.cpp - The HPVM compiler as a C library --------------------===//
// hpvmCompileFile: the import, raise and lowering steps of hpvm-cc in one
// process, on one MLIR module (no text between the steps).
#include "HPVM/C/Compiler.h"

#include "HPVM/Conversion/Passes.h"
#include "HPVM/Pipelines/Pipelines.h"
#include "HPVM/Target/LLVMIR.h"
#include "HPVM/Transforms/Passes.h"
#include "HPVM/Tools/Registration.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Import.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cstdlib>
#include <cstring>

using namespace mlir;

namespace {
/// Prints one diagnostic on request, as the tools print it.
struct DiagnosticPrinter : SourceMgrDiagnosticHandler {
  using SourceMgrDiagnosticHandler::emitDiagnostic;
  using SourceMgrDiagnosticHandler::SourceMgrDiagnosticHandler;
};

/// Everything one compile needs, so that calls share nothing.
struct Compile {
  explicit Compile(const HPVMCompileOptions &options) : options(options) {
    DialectRegistry registry;
    hpvm::registerHPVMToolDialects(registry);
    registerAllToLLVMIRTranslations(registry);
    registerAllFromLLVMIRTranslations(registry);
    context.appendDialectRegistry(registry);
    // Dialects load as the parser, the importer and the passes need them.
    // Diagnostics point at the source (C or MLIR); dumping the op being
    // lowered would bury them.
    context.printOpOnDiagnostic(false);
  }

  OwningOpRef<ModuleOp> load(const char *path, llvm::SourceMgr &sourceMgr) {
    if (options.input == HPVMCompileInputMLIR)
      return parseSourceFile<ModuleOp>(path, sourceMgr, &context);
    llvm::SMDiagnostic error;
    llvm::LLVMContext llvmContext;
    std::unique_ptr<llvm::Module> llvmModule =
        llvm::parseIRFile(path, error, llvmContext);
    if (!llvmModule) {
      std::string text;
      llvm::raw_string_ostream stream(text);
      error.print("hpvm", stream, /*ShowColors=*/false);
      emitError(UnknownLoc::get(&context))
          << "cannot read the LLVM IR of an HPVM-C source: " << stream.str();
      return nullptr;
    }
    // The CPU is the final compile's choice (-march=native unless the command
    // names one): clang pinned every function to its default CPU here (the
    // baseline x86-64 on x86), which the host functions would have kept while
    // the leaves, rebuilt by the lowering, got the final one; a reference loop
    // in main then summed without the FMAs its leaf used.
    for (llvm::Function &function : *llvmModule) {
      function.removeFnAttr("target-cpu");
      function.removeFnAttr("target-features");
      function.removeFnAttr("tune-cpu");
    }
    // As hpvm-translate --import-llvm: no warnings about debug records the
    // importer drops (clang's -O2 and above make many; they cost nothing
    // but line info of optimized-out variables).
    OwningOpRef<ModuleOp> module = translateLLVMIRToModule(
        std::move(llvmModule), &context, /*emitExpensiveWarnings=*/false);
    if (!module)
      return nullptr;
    PassManager pm(&context);
    pm.addPass(hpvm::createRaiseHPVMC());
    if (failed(pm.run(*module)))
      return nullptr;
    return module;
  }

  /// The configuration of approximation knobs, when one was given.
  LogicalResult applyKnobs(ModuleOp module) {
    if (!options.knobs_file || !*options.knobs_file)
      return success();
    PassManager pm(&context);
    hpvm::HPVMApplyKnobsOptions knobs;
    knobs.file = options.knobs_file;
    pm.addPass(hpvm::createHPVMApplyKnobs(knobs));
    return pm.run(module);
  }

  void setPipelineOptions(hpvm::CPUPipelineOptions &pipeline) const {
    if (options.devices) {
      StringRef devices(options.devices);
      SmallVector<StringRef> names;
      devices.split(names, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
      for (StringRef name : names)
        pipeline.devices.push_back(name.trim().str());
    }
    if (options.dump_kernels_dir)
      pipeline.dumpKernels = options.dump_kernels_dir;
    pipeline.collapseGrids = options.collapse_grids;
    pipeline.vectorize = options.vectorize;
    pipeline.vectorizeRemarks = options.vectorize_remarks;
    pipeline.vectorBits = options.vector_bits;
    pipeline.lanes = options.lanes;
    pipeline.rows = options.rows;
    pipeline.lineTables = options.line_tables;
    pipeline.inlineLeaves = options.inline_leaves;
    pipeline.fuseNodes = options.fuse_nodes;
    pipeline.fuseTensorNodes = options.fuse_tensor_nodes;
    if (options.constants_asm)
      pipeline.constantsAsm = options.constants_asm;
  }

  LogicalResult emit(ModuleOp module, llvm::raw_ostream &output) {
    hpvm::CPUPipelineOptions pipeline;
    setPipelineOptions(pipeline);
    switch (options.emit) {
    case HPVMCompileEmitHPVM:
      module->print(output, printingFlags());
      output << "\n"; // as hpvm-opt ends its output
      return success();
    case HPVMCompileEmitMLIR: {
      PassManager pm(&context);
      hpvm::buildHPVMLowerToLLVMPipeline(pm, pipeline);
      if (failed(pm.run(module)))
        return failure();
      module->print(output, printingFlags());
      output << "\n";
      return success();
    }
    case HPVMCompileEmitLLVMIR:
      return hpvm::lowerToLLVMIR(module, pipeline, output, bitcode);
    }
    return failure(); // hpvmCompileFile refused other kinds
  }

  OpPrintingFlags printingFlags() const {
    OpPrintingFlags flags;
    if (options.print_locations)
      flags.enableDebugInfo();
    return flags;
  }

  HPVMCompileOptions options;
  /// LLVM IR is written as bitcode (the output path ends in .bc).
  bool bitcode = false;
  MLIRContext context{MLIRContext::Threading::ENABLED};
};
} // namespace

void hpvmCompileOptionsInit(HPVMCompileOptions *options) {
  std::memset(options, 0, sizeof(*options));
  options->input = HPVMCompileInputMLIR;
  options->emit = HPVMCompileEmitLLVMIR;
  options->collapse_grids = true;
  options->vectorize = true;
  options->inline_leaves = true;
}

static char *copyText(const std::string &text) {
  char *copy = static_cast<char *>(std::malloc(text.size() + 1));
  if (copy)
    std::memcpy(copy, text.c_str(), text.size() + 1);
  return copy;
}

bool hpvmCompileFile(const char *inputPath, const char *outputPath,
                     const HPVMCompileOptions *options, char **diagnostics) {
  if (diagnostics)
    *diagnostics = nullptr;
  HPVMCompileOptions defaults;
  hpvmCompileOptionsInit(&defaults);
  std::string text;
  llvm::raw_string_ostream diagnosticStream(text);
  bool ok = false;
  if (!inputPath || !outputPath) {
    diagnosticStream << "hpvmCompileFile: expected an input and an output path, got "
                     << (inputPath ? "an input but no output" : "no input") << "\n";
  } else if (options && options->input != HPVMCompileInputMLIR &&
             options->input != HPVMCompileInputHPVMC) {
    diagnosticStream << "hpvmCompileFile: unknown input kind " << options->input
                     << "; expected HPVMCompileInputMLIR or HPVMCompileInputHPVMC\n";
  } else if (options && options->emit != HPVMCompileEmitHPVM &&
             options->emit != HPVMCompileEmitMLIR &&
             options->emit != HPVMCompileEmitLLVMIR) {
    diagnosticStream << "hpvmCompileFile: unknown emit kind " << options->emit
                     << "; expected HPVMCompileEmitHPVM, HPVMCompileEmitMLIR or "
                        "HPVMCompileEmitLLVMIR\n";
  } else {
    Compile compile(options ? *options : defaults);
    compile.bitcode = StringRef(outputPath).ends_with(".bc");
    llvm::SourceMgr sourceMgr;
    // Diagnostics are printed as the tools print them: into `text`, or, with
    // a callback, one at a time, each handed over at once (handlers
    // registered later run first).
    bool streaming = options && options->on_diagnostic;
    std::string one;
    llvm::raw_string_ostream oneStream(one);
    DiagnosticPrinter printer(sourceMgr, &compile.context,
                              streaming ? oneStream : diagnosticStream);
    if (streaming)
      compile.context.getDiagEngine().registerHandler([&](Diagnostic &diagnostic) {
        printer.emitDiagnostic(diagnostic);
        options->on_diagnostic(one.c_str(), options->user_data);
        one.clear();
        return success();
      });
    OwningOpRef<ModuleOp> module = compile.load(inputPath, sourceMgr);
    if (module && failed(compile.applyKnobs(*module)))
      module = nullptr;
    if (module) {
      // Into memory first: nothing reaches the output on failure.
      std::string result;
      llvm::raw_string_ostream resultStream(result);
      if (succeeded(compile.emit(*module, resultStream))) {
        std::string error;
        std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(outputPath, &error);
        if (!file) {
          diagnosticStream << "hpvmCompileFile: " << error << "\n";
        } else {
          file->os() << resultStream.str();
          file->keep();
          ok = true;
        }
      }
    }
  }
  // Diagnostics of the library itself (bad arguments, an unwritable output),
  // made outside the context, go the same way.
  if (options && options->on_diagnostic && !text.empty())
    options->on_diagnostic(text.c_str(), options->user_data);
  else if (diagnostics && !text.empty())
    *diagnostics = copyText(text);
  return ok;
}

void hpvmCompileFreeText(char *text) { std::free(text); }
