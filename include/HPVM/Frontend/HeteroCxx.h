//===- HeteroCxx.h - Hetero-C++ to HPVM-C ---------------------------*- C++ -*-===//
// Hetero-C++ (HPVM 2.x's C++ dialect, runtime/include/hpvm/hetero.h) marks
// regions of ordinary C++ with calls: __hetero_section_begin/end (an internal
// node), __hetero_task_begin/end (a node), __hetero_parallel_loop (the loop
// nest around it is a replicated leaf), __hetero_launch / __hetero_wait and
// __hetero_launch_begin/end (host code). lowerHeteroCxx outlines those regions
// of clang's LLVM IR into node functions and rewrites the markers as HPVM-C
// calls (hpvm.h), which hpvm-raise-c then raises like any HPVM-C program.
//
// The module must be clang's IR before optimization (clang -O1 -Xclang
// -disable-llvm-passes): regions are still where the source put them. The
// caller optimizes the result. docs/HeteroCxx.md describes the language as
// implemented.
#ifndef HPVM_FRONTEND_HETEROCXX_H
#define HPVM_FRONTEND_HETEROCXX_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

namespace llvm {
class Module;
} // namespace llvm

namespace hpvm {

/// True when `module` calls a Hetero-C++ marker.
bool usesHeteroCxx(const llvm::Module &module);

/// Rewrites the Hetero-C++ markers of `module` as HPVM-C. Each error is handed
/// to `report` as the tools print it ("file:line:col: error: ..."); returns
/// false when there was one (the module is then in no defined state).
struct HeteroCxxOptions {
  /// The markers are removed instead and each launch calls its root: the
  /// program as the sequential C++ it also is.
  bool sequential = false;
  /// A launch region in a loop whose iterations provably write disjoint
  /// buffers becomes one streaming launch (else a launch per iteration).
  bool streaming = true;
};
bool lowerHeteroCxx(llvm::Module &module, llvm::function_ref<void(llvm::StringRef)> report,
                    HeteroCxxOptions options = {});

} // namespace hpvm

#endif // HPVM_FRONTEND_HETEROCXX_H
