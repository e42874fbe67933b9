//===- TensorLibraryCalls.cpp - Tensor leaves as cuDNN / cuBLAS calls -----===//
// Recognition of the leaves that are one library call (TensorLibraryCalls.h)
// and the descriptor global the runtime reads.
#include "TensorLibraryCalls.h"
#include "TensorElements.h"

#include "HPVM/Conversion/RuntimeABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::hpvm;

namespace {

/// Where each tensor the host passes starts in its parameter array: the
/// leaf's tensor inputs, then its constant tensors (in the order of
/// `hpvm.tensor_kernel`, checked against the globals' values), then its
/// output (`*outputParam`). False when the leaf does not look as expected.
bool getParamIndices(LeafOp leaf, DenseMap<Value, int32_t> &indices,
                     int32_t &outputParam) {
  Block &body = leaf.getBody().front();
  int32_t next = 0;
  for (BlockArgument argument : body.getArguments()) {
    if (auto tensor = dyn_cast<RankedTensorType>(argument.getType())) {
      indices[argument] = next;
      next += static_cast<int32_t>(abi::getMemRefParamCount(tensor.getRank()));
    } else {
      next += 1;
    }
  }
  auto globals =
      leaf->getAttrOfType<ArrayAttr>(HPVMDialect::getTensorKernelAttrName());
  if (!globals)
    return false;
  auto module = leaf->getParentOfType<ModuleOp>();
  unsigned table = 0;
  for (auto constant : body.getOps<arith::ConstantOp>()) {
    if (!tensor_kernels::isTableConstant(constant))
      continue;
    if (table >= globals.size())
      return false;
    auto name = dyn_cast<FlatSymbolRefAttr>(globals[table++]);
    auto global = name ? SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
                             module, name.getAttr())
                       : memref::GlobalOp();
    if (!global || global.getInitialValueAttr() != constant.getValue())
      return false;
    indices[constant.getResult()] = next;
    next += static_cast<int32_t>(
        abi::getMemRefParamCount(global.getType().getRank()));
  }
  if (table != globals.size())
    return false;
  outputParam = next;
  return true;
}

bool isF32(Value value) {
  auto tensor = dyn_cast<RankedTensorType>(value.getType());
  return tensor && tensor.getElementType().isF32() && tensor.hasStaticShape();
}

bool hasKnob(Operation *op) {
  return op->hasAttr(HPVMDialect::getKnobAttrName());
}

/// `shape` padded with leading 1s to four sizes; empty when longer.
SmallVector<int64_t> padToFour(ArrayRef<int64_t> shape) {
  if (shape.size() > 4)
    return {};
  SmallVector<int64_t> padded(4 - shape.size(), 1);
  llvm::append_range(padded, shape);
  return padded;
}

/// The chain of the leaf's result: activation, bias add, core op.
struct Chain {
  Operation *core = nullptr;
  Value bias;
  StringRef activation = "identity";
  double clip = 0.0;
  unsigned ops = 0; // the ops of the chain
};

/// Walks back from the leaf's only tensor result; false when the chain is
/// not act?(add?(core)) with each value used once.
bool matchChain(Value result, Chain &chain) {
  Value value = result;
  Operation *def = value.getDefiningOp();
  if (!def || hasKnob(def))
    return false;
  if (isa<TensorReluOp>(def))
    chain.activation = "relu";
  else if (isa<TensorTanhOp>(def))
    chain.activation = "tanh";
  else if (isa<TensorSigmoidOp>(def))
    chain.activation = "sigmoid";
  else if (auto clipped = dyn_cast<TensorClippedReluOp>(def)) {
    chain.activation = "clipped_relu";
    chain.clip = clipped.getMax().convertToDouble();
  }
  if (chain.activation != "identity") {
    ++chain.ops;
    value = def->getOperand(0);
    def = value.getDefiningOp();
    if (!def || !value.hasOneUse() || hasKnob(def))
      return false;
  }
  if (auto add = dyn_cast<TensorAddOp>(def)) {
    ++chain.ops;
    auto isCore = [](Value v) {
      Operation *op = v.getDefiningOp();
      return op && isa<TensorConv2DOp, TensorMulOp>(op);
    };
    Value core = isCore(add.getLhs()) ? add.getLhs() : add.getRhs();
    chain.bias = core == add.getLhs() ? add.getRhs() : add.getLhs();
    if (!isCore(core) || !core.hasOneUse() || core == chain.bias ||
        add.getType() != core.getType())
      return false;
    def = core.getDefiningOp();
    if (hasKnob(def))
      return false;
  }
  if (!isa<TensorConv2DOp, TensorMulOp>(def))
    return false;
  chain.core = def;
  ++chain.ops;
  return true;
}

} // namespace

