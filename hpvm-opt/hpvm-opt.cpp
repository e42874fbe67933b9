//===- hpvm-opt.cpp - The hpvm optimizer driver ---------------------------===//
// Parses, verifies, transforms and prints IR in the hpvm dialect and the dialects leaves use.
#include "HPVM/Conversion/Passes.h"
#include "HPVM/Pipelines/Pipelines.h"
#include "HPVM/Tools/Registration.h"
#include "HPVM/Transforms/Passes.h"

#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

namespace mlir::hpvm::test {
void registerTestPasses();
} // namespace mlir::hpvm::test

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::hpvm::registerHPVMConversionPasses();
  mlir::hpvm::registerHPVMPipelines();
  mlir::hpvm::registerHPVMTransformsPasses();
  mlir::hpvm::test::registerTestPasses();

  mlir::DialectRegistry registry;
  mlir::hpvm::registerHPVMToolDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "HPVM optimizer driver\n", registry));
}
