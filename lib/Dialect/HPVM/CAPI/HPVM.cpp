//===- HPVM.cpp - C API of the hpvm dialect -------------------------------===//
// Implements include/HPVM/C/HPVM.h over the C++ dialect.
#include "HPVM/C/HPVM.h"
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;
using namespace mlir::hpvm;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(HPVM, hpvm, HPVMDialect)

// The C enums mirror the dialect's; keep them in step.
static_assert(static_cast<int>(Target::tensor) == MlirHPVMTargetTensor);
static_assert(static_cast<int>(Access::in) == MlirHPVMAccessIn);
static_assert(static_cast<int>(Access::out) == MlirHPVMAccessOut);
static_assert(static_cast<int>(Access::inout) == MlirHPVMAccessInOut);
static_assert(static_cast<int>(Dim::z) == MlirHPVMDimZ);
static_assert(static_cast<int>(Replication::all_to_all) == MlirHPVMAllToAll);

//===----------------------------------------------------------------------===//
// Types and attributes
//===----------------------------------------------------------------------===//

MlirType mlirHPVMNodeTypeGet(MlirContext ctx) {
  return wrap(NodeType::get(unwrap(ctx)));
}
bool mlirTypeIsAHPVMNodeType(MlirType type) {
  return isa<NodeType>(unwrap(type));
}
MlirType mlirHPVMGraphTypeGet(MlirContext ctx) {
  return wrap(hpvm::GraphType::get(unwrap(ctx)));
}
bool mlirTypeIsAHPVMGraphType(MlirType type) {
  return isa<hpvm::GraphType>(unwrap(type));
}

MlirAttribute mlirHPVMTargetAttrGet(MlirContext ctx, MlirHPVMTarget target) {
  return wrap(TargetAttr::get(unwrap(ctx), static_cast<Target>(target)));
}
MlirAttribute mlirHPVMAccessAttrGet(MlirContext ctx, MlirHPVMAccess access) {
  return wrap(AccessAttr::get(unwrap(ctx), static_cast<Access>(access)));
}
MlirAttribute mlirHPVMErrorBudgetAttrGet(MlirContext ctx, double l1,
                                         double l2) {
  // A C caller gets a null attribute, not a diagnostic, for invalid budgets.
  if (!(l1 >= 0) || !(l2 >= 0) || std::isinf(l1) || std::isinf(l2))
    return MlirAttribute{nullptr};
  return wrap(ErrorBudgetAttr::get(unwrap(ctx), l1, l2));
}
bool mlirAttributeIsAHPVMErrorBudget(MlirAttribute attr) {
  return isa<ErrorBudgetAttr>(unwrap(attr));
}
double mlirHPVMErrorBudgetAttrGetL1(MlirAttribute attr) {
  return cast<ErrorBudgetAttr>(unwrap(attr)).getL1().convertToDouble();
}
double mlirHPVMErrorBudgetAttrGetL2(MlirAttribute attr) {
  return cast<ErrorBudgetAttr>(unwrap(attr)).getL2().convertToDouble();
}

//===----------------------------------------------------------------------===//
// Node definitions
//===----------------------------------------------------------------------===//

template <typename NodeOp>
static MlirOperation createNode(MlirLocation loc, MlirStringRef name,
                                intptr_t numInputs, const MlirType *inputs,
                                intptr_t numOutputs, const MlirType *outputs) {
  Location location = unwrap(loc);
  OpBuilder builder(location.getContext());
  SmallVector<Type> inputTypes, outputTypes;
  for (intptr_t i = 0; i < numInputs; ++i)
    inputTypes.push_back(unwrap(inputs[i]));
  for (intptr_t i = 0; i < numOutputs; ++i)
    outputTypes.push_back(unwrap(outputs[i]));
  auto op = NodeOp::create(builder, location, unwrap(name),
                           builder.getFunctionType(inputTypes, outputTypes));
  return wrap(op.getOperation());
}

MlirOperation mlirHPVMLeafOpCreate(MlirLocation loc, MlirStringRef name,
                                   intptr_t numInputs, const MlirType *inputs,
                                   intptr_t numOutputs,
                                   const MlirType *outputs) {
  return createNode<LeafOp>(loc, name, numInputs, inputs, numOutputs, outputs);
}
MlirOperation mlirHPVMInternalOpCreate(MlirLocation loc, MlirStringRef name,
                                       intptr_t numInputs,
                                       const MlirType *inputs,
                                       intptr_t numOutputs,
                                       const MlirType *outputs) {
  return createNode<InternalOp>(loc, name, numInputs, inputs, numOutputs,
                                outputs);
}

