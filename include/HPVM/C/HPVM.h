/*===- HPVM.h - C API of the hpvm dialect -------------------------*- C -*-===//
 * Registers the hpvm dialect and builds and inspects HPVM graphs from C, in the
 * style of MLIR's C API (mlir-c/IR.h). Builders return detached operations;
 * insert them with mlirBlockAppendOwnedOperation (or mlirBlockInsertOwned...).
 * Node and graph handles (!hpvm.node, !hpvm.graph) are MlirValues.
 *===----------------------------------------------------------------------===*/
#ifndef HPVM_C_HPVM_H
#define HPVM_C_HPVM_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(HPVM, hpvm);

/*===----------------------------------------------------------------------===
 * Enums (values equal those of the dialect)
 *===----------------------------------------------------------------------===*/

typedef enum MlirHPVMTarget {
  MlirHPVMTargetCPU = 0,
  MlirHPVMTargetVector = 1,
  MlirHPVMTargetGPU = 2,
  MlirHPVMTargetSPIRV = 3,
  MlirHPVMTargetTensor = 4,
} MlirHPVMTarget;

/* The runtime's hpvm_rt_access_t values (HPVM_RT_ACCESS_*; inout = in | out). */
typedef enum MlirHPVMAccess {
  MlirHPVMAccessIn = 1,
  MlirHPVMAccessOut = 2,
  MlirHPVMAccessInOut = 3,
} MlirHPVMAccess;

typedef enum MlirHPVMDim {
  MlirHPVMDimX = 0,
  MlirHPVMDimY = 1,
  MlirHPVMDimZ = 2,
} MlirHPVMDim;

typedef enum MlirHPVMReplication {
  MlirHPVMOneToOne = 0,
  MlirHPVMAllToAll = 1,
} MlirHPVMReplication;

/*===----------------------------------------------------------------------===
 * Types and attributes
 *===----------------------------------------------------------------------===*/

/** Returns !hpvm.node, the handle of a child node. */
MLIR_CAPI_EXPORTED MlirType mlirHPVMNodeTypeGet(MlirContext ctx);
MLIR_CAPI_EXPORTED bool mlirTypeIsAHPVMNodeType(MlirType type);
/** Returns !hpvm.graph, the handle of a launched graph. */
MLIR_CAPI_EXPORTED MlirType mlirHPVMGraphTypeGet(MlirContext ctx);
MLIR_CAPI_EXPORTED bool mlirTypeIsAHPVMGraphType(MlirType type);

/** Returns #hpvm.target<...>. */
MLIR_CAPI_EXPORTED MlirAttribute mlirHPVMTargetAttrGet(MlirContext ctx,
                                                       MlirHPVMTarget target);
/** Returns #hpvm.access<...>. */
MLIR_CAPI_EXPORTED MlirAttribute mlirHPVMAccessAttrGet(MlirContext ctx,
                                                       MlirHPVMAccess access);
/** Returns #hpvm.error<l1 = l1, l2 = l2>; null when a budget is negative or
 * not finite. */
MLIR_CAPI_EXPORTED MlirAttribute mlirHPVMErrorBudgetAttrGet(MlirContext ctx,
                                                            double l1,
                                                            double l2);
MLIR_CAPI_EXPORTED bool mlirAttributeIsAHPVMErrorBudget(MlirAttribute attr);
MLIR_CAPI_EXPORTED double mlirHPVMErrorBudgetAttrGetL1(MlirAttribute attr);
MLIR_CAPI_EXPORTED double mlirHPVMErrorBudgetAttrGetL2(MlirAttribute attr);

/*===----------------------------------------------------------------------===
 * Node definitions: hpvm.leaf and hpvm.internal
 *===----------------------------------------------------------------------===*/

/** Creates `hpvm.leaf @name(inputs) -> (outputs)` with an empty entry block
 * whose arguments are the inputs; end the body with mlirHPVMReturnOpCreate. */
MLIR_CAPI_EXPORTED MlirOperation mlirHPVMLeafOpCreate(
    MlirLocation loc, MlirStringRef name, intptr_t numInputs,
    const MlirType *inputs, intptr_t numOutputs, const MlirType *outputs);
/** Creates `hpvm.internal @name(inputs) -> (outputs)` with an empty entry
 * block; fill it with create_node, edge and bind ops. */
MLIR_CAPI_EXPORTED MlirOperation mlirHPVMInternalOpCreate(
    MlirLocation loc, MlirStringRef name, intptr_t numInputs,
    const MlirType *inputs, intptr_t numOutputs, const MlirType *outputs);

MLIR_CAPI_EXPORTED bool mlirOperationIsAHPVMLeaf(MlirOperation op);
MLIR_CAPI_EXPORTED bool mlirOperationIsAHPVMInternal(MlirOperation op);
/** The entry block of a node definition; its arguments are the inputs. */
MLIR_CAPI_EXPORTED MlirBlock mlirHPVMNodeGetBody(MlirOperation node);
MLIR_CAPI_EXPORTED MlirStringRef mlirHPVMNodeGetName(MlirOperation node);
MLIR_CAPI_EXPORTED intptr_t mlirHPVMNodeGetNumInputs(MlirOperation node);
MLIR_CAPI_EXPORTED intptr_t mlirHPVMNodeGetNumOutputs(MlirOperation node);
/** Sets the `hpvm.targets` hint list (in order of preference). */
MLIR_CAPI_EXPORTED void mlirHPVMNodeSetTargets(MlirOperation node,
                                               intptr_t numTargets,
                                               const MlirHPVMTarget *targets);
