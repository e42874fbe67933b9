//===- hpvm-ir-fuzz.cpp - libFuzzer target: bytes -> parse, verify, lower --===//
// In process, as hpvm-opt would: parse the bytes as a module (every dialect
// hpvm-opt registers), verify it, check that it round-trips through the
// printer, and run the kernel extraction (convert-hpvm-to-gpu, on a copy) and
// the CPU pipeline (hpvm-lower-to-cpu-pipeline) on it.
// Rejections (parse errors, verifier errors, pass failures) are expected; a
// crash, a sanitizer report, a hang or a broken round trip is a finding.
// Seeded with the lit tests' .mlir files, split at `// -----`.
#include "FuzzCommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const mlir::DialectRegistry &registry = hpvm_fuzz::registry();
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  // Diagnostics are the expected answer to most inputs: drop them quietly.
  mlir::ScopedDiagnosticHandler quiet(&context, hpvm_fuzz::quietHandler);
  // A std::string: MLIR's lexer stops at a NUL after the buffer, as source
  // files read by the tools have one; libFuzzer's data has none.
  std::string text(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, mlir::ParserConfig(&context));
  if (!module || mlir::failed(mlir::verify(*module)))
    return 0;
  hpvm_fuzz::checkRoundTrip(*module, context);
  // Kernel extraction, the first step of the GPU and OpenCL backends, on a
  // copy (the CPU pipeline takes its output only after hpvm-embed-kernels,
  // which compiles with LLVM's GPU backends: too slow to fuzz).
  mlir::OwningOpRef<mlir::ModuleOp> kernels = module->clone();
  if (hpvm_fuzz::runPipeline(*kernels, context, hpvm_fuzz::kKernelExtraction))
    hpvm_fuzz::checkRoundTrip(*kernels, context);
  if (hpvm_fuzz::runPipeline(*module, context, hpvm_fuzz::kCPUPipeline))
    hpvm_fuzz::checkRoundTrip(*module, context);
  return 0;
}
