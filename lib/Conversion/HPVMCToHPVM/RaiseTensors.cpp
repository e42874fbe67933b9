//===- RaiseTensors.cpp - ApproxHPVM tensor intrinsics as hpvm.tensor ops --===//
// A leaf that calls __hpvm__tensor_* is a tensor leaf: the `void *`
// parameters that __hpvm__tensor_shape(t, rank, sizes...) declares become
// ranked f32 tensor inputs, each intrinsic becomes the hpvm.tensor op (its
// result type inferred, its shape rules checked by the op's verifier at the
// C line), and the tensors it returns become tensor outputs. Internal nodes
// take the tensor types of the child inputs they bind. On the host, a launch
// of a root with tensor ports calls a function that reads the argument
// struct's data pointers as memrefs and runs the graph on them
// (docs/HPVM-C.md, "Tensors"; docs/Rationale.md).
#include "HPVMCRaiser.h"

#include "HPVM/Conversion/RuntimeABI.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::hpvm;

namespace mlir::hpvm::hpvmc {

/// Ranks __hpvm__tensor_shape accepts.
static constexpr int64_t kMaxTensorRank = 8;

LogicalResult Raiser::readTensorShapes(Node &node) {
  LLVM::LLVMFuncOp function = node.function;
  StringRef name = function.getName();
  if (!function.getBody().hasOneBlock())
    return function.emitError()
           << "tensor leaf '" << name
           << "' has control flow; a leaf that calls __hpvm__tensor_* must be "
              "straight-line code (the tensor graph is static)";
  Block &entry = function.getBody().front();
  unsigned first = node.sret ? 1 : 0;
  SmallVector<LLVM::CallOp> declarations;
  function.walk([&](LLVM::CallOp call) {
    if (classify(call).api == Api::TensorShape)
      declarations.push_back(call);
  });
  for (LLVM::CallOp call : declarations) {
    OperandRange operands = call.getArgOperands();
    Value tensor = operands.empty() ? Value() : operands[0];
    auto arg = dyn_cast_or_null<BlockArgument>(tensor);
    if (!arg || arg.getOwner() != &entry || arg.getArgNumber() < first ||
        !isa<LLVM::LLVMPointerType>(arg.getType()))
      return call.emitError() << "__hpvm__tensor_shape(t, rank, sizes...) expects a "
                                 "pointer parameter of node function '"
                              << name << "' as t, found " << describeValue(tensor);
    unsigned input = arg.getArgNumber() - first;
    std::optional<int64_t> rank =
        operands.size() > 1 ? constantInt(operands[1]) : std::nullopt;
    if (!rank || *rank < 1 || *rank > kMaxTensorRank)
      return call.emitError() << "__hpvm__tensor_shape(t, rank, sizes...) expects a "
                                 "constant rank from 1 to "
                              << kMaxTensorRank << ", found "
                              << describeValue(operands.size() > 1 ? operands[1] : Value());
    if (operands.size() != static_cast<size_t>(*rank) + 2)
      return call.emitError() << "__hpvm__tensor_shape(t, " << *rank << ", sizes...) expects "
                              << *rank << " sizes, found " << operands.size() - 2;
    SmallVector<int64_t> shape;
    for (auto [index, size] : llvm::enumerate(operands.drop_front(2))) {
      std::optional<int64_t> value = constantInt(size);
      if (!value || *value < 1)
        return call.emitError() << "__hpvm__tensor_shape: size " << index << " of input "
                                << input << " of '" << name
                                << "' must be a compile-time constant > 0; expected an "
                                   "integer constant, found "
                                << describeValue(size);
      shape.push_back(*value);
    }
    auto type = RankedTensorType::get(shape, Float32Type::get(context));
    auto [it, inserted] = node.tensorInputs.try_emplace(input, type);
    if (!inserted && it->second != type)
      return call.emitError() << "__hpvm__tensor_shape: input " << input << " of '" << name
                              << "' is declared twice, as " << it->second << " and as "
                              << type;
    node.inputs[input] = type;
  }
  return success();
}

/// ApproxHPVM's fully-connected layer: its tensors are 4-D, and
/// tensor_mul(x, w) of an NxCxHxW activation by a 1x1xKxM weight with
/// K = C*H*W multiplies x flattened to N x K by w as K x M, giving NxMx1x1.
/// Null when the operands are not that (nor a 2-D weight K x M after an
/// activation of rank > 2), or when they already are an equal-rank batched
/// product, which hpvm.tensor.mul computes as it is.
static Value flattenedProduct(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  auto lhsType = dyn_cast<RankedTensorType>(lhs.getType());
  auto rhsType = dyn_cast<RankedTensorType>(rhs.getType());
  if (!lhsType || !rhsType || !lhsType.hasStaticShape() || !rhsType.hasStaticShape() ||
      lhsType.getRank() < 2)
    return Value();
  ArrayRef<int64_t> l = lhsType.getShape(), r = rhsType.getShape();
  bool batched = lhsType.getRank() == rhsType.getRank() &&
                 l.drop_back(2) == r.drop_back(2) && l[l.size() - 1] == r[r.size() - 2];
  bool matrix = rhsType.getRank() == 2 ||
                (rhsType.getRank() == 4 && r[0] == 1 && r[1] == 1);
  if (batched || !matrix || (lhsType.getRank() == 2 && rhsType.getRank() == 2))
    return Value();
  int64_t k = r[r.size() - 2], m = r.back(), n = l[0];
  int64_t rest = 1;
  for (int64_t size : l.drop_front())
    rest *= size;
  if (rest != k)
    return Value();
  Type f32 = lhsType.getElementType();
  SmallVector<ReassociationIndices> rows{{0}, {}};
  for (int64_t d = 1; d < lhsType.getRank(); ++d)
    rows[1].push_back(d);
  Value flat = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({n, k}, f32), lhs, rows);
  Value weights = rhs;
  if (rhsType.getRank() == 4)
    weights = tensor::CollapseShapeOp::create(b, loc, RankedTensorType::get({k, m}, f32),
                                              rhs, ArrayRef<ReassociationIndices>{{0, 1, 2}, {3}});
  Value product = TensorMulOp::create(b, loc, flat, weights, ErrorBudgetAttr()).getResult();
  if (lhsType.getRank() == 2)
    return product;
  SmallVector<int64_t> shape(lhsType.getRank(), 1);
  shape[0] = n;
  shape[1] = m;
  SmallVector<ReassociationIndices> columns{{0}, {}};
  for (int64_t d = 1; d < lhsType.getRank(); ++d)
    columns[1].push_back(d);
  return tensor::ExpandShapeOp::create(b, loc, RankedTensorType::get(shape, f32), product,
                                       columns);
}

