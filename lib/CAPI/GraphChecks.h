//===- GraphChecks.h - UBSan's checks out of graph descriptions -*- C++ -*-===//
#ifndef HPVM_CAPI_GRAPHCHECKS_H
#define HPVM_CAPI_GRAPHCHECKS_H

namespace llvm {
class Module;
} // namespace llvm

namespace mlir::hpvm {
/// Removes UBSan's checks (hpvm-cc -fsanitize=undefined) from the functions of
/// clang's LLVM IR of an HPVM-C source that describe graphs (internal nodes and
/// roots: they call __hpvm__createNode*, __hpvm__bind* or __hpvm__edge). Such a
/// function is a static description, which the raise reads: a check's branch
/// to its handler is a value that is not a compile-time constant, and an
/// overflow-checked product of grid extents is a call the raise does not know.
/// Each branch to a block calling a `__ubsan_handle_*` function goes to the
/// other successor, the handler blocks go, and each `llvm.*.with.overflow`
/// becomes the plain operation (its overflow flag false). Leaves and host code
/// keep their checks. Returns the number of checks removed.
unsigned dropChecksInGraphFunctions(llvm::Module &module);
} // namespace mlir::hpvm

#endif // HPVM_CAPI_GRAPHCHECKS_H