DictionaryAttr mlir::hpvm::matchTensorLibraryCall(LeafOp leaf) {
  if (!leaf.getBody().hasOneBlock())
    return {};
  Block &body = leaf.getBody().front();
  auto ret = cast<ReturnOp>(body.getTerminator());
  // One f32 tensor output; scalar outputs (HPVM-C's byte counts) only as
  // constants, which the runtime stores after the call.
  Value tensor;
  SmallVector<Attribute> scalars;
  for (Value value : ret.getOperands()) {
    if (isa<TensorType>(value.getType())) {
      if (tensor || !isF32(value))
        return {};
      tensor = value;
      continue;
    }
    Attribute constant;
    if (!matchPattern(value, m_Constant(&constant)) ||
        !isa<IntegerAttr, FloatAttr>(constant))
      return {};
    scalars.push_back(constant);
  }
  Chain chain;
  if (!tensor || !matchChain(tensor, chain))
    return {};
  // Nothing else is computed: the chain and constants only.
  unsigned computed = 0;
  for (Operation &op : body.without_terminator())
    if (!op.hasTrait<::mlir::OpTrait::ConstantLike>() || op.getNumOperands() != 0)
      ++computed;
  if (computed != chain.ops)
    return {};
  DenseMap<Value, int32_t> indices;
  int32_t outputParam = 0;
  if (!getParamIndices(leaf, indices, outputParam))
    return {};
  Value x = chain.core->getOperand(0), w = chain.core->getOperand(1);
  auto paramOf = [&](Value value) {
    auto found = indices.find(value);
    return found == indices.end() || !isF32(value) ? -1 : found->second;
  };
  int32_t xParam = paramOf(x), wParam = paramOf(w);
  int32_t biasParam = chain.bias ? paramOf(chain.bias) : -1;
  if (xParam < 0 || wParam < 0 || (chain.bias && biasParam < 0))
    return {};
  auto resultType = cast<RankedTensorType>(chain.core->getResult(0).getType());
  SmallVector<int64_t> output = padToFour(resultType.getShape());
  SmallVector<int64_t> bias(4, 0);
  if (chain.bias) {
    auto biasType = cast<RankedTensorType>(chain.bias.getType());
    if (biasType.getRank() != resultType.getRank() || output.empty())
      return {};
    bias = padToFour(biasType.getShape());
    for (int d = 0; d < 4; ++d)
      if (bias[d] != 1 && bias[d] != output[d])
        return {};
  }
  MLIRContext *context = leaf.getContext();
  Builder b(context);
  SmallVector<int64_t> sizes, filter(3, 0), padding(2, 0), strides(2, 0);
  int64_t groups = 0;
  StringRef op;
  ArrayRef<int64_t> xShape = cast<RankedTensorType>(x.getType()).getShape();
  ArrayRef<int64_t> wShape = cast<RankedTensorType>(w.getType()).getShape();
  if (auto conv = dyn_cast<TensorConv2DOp>(chain.core)) {
    op = "conv2d";
    sizes.assign(xShape.begin(), xShape.end());
    filter = {wShape[0], wShape[2], wShape[3]};
    for (int d = 0; d < 2; ++d) {
      padding[d] = cast<IntegerAttr>(conv.getPadding()[d]).getInt();
      strides[d] = cast<IntegerAttr>(conv.getStrides()[d]).getInt();
    }
    groups = static_cast<int64_t>(conv.getGroups());
  } else {
    op = "matmul";
    int64_t rank = static_cast<int64_t>(xShape.size()), batch = 1;
    for (int64_t d = 0; d + 2 < rank; ++d)
      batch *= xShape[d];
    sizes = {batch, xShape[rank - 2], wShape[rank - 1], xShape[rank - 1]};
    if (output.empty())
      output = {1, batch, sizes[1], sizes[2]};
  }
  SmallVector<NamedAttribute> fields{
      b.getNamedAttr("op", b.getStringAttr(op)),
      b.getNamedAttr("activation", b.getStringAttr(chain.activation)),
      b.getNamedAttr("clip", b.getF64FloatAttr(chain.clip)),
      b.getNamedAttr("sizes", b.getDenseI64ArrayAttr(sizes)),
      b.getNamedAttr("filter", b.getDenseI64ArrayAttr(filter)),
      b.getNamedAttr("padding", b.getDenseI64ArrayAttr(padding)),
      b.getNamedAttr("strides", b.getDenseI64ArrayAttr(strides)),
      b.getNamedAttr("groups", b.getI64IntegerAttr(groups)),
      b.getNamedAttr("output", b.getDenseI64ArrayAttr(output)),
      b.getNamedAttr("bias", b.getDenseI64ArrayAttr(bias)),
      b.getNamedAttr("params", b.getDenseI32ArrayAttr(
                                   {xParam, wParam, biasParam, outputParam})),
      // After the output: the grid's three values, then the scalars' struct.
      b.getNamedAttr("scalars_param",
                     b.getI32IntegerAttr(
                         scalars.empty()
                             ? -1
                             : outputParam +
                                   static_cast<int32_t>(abi::getMemRefParamCount(
                                       resultType.getRank())) +
                                   3)),
      b.getNamedAttr("scalars", b.getArrayAttr(scalars))};
  return b.getDictionaryAttr(fields);
}