/// The number of arguments of tensor intrinsic `intrinsic` (as hpvm.h declares
/// it; "clipped_relu_max" is clipped_relu with a bound), or none when the
/// HPVM-C frontend does not know it.
static std::optional<unsigned> tensorArity(StringRef intrinsic) {
  return llvm::StringSwitch<std::optional<unsigned>>(intrinsic)
      .Cases({"add", "mul", "clipped_relu_max"}, 2)
      .Case("clipped_relu", 1)
      .Cases({"relu", "tanh", "sigmoid", "softmax"}, 1)
      .Case("convolution", 6)
      .Case("group_convolution", 8)
      .Case("batchnorm", 6)
      .Cases({"pool_max", "pool_mean", "pool_min"}, 7)
      .Default(std::nullopt);
}

/// The tensor arguments of `call` to `intrinsic` (its leading ones), each a
/// tensor already: an input declared by __hpvm__tensor_shape or the result of
/// a __hpvm__tensor_* call; else an error that says why (`entry` is the entry
/// block of the leaf named `name`).
static FailureOr<SmallVector<Value>> tensorArguments(LLVM::CallOp call, StringRef callee,
                                                     StringRef intrinsic, StringRef name,
                                                     Block &entry) {
  OperandRange operands = call.getArgOperands();
  auto tensorArg = [&](unsigned index) -> FailureOr<Value> {
    Value value = operands[index];
    if (isa<RankedTensorType>(value.getType()))
      return value;
    if (auto arg = dyn_cast<BlockArgument>(value); arg && arg.getOwner() == &entry)
      return call.emitError()
             << callee << ": argument " << index + 1 << " is input " << arg.getArgNumber()
             << " of '" << name
             << "', whose shape is not known; expected __hpvm__tensor_shape(<that "
                "parameter>, rank, sizes...) in '"
             << name
             << "', or a tensor flowing into it (the tensor output of another node, or "
                "a tensor object the host creates with constant sizes: "
                "readTrainedWeights, readInputBatch, create4DTensor), found neither";
    return call.emitError() << callee << ": argument " << index + 1
                            << " is not a tensor; expected an input declared by "
                               "__hpvm__tensor_shape or the result of a "
                               "__hpvm__tensor_* call, found "
                            << describeValue(value);
  };
  SmallVector<Value> tensors;
  unsigned numTensors = intrinsic == "batchnorm"     ? 5
                        : intrinsic == "add" || intrinsic == "mul" ||
                                  intrinsic.contains("convolution")
                            ? 2
                            : 1;
  for (unsigned index = 0; index < numTensors; ++index) {
    FailureOr<Value> tensor = tensorArg(index);
    if (failed(tensor))
      return failure();
    tensors.push_back(*tensor);
  }
  return tensors;
}

