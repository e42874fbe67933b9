//===- HPVMTraits.h - Placement traits of hpvm ops --------------*- C++ -*-===//
// Traits saying where in the node hierarchy an op may appear.
#ifndef HPVM_DIALECT_HPVM_IR_HPVMTRAITS_H
#define HPVM_DIALECT_HPVM_IR_HPVMTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace mlir::hpvm {
namespace detail {
LogicalResult verifyInLeaf(Operation *op);
LogicalResult verifyHostOnly(Operation *op);
} // namespace detail

namespace OpTrait {
/// The op runs inside a leaf node (leaf intrinsics, tensor ops).
template <typename ConcreteType>
class InLeaf : public mlir::OpTrait::TraitBase<ConcreteType, InLeaf> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return detail::verifyInLeaf(op);
  }
};

/// The op is host code, outside every node definition.
template <typename ConcreteType>
class HostOnly : public mlir::OpTrait::TraitBase<ConcreteType, HostOnly> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return detail::verifyHostOnly(op);
  }
};
} // namespace OpTrait
} // namespace mlir::hpvm

#endif // HPVM_DIALECT_HPVM_IR_HPVMTRAITS_H
