//===- HPVMTensorToLinalg.h - hpvm.tensor.* to linalg patterns --*- C++ -*-===//
// The op-local half of convert-hpvm-tensor-to-linalg, for other passes and
// pipelines: one rewrite pattern per tensor op (or op family) and the
// legality that says which ops they remove. The pass adds what is not
// op-local (node interfaces and bufferization, once per node).
#ifndef HPVM_CONVERSION_HPVMTENSORTOLINALG_H
#define HPVM_CONVERSION_HPVMTENSORTOLINALG_H

namespace mlir {
class ConversionTarget;
class RewritePatternSet;

namespace hpvm {

/// Adds the patterns that replace each `hpvm.tensor.*` op (add, mul, conv2d,
/// pool, the activations, softmax, batchnorm, map, reduce, a reduce with a
/// sample_reduction knob) by linalg / tensor / arith / math ops on tensors
/// computing the same value. With `useKernels`, f32 conv2d, mul and pool also
/// get patterns of a higher benefit that call the runtime's kernels instead
/// (absorbing a bias add and a relu / clipped_relu that consume the result
/// alone). Every pattern refuses dynamically shaped operands, and the linalg
/// ones an op with a knob (other than a reduce's sample_reduction), which only
/// the kernels implement.
///
/// The kernel patterns erase ops after their root (the absorbed epilogue), so
/// a driver must visit the ops in program order; convert-hpvm-tensor-to-linalg
/// applies each pattern once per op, in that order.
void populateHPVMTensorToLinalgPatterns(RewritePatternSet &patterns,
                                        bool useKernels);

/// Marks every `hpvm.tensor.*` op that computes (all but `hpvm.tensor.yield`,
/// which goes with its map or reduce) illegal, and the dialects the patterns
/// produce (linalg, tensor, arith, math, bufferization, memref, llvm) legal.
void configureHPVMTensorToLinalgTarget(ConversionTarget &target);

} // namespace hpvm
} // namespace mlir

#endif // HPVM_CONVERSION_HPVMTENSORTOLINALG_H
