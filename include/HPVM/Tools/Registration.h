//===- Registration.h - What the HPVM tools register ------------*- C++ -*-===//
// One place for the dialect list hpvm-opt and hpvm-translate share.
#ifndef HPVM_TOOLS_REGISTRATION_H
#define HPVM_TOOLS_REGISTRATION_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::hpvm {

/// The hpvm dialect, the upstream dialects leaf bodies are written in and the
/// dialects the lowerings target, with the extensions their conversions attach.
void registerHPVMToolDialects(DialectRegistry &registry);

} // namespace mlir::hpvm

#endif // HPVM_TOOLS_REGISTRATION_H