/// The integer arguments of `call` from argument `first` on, one per entry of
/// `meanings` (what each is, for the diagnostic) as far as the call has them,
/// each a compile-time constant; else an error.
static FailureOr<SmallVector<int64_t>> constantArguments(LLVM::CallOp call, StringRef callee,
                                                         unsigned first,
                                                         ArrayRef<StringRef> meanings) {
  OperandRange operands = call.getArgOperands();
  SmallVector<int64_t> ints;
  for (auto [offset, what] : llvm::enumerate(meanings)) {
    unsigned index = first + offset;
    if (index >= operands.size())
      break;
    std::optional<int64_t> value = constantInt(operands[index]);
    if (!value)
      return call.emitError() << callee << " expects argument " << index + 1 << " ("
                              << what << ") to be a compile-time constant, found "
                              << describeValue(operands[index]);
    ints.push_back(*value);
  }
  return ints;
}

/// `value` as a compile-time floating-point constant, or null.
static FloatAttr floatConstant(Value value) {
  auto constant = value.getDefiningOp<LLVM::ConstantOp>();
  return constant ? dyn_cast<FloatAttr>(constant.getValue()) : FloatAttr();
}

/// hpvm.tensor.conv2d of __hpvm__tensor_convolution or
/// __hpvm__tensor_group_convolution: paddings, strides, conv_mode and groups
/// from its constant arguments.
static FailureOr<Operation *> buildConvolution(OpBuilder &b, LLVM::CallOp call,
                                               StringRef callee, StringRef intrinsic,
                                               ArrayRef<Value> tensors) {
  FailureOr<SmallVector<int64_t>> ints =
      constantArguments(call, callee, 2,
                        {"vertical padding", "horizontal padding", "vertical stride",
                         "horizontal stride", "conv_mode", "groups"});
  if (failed(ints))
    return failure();
  int64_t groups = 1;
  if (intrinsic == "group_convolution") {
    // ApproxHPVM's conv_mode 1 is cross-correlation (what DNN frameworks
    // call convolution, and what hpvm.tensor.conv2d computes).
    if ((*ints)[4] != 1)
      return call.emitError() << callee << ": conv_mode " << (*ints)[4]
                              << " is not supported; expected 1 (cross-correlation, "
                                 "what hpvm.tensor.conv2d computes)";
    groups = (*ints)[5];
    if (groups < 1)
      return call.emitError() << callee << " expects groups > 0, found " << groups;
  }
  return TensorConv2DOp::create(b, call.getLoc(), tensors[0], tensors[1],
                                b.getI64ArrayAttr({(*ints)[0], (*ints)[1]}),
                                b.getI64ArrayAttr({(*ints)[2], (*ints)[3]}),
                                static_cast<uint64_t>(groups), IntegerAttr(),
                                ErrorBudgetAttr())
      .getOperation();
}

/// hpvm.tensor.pool of __hpvm__tensor_pool_max, pool_mean or pool_min: the
/// window, paddings and strides from its constant arguments.
static FailureOr<Operation *> buildPool(OpBuilder &b, LLVM::CallOp call, StringRef callee,
                                        StringRef intrinsic, ArrayRef<Value> tensors) {
  FailureOr<SmallVector<int64_t>> ints =
      constantArguments(call, callee, 1,
                        {"window height", "window width", "vertical padding",
                         "horizontal padding", "vertical stride", "horizontal stride"});
  if (failed(ints))
    return failure();
  return TensorPoolOp::create(
             b, call.getLoc(),
             intrinsic == "pool_max"   ? PoolKind::max
             : intrinsic == "pool_min" ? PoolKind::min
                                       : PoolKind::mean,
             tensors[0], b.getI64ArrayAttr({(*ints)[0], (*ints)[1]}),
             b.getI64ArrayAttr({(*ints)[4], (*ints)[5]}),
             b.getI64ArrayAttr({(*ints)[2], (*ints)[3]}),
             /*padding_end=*/ArrayAttr(), ErrorBudgetAttr())
      .getOperation();
}

