//===- HPVMCRaiser.h - Shared parts of the hpvm-raise-c pass ------*- C++ -*-===//
// The HPVM-C API as the raising sees it (which call is which), C types from
// the debug information, and the Raiser that turns node functions into hpvm
// node definitions and host calls into host ops. RaiseHPVMC.cpp holds the pass
// and the node finding (hints, attributes, outputs); RaiseLeaves.cpp the
// leaves; EvaluateGraph.cpp the compile-time evaluation of internal nodes;
// RaiseHost.cpp the host code; RaiseTensors.cpp the tensor intrinsics and
// the host side of tensor graphs; HPVMCApi.cpp the helpers declared here.
#ifndef LIB_CONVERSION_HPVMCTOHPVM_HPVMCRAISER_H
#define LIB_CONVERSION_HPVMCTOHPVM_HPVMCRAISER_H

#include "HPVM/Conversion/Passes.h"
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/BinaryFormat/Dwarf.h"

namespace mlir::hpvm::hpvmc {

//===----------------------------------------------------------------------===//
// The HPVM-C API
//===----------------------------------------------------------------------===//

enum class Api {
  None,
  // Every node. NodeId is ApproxHPVM's tuning id of a node: nothing to
  // compile.
  Hint, Attributes, Return, NodeId,
  // Internal nodes.
  CreateNode, BindIn, BindOut, Edge,
  // Leaves.
  GetNode, GetParentNode, InstanceId, NumInstances, Barrier, Malloc,
  IsNonZeroLoop, Atomic, Math, Tensor, TensorShape,
  // Host.
  Init, Cleanup, Launch, Wait, Push, Pop, Track, Untrack, Request,
};

struct ApiCall {
  Api api = Api::None;
  Dim dim = Dim::x;
  StringRef atomic; // cmpxchg, add, sub, xchg, inc, dec, min, max, umin, umax, and, or, xor
  StringRef math;   // floor, rsqrt, sqrt, sin, cos
};

/// Which HPVM-C function a name (or the callee of a call) is.
ApiCall classify(StringRef name);
ApiCall classify(LLVM::CallOp call);
bool isGraphCall(Api api);
bool isHostCall(Api api);
/// The C spelling of an API call for diagnostics.
StringRef spelling(LLVM::CallOp call);
/// __hpvm__node_id(n) names a node for ApproxHPVM's tuner and compiles to
/// nothing; its `void *` result must then be unused.
LogicalResult checkNodeIdUnused(LLVM::CallOp call);

//===----------------------------------------------------------------------===//
// C types from the debug information, locations
//===----------------------------------------------------------------------===//

/// Strips typedefs and qualifiers.
LLVM::DITypeAttr stripTypedefs(LLVM::DITypeAttr type);
/// The MLIR type of a scalar C type, or null.
Type scalarType(MLIRContext *context, LLVM::DITypeAttr type);

/// One field of a C struct: its type and byte offset.
struct Field {
  Type type;
  uint64_t offset;
};

/// The fields of the C struct a function returns, from its debug information.
/// Empty optional when there is none or a field is not a scalar.
std::optional<SmallVector<Field>> declaredReturnFields(LLVM::LLVMFuncOp function);
/// The source position of a location, without clang's debug metadata.
Location plain(Location loc);
/// Where a diagnostic about `op` points (its own line, a user's, its function's).
Location sourceLoc(Operation *op);
/// Where a node function is defined (its line, else its first line of code).
Location definitionLoc(LLVM::LLVMFuncOp function);

/// The bytes a value of `type` takes in C (a tensor is a `void *` handle).
uint64_t byteSize(const DataLayout &layout, Type type);
/// The C type that holds a value of `type`: a tensor is a `void *` handle.
Type storageType(Type type);
std::optional<int64_t> constantInt(Value value);
/// What a value is, for diagnostics that expect a constant: "the constant 3",
/// "parameter 2 of the function (known only at run time)", "a value computed
/// at run time ('llvm.load')".
std::string describeValue(Value value);

//===----------------------------------------------------------------------===//
// The raiser
//===----------------------------------------------------------------------===//

/// A node function and what the raising learned of it.
struct Node {
  LLVM::LLVMFuncOp function;
  bool internal = false;
  enum { Unvisited, Visiting, Done } state = Unvisited;
  NodeOpInterface definition;
  /// Inputs: the C parameters (without an sret pointer).
  SmallVector<Type> inputs;
  bool sret = false;
  SmallVector<Type> outputs;
  /// Byte offsets of the outputs in the C return struct (the launch's output
  /// field), packed when the C layout is unknown.
  SmallVector<uint64_t> outputOffsets;
  uint64_t outputSize = 0;
  /// A leaf that calls __hpvm__tensor_*: its inputs declared by
  /// __hpvm__tensor_shape (input index -> type).
  bool tensorLeaf = false;
  DenseMap<unsigned, RankedTensorType> tensorInputs;
  /// The tensor types that flow into `void *` inputs: from the parent's
  /// bindings and edges, or for a root from the tensor objects its launches
  /// pass (input index -> type). A leaf's declaration, when it has one, wins
  /// (and the edge verifier compares the two).
  DenseMap<unsigned, RankedTensorType> incoming;
  bool hasTensorPorts() const {
    return llvm::any_of(inputs, llvm::IsaPred<TensorType>) ||
           llvm::any_of(outputs, llvm::IsaPred<TensorType>);
  }
};

class InternalNodeRaiser;
class LeafRaiser;
class HostRaiser;

/// Raises one imported module: node functions to hpvm.leaf / hpvm.internal
/// (parents first, so that tensor shapes flow down: an internal node raises
/// its children once its graph is evaluated, producers before consumers),
/// then the host functions' HPVM-C calls to host ops.
class Raiser {
public:
  explicit Raiser(ModuleOp module)
      : module(module), context(module.getContext()), layout(module),
        pointerType(LLVM::LLVMPointerType::get(context)) {}

