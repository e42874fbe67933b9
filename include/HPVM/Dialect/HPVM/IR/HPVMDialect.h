//===- HPVMDialect.h - The hpvm dialect -------------------------*- C++ -*-===//
// Declares the hpvm dialect class.
#ifndef HPVM_DIALECT_HPVM_IR_HPVMDIALECT_H
#define HPVM_DIALECT_HPVM_IR_HPVMDIALECT_H

#include "mlir/IR/Dialect.h"

#include "HPVM/Dialect/HPVM/IR/HPVMDialect.h.inc"

#endif // HPVM_DIALECT_HPVM_IR_HPVMDIALECT_H
