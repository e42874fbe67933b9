//===- TensorPerforation.h - Perforated convolutions in kernels -*- C++ -*-===//
// A tensor leaf whose output is a convolution with a perforation knob
// (perforate_rows / perforate_cols), its bias add and activation, computes
// only the kept rows (columns): each thread runs down a run of 4 x rate rows
// of one column (4 x rate columns of one row), computes each kept one once
// and the one kept neighbour past its run that a skipped edge row needs, and
// stores the skipped ones as the mean of their neighbours (a copy of the one
// at an image edge), as the runtime's CPU kernels do: about (rate - 1) /
// rate of the convolution's work.
#ifndef HPVM_CONVERSION_HPVMTOGPU_TENSORPERFORATION_H
#define HPVM_CONVERSION_HPVMTOGPU_TENSORPERFORATION_H

#include "TensorElements.h"

#include <optional>
#include <string>

namespace mlir::hpvm::tensor_kernels {

/// A leaf's perforated convolution.
struct PerforatedConv {
  TensorConv2DOp conv;
  /// The leaf's output: the convolution, its bias add, its activation.
  Value output;
  /// The perforated dimension of the output (2: rows, 3: columns).
  unsigned axis = 2;
  int64_t rate = 2, offset = 0;
  /// Outputs along `axis` per thread.
  int64_t run = 8;

  /// The kernel's threads.
  int64_t getThreads() const;
};

/// Why the perforation knob of a convolution in `leaf` cannot be a kernel
/// (the perforated values are not the leaf's one output, after a bias add
/// and an activation), or "". `plan` receives the perforated convolution,
/// if any (none when its perforated dimension has one element: the knob
/// skips nothing there).
std::string checkPerforation(LeafOp leaf, std::optional<PerforatedConv> &plan);

/// Emits the stores of thread `id`'s run of `plan`'s output into `output`.
void emitPerforated(ElementEmitter &emitter, const PerforatedConv &plan,
                    Value id, Value output);

} // namespace mlir::hpvm::tensor_kernels

#endif // HPVM_CONVERSION_HPVMTOGPU_TENSORPERFORATION_H
