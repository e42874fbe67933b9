//===- TensorFusion.h - Tensor leaf chains that may become one -*- C++ -*-===//
// The release's tensor-node fusion patterns and their legality, with reasons.
#ifndef HPVM_TRANSFORMS_ANALYSIS_TENSORFUSION_H
#define HPVM_TRANSFORMS_ANALYSIS_TENSORFUSION_H

#include "HPVM/Dialect/HPVM/Analysis/DataflowGraph.h"

#include <optional>
#include <string>

namespace mlir::hpvm {

/// The roles a tensor op plays in the fusion patterns.
enum class TensorChainKind { conv2d, mul, add, activation, pool, batchnorm };

/// The only tensor op of a single-tensor-op leaf: one block holding one
/// `hpvm.tensor.*` op of a pattern kind (with constants and reshapes of its
/// operands or result) and an `hpvm.return` of its result, then of
/// constants only (ApproxHPVM's leaves return a byte size beside it).
/// Returns null otherwise; `why` (when given) then says why, or stays empty
/// when the leaf holds no op of a pattern kind at all.
Operation *getSingleTensorOp(LeafOp leaf, std::string *why = nullptr);

/// The pattern role of a tensor op (conv2d, mul, add, relu / clipped_relu /
/// tanh / sigmoid / a HardSwish map, pool, batchnorm), or none.
std::optional<TensorChainKind> getTensorChainKind(Operation *op);

/// True when a chain whose ops have `kinds` may grow by an op of kind `next`
/// into (a prefix of) one of conv2d→add→act→pool, conv2d→add→pool,
/// mul→add→act (the release's patterns), conv2d→add→batchnorm→act,
/// conv2d→batchnorm→act, add→act, batchnorm→act (the layers of ResNet and
/// MobileNet as ApproxHPVM writes them).
bool continuesTensorPattern(ArrayRef<TensorChainKind> kinds,
                            TensorChainKind next);

/// True when a chain may start at an op of `kind` (the first op of a pattern).
bool startsTensorPattern(TensorChainKind kind);

/// Why child `producer` (a single-tensor-op leaf) cannot be fused with child
/// `consumer` (the next single-tensor-op leaf of a pattern) along `edge`, or
/// the empty string when legal: the producer's result must go only to the
/// consumer's chain operand, on a direct non-streaming edge between nodes with
/// the same targets and the same grid.
std::string checkTensorFusionStep(const DataflowGraph &graph, unsigned producer,
                                  unsigned consumer, EdgeOp edge);

/// A diamond after child `producer` (the last node of a chain): its result
/// feeds a one-input elementwise leaf `unary` (an activation, or a one-input
/// tensor map) and, with `unary`'s result, a two-input elementwise leaf
/// `binary` (a tensor map of exactly those two): SiLU as ONNX writes it,
/// sigmoid then x * sigmoid(x). The edges joining them are `toUnary`,
/// `toBinary` and `unaryToBinary`.
struct TensorDiamond {
  unsigned unary, binary;
  EdgeOp toUnary, toBinary, unaryToBinary;
};

/// The diamond after child `producer` when it may become part of the
/// producer's leaf: `producer`'s result feeds nothing else (no other edge, no
/// bind_out), `unary`'s result feeds only `binary`, `binary` has no other
/// input, direct one-to-one non-streaming edges between nodes of the same grid
/// and the same targets, the CPU's only (the GPU backends match chains, not
/// diamonds). Returns std::nullopt when there is no diamond there, else the
/// diamond, with `why` saying why it cannot be fused (empty when it can).
std::optional<TensorDiamond> findTensorDiamond(const DataflowGraph &graph,
                                               unsigned producer,
                                               std::string &why);

} // namespace mlir::hpvm

#endif // HPVM_TRANSFORMS_ANALYSIS_TENSORFUSION_H