/// The hpvm.tensor op of `call` to `intrinsic` (one the frontend knows, with
/// its arity checked) on `tensors`, its tensor arguments; else an error about
/// an argument that must be a constant.
static FailureOr<Operation *> buildTensorOp(OpBuilder &b, LLVM::CallOp call,
                                            StringRef callee, StringRef intrinsic,
                                            ArrayRef<Value> tensors) {
  Location loc = call.getLoc();
  OperandRange operands = call.getArgOperands();
  if (intrinsic == "add")
    return TensorAddOp::create(b, loc, tensors[0], tensors[1], ErrorBudgetAttr())
        .getOperation();
  if (intrinsic == "mul")
    return TensorMulOp::create(b, loc, tensors[0], tensors[1], ErrorBudgetAttr())
        .getOperation();
  if (intrinsic == "relu")
    return TensorReluOp::create(b, loc, tensors[0], ErrorBudgetAttr()).getOperation();
  if (intrinsic == "clipped_relu") {
    double bound = 6.0;
    if (operands.size() == 2) {
      FloatAttr value = floatConstant(operands[1]);
      if (!value)
        return call.emitError() << callee
                                << " expects argument 2 (the clipping bound) to be a "
                                   "compile-time floating-point constant, found "
                                << describeValue(operands[1]);
      bound = value.getValueAsDouble();
    }
    return TensorClippedReluOp::create(b, loc, tensors[0], b.getF64FloatAttr(bound),
                                       ErrorBudgetAttr())
        .getOperation();
  }
  if (intrinsic == "tanh")
    return TensorTanhOp::create(b, loc, tensors[0], ErrorBudgetAttr()).getOperation();
  if (intrinsic == "sigmoid")
    return TensorSigmoidOp::create(b, loc, tensors[0], ErrorBudgetAttr()).getOperation();
  if (intrinsic == "softmax")
    // ApproxHPVM's softmax normalizes each row of [N, classes]: axis 1.
    return TensorSoftmaxOp::create(b, loc, tensors[0], /*axis=*/1, ErrorBudgetAttr())
        .getOperation();
  if (intrinsic.contains("convolution"))
    return buildConvolution(b, call, callee, intrinsic, tensors);
  if (intrinsic == "batchnorm") {
    Value epsilon = operands[5];
    FloatAttr value = floatConstant(epsilon);
    if (!value)
      return call.emitError() << callee
                              << " expects argument 6 (epsilon) to be a compile-time "
                                 "floating-point constant, found "
                              << describeValue(epsilon);
    return TensorBatchNormOp::create(b, loc, tensors[0], tensors[1], tensors[2], tensors[3],
                                     tensors[4], b.getF64FloatAttr(value.getValueAsDouble()),
                                     ErrorBudgetAttr())
        .getOperation();
  }
  return buildPool(b, call, callee, intrinsic, tensors); // pool_max, pool_mean, pool_min
}

/// Verifies tensor op `op` as built. The builders infer an unranked result
/// when the operands do not fit; the op's own verifier then says why, at the
/// C line (before the generic check of the result type would).
static LogicalResult verifyTensorOp(Operation *op) {
  if (!isa<RankedTensorType>(op->getResult(0).getType())) {
    LogicalResult verified =
        llvm::TypeSwitch<Operation *, LogicalResult>(op)
            .Case<TensorAddOp, TensorMulOp, TensorConv2DOp, TensorPoolOp,
                  TensorBatchNormOp>([](auto typed) { return typed.verify(); })
            .Default([](Operation *) { return success(); });
    if (failed(verified))
      return failure();
  }
  return mlir::verify(op, /*verifyRecursively=*/false);
}

