//===- Compiler.cpp - The HPVM compiler as a C library --------------------===//
// hpvmCompileBuffer: the import, raise and lowering steps of hpvm-cc in one
// process, on one MLIR module (no text between the steps), its options the
// string of hpvm-lower-to-llvm-pipeline; hpvmCompileFile on top of it;
// hpvmRunPassPipeline: hpvm-opt --pass-pipeline in memory.
#include "HPVM/C/Compiler.h"

#include "GraphChecks.h"

#include "HPVM/Conversion/DeviceTools.h"
#include "HPVM/Conversion/Passes.h"
#include "HPVM/Pipelines/Pipelines.h"
#include "HPVM/Target/LLVMIR.h"
#include "HPVM/Transforms/ParameterArchive.h"
#include "HPVM/Transforms/Passes.h"
#include "HPVM/Tools/Registration.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Import.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cstdlib>
#include <cstring>

using namespace mlir;

namespace {
/// Where each diagnostic goes, as the tools print it (with its newline).
using Report = llvm::function_ref<void(StringRef)>;

/// Prints one diagnostic on request, as the tools print it.
struct DiagnosticPrinter : SourceMgrDiagnosticHandler {
  using SourceMgrDiagnosticHandler::emitDiagnostic;
  using SourceMgrDiagnosticHandler::SourceMgrDiagnosticHandler;
};

/// hpvmCompileBuffer's options string: hpvm-lower-to-llvm-pipeline's options,
/// and how the library prints the MLIR it returns.
struct CompileOptions : hpvm::CPUPipelineOptions {
  PassOptions::Option<bool> printLocations{
      *this, "print-locations",
      llvm::cl::desc("Print the operations' locations (the C or MLIR source "
                     "lines) in the hpvm and mlir outputs"),
      llvm::cl::init(false)};
};

/// Everything one call needs, so that calls share nothing: a context whose
/// diagnostics are printed as the tools print them and handed to `report` one
/// at a time, as they are emitted.
struct Session {
  explicit Session(Report report) : report(report) {
    DialectRegistry registry;
    hpvm::registerHPVMToolDialects(registry);
    registerAllToLLVMIRTranslations(registry);
    registerAllFromLLVMIRTranslations(registry);
    context.appendDialectRegistry(registry);
    // Dialects load as the parser, the importer and the passes need them.
    // Diagnostics point at the source (C or MLIR); dumping the op being
    // lowered would bury them.
    context.printOpOnDiagnostic(false);
    // Handlers registered later run first: this one replaces the printer's.
    context.getDiagEngine().registerHandler([this](Diagnostic &diagnostic) {
      printer.emitDiagnostic(diagnostic);
      this->report(one);
      one.clear();
      return success();
    });
  }

  /// The MLIR module in `buffer`, verified.
  OwningOpRef<ModuleOp> parse(std::unique_ptr<llvm::MemoryBuffer> buffer) {
    sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
    return parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  }

  OwningOpRef<ModuleOp> importHPVMC(const llvm::MemoryBuffer &buffer);

  Report report;
  MLIRContext context{MLIRContext::Threading::ENABLED};
  llvm::SourceMgr sourceMgr;
  std::string one;
  llvm::raw_string_ostream oneStream{one};
  DiagnosticPrinter printer{sourceMgr, &context, oneStream};
};
} // namespace

