/* Builds a small HPVM graph through the C API, verifies it, prints it and
 * reads it back through the accessors; also checks that a broken graph fails
 * verification. */
// RUN: hpvm-capi-test 2>&1 | FileCheck %s

#include "HPVM/C/HPVM.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/Dialect/Arith.h"
#include "mlir-c/Dialect/Func.h"
#include "mlir-c/Dialect/MemRef.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"

#include <stdio.h>
#include <stdlib.h>

static void printToStdout(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

/* Prints each diagnostic on its own line, so that the test can check it. */
static MlirLogicalResult printDiagnostic(MlirDiagnostic diagnostic,
                                         void *userData) {
  (void)userData;
  printf("diagnostic: ");
  mlirDiagnosticPrint(diagnostic, printToStdout, NULL);
  printf("\n");
  return mlirLogicalResultSuccess();
}

static MlirStringRef str(const char *text) {
  return mlirStringRefCreateFromCString(text);
}

/* Appends `op` to `block` and returns its result `index`. */
static MlirValue append(MlirBlock block, MlirOperation op, intptr_t index) {
  mlirBlockAppendOwnedOperation(block, op);
  return index < 0 ? (MlirValue){NULL} : mlirOperationGetResult(op, index);
}

static MlirOperation createOp(const char *name, MlirLocation loc,
                              intptr_t numOperands, MlirValue *operands,
                              intptr_t numResults, MlirType *results,
                              intptr_t numAttrs, MlirNamedAttribute *attrs) {
  MlirOperationState state = mlirOperationStateGet(str(name), loc);
  mlirOperationStateAddOperands(&state, numOperands, operands);
  mlirOperationStateAddResults(&state, numResults, results);
  mlirOperationStateAddAttributes(&state, numAttrs, attrs);
  return mlirOperationCreate(&state);
}

/* hpvm.leaf @vadd_leaf(a, b, c: memref<?xf32>): c[i] = a[i] + b[i]. */
static MlirOperation buildLeaf(MlirContext ctx, MlirLocation loc,
                               MlirType buffer) {
  MlirType inputs[] = {buffer, buffer, buffer};
  MlirOperation leaf = mlirHPVMLeafOpCreate(loc, str("vadd_leaf"), 3, inputs,
                                            0, NULL);
  MlirHPVMTarget targets[] = {MlirHPVMTargetCPU, MlirHPVMTargetGPU};
  mlirHPVMNodeSetTargets(leaf, 2, targets);
  mlirHPVMNodeSetInputAccess(leaf, 0, MlirHPVMAccessIn);
  mlirHPVMNodeSetInputAccess(leaf, 1, MlirHPVMAccessIn);
  mlirHPVMNodeSetInputAccess(leaf, 2, MlirHPVMAccessOut);

  MlirBlock body = mlirHPVMNodeGetBody(leaf);
  MlirValue a = mlirBlockGetArgument(body, 0);
  MlirValue b = mlirBlockGetArgument(body, 1);
  MlirValue c = mlirBlockGetArgument(body, 2);
  MlirValue i = append(body, mlirHPVMInstanceIdOpCreate(loc, MlirHPVMDimX, 0), 0);
  MlirType f32 = mlirF32TypeGet(ctx);
  MlirValue loadA[] = {a, i}, loadB[] = {b, i};
  MlirValue x = append(body, createOp("memref.load", loc, 2, loadA, 1, &f32, 0, NULL), 0);
  MlirValue y = append(body, createOp("memref.load", loc, 2, loadB, 1, &f32, 0, NULL), 0);
  MlirValue add[] = {x, y};
  MlirValue sum = append(body, createOp("arith.addf", loc, 2, add, 1, &f32, 0, NULL), 0);
  MlirValue store[] = {sum, c, i};
  append(body, createOp("memref.store", loc, 3, store, 0, NULL, 0, NULL), -1);
  append(body, mlirHPVMReturnOpCreate(loc, 0, NULL), -1);
  return leaf;
}

/* hpvm.internal @vadd_root(a, b, c, n): one leaf over [n]. */
static MlirOperation buildRoot(MlirContext ctx, MlirLocation loc,
                               MlirType buffer, int wrongBind) {
  MlirType index = mlirIndexTypeGet(ctx);
  MlirType inputs[] = {buffer, buffer, buffer, index};
  MlirOperation root = mlirHPVMInternalOpCreate(loc, str("vadd_root"), 4,
                                                inputs, 0, NULL);
  MlirBlock body = mlirHPVMNodeGetBody(root);
  MlirValue n = mlirBlockGetArgument(body, 3);
  MlirOperation create = mlirHPVMCreateNodeOpCreate(loc, str("vadd_leaf"), 1, &n);
  MlirValue leaf = append(body, create, 0);
  printf("create_node: @%.*s rank %ld\n",
         (int)mlirHPVMCreateNodeOpGetNodeName(create).length,
         mlirHPVMCreateNodeOpGetNodeName(create).data,
         (long)mlirHPVMCreateNodeOpGetRank(create));
  for (int port = 0; port < 3; ++port) {
    /* The broken variant binds input 0 twice and never feeds input 2. */
    int arg = (wrongBind && port == 2) ? 0 : port;
    int dest = (wrongBind && port == 2) ? 0 : port;
    append(body,
           mlirHPVMBindInOpCreate(loc, mlirBlockGetArgument(body, arg), leaf,
                                  dest, false),
           -1);
  }
  return root;
}

/* func.func @vadd(a, b, c, n): track, launch, wait, request, untrack. */
static MlirOperation buildHost(MlirContext ctx, MlirLocation loc,
                               MlirType buffer) {
  MlirType index = mlirIndexTypeGet(ctx);
  MlirType inputs[] = {buffer, buffer, buffer, index};
  MlirType fnType = mlirFunctionTypeGet(ctx, 4, inputs, 0, NULL);
  MlirNamedAttribute attrs[] = {
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("sym_name")),
                            mlirStringAttrGet(ctx, str("vadd"))),
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("function_type")),
                            mlirTypeAttrGet(fnType))};
  MlirRegion region = mlirRegionCreate();
  MlirLocation locs[] = {loc, loc, loc, loc};
  MlirBlock body = mlirBlockCreate(4, inputs, locs);
  mlirRegionAppendOwnedBlock(region, body);
  MlirOperationState state = mlirOperationStateGet(str("func.func"), loc);
  mlirOperationStateAddAttributes(&state, 2, attrs);
  mlirOperationStateAddOwnedRegions(&state, 1, &region);
  MlirOperation fn = mlirOperationCreate(&state);

  MlirValue args[4];
  for (int k = 0; k < 4; ++k)
    args[k] = mlirBlockGetArgument(body, k);
  for (int k = 0; k < 3; ++k)
    append(body, mlirHPVMTrackOpCreate(loc, args[k], (MlirValue){NULL}), -1);
  MlirValue graph =
      append(body, mlirHPVMLaunchOpCreate(loc, str("vadd_root"), 4, args, false), 0);
  append(body, mlirHPVMWaitOpCreate(loc, graph, 0, NULL), -1);
  append(body, mlirHPVMRequestOpCreate(loc, args[2], (MlirValue){NULL}), -1);
  for (int k = 0; k < 3; ++k)
    append(body, mlirHPVMUntrackOpCreate(loc, args[k]), -1);
  append(body, createOp("func.return", loc, 0, NULL, 0, NULL, 0, NULL), -1);
  return fn;
}