FailureOr<Value> Raiser::raiseTensorCall(Node &node, LLVM::CallOp call, Block &entry) {
  StringRef callee = spelling(call);
  StringRef intrinsic = callee;
  intrinsic.consume_front("__hpvm__tensor_");
  StringRef name = node.function.getName();
  OperandRange operands = call.getArgOperands();
  // __hpvm__tensor_clipped_relu(t) clips at 6 (ReLU6); (t, max) at max.
  if (intrinsic == "clipped_relu" && operands.size() == 2)
    intrinsic = "clipped_relu_max";
  std::optional<unsigned> arity = tensorArity(intrinsic);
  if (!arity)
    return call.emitError() << callee
                            << " is not a tensor intrinsic the HPVM-C frontend knows; "
                               "expected __hpvm__tensor_ add, mul, relu, clipped_relu, "
                               "tanh, sigmoid, softmax, convolution, group_convolution, "
                               "batchnorm, pool_max, pool_mean or pool_min";
  if (operands.size() != *arity)
    return call.emitError() << callee << " expects " << *arity
                            << " arguments (as hpvm.h declares it), found "
                            << operands.size();
  if (intrinsic.starts_with("clipped_relu"))
    intrinsic = "clipped_relu";
  FailureOr<SmallVector<Value>> tensors =
      tensorArguments(call, callee, intrinsic, name, entry);
  if (failed(tensors))
    return failure();
  OpBuilder b(call);
  if (intrinsic == "mul")
    if (Value product = flattenedProduct(b, call.getLoc(), (*tensors)[0], (*tensors)[1]))
      return product;
  FailureOr<Operation *> op = buildTensorOp(b, call, callee, intrinsic, *tensors);
  if (failed(op) || failed(verifyTensorOp(*op)))
    return failure();
  return (*op)->getResult(0);
}

LogicalResult Raiser::checkTensorUses(Node &node, Operation *leaf) {
  WalkResult result = leaf->walk([&](Operation *op) {
    if (isa<TensorAddOp, TensorMulOp, TensorReluOp, TensorClippedReluOp, TensorTanhOp,
            TensorSigmoidOp, TensorSoftmaxOp, TensorConv2DOp, TensorBatchNormOp, TensorPoolOp,
            tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op))
      return WalkResult::advance();
    if (auto call = dyn_cast<LLVM::CallOp>(op); call && classify(call).api == Api::Return)
      return WalkResult::advance();
    if (!llvm::any_of(op->getOperandTypes(), llvm::IsaPred<TensorType>))
      return WalkResult::advance();
    emitError(sourceLoc(op)) << "tensor leaf '" << getNodeDisplayName(node.function.getName())
                             << "' uses a tensor (an input declared by "
                                "__hpvm__tensor_shape or the result of a "
                                "__hpvm__tensor_* call) in '"
                             << op->getName()
                             << "'; tensors may only be passed to __hpvm__tensor_* "
                                "calls and __hpvm__return";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

/// A memref of `type` over the row-major data at `pointer`: the LLVM memref
/// descriptor, cast to the memref (the casts cancel when memrefs are lowered).
static Value memrefOver(OpBuilder &b, Location loc, Value pointer, MemRefType type) {
  MLIRContext *context = b.getContext();
  Type i64 = b.getI64Type();
  Type ptr = LLVM::LLVMPointerType::get(context);
  int64_t rank = type.getRank();
  auto array = LLVM::LLVMArrayType::get(i64, rank);
  auto descriptorType = LLVM::LLVMStructType::getLiteral(context, {ptr, ptr, i64, array, array});
  auto constant = [&](int64_t value) {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(value)).getResult();
  };
  using abi::MemRefDescriptorField;
  Value descriptor = LLVM::PoisonOp::create(b, loc, descriptorType);
  auto insert = [&](Value value, MemRefDescriptorField::Field field,
                    std::optional<int64_t> d = std::nullopt) {
    descriptor = abi::insertMemRefField(b, loc, descriptor, field, value, d);
  };
  insert(pointer, MemRefDescriptorField::Allocated);
  insert(pointer, MemRefDescriptorField::Aligned);
  insert(constant(0), MemRefDescriptorField::Offset);
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    insert(constant(type.getDimSize(d)), MemRefDescriptorField::Sizes, d);
    insert(constant(stride), MemRefDescriptorField::Strides, d);
    stride *= type.getDimSize(d);
  }
  return UnrealizedConversionCastOp::create(b, loc, TypeRange{type}, ValueRange{descriptor})
      .getResult(0);
}

static MemRefType bufferOf(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}