/// hpvm_rt_tensor_library_activation_t of an activation's name.
static int32_t activationCode(StringRef name) {
  return llvm::StringSwitch<int32_t>(name)
      .Case("relu", HPVM_RT_TENSOR_LIBRARY_RELU)
      .Case("clipped_relu", HPVM_RT_TENSOR_LIBRARY_CLIPPED_RELU)
      .Case("tanh", HPVM_RT_TENSOR_LIBRARY_TANH)
      .Case("sigmoid", HPVM_RT_TENSOR_LIBRARY_SIGMOID)
      .Default(HPVM_RT_TENSOR_LIBRARY_IDENTITY);
}

/// The struct of the scalar outputs `scalars` as the host lays it out (an
/// LLVM literal struct: each field at a multiple of its size), as a constant
/// global `name` at `b`, and its size in bytes; null for none.
static std::pair<LLVM::GlobalOp, uint64_t>
createScalars(OpBuilder &b, Location loc, ArrayAttr scalars, StringRef name) {
  if (scalars.empty())
    return {LLVM::GlobalOp(), 0};
  SmallVector<Type> types;
  uint64_t size = 0, align = 1;
  for (Attribute scalar : scalars) {
    Type type = cast<TypedAttr>(scalar).getType();
    types.push_back(type);
    uint64_t bytes = type.getIntOrFloatBitWidth() / 8;
    size = (size + bytes - 1) / bytes * bytes + bytes;
    align = std::max(align, bytes);
  }
  size = (size + align - 1) / align * align;
  auto type = LLVM::LLVMStructType::getLiteral(b.getContext(), types);
  auto global = LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                                       LLVM::Linkage::Internal, name, Attribute());
  OpBuilder::InsertionGuard guard(b);
  b.createBlock(&global.getInitializerRegion());
  Value value = LLVM::UndefOp::create(b, loc, type);
  for (auto [index, scalar] : llvm::enumerate(scalars))
    value = LLVM::InsertValueOp::create(
        b, loc, value,
        LLVM::ConstantOp::create(b, loc, cast<TypedAttr>(scalar).getType(),
                                 cast<TypedAttr>(scalar)),
        static_cast<int64_t>(index));
  LLVM::ReturnOp::create(b, loc, value);
  return {global, size};
}