/** Sets `hpvm.access` on buffer input `input`. */
MLIR_CAPI_EXPORTED void mlirHPVMNodeSetInputAccess(MlirOperation node,
                                                   intptr_t input,
                                                   MlirHPVMAccess access);

/*===----------------------------------------------------------------------===
 * Graph ops (inside hpvm.internal)
 *===----------------------------------------------------------------------===*/

/** `hpvm.create_node @node [dims]` (0 to 3 index values); result 0 is the
 * !hpvm.node handle. */
MLIR_CAPI_EXPORTED MlirOperation mlirHPVMCreateNodeOpCreate(
    MlirLocation loc, MlirStringRef node, intptr_t numDims,
    const MlirValue *dims);
MLIR_CAPI_EXPORTED MlirStringRef
mlirHPVMCreateNodeOpGetNodeName(MlirOperation op);
MLIR_CAPI_EXPORTED intptr_t mlirHPVMCreateNodeOpGetRank(MlirOperation op);

/** `hpvm.edge %source[sourcePort] -> %dest[destPort]`. */
MLIR_CAPI_EXPORTED MlirOperation mlirHPVMEdgeOpCreate(
    MlirLocation loc, MlirValue source, int32_t sourcePort, MlirValue dest,
    int32_t destPort, MlirHPVMReplication replication, bool streaming);
MLIR_CAPI_EXPORTED int32_t mlirHPVMEdgeOpGetSourcePort(MlirOperation op);
MLIR_CAPI_EXPORTED int32_t mlirHPVMEdgeOpGetDestPort(MlirOperation op);
MLIR_CAPI_EXPORTED MlirHPVMReplication
mlirHPVMEdgeOpGetReplication(MlirOperation op);
MLIR_CAPI_EXPORTED bool mlirHPVMEdgeOpIsStreaming(MlirOperation op);

/** `hpvm.bind_in %input -> %dest[destPort]`; `input` is an argument of the
 * enclosing internal node's body. */
MLIR_CAPI_EXPORTED MlirOperation mlirHPVMBindInOpCreate(MlirLocation loc,
                                                        MlirValue input,
                                                        MlirValue dest,
                                                        int32_t destPort,
                                                        bool streaming);
/** `hpvm.bind_out %source[sourcePort] -> output`. */
MLIR_CAPI_EXPORTED MlirOperation mlirHPVMBindOutOpCreate(MlirLocation loc,
                                                         MlirValue source,
                                                         int32_t sourcePort,
                                                         int32_t output,
                                                         bool streaming);

/*===----------------------------------------------------------------------===
 * Leaf ops
 *===----------------------------------------------------------------------===*/

/** `hpvm.return` with the leaf's outputs. */
MLIR_CAPI_EXPORTED MlirOperation mlirHPVMReturnOpCreate(MlirLocation loc,
                                                        intptr_t numValues,
                                                        const MlirValue *values);
/** `hpvm.instance_id dim level N : index`. */
MLIR_CAPI_EXPORTED MlirOperation mlirHPVMInstanceIdOpCreate(MlirLocation loc,
                                                            MlirHPVMDim dim,
                                                            int32_t level);
/** `hpvm.num_instances dim level N : index`. */
MLIR_CAPI_EXPORTED MlirOperation
mlirHPVMNumInstancesOpCreate(MlirLocation loc, MlirHPVMDim dim, int32_t level);
MLIR_CAPI_EXPORTED MlirOperation mlirHPVMBarrierOpCreate(MlirLocation loc);

/*===----------------------------------------------------------------------===
 * Host ops
 *===----------------------------------------------------------------------===*/

/** `hpvm.launch @root(args) [streaming]`; result 0 is the !hpvm.graph. */
MLIR_CAPI_EXPORTED MlirOperation mlirHPVMLaunchOpCreate(MlirLocation loc,
                                                        MlirStringRef root,
                                                        intptr_t numArgs,
                                                        const MlirValue *args,
                                                        bool streaming);
/** `hpvm.wait %graph : results` (the root's outputs, none if streaming). */
MLIR_CAPI_EXPORTED MlirOperation
mlirHPVMWaitOpCreate(MlirLocation loc, MlirValue graph, intptr_t numResults,
                     const MlirType *resultTypes);
/** `hpvm.track`, `hpvm.untrack`, `hpvm.request` of a memref (pass a null
 * size) or of an !llvm.ptr with its size in bytes (an index value). */
MLIR_CAPI_EXPORTED MlirOperation mlirHPVMTrackOpCreate(MlirLocation loc,
                                                       MlirValue memory,
                                                       MlirValue size);
MLIR_CAPI_EXPORTED MlirOperation mlirHPVMUntrackOpCreate(MlirLocation loc,
                                                         MlirValue memory);
MLIR_CAPI_EXPORTED MlirOperation mlirHPVMRequestOpCreate(MlirLocation loc,
                                                         MlirValue memory,
                                                         MlirValue size);

#ifdef __cplusplus
}
#endif

#endif /* HPVM_C_HPVM_H */
