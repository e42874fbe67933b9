// All ops of the hpvm dialect: the single TableGen target for op declarations and docs.
#ifndef HPVM_DIALECT_HPVM_IR_HPVMOPS_TD
#define HPVM_DIALECT_HPVM_IR_HPVMOPS_TD

include "HPVM/Dialect/HPVM/IR/HPVMNodeOps.td"
include "HPVM/Dialect/HPVM/IR/HPVMTensorOps.td"

#endif // HPVM_DIALECT_HPVM_IR_HPVMOPS_TD
