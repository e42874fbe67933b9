//===- HPVMTypes.h - Types of the hpvm dialect ------------------*- C++ -*-===//
// Declares !hpvm.node and !hpvm.graph.
#ifndef HPVM_DIALECT_HPVM_IR_HPVMTYPES_H
#define HPVM_DIALECT_HPVM_IR_HPVMTYPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "HPVM/Dialect/HPVM/IR/HPVMTypes.h.inc"

#endif // HPVM_DIALECT_HPVM_IR_HPVMTYPES_H
