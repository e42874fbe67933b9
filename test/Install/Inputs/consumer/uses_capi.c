/* Uses the installed C API: registers the hpvm dialect in a context and makes its node type. */
#include <HPVM/C/HPVM.h>
#include <mlir-c/IR.h>
#include <stdio.h>

int main(void) {
  MlirContext context = mlirContextCreate();
  MlirDialectHandle hpvm = mlirGetDialectHandle__hpvm__();
  mlirDialectHandleRegisterDialect(hpvm, context);
  mlirDialectHandleLoadDialect(hpvm, context);
  MlirType node = mlirHPVMNodeTypeGet(context);
  int ok = mlirTypeIsAHPVMNodeType(node);
  mlirContextDestroy(context);
  printf("capi: %s\n", ok ? "ok" : "wrong type");
  return !ok;
}
