//===- HPVMOps.h - Ops of the hpvm dialect ----------------------*- C++ -*-===//
// Declares every hpvm op; the one header users of the dialect include.
#ifndef HPVM_DIALECT_HPVM_IR_HPVMOPS_H
#define HPVM_DIALECT_HPVM_IR_HPVMOPS_H

#include "HPVM/Dialect/HPVM/IR/HPVMAttrs.h"
#include "HPVM/Dialect/HPVM/IR/HPVMDialect.h"
#include "HPVM/Dialect/HPVM/IR/HPVMInterfaces.h"
#include "HPVM/Dialect/HPVM/IR/HPVMTraits.h"
#include "HPVM/Dialect/HPVM/IR/HPVMTypes.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h.inc"

#endif // HPVM_DIALECT_HPVM_IR_HPVMOPS_H