bool mlirOperationIsAHPVMLeaf(MlirOperation op) {
  return isa<LeafOp>(unwrap(op));
}
bool mlirOperationIsAHPVMInternal(MlirOperation op) {
  return isa<InternalOp>(unwrap(op));
}
MlirBlock mlirHPVMNodeGetBody(MlirOperation node) {
  return wrap(&unwrap(node)->getRegion(0).front());
}
MlirStringRef mlirHPVMNodeGetName(MlirOperation node) {
  return wrap(cast<SymbolOpInterface>(unwrap(node)).getName());
}
intptr_t mlirHPVMNodeGetNumInputs(MlirOperation node) {
  return cast<NodeOpInterface>(unwrap(node)).getInputTypes().size();
}
intptr_t mlirHPVMNodeGetNumOutputs(MlirOperation node) {
  return cast<NodeOpInterface>(unwrap(node)).getOutputTypes().size();
}
void mlirHPVMNodeSetTargets(MlirOperation node, intptr_t numTargets,
                            const MlirHPVMTarget *targets) {
  Operation *op = unwrap(node);
  SmallVector<Attribute> list;
  for (intptr_t i = 0; i < numTargets; ++i)
    list.push_back(
        TargetAttr::get(op->getContext(), static_cast<Target>(targets[i])));
  op->setAttr(HPVMDialect::getTargetsAttrName(),
              ArrayAttr::get(op->getContext(), list));
}
void mlirHPVMNodeSetInputAccess(MlirOperation node, intptr_t input,
                                MlirHPVMAccess access) {
  auto function = cast<FunctionOpInterface>(unwrap(node));
  function.setArgAttr(
      input, HPVMDialect::getAccessAttrName(),
      AccessAttr::get(function->getContext(), static_cast<Access>(access)));
}

//===----------------------------------------------------------------------===//
// Graph ops
//===----------------------------------------------------------------------===//

/// Values from a C array.
static SmallVector<Value> unwrapValues(intptr_t n, const MlirValue *values) {
  SmallVector<Value> result;
  for (intptr_t i = 0; i < n; ++i)
    result.push_back(unwrap(values[i]));
  return result;
}

MlirOperation mlirHPVMCreateNodeOpCreate(MlirLocation loc, MlirStringRef node,
                                         intptr_t numDims,
                                         const MlirValue *dims) {
  Location location = unwrap(loc);
  OpBuilder builder(location.getContext());
  return wrap(CreateNodeOp::create(builder, location,
                                   NodeType::get(location.getContext()),
                                   unwrap(node), unwrapValues(numDims, dims))
                  .getOperation());
}
MlirStringRef mlirHPVMCreateNodeOpGetNodeName(MlirOperation op) {
  return wrap(cast<CreateNodeOp>(unwrap(op)).getNode());
}
intptr_t mlirHPVMCreateNodeOpGetRank(MlirOperation op) {
  return cast<CreateNodeOp>(unwrap(op)).getRank();
}

MlirOperation mlirHPVMEdgeOpCreate(MlirLocation loc, MlirValue source,
                                   int32_t sourcePort, MlirValue dest,
                                   int32_t destPort,
                                   MlirHPVMReplication replication,
                                   bool streaming) {
  Location location = unwrap(loc);
  OpBuilder builder(location.getContext());
  return wrap(EdgeOp::create(builder, location, unwrap(source), sourcePort,
                             unwrap(dest), destPort,
                             static_cast<Replication>(replication), streaming)
                  .getOperation());
}
int32_t mlirHPVMEdgeOpGetSourcePort(MlirOperation op) {
  return cast<EdgeOp>(unwrap(op)).getSourcePort();
}
int32_t mlirHPVMEdgeOpGetDestPort(MlirOperation op) {
  return cast<EdgeOp>(unwrap(op)).getDestPort();
}
MlirHPVMReplication mlirHPVMEdgeOpGetReplication(MlirOperation op) {
  return static_cast<MlirHPVMReplication>(
      cast<EdgeOp>(unwrap(op)).getReplication());
}
bool mlirHPVMEdgeOpIsStreaming(MlirOperation op) {
  return cast<EdgeOp>(unwrap(op)).getStreaming();
}