/// The graph of `root` on memrefs, as a host function in the hpvm dialect
/// writes it: inputs read through restrict to_tensor, tensor outputs
/// materialized in the buffers the caller passes, other outputs returned.
static func::FuncOp createTensorRun(OpBuilder &mb, Location loc, Node &root, StringRef runName) {
  MLIRContext *context = mb.getContext();
  SmallVector<Type> runInputs, runResults;
  for (Type type : root.inputs)
    runInputs.push_back(isa<TensorType>(type) ? Type(bufferOf(type)) : type);
  for (Type type : root.outputs) {
    if (isa<TensorType>(type))
      runInputs.push_back(bufferOf(type));
    else
      runResults.push_back(type);
  }
  auto run = func::FuncOp::create(mb, loc, runName, mb.getFunctionType(runInputs, runResults));
  run.setPrivate();
  Block *body = run.addEntryBlock();
  OpBuilder rb = OpBuilder::atBlockEnd(body);
  SmallVector<Value> args;
  for (auto [index, type] : llvm::enumerate(root.inputs)) {
    Value arg = body->getArgument(index);
    if (isa<TensorType>(type))
      arg = bufferization::ToTensorOp::create(rb, loc, type, arg, /*restrict=*/true);
    args.push_back(arg);
  }
  auto graph = LaunchOp::create(rb, loc, mlir::hpvm::GraphType::get(context),
                                FlatSymbolRefAttr::get(root.function.getSymNameAttr()),
                                args, UnitAttr(), UnitAttr());
  auto wait = WaitOp::create(rb, loc, TypeRange(root.outputs), graph.getGraph());
  SmallVector<Value> results;
  unsigned nextBuffer = root.inputs.size();
  for (Value result : wait.getResults()) {
    if (!isa<TensorType>(result.getType())) {
      results.push_back(result);
      continue;
    }
    auto materialize = bufferization::MaterializeInDestinationOp::create(
        rb, loc, result, body->getArgument(nextBuffer++));
    materialize.setRestrict(true);
    materialize.setWritable(true);
  }
  func::ReturnOp::create(rb, loc, results);
  return run;
}

