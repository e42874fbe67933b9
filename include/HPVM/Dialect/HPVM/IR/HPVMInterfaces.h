//===- HPVMInterfaces.h - Interfaces of the hpvm dialect --------*- C++ -*-===//
// Declares NodeOpInterface (node definitions) and ApproximableOpInterface (tensor ops).
#ifndef HPVM_DIALECT_HPVM_IR_HPVMINTERFACES_H
#define HPVM_DIALECT_HPVM_IR_HPVMINTERFACES_H

#include "HPVM/Dialect/HPVM/IR/HPVMAttrs.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "HPVM/Dialect/HPVM/IR/HPVMInterfaces.h.inc"

#endif // HPVM_DIALECT_HPVM_IR_HPVMINTERFACES_H
