//===- hpvm-translate.cpp - Export HPVM modules to other formats ----------===//
// mlir-translate with the HPVM exporters (DOT, LLVM IR) and the upstream translations.
#include "HPVM/Target/DOT.h"
#include "HPVM/Target/LLVMIR.h"

#include "mlir/InitAllTranslations.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::registerAllTranslations();
  mlir::hpvm::registerToDOTTranslation();
  mlir::hpvm::registerToLLVMIRTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "HPVM translation tool"));
}
