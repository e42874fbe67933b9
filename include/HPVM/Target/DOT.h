//===- DOT.h - Graphviz export of HPVM dataflow graphs ----------*- C++ -*-===//
// Writes the node hierarchy of a module as a Graphviz DOT picture.
#ifndef HPVM_TARGET_DOT_H
#define HPVM_TARGET_DOT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::hpvm {

/// Writes one DOT digraph showing every graph of `module`: each node that no
/// other node instantiates is a root, expanded through the hierarchy. Internal nodes become clusters with `in` and
/// `out` port nodes, leaves become boxes labelled with their grid and targets;
/// edges are styled by kind (one-to-one solid, all-to-all bold, streaming
/// dashed blue), binds are dotted.
LogicalResult translateModuleToDOT(ModuleOp module, llvm::raw_ostream &os);

/// Registers `--hpvm-to-dot` with mlir-translate style tools.
void registerToDOTTranslation();

} // namespace mlir::hpvm

#endif // HPVM_TARGET_DOT_H