LLVM::GlobalOp mlir::hpvm::createTensorLibraryCallGlobal(OpBuilder &b,
                                                         Location loc,
                                                         DictionaryAttr call,
                                                         StringRef name,
                                                         SymbolTable &symbols) {
  using abi::TensorLibraryCall;
  MLIRContext *context = b.getContext();
  std::pair<LLVM::GlobalOp, uint64_t> scalarsGlobal = createScalars(
      b, loc, cast<ArrayAttr>(call.get("scalars")), (name + "_scalars").str());
  if (scalarsGlobal.first)
    symbols.insert(scalarsGlobal.first);
  auto type = TensorLibraryCall::get(context);
  auto global = LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                                       LLVM::Linkage::Internal, name,
                                       Attribute());
  OpBuilder::InsertionGuard guard(b);
  b.createBlock(&global.getInitializerRegion());
  Value value = LLVM::UndefOp::create(b, loc, type);
  auto insert = [&](Value field, TensorLibraryCall::Field index) {
    value = abi::insertField<TensorLibraryCall>(b, loc, value, index, field);
  };
  auto i32 = [&](int32_t v) {
    return LLVM::ConstantOp::create(b, loc, b.getI32Type(), v);
  };
  auto i64 = [&](int64_t v) {
    return LLVM::ConstantOp::create(b, loc, b.getI64Type(), v);
  };
  auto array = [&](StringRef field, TensorLibraryCall::Field index) {
    ArrayRef<int64_t> values = cast<DenseI64ArrayAttr>(call.get(field)).asArrayRef();
    for (auto [position, v] : llvm::enumerate(values))
      value = abi::insertField<TensorLibraryCall>(b, loc, value, index, i64(v),
                                                  static_cast<int64_t>(position));
  };
  StringRef op = cast<StringAttr>(call.get("op")).getValue();
  insert(i32(op == "conv2d" ? abi::kTensorLibraryConv2D
                            : abi::kTensorLibraryMatmul),
         TensorLibraryCall::Op);
  insert(i32(activationCode(cast<StringAttr>(call.get("activation")).getValue())),
         TensorLibraryCall::Activation);
  insert(LLVM::ConstantOp::create(b, loc, b.getF64Type(),
                                  cast<FloatAttr>(call.get("clip"))),
         TensorLibraryCall::Clip);
  array("sizes", TensorLibraryCall::Sizes);
  array("filter", TensorLibraryCall::Filter);
  array("padding", TensorLibraryCall::Padding);
  array("strides", TensorLibraryCall::Strides);
  insert(i64(cast<IntegerAttr>(call.get("groups")).getInt()),
         TensorLibraryCall::Groups);
  array("output", TensorLibraryCall::Output);
  array("bias", TensorLibraryCall::Bias);
  ArrayRef<int32_t> params = cast<DenseI32ArrayAttr>(call.get("params")).asArrayRef();
  insert(i32(params[0]), TensorLibraryCall::XParam);
  insert(i32(params[1]), TensorLibraryCall::WParam);
  insert(i32(params[2]), TensorLibraryCall::BiasParam);
  insert(i32(params[3]), TensorLibraryCall::OutputParam);
  insert(i32(cast<IntegerAttr>(call.get("scalars_param")).getInt()),
         TensorLibraryCall::ScalarsParam);
  auto [scalars, bytes] = scalarsGlobal;
  insert(scalars ? Value(LLVM::AddressOfOp::create(b, loc, scalars))
                 : Value(LLVM::ZeroOp::create(b, loc, LLVM::LLVMPointerType::get(context))),
         TensorLibraryCall::Scalars);
  insert(i64(static_cast<int64_t>(bytes)), TensorLibraryCall::ScalarsSize);
  LLVM::ReturnOp::create(b, loc, value);
  return global;
}
