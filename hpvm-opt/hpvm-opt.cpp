//===- hpvm-opt.cpp - The hpvm optimizer driver ---------------------------===//
// Parses, verifies, transforms and prints IR in the hpvm dialect and the dialects leaves use.
#include "HPVM/Conversion/Passes.h"
#include "HPVM/Pipelines/Pipelines.h"
#include "HPVM/Tools/Registration.h"
#include "HPVM/Transforms/Passes.h"

#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"

namespace mlir::hpvm::test {
void registerTestPasses();
} // namespace mlir::hpvm::test

/// The printer verifies the module before printing it (and prints the generic
/// form if that fails). When the module was verified after parsing and after
/// every pass that changed it, that is a second walk over all of it for
/// nothing (0.15 s of 1.9 s on 10,000 leaves through the CPU pipeline), so it
/// is skipped then. It is kept where the IR may be invalid when printed: with
/// --verify-each=0, with the parser's verifier off, and with IR printing
/// around passes (which prints before the pass's verification).
static void assumeVerifiedWhenVerified() {
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  if (!config.shouldVerifyPasses() || !config.shouldVerifyOnParsing())
    return;
  auto &options = llvm::cl::getRegisteredOptions();
  for (llvm::StringRef name :
       {"mlir-print-ir-before", "mlir-print-ir-after", "mlir-print-ir-before-all",
        "mlir-print-ir-after-all", "mlir-print-ir-after-change",
        "mlir-print-ir-after-failure", "mlir-print-assume-verified"}) {
    auto found = options.find(name);
    if (found != options.end() && found->second->getNumOccurrences())
      return;
  }
  if (auto found = options.find("mlir-print-assume-verified"); found != options.end())
    found->second->addOccurrence(0, "mlir-print-assume-verified", "true");
}

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::hpvm::registerHPVMConversionPasses();
  mlir::hpvm::registerHPVMPipelines();
  mlir::hpvm::registerHPVMTransformsPasses();
  mlir::hpvm::test::registerTestPasses();

  mlir::DialectRegistry registry;
  mlir::hpvm::registerHPVMToolDialects(registry);
  auto [input, output] = mlir::registerAndParseCLIOptions(
      argc, argv, "HPVM optimizer driver\n", registry);
  assumeVerifiedWhenVerified();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, input, output, registry));
}
