//===- hpvm-translate.cpp - Export HPVM modules to other formats ----------===//
// mlir-translate with the HPVM exporters and the upstream MLIR -> LLVM IR translation.
#include "HPVM/Target/DOT.h"

#include "mlir/InitAllTranslations.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::registerAllTranslations();
  mlir::hpvm::registerToDOTTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "HPVM translation tool"));
}
