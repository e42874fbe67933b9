//===- FuzzCommon.h - what the IR and HPVM-C fuzz targets share -*- C++ -*-===//
// One registry and pass registration per process; a context per input with
// diagnostics swallowed (rejecting bad input is the expected outcome, not a
// finding); the parse -> verify -> CPU pipeline -> round-trip checks.
#ifndef HPVM_FUZZ_FUZZCOMMON_H
#define HPVM_FUZZ_FUZZCOMMON_H

#include "HPVM/Conversion/Passes.h"
#include "HPVM/Pipelines/Pipelines.h"
#include "HPVM/Tools/Registration.h"
#include "HPVM/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <string>

/// ASan option: ignore manual poisoning.  Our instrumented code inlines LLVM's
/// BumpPtrAllocator from the headers, which then poisons fresh slabs
/// (LLVM_ADDRESS_SANITIZER_BUILD), while the uninstrumented libMLIR.so
/// allocates from the same slabs without unpoisoning: every such allocation
/// would be a false "use-after-poison".  Real overflows and use-after-free in
/// our code are still found (they do not rely on manual poisoning).
extern "C" __attribute__((used)) const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

namespace hpvm_fuzz {

/// The dialects hpvm-opt knows, and the hpvm passes and pipelines by name.
inline const mlir::DialectRegistry &registry() {
  static const mlir::DialectRegistry *instance = [] {
    mlir::hpvm::registerHPVMConversionPasses();
    mlir::hpvm::registerHPVMPipelines();
    mlir::hpvm::registerHPVMTransformsPasses();
    auto *registry = new mlir::DialectRegistry();
    mlir::hpvm::registerHPVMToolDialects(*registry);
    return registry;
  }();
  return *instance;
}

/// HPVM_FUZZ_VERBOSE=1 prints the diagnostics and the stage each input reached
/// (to see why inputs are refused); otherwise refusals are silent.
inline bool verbose() {
  static const bool value = [] {
    const char *text = std::getenv("HPVM_FUZZ_VERBOSE");
    return text && *text && *text != '0';
  }();
  return value;
}

inline void note(const char *stage) {
  if (verbose())
    std::fprintf(stderr, "hpvm-fuzz: %s\n", stage);
}

/// Drops diagnostics (the expected answer to most inputs) unless verbose.
inline mlir::LogicalResult quietHandler(mlir::Diagnostic &diagnostic) {
  if (verbose())
    llvm::errs() << diagnostic.getLocation() << ": " << diagnostic << "\n";
  return mlir::success();
}

/// An invariant of the compiler broke on a verified module: print the module
/// and abort, which libFuzzer reports as a crash with the input saved.
[[noreturn]] inline void fail(const char *what, mlir::Operation *op) {
  std::fprintf(stderr, "hpvm-fuzz: invariant broken: %s\n", what);
  if (op)
    op->print(llvm::errs(), mlir::OpPrintingFlags().printGenericOpForm());
  std::abort();
}

/// Prints `module` in the custom and the generic form, parses both back and
/// verifies them: a verified module must survive its own printer.
inline void checkRoundTrip(mlir::ModuleOp module, mlir::MLIRContext &context) {
  for (bool generic : {false, true}) {
    std::string text;
    llvm::raw_string_ostream os(text);
    mlir::OpPrintingFlags flags;
    if (generic)
      flags.printGenericOpForm();
    module->print(os, flags);
    mlir::OwningOpRef<mlir::ModuleOp> again =
        mlir::parseSourceString<mlir::ModuleOp>(text, mlir::ParserConfig(&context));
    if (!again)
      fail(generic ? "the generic form of a verified module does not parse"
                   : "the custom form of a verified module does not parse",
           module);
    if (mlir::failed(mlir::verify(*again)))
      fail("a verified module does not verify after a print/parse round trip",
           module);
  }
}

/// Runs `pipeline` (textual, on builtin.module) on `module`.  Failing with
/// diagnostics is fine; the result, when the passes succeed, must verify
/// and round-trip. (The pass manager's own verification between passes is
/// off: a pass that makes invalid IR would fail quietly with it, and is a
/// finding.)
inline bool runPipeline(mlir::ModuleOp module, mlir::MLIRContext &context,
                        llvm::StringRef pipeline) {
  mlir::PassManager pm(&context);
  pm.enableVerifier(false);
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm))) {
    std::fprintf(stderr, "hpvm-fuzz: bad pipeline '%s'\n", pipeline.str().c_str());
    std::abort();
  }
  if (mlir::failed(pm.run(module)))
    return false;
  if (mlir::failed(mlir::verify(module)))
    fail("the passes succeeded on a verified module and made IR that does not "
         "verify",
         module);
  return true;
}

/// The CPU pipeline of hpvm-opt (graphs and host ops to runtime calls); the
/// rest of the way to LLVM IR is upstream's.
/// The kernel extraction shared by the GPU and OpenCL backends.
inline constexpr const char *kKernelExtraction =
    "builtin.module(convert-hpvm-to-gpu)";

inline constexpr const char *kCPUPipeline =
    "builtin.module(hpvm-lower-to-cpu-pipeline)";

} // namespace hpvm_fuzz

#endif // HPVM_FUZZ_FUZZCOMMON_H