MlirOperation mlirHPVMBindInOpCreate(MlirLocation loc, MlirValue input,
                                     MlirValue dest, int32_t destPort,
                                     bool streaming) {
  Location location = unwrap(loc);
  OpBuilder builder(location.getContext());
  return wrap(BindInOp::create(builder, location, unwrap(input), unwrap(dest),
                               destPort, streaming)
                  .getOperation());
}
MlirOperation mlirHPVMBindOutOpCreate(MlirLocation loc, MlirValue source,
                                      int32_t sourcePort, int32_t output,
                                      bool streaming) {
  Location location = unwrap(loc);
  OpBuilder builder(location.getContext());
  return wrap(BindOutOp::create(builder, location, unwrap(source), sourcePort,
                                output, streaming)
                  .getOperation());
}

//===----------------------------------------------------------------------===//
// Leaf ops
//===----------------------------------------------------------------------===//

MlirOperation mlirHPVMReturnOpCreate(MlirLocation loc, intptr_t numValues,
                                     const MlirValue *values) {
  Location location = unwrap(loc);
  OpBuilder builder(location.getContext());
  return wrap(
      ReturnOp::create(builder, location, unwrapValues(numValues, values))
          .getOperation());
}

template <typename GridQueryOp>
static MlirOperation createGridQuery(MlirLocation loc, MlirHPVMDim dim,
                                     int32_t level) {
  Location location = unwrap(loc);
  OpBuilder builder(location.getContext());
  return wrap(GridQueryOp::create(builder, location, builder.getIndexType(),
                                  static_cast<Dim>(dim), level)
                  .getOperation());
}
MlirOperation mlirHPVMInstanceIdOpCreate(MlirLocation loc, MlirHPVMDim dim,
                                         int32_t level) {
  return createGridQuery<InstanceIdOp>(loc, dim, level);
}
MlirOperation mlirHPVMNumInstancesOpCreate(MlirLocation loc, MlirHPVMDim dim,
                                           int32_t level) {
  return createGridQuery<NumInstancesOp>(loc, dim, level);
}
MlirOperation mlirHPVMBarrierOpCreate(MlirLocation loc) {
  Location location = unwrap(loc);
  OpBuilder builder(location.getContext());
  return wrap(BarrierOp::create(builder, location).getOperation());
}

//===----------------------------------------------------------------------===//
// Host ops
//===----------------------------------------------------------------------===//

MlirOperation mlirHPVMLaunchOpCreate(MlirLocation loc, MlirStringRef root,
                                     intptr_t numArgs, const MlirValue *args,
                                     bool streaming) {
  Location location = unwrap(loc);
  OpBuilder builder(location.getContext());
  return wrap(LaunchOp::create(builder, location,
                               hpvm::GraphType::get(location.getContext()),
                               unwrap(root), unwrapValues(numArgs, args),
                               streaming)
                  .getOperation());
}
MlirOperation mlirHPVMWaitOpCreate(MlirLocation loc, MlirValue graph,
                                   intptr_t numResults,
                                   const MlirType *resultTypes) {
  Location location = unwrap(loc);
  OpBuilder builder(location.getContext());
  SmallVector<Type> types;
  for (intptr_t i = 0; i < numResults; ++i)
    types.push_back(unwrap(resultTypes[i]));
  return wrap(
      WaitOp::create(builder, location, types, unwrap(graph)).getOperation());
}

template <typename TrackerOp>
static MlirOperation createTrackerOp(MlirLocation loc, MlirValue memory,
                                     MlirValue size) {
  Location location = unwrap(loc);
  OpBuilder builder(location.getContext());
  return wrap(TrackerOp::create(builder, location, unwrap(memory),
                                mlirValueIsNull(size) ? Value() : unwrap(size))
                  .getOperation());
}
MlirOperation mlirHPVMTrackOpCreate(MlirLocation loc, MlirValue memory,
                                    MlirValue size) {
  return createTrackerOp<TrackOp>(loc, memory, size);
}
MlirOperation mlirHPVMUntrackOpCreate(MlirLocation loc, MlirValue memory) {
  return createTrackerOp<UntrackOp>(loc, memory, MlirValue{nullptr});
}
MlirOperation mlirHPVMRequestOpCreate(MlirLocation loc, MlirValue memory,
                                      MlirValue size) {
  return createTrackerOp<RequestOp>(loc, memory, size);
}
