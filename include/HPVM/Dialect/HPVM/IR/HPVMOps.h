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

namespace mlir::hpvm {
/// What the combiner of an hpvm.tensor.reduce computes, as far as reduction
/// sampling (#hpvm.knob<sample_reduction>) needs to know: a sampled sum is
/// rescaled, a sampled maximum or minimum is not, anything else is refused.
enum class ReduceCombiner { sum, extremum, other };

/// Classifies the combiner of `reduce`: the region's only op besides the yield
/// is arith.addf (sum) or arith.maximumf / minimumf / maxnumf / minnumf
/// (extremum) of the accumulator and the element, in either order, and the
/// yield returns its result. Otherwise `other`, and `found` (when given) says
/// what the region holds instead.
ReduceCombiner classifyReduceCombiner(TensorReduceOp reduce,
                                      std::string *found = nullptr);

/// Checks that `knob` may approximate `op`: perforate_rows, perforate_cols
/// and sample_filter on hpvm.tensor.conv2d, sample_reduction on an
/// hpvm.tensor.reduce whose combiner it can sample, fp16 and bf16 on an f32
/// hpvm.tensor.mul. Otherwise reports, through `emitError`, what was expected
/// and what was found.
LogicalResult
verifyKnobPlacement(Operation *op, KnobAttr knob,
                    llvm::function_ref<InFlightDiagnostic()> emitError);

/// The launches a graph handle may come from: the hpvm.launch that produced
/// it or, for a block argument, the launches that every predecessor's branch
/// passes there (followed through further block arguments), in the order
/// first met. Failure when some path brings the handle from elsewhere (a
/// function argument, the result of another op, a terminator that is not a
/// branch) or no launch reaches it.
FailureOr<SmallVector<LaunchOp>> getLaunchesOf(Value graph);
} // namespace mlir::hpvm

#endif // HPVM_DIALECT_HPVM_IR_HPVMOPS_H