static MlirModule buildModule(MlirContext ctx, int broken) {
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  MlirModule module = mlirModuleCreateEmpty(loc);
  MlirBlock top = mlirModuleGetBody(module);
  int64_t dynamic = mlirShapedTypeGetDynamicSize();
  MlirType buffer = mlirMemRefTypeContiguousGet(mlirF32TypeGet(ctx), 1,
                                                &dynamic, mlirAttributeGetNull());
  mlirBlockAppendOwnedOperation(top, buildLeaf(ctx, loc, buffer));
  mlirBlockAppendOwnedOperation(top, buildRoot(ctx, loc, buffer, broken));
  mlirBlockAppendOwnedOperation(top, buildHost(ctx, loc, buffer));
  return module;
}

int main(void) {
  MlirContext ctx = mlirContextCreate();
  mlirDialectHandleLoadDialect(mlirGetDialectHandle__hpvm__(), ctx);
  mlirDialectHandleLoadDialect(mlirGetDialectHandle__func__(), ctx);
  mlirDialectHandleLoadDialect(mlirGetDialectHandle__arith__(), ctx);
  mlirDialectHandleLoadDialect(mlirGetDialectHandle__memref__(), ctx);

  // CHECK: create_node: @vadd_leaf rank 1
  MlirModule module = buildModule(ctx, /*broken=*/0);
  MlirOperation moduleOp = mlirModuleGetOperation(module);
  // CHECK: verified: 1
  printf("verified: %d\n", mlirOperationVerify(moduleOp));

  // CHECK-LABEL: hpvm.leaf @vadd_leaf
  // CHECK-SAME: {hpvm.access = #hpvm.access<in>}
  // CHECK-SAME: {hpvm.access = #hpvm.access<out>})
  // CHECK-SAME: attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]}
  // CHECK: hpvm.instance_id x : index
  // CHECK: hpvm.return
  // CHECK-LABEL: hpvm.internal @vadd_root
  // CHECK: %[[LEAF:.*]] = hpvm.create_node @vadd_leaf [%{{.*}}] : !hpvm.node
  // CHECK: hpvm.bind_in %{{.*}} -> %[[LEAF]][0] : memref<?xf32>
  // CHECK: hpvm.bind_in %{{.*}} -> %[[LEAF]][2] : memref<?xf32>
  // CHECK-LABEL: func.func @vadd
  // CHECK: hpvm.track
  // CHECK: %[[G:.*]] = hpvm.launch @vadd_root(
  // CHECK: hpvm.wait %[[G]]
  // CHECK: hpvm.request
  // CHECK: hpvm.untrack
  mlirOperationPrint(moduleOp, printToStdout, NULL);
  printf("\n");

  // Accessors read back what the builders made.
  MlirBlock top = mlirModuleGetBody(module);
  MlirOperation leaf = mlirBlockGetFirstOperation(top);
  MlirOperation root = mlirOperationGetNextInBlock(leaf);
  // CHECK: leaf: 1 internal: 0 name: vadd_leaf inputs: 3 outputs: 0
  printf("leaf: %d internal: %d name: %.*s inputs: %ld outputs: %ld\n",
         mlirOperationIsAHPVMLeaf(leaf), mlirOperationIsAHPVMInternal(leaf),
         (int)mlirHPVMNodeGetName(leaf).length, mlirHPVMNodeGetName(leaf).data,
         (long)mlirHPVMNodeGetNumInputs(leaf),
         (long)mlirHPVMNodeGetNumOutputs(leaf));
  // CHECK: root is internal: 1
  printf("root is internal: %d\n", mlirOperationIsAHPVMInternal(root));

  // Types and attributes.
  // CHECK: node type: 1 graph type: 1
  printf("node type: %d graph type: %d\n",
         mlirTypeIsAHPVMNodeType(mlirHPVMNodeTypeGet(ctx)),
         mlirTypeIsAHPVMGraphType(mlirHPVMGraphTypeGet(ctx)));
  MlirAttribute budget = mlirHPVMErrorBudgetAttrGet(ctx, 0.25, 0.5);
  // CHECK: budget: 1 0.25 0.5
  printf("budget: %d %g %g\n", mlirAttributeIsAHPVMErrorBudget(budget),
         mlirHPVMErrorBudgetAttrGetL1(budget),
         mlirHPVMErrorBudgetAttrGetL2(budget));
  // CHECK: negative budget is null: 1
  printf("negative budget is null: %d\n",
         mlirAttributeIsNull(mlirHPVMErrorBudgetAttrGet(ctx, -1.0, 0.0)));

  // An edge built and read back (in a scratch internal node, not verified).
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  MlirOperation scratch = mlirHPVMInternalOpCreate(loc, str("scratch"), 0, NULL, 0, NULL);
  MlirBlock scratchBody = mlirHPVMNodeGetBody(scratch);
  MlirValue p = append(scratchBody, mlirHPVMCreateNodeOpCreate(loc, str("p"), 0, NULL), 0);
  MlirValue q = append(scratchBody, mlirHPVMCreateNodeOpCreate(loc, str("q"), 0, NULL), 0);
  MlirOperation edge = mlirHPVMEdgeOpCreate(loc, p, 1, q, 2, MlirHPVMAllToAll, true);
  mlirBlockAppendOwnedOperation(scratchBody, edge);
  // CHECK: edge: 1 -> 2 all_to_all: 1 streaming: 1
  printf("edge: %d -> %d all_to_all: %d streaming: %d\n",
         mlirHPVMEdgeOpGetSourcePort(edge), mlirHPVMEdgeOpGetDestPort(edge),
         mlirHPVMEdgeOpGetReplication(edge) == MlirHPVMAllToAll,
         mlirHPVMEdgeOpIsStreaming(edge));
  // CHECK: hpvm.edge %{{.*}}[1] -> %{{.*}}[2] all_to_all streaming
  mlirOperationPrint(edge, printToStdout, NULL);
  printf("\n");
  mlirOperationDestroy(scratch);
  mlirModuleDestroy(module);

  // A graph whose leaf input 0 is bound twice and input 2 never: the verifier
  // must reject it with a diagnostic (printed to stderr).
  // CHECK: diagnostic: 'hpvm.bind_in' op input 0 of @vadd_leaf is bound twice by hpvm.bind_in; expected exactly one edge or bind_in
  mlirContextAttachDiagnosticHandler(ctx, printDiagnostic, NULL, NULL);
  MlirModule broken = buildModule(ctx, /*broken=*/1);
  // CHECK: broken verified: 0
  printf("broken verified: %d\n",
         mlirOperationVerify(mlirModuleGetOperation(broken)));
  fflush(stdout);
  mlirModuleDestroy(broken);
  mlirContextDestroy(ctx);
  return 0;
}
