//===- DescribeStreamItems.h - Item layouts for the MPI layer ---*- C++ -*-===//
// The pass that hpvm-cc --distribute=mpi adds before the graph lowering: it
// tells the runtime's MPI layer the layout of every streaming root's items
// (docs/Distributed.md).
#ifndef HPVM_PIPELINES_DESCRIBESTREAMITEMS_H
#define HPVM_PIPELINES_DESCRIBESTREAMITEMS_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::hpvm {

/// Before each streaming launch, a call of hpvm_rt_mpi_describe_items with
/// the layout of the root's pushed and popped items: per field its kind, size
/// and alignment. A root whose items carry a host pointer not followed by its
/// size in bytes (or a memref) is refused: it could not travel to another
/// rank.
std::unique_ptr<Pass> createHPVMDescribeStreamItems();

} // namespace mlir::hpvm

#endif // HPVM_PIPELINES_DESCRIBESTREAMITEMS_H