  LogicalResult run();

private:
  friend class InternalNodeRaiser; // EvaluateGraph.cpp
  friend class LeafRaiser;         // RaiseLeaves.cpp
  friend class HostRaiser;         // RaiseHost.cpp
  LogicalResult collectNodes();
  /// The shapes of the tensor objects launches pass to their roots
  /// (InferLaunchShapes.cpp): each root input whose argument-struct field
  /// only ever receives tensors that the ApproxHPVM tensor API creates with
  /// constant sizes (readTrainedWeights, readInputBatch, create4DTensor)
  /// flows in as that tensor type.
  LogicalResult inferLaunchShapes();
  LogicalResult raiseNode(StringAttr name, Location usedAt);
  LogicalResult raiseLeaf(Node &node);
  /// Tensor leaves (RaiseTensors.cpp): the shapes __hpvm__tensor_shape
  /// declares for the inputs, and one __hpvm__tensor_* call as an op.
  LogicalResult readTensorShapes(Node &node);
  FailureOr<Value> raiseTensorCall(Node &node, LLVM::CallOp call, Block &entry);
  LogicalResult checkTensorUses(Node &node, Operation *leaf);
  /// The host side of a launch of a root with tensor inputs or outputs: a
  /// call of a function that binds the argument struct's pointers to memrefs
  /// and runs the graph (RaiseTensors.cpp).
  LogicalResult launchTensorGraph(LLVM::CallOp launch, Node &root);
  LogicalResult raiseInternal(Node &node);
  LogicalResult raiseHost(LLVM::LLVMFuncOp function);
  /// Launches of a root chosen at run time (`c ? f : g`, a select of node
  /// functions) become a branch to a launch of each (RaiseHost.cpp).
  void splitSelectedLaunches();
  LogicalResult applyHint(Node &node, LLVM::CallOp call, Operation *definition);
  LogicalResult applyAttributes(Node &node, LLVM::CallOp call,
                                FunctionOpInterface definition, Block &entry,
                                unsigned firstInput);
  FailureOr<SmallVector<Type>> outputTypesFromDeclaration(Node &node, unsigned count);
  void setOutputLayout(Node &node);
  FailureOr<Node *> nodeOfFunctionOperand(LLVM::CallOp call, unsigned operand);
  SmallVector<Value> loadInputs(OpBuilder &b, Location loc, Node &root, Value args);
  LogicalResult checkArgumentStruct(LLVM::CallOp call, Node &root, Value args,
                                    bool withOutputs);

  ModuleOp module;
  MLIRContext *context;
  DataLayout layout;
  Type pointerType;
  llvm::MapVector<StringAttr, Node> nodes;
  /// The C type of the object a pointer value points to, from the debug
  /// information (a `RootIn *args` variable, a `RootIn args` local).
  DenseMap<Value, LLVM::DITypeAttr> pointees;
};

} // namespace mlir::hpvm::hpvmc

#endif // LIB_CONVERSION_HPVMCTOHPVM_HPVMCRAISER_H
