//===- VerifierSupport.h - What the hpvm op verifiers share ------*- C++ -*-===//
// Private to lib/Dialect/HPVM/IR: how the verifiers of the node, graph and
// host ops word counts, type lists and nodes in their messages, and the check
// of grid queries against a use of a node (create_node and launch both
// make instances).
#ifndef HPVM_LIB_DIALECT_HPVM_IR_VERIFIERSUPPORT_H
#define HPVM_LIB_DIALECT_HPVM_IR_VERIFIERSUPPORT_H

#include "HPVM/Dialect/HPVM/IR/NodeUses.h"
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::hpvm::verifier {

/// "1 output", "3 inputs".
inline std::string count(size_t n, StringRef noun) {
  return std::to_string(n) + " " + noun.str() + (n == 1 ? "" : "s");
}

/// "(f32, i64)" for a list of types.
inline std::string typeList(TypeRange types) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "(";
  llvm::interleaveComma(types, os);
  os << ")";
  return text;
}

/// The name of a node definition for diagnostics, "@name".
inline std::string nodeName(NodeOpInterface node) {
  return ("@" + cast<SymbolOpInterface>(node.getOperation()).getName()).str();
}

/// Checks the grid queries that refer to the instances of `use` (a
/// create_node of `node`, or a launch of it): in each leaf k levels below,
/// the queries of level k. Below a launch, a query of a level beyond the
/// launched root is an error too. Defined in HPVMNodeOps.cpp.
LogicalResult verifyGridQueriesBelow(const NodeUse &use, StringAttr node,
                                     SymbolTableCollection &symbols);

} // namespace mlir::hpvm::verifier

#endif // HPVM_LIB_DIALECT_HPVM_IR_VERIFIERSUPPORT_H