/// Clang's LLVM IR (text or bitcode) of an HPVM-C source, imported into MLIR
/// and raised to the hpvm dialect.
OwningOpRef<ModuleOp> Session::importHPVMC(const llvm::MemoryBuffer &buffer) {
  llvm::SMDiagnostic error;
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      llvm::parseIR(buffer.getMemBufferRef(), error, llvmContext);
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
  // hpvm-cc -fsanitize=undefined: graph descriptions stay static.
  hpvm::dropChecksInGraphFunctions(*llvmModule);
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

/// Prints `module` as hpvm-opt does.
static void printModule(ModuleOp module, llvm::raw_ostream &output,
                        bool locations = false) {
  OpPrintingFlags flags;
  if (locations)
    flags.enableDebugInfo();
  module->print(output, flags);
  output << "\n"; // as hpvm-opt ends its output
}

/// The module in `input` (an HPVMCompileInput) as `emit` asks.
static LogicalResult compile(Session &session, std::unique_ptr<llvm::MemoryBuffer> input,
                             int inputKind, int emit, const CompileOptions &options,
                             llvm::raw_ostream &output) {
  OwningOpRef<ModuleOp> module = inputKind == HPVMCompileInputMLIR
                                     ? session.parse(std::move(input))
                                     : session.importHPVMC(*input);
  if (!module)
    return failure();
  PassManager pm(&session.context);
  switch (emit) {
  case HPVMCompileEmitHPVM:
  case HPVMCompileEmitMLIR:
    if (emit == HPVMCompileEmitHPVM)
      hpvm::addHPVMApplyKnobs(pm, options);
    else
      hpvm::buildHPVMLowerToLLVMPipeline(pm, options);
    if (failed(pm.run(*module)))
      return failure();
    printModule(*module, output, options.printLocations);
    return success();
  case HPVMCompileEmitLLVMIR:
  case HPVMCompileEmitLLVMBitcode:
    return hpvm::lowerToLLVMIR(*module, options, output,
                               /*bitcode=*/emit == HPVMCompileEmitLLVMBitcode);
  }
  return failure(); // the callers refused other kinds
}

/// The arguments of a compile, checked; false after reporting what is wrong.
static bool checkCompile(StringRef caller, int inputKind, int emit,
                         const char *optionsText, CompileOptions &options,
                         Report report) {
  std::string text;
  llvm::raw_string_ostream errors(text);
  if (inputKind != HPVMCompileInputMLIR && inputKind != HPVMCompileInputHPVMC) {
    errors << caller << ": unknown input kind " << inputKind
           << "; expected HPVMCompileInputMLIR or HPVMCompileInputHPVMC\n";
  } else if (emit < HPVMCompileEmitHPVM || emit > HPVMCompileEmitLLVMBitcode) {
    errors << caller << ": unknown emit kind " << emit
           << "; expected HPVMCompileEmitHPVM, HPVMCompileEmitMLIR, "
              "HPVMCompileEmitLLVMIR or HPVMCompileEmitLLVMBitcode\n";
  } else if (optionsText && *optionsText) {
    std::string error;
    llvm::raw_string_ostream parseErrors(error);
    // A value of the wrong type is reported by llvm::cl, on stderr.
    if (failed(options.parseFromString(optionsText, parseErrors)))
      errors << caller << ": invalid options '" << optionsText
             << "' (hpvm-lower-to-llvm-pipeline's, and print-locations): "
             << (error.empty() ? "a value its option does not take"
                               : StringRef(error).trim())
             << "\n";
  }
  if (text.empty())
    return true;
  report(text);
  return false;
}

/// hpvmCompileBuffer's work, which hpvmCompileFile shares.
static bool compileBuffer(StringRef caller, std::unique_ptr<llvm::MemoryBuffer> input,
                          int inputKind, int emit, const char *optionsText,
                          std::string &result, Report report) {
  CompileOptions options;
  if (!checkCompile(caller, inputKind, emit, optionsText, options, report))
    return false;
  Session session(report);
  llvm::raw_string_ostream output(result);
  return succeeded(compile(session, std::move(input), inputKind, emit, options, output));
}

void hpvmCompileOptionsInit(HPVMCompileOptions *options) {
  std::memset(options, 0, sizeof(*options));
  options->input = HPVMCompileInputMLIR;
  options->emit = HPVMCompileEmitLLVMIR;
  options->collapse_grids = true;
  options->vectorize = true;
  options->inline_leaves = true;
  options->parallel_leaves = true;
}

static char *copyText(StringRef text) {
  char *copy = static_cast<char *>(std::malloc(text.size() + 1));
  if (copy) {
    std::memcpy(copy, text.data(), text.size());
    copy[text.size()] = '\0';
  }
  return copy;
}

/// A pipeline option's value, quoted as its parser reads it back whole.
static std::string quoted(StringRef value) {
  char quote = value.contains('"') ? '\'' : '"';
  return (Twine(quote) + value + Twine(quote)).str();
}

/// hpvmCompileFile's options as hpvmCompileBuffer's options string.
static std::string optionsString(const HPVMCompileOptions &options) {
  std::string text;
  llvm::raw_string_ostream out(text);
  auto flag = [&](StringRef key, bool value) {
    out << key << "=" << (value ? "true" : "false") << " ";
  };
  auto path = [&](StringRef key, const char *value) {
    if (value && *value)
      out << key << "=" << quoted(value) << " ";
  };
  flag("collapse-grids", options.collapse_grids);
  flag("print-locations", options.print_locations);
  flag("vectorize", options.vectorize);
  flag("vectorize-remarks", options.vectorize_remarks);
  flag("line-tables", options.line_tables);
  flag("inline-leaves", options.inline_leaves);
  flag("parallel-leaves", options.parallel_leaves);
  flag("fuse-nodes", options.fuse_nodes);
  flag("fuse-tensor-nodes", options.fuse_tensor_nodes);
  out << "vector-bits=" << options.vector_bits << " lanes=" << options.lanes
      << " rows=" << options.rows << " ";
  // A comma-separated list, its items trimmed.
  auto list = [&](StringRef key, const char *value) {
    SmallVector<StringRef> items;
    StringRef(value ? value : "")
        .split(items, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
    for (StringRef &item : items)
      item = item.trim();
    if (!items.empty())
      out << key << "=" << llvm::join(items, ",") << " ";
  };
  list("devices", options.devices);
  list("sanitize", options.sanitize);
  path("dump-kernels", options.dump_kernels_dir);
  path("knobs", options.knobs_file);
  path("constants-asm", options.constants_asm);
  path("tensor-tiles", options.tensor_tiles);
  return text;
}

bool hpvmCompileFileWithOptions(const char *inputPath, const char *outputPath,
                                int inputKind, int emitKind, const char *pipelineOptions,
                                void (*onDiagnostic)(const char *, void *), void *userData,
                                char **diagnostics) {
  if (diagnostics)
    *diagnostics = nullptr;
  // Diagnostics go to the callback as they come, else into `text`.
  std::string text;
  auto report = [&](StringRef diagnostic) {
    if (onDiagnostic)
      onDiagnostic(diagnostic.str().c_str(), userData);
    else
      text += diagnostic;
  };
  bool ok = false;
  std::unique_ptr<llvm::MemoryBuffer> regularInput;
  if (!inputPath || !outputPath) {
    report((Twine("hpvmCompileFile: expected an input and an output path, got ") +
            (inputPath ? "an input but no output" : "no input") + "\n")
               .str());
  } else if (std::string notRegular;
             StringRef(inputPath) != "-" &&
             !(regularInput = hpvm::openRegularFile(
                   inputPath, "the input '" + std::string(inputPath) + "'", notRegular))) {
    // A link to /dev/zero was read until memory ran out, a named pipe blocked.
    report("hpvmCompileFile: " + notRegular + "\n");
  } else if (auto input = regularInput
                              ? llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>>(
                                    std::move(regularInput))
                              : llvm::MemoryBuffer::getFileOrSTDIN(inputPath);
             !input) {
    report((Twine("hpvmCompileFile: cannot read '") + inputPath +
            "': " + input.getError().message() + "\n")
               .str());
  } else {
    int emit = emitKind == HPVMCompileEmitLLVMIR && StringRef(outputPath).ends_with(".bc")
                   ? HPVMCompileEmitLLVMBitcode
                   : emitKind;
    // Into memory first: nothing reaches the output on failure.
    std::string result;
    if (compileBuffer("hpvmCompileFile", std::move(*input), inputKind, emit,
                      pipelineOptions, result, report)) {
      std::string error;
      std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(outputPath, &error);
      if (!file) {
        report("hpvmCompileFile: " + error + "\n");
      } else {
        file->os() << result;
        file->keep();
        ok = true;
      }
    }
  }
  if (diagnostics && !text.empty())
    *diagnostics = copyText(text);
  return ok;
}

bool hpvmCompileFile(const char *inputPath, const char *outputPath,
                     const HPVMCompileOptions *options, char **diagnostics) {
  HPVMCompileOptions defaults;
  hpvmCompileOptionsInit(&defaults);
  if (!options)
    options = &defaults;
  return hpvmCompileFileWithOptions(inputPath, outputPath, options->input, options->emit,
                                    optionsString(*options).c_str(), options->on_diagnostic,
                                    options->user_data, diagnostics);
}

/// `size` bytes at `input` as a buffer the parsers read (NUL-terminated).
static std::unique_ptr<llvm::MemoryBuffer> bufferOf(const char *input, size_t size,
                                                    const char *name) {
  return llvm::MemoryBuffer::getMemBufferCopy(StringRef(input, size),
                                              name ? name : "<buffer>");
}

/// The library's own check of a buffer call's pointers; false after reporting.
static bool checkBuffer(StringRef caller, const char *input, char **output,
                        Report report) {
  if (input && output)
    return true;
  report((caller + ": expected an input buffer and an output pointer, got " +
          (input ? "no output pointer" : "no input") + "\n")
             .str());
  return false;
}

bool hpvmCompileBuffer(const char *input, size_t size, const char *bufferName,
                       int inputKind, int emit, const char *pipelineOptions,
                       char **output, size_t *outputSize, char **diagnostics) {
  if (output)
    *output = nullptr;
  if (outputSize)
    *outputSize = 0;
  std::string text, result;
  auto report = [&](StringRef diagnostic) { text += diagnostic; };
  bool ok = checkBuffer("hpvmCompileBuffer", input, output, report) &&
            compileBuffer("hpvmCompileBuffer", bufferOf(input, size, bufferName),
                          inputKind, emit, pipelineOptions, result, report);
  if (ok) {
    *output = copyText(result);
    if (outputSize)
      *outputSize = result.size();
  }
  if (diagnostics)
    *diagnostics = text.empty() ? nullptr : copyText(text);
  return ok;
}

/// Every pass hpvm-opt registers but its test passes, once per process.
static void registerPasses() {
  static const bool registered = [] {
    registerAllPasses();
    hpvm::registerHPVMConversionPasses();
    hpvm::registerHPVMPipelines();
    hpvm::registerHPVMTransformsPasses();
    return true;
  }();
  (void)registered;
}

/// Runs the textual `pipeline` on `module`; false after reporting.
static LogicalResult runPipeline(Session &session, ModuleOp module, StringRef pipeline) {
  std::string error;
  llvm::raw_string_ostream errors(error);
  FailureOr<OpPassManager> parsed = parsePassPipeline(pipeline, errors);
  if (failed(parsed)) {
    session.report(("hpvmRunPassPipeline: invalid pass pipeline '" + pipeline +
                    "': " + StringRef(error).trim() + "\n")
                       .str());
    return failure();
  }
  PassManager pm(&session.context);
  static_cast<OpPassManager &>(pm) = std::move(*parsed);
  return pm.run(module);
}

bool hpvmRunPassPipeline(const char *input, size_t size, const char *bufferName,
                         const char *pipeline, char **output, char **diagnostics) {
  if (output)
    *output = nullptr;
  std::string text;
  auto report = [&](StringRef diagnostic) { text += diagnostic; };
  bool ok = false;
  if (checkBuffer("hpvmRunPassPipeline", input, output, report)) {
    registerPasses();
    Session session(report);
    OwningOpRef<ModuleOp> module = session.parse(bufferOf(input, size, bufferName));
    if (module && (!pipeline || !*pipeline ||
                   succeeded(runPipeline(session, *module, pipeline)))) {
      std::string result;
      llvm::raw_string_ostream stream(result);
      printModule(*module, stream);
      *output = copyText(result);
      ok = true;
    }
  }
  if (diagnostics)
    *diagnostics = text.empty() ? nullptr : copyText(text);
  return ok;
}

char *hpvmDeviceTools(void) {
  std::string text = "llvm-spirv\t" + hpvm::findSPIRVTranslator() + "\n";
  for (const char *tool : {"ptxas", "fatbinary"})
    text += std::string(tool) + "\t" + hpvm::findCudaTool(tool) + "\n";
  return copyText(text);
}

void hpvmCompileFreeText(char *text) { std::free(text); }