LogicalResult Raiser::launchTensorGraph(LLVM::CallOp launch, Node &root) {
  StringRef rootName = root.function.getName();
  std::string runName = ("__hpvm_run_" + rootName).str();
  std::string wrapperName = ("__hpvm_launch_" + rootName).str();
  Location loc = plain(launch.getLoc());
  auto wrapper = module.lookupSymbol<LLVM::LLVMFuncOp>(wrapperName);
  unsigned shapeGlobals = 0;
  if (!wrapper) {
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    func::FuncOp run = createTensorRun(mb, loc, root, runName);

    // The wrapper the C host calls: pointers of the argument struct as
    // memrefs, a fresh malloc'd buffer per tensor output (the program owns
    // it), the other outputs stored as __hpvm__wait stores them.
    wrapper = LLVM::LLVMFuncOp::create(
        mb, loc, wrapperName,
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context), {pointerType}));
    wrapper.setLinkage(LLVM::Linkage::Internal);
    Block *entry = wrapper.addEntryBlock(mb);
    OpBuilder wb = OpBuilder::atBlockEnd(entry);
    Value structPointer = entry->getArgument(0);
    auto field = [&](uint64_t offset) {
      return LLVM::GEPOp::create(wb, loc, pointerType, wb.getI8Type(), structPointer,
                                 ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(offset)})
          .getResult();
    };
    Type i32 = wb.getI32Type(), i64 = wb.getI64Type();
    // The sizes of a tensor type as a constant global array of i64.
    auto shapeOf = [&](RankedTensorType type) -> Value {
      std::string name = (wrapperName + "_shape_" + Twine(shapeGlobals++)).str();
      auto arrayType = LLVM::LLVMArrayType::get(i64, type.getRank());
      OpBuilder gb = OpBuilder::atBlockBegin(module.getBody());
      LLVM::GlobalOp::create(gb, loc, arrayType, /*isConstant=*/true,
                             LLVM::Linkage::Private, name,
                             gb.getI64TensorAttr(type.getShape()));
      return LLVM::AddressOfOp::create(wb, loc, pointerType, name);
    };
    auto constant = [&](Type type, int64_t value) -> Value {
      return LLVM::ConstantOp::create(wb, loc, type, wb.getIntegerAttr(type, value));
    };
    // Each tensor input is a tensor object of the runtime (checked against
    // the shape compiled for) or a plain data pointer; either way its data.
    FailureOr<LLVM::LLVMFuncOp> tensorInput =
        abi::lookupOrCreate(wb, module, abi::RuntimeFn::TensorInput);
    if (failed(tensorInput))
      return failure();
    SmallVector<Value> operands;
    uint64_t offset = 0;
    // Whether this launch got a tensor object (not a plain data pointer) for
    // any tensor input: hpvm_rt_tensor_input returns an object's data, which
    // is never the object itself. Decided at run time, so that a launch in a
    // helper function, whose argument struct the compiler cannot follow,
    // returns what the same launch in main returns.
    Value objects = constant(wb.getI1Type(), 0);
    for (auto [index, type] : llvm::enumerate(root.inputs)) {
      Value value = LLVM::LoadOp::create(wb, loc, storageType(type), field(offset),
                                         /*alignment=*/1);
      if (auto tensor = dyn_cast<RankedTensorType>(type)) {
        Value data = LLVM::CallOp::create(
                         wb, loc, *tensorInput,
                         ValueRange{value, constant(i32, tensor.getRank()), shapeOf(tensor),
                                    constant(i32, index)})
                         .getResult();
        Value object = LLVM::ICmpOp::create(wb, loc, LLVM::ICmpPredicate::ne, data, value);
        objects = LLVM::OrOp::create(wb, loc, objects, object);
        value = memrefOver(wb, loc, data, bufferOf(type));
      }
      operands.push_back(value);
      offset += byteSize(layout, type);
    }
    Value objectsFlag = LLVM::ZExtOp::create(wb, loc, i32, objects);
    // A launch given tensor objects returns tensor objects (freed by
    // freeBatchMemory when made while memory is tracked, as ApproxHPVM's);
    // otherwise buffers from the C library's malloc (the program frees them):
    // hpvm_rt_tensor_output makes either. Outputs of other element types than
    // f32 (which tensor objects cannot hold) are malloc'd here (the program's
    // own declaration of malloc when it has one).
    FailureOr<LLVM::LLVMFuncOp> tensorOutput =
        abi::lookupOrCreate(wb, module, abi::RuntimeFn::TensorOutput);
    if (failed(tensorOutput))
      return failure();
    uint64_t base = offset;
    for (auto [index, type] : llvm::enumerate(root.outputs)) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor)
        continue;
      MemRefType buffer = bufferOf(type);
      Value stored, memory;
      if (buffer.getElementType().isF32()) {
        Value slot = LLVM::AllocaOp::create(wb, loc, pointerType, pointerType,
                                            constant(i64, 1));
        stored = LLVM::CallOp::create(wb, loc, *tensorOutput,
                                      ValueRange{constant(i32, tensor.getRank()),
                                                 shapeOf(tensor), slot, objectsFlag})
                     .getResult();
        memory = LLVM::LoadOp::create(wb, loc, pointerType, slot);
      } else {
        FailureOr<LLVM::LLVMFuncOp> allocate =
            abi::lookupOrCreate(wb, module, abi::RuntimeFn::Malloc);
        if (failed(allocate))
          return failure();
        int64_t bytes = buffer.getNumElements() *
                        (buffer.getElementType().getIntOrFloatBitWidth() / 8);
        stored = memory =
            LLVM::CallOp::create(wb, loc, *allocate, ValueRange{constant(i64, bytes)})
                .getResult();
      }
      LLVM::StoreOp::create(wb, loc, stored, field(base + root.outputOffsets[index]),
                            /*alignment=*/1);
      operands.push_back(memrefOver(wb, loc, memory, buffer));
    }
    auto call = func::CallOp::create(wb, loc, run, operands);
    unsigned next = 0;
    for (auto [index, type] : llvm::enumerate(root.outputs))
      if (!isa<TensorType>(type))
        LLVM::StoreOp::create(wb, loc, call.getResult(next++),
                              field(base + root.outputOffsets[index]), /*alignment=*/1);
    LLVM::ReturnOp::create(wb, loc, ValueRange{});
  }
  OpBuilder b(launch);
  LLVM::CallOp::create(b, loc, wrapper, ValueRange{launch.getArgOperands()[2]});
  return success();
}

} // namespace mlir::hpvm::hpvmc
