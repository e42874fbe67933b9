//===- HPVMTensorOps.cpp - Shape inference and verification of tensor ops -===//
// Result types of hpvm.tensor.* ops (NCHW images, row-major matrices) and their rules.
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::hpvm;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// A type as MLIR diagnostics print it: 'tensor<2x3xf32>'.
static std::string q(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "'" << type << "'";
  return text;
}

/// Reports a shape error at the op's location (when known) and fails.
/// Inference also runs from builders before the op exists, hence no emitOpError.
static LogicalResult shapeError(std::optional<Location> location,
                                StringRef opName, const Twine &message) {
  return emitOptionalError(location, "'", opName, "' op ", message);
}

/// A ranked float tensor operand, or null after reporting what was found.
static RankedTensorType expectTensor(std::optional<Location> location,
                                     StringRef opName, Value value,
                                     StringRef role, int64_t rank = -1) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type) {
    (void)shapeError(location, opName,
                     "expects the " + role.str() +
                         " to be a ranked tensor, found " + q(value.getType()));
    return {};
  }
  if (rank >= 0 && type.getRank() != rank) {
    (void)shapeError(location, opName,
                     llvm::formatv("expects the {0} to have rank {1}, found {2}",
                                   role, rank, q(type))
                         .str());
    return {};
  }
  return type;
}

/// "26" or "?" for one dimension.
static std::string dimText(int64_t size) {
  return ShapedType::isDynamic(size) ? "?" : std::to_string(size);
}

/// Reads a two-element integer array attribute (padding, strides, window).
static bool readPair(ArrayAttr attr, int64_t (&out)[2]) {
  if (!attr || attr.size() != 2)
    return false;
  for (unsigned i = 0; i < 2; ++i) {
    auto value = dyn_cast<IntegerAttr>(attr[i]);
    if (!value)
      return false;
    out[i] = value.getInt();
  }
  return true;
}

/// Output extent of a sliding window over `size` padded by `before` and
/// `after` (dynamic stays dynamic).
static int64_t windowOutput(int64_t size, int64_t window, int64_t before,
                            int64_t after, int64_t stride) {
  if (ShapedType::isDynamic(size) || ShapedType::isDynamic(window))
    return ShapedType::kDynamic;
  return (size + before + after - window) / stride + 1;
}

/// Checks padding/strides/window of a 2-D sliding window op and computes the
/// spatial output sizes from input sizes `in` and window sizes `window`.
/// `endAttr`, where given, pads after the image (a pool's `padding_end`);
/// otherwise `paddingAttr` pads both sides.
static LogicalResult inferWindow(std::optional<Location> location,
                                 StringRef opName, ArrayAttr paddingAttr,
                                 ArrayAttr stridesAttr, const int64_t (&in)[2],
                                 const int64_t (&window)[2],
                                 int64_t (&out)[2],
                                 ArrayAttr endAttr = nullptr) {
  int64_t padding[2], strides[2], end[2];
  if (!readPair(paddingAttr, padding) || !readPair(stridesAttr, strides))
    return shapeError(location, opName,
                      "expects 'padding' and 'strides' to have 2 integers "
                      "(height, width)");
  if (!endAttr)
    std::copy(padding, padding + 2, end);
  else if (!readPair(endAttr, end))
    return shapeError(location, opName,
                      "expects 'padding_end' to have 2 integers (height, "
                      "width)");
  for (unsigned i = 0; i < 2; ++i) {
    if (strides[i] <= 0)
      return shapeError(location, opName,
                        llvm::formatv("expects strides > 0, found [{0}, {1}]",
                                      strides[0], strides[1]));
    if (padding[i] < 0)
      return shapeError(location, opName,
                        llvm::formatv("expects padding >= 0, found [{0}, {1}]",
                                      padding[0], padding[1]));
    if (end[i] < 0)
      return shapeError(location, opName,
                        llvm::formatv("expects padding_end >= 0, found [{0}, "
                                      "{1}]",
                                      end[0], end[1]));
    if (!ShapedType::isDynamic(in[i]) && !ShapedType::isDynamic(window[i]) &&
        in[i] + padding[i] + end[i] < window[i])
      return shapeError(
          location, opName,
          llvm::formatv("window {0}x{1} is larger than the padded input "
                        "{2}x{3}",
                        dimText(window[0]), dimText(window[1]),
                        dimText(in[0] + padding[0] + end[0]),
                        dimText(in[1] + padding[1] + end[1])));
    out[i] = windowOutput(in[i], window[i], padding[i], end[i], strides[i]);
  }
  return success();
}

/// Declared and inferred tensor types agree when their element types are
/// equal and their shapes are compatible (a dynamic size matches any size).
static bool compatibleTensorTypes(TypeRange declared, TypeRange inferred) {
  if (declared.size() != inferred.size())
    return false;
  for (auto [a, b] : llvm::zip(declared, inferred)) {
    // An unranked side is inference's "unknown": the verifier decides.
    if (isa<UnrankedTensorType>(a) || isa<UnrankedTensorType>(b))
      continue;
    auto ta = dyn_cast<RankedTensorType>(a), tb = dyn_cast<RankedTensorType>(b);
    if (!ta || !tb || ta.getElementType() != tb.getElementType() ||
        failed(verifyCompatibleShape(ta, tb)))
      return false;
  }
  return true;
}

/// Inference and verification share one strict shape function per op:
///  * inferReturnTypes never fails on inconsistent operands; it then answers an
///    unranked tensor, which compatibleTensorTypes accepts, so that builders
///    never abort and the verifier, not the trait, reports the problem;
///  * verify() runs the strict function and reports the precise error.
#define HPVM_LENIENT_INFERENCE(Op)                                             \
  LogicalResult Op::inferReturnTypes(MLIRContext *context,                     \
                                     std::optional<Location>, Adaptor adaptor, \
                                     SmallVectorImpl<Type> &results) {         \
    if (succeeded(infer##Op##Strict(std::nullopt, adaptor, results)))          \
      return success();                                                        \
    results.assign({UnrankedTensorType::get(Float32Type::get(context))});      \
    return success();                                                          \
  }
#define HPVM_INFERRED_TENSOR_OP(Op)                                            \
  HPVM_LENIENT_INFERENCE(Op)                                                   \
  LogicalResult Op::verify() {                                                 \
    SmallVector<Type> inferred;                                                \
    return infer##Op##Strict(getLoc(), Adaptor(*this), inferred);              \
  }

#define HPVM_COMPATIBLE_RETURN_TYPES(Op)                                       \
  bool Op::isCompatibleReturnTypes(TypeRange l, TypeRange r) {                 \
    return compatibleTensorTypes(l, r);                                        \
  }
HPVM_COMPATIBLE_RETURN_TYPES(TensorAddOp)
HPVM_COMPATIBLE_RETURN_TYPES(TensorMulOp)
HPVM_COMPATIBLE_RETURN_TYPES(TensorConv2DOp)
HPVM_COMPATIBLE_RETURN_TYPES(TensorPoolOp)
HPVM_COMPATIBLE_RETURN_TYPES(TensorToBlockedOp)
HPVM_COMPATIBLE_RETURN_TYPES(TensorFromBlockedOp)
HPVM_COMPATIBLE_RETURN_TYPES(TensorBatchNormOp)
HPVM_COMPATIBLE_RETURN_TYPES(TensorReduceOp)
#undef HPVM_COMPATIBLE_RETURN_TYPES

//===----------------------------------------------------------------------===//
// add: broadcast of size-1 dimensions
//===----------------------------------------------------------------------===//

static LogicalResult inferTensorAddOpStrict(std::optional<Location> location,
    TensorAddOp::Adaptor adaptor, SmallVectorImpl<Type> &results) {
  StringRef name = TensorAddOp::getOperationName();
  RankedTensorType lhs = expectTensor(location, name, adaptor.getLhs(), "lhs");
  RankedTensorType rhs = expectTensor(location, name, adaptor.getRhs(), "rhs");
  if (!lhs || !rhs)
    return failure();
  if (lhs.getElementType() != rhs.getElementType())
    return shapeError(location, name,
                      llvm::formatv("expects operands of one element type, "
                                    "found {0} and {1}",
                                    q(lhs.getElementType()), q(rhs.getElementType())));
  if (lhs.getRank() != rhs.getRank())
    return shapeError(location, name,
                      llvm::formatv("expects operands of equal rank (only "
                                    "size-1 dimensions broadcast), found {0} "
                                    "and {1}",
                                    q(lhs), q(rhs)));
  SmallVector<int64_t> shape;
  for (int64_t d = 0, e = lhs.getRank(); d < e; ++d) {
    int64_t a = lhs.getDimSize(d), b = rhs.getDimSize(d);
    if (a == b || b == 1) {
      shape.push_back(a);
    } else if (a == 1) {
      shape.push_back(b);
    } else if (ShapedType::isDynamic(a) || ShapedType::isDynamic(b)) {
      // The static side decides; a dynamic side must match it at run time.
      shape.push_back(ShapedType::isDynamic(a) ? b : a);
    } else {
      return shapeError(location, name,
                        llvm::formatv("cannot broadcast dimension {0}: {1} in "
                                      "the lhs, {2} in the rhs; expected equal "
                                      "sizes or 1",
                                      d, a, b));
    }
  }
  results.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// mul: [..., M, K] x [..., K, N] -> [..., M, N]
//===----------------------------------------------------------------------===//

static LogicalResult inferTensorMulOpStrict(std::optional<Location> location,
    TensorMulOp::Adaptor adaptor, SmallVectorImpl<Type> &results) {
  StringRef name = TensorMulOp::getOperationName();
  RankedTensorType lhs = expectTensor(location, name, adaptor.getLhs(), "lhs");
  RankedTensorType rhs = expectTensor(location, name, adaptor.getRhs(), "rhs");
  if (!lhs || !rhs)
    return failure();
  if (lhs.getElementType() != rhs.getElementType())
    return shapeError(location, name,
                      llvm::formatv("expects operands of one element type, "
                                    "found {0} and {1}",
                                    q(lhs.getElementType()), q(rhs.getElementType())));
  if (lhs.getRank() < 2 || lhs.getRank() != rhs.getRank())
    return shapeError(location, name,
                      llvm::formatv("expects two matrices (or batches of "
                                    "matrices) of equal rank >= 2, found {0} "
                                    "and {1}",
                                    q(lhs), q(rhs)));
  int64_t rank = lhs.getRank();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank - 2; ++d) {
    int64_t a = lhs.getDimSize(d), b = rhs.getDimSize(d);
    if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b)
      return shapeError(location, name,
                        llvm::formatv("batch dimension {0} is {1} in the lhs "
                                      "but {2} in the rhs",
                                      d, a, b));
    shape.push_back(ShapedType::isDynamic(a) ? b : a);
  }
  int64_t k1 = lhs.getDimSize(rank - 1), k2 = rhs.getDimSize(rank - 2);
  if (!ShapedType::isDynamic(k1) && !ShapedType::isDynamic(k2) && k1 != k2)
    return shapeError(location, name,
                      llvm::formatv("contracted dimensions differ: the lhs has "
                                    "{0} columns but the rhs has {1} rows",
                                    k1, k2));
  shape.push_back(lhs.getDimSize(rank - 2));
  shape.push_back(rhs.getDimSize(rank - 1));
  results.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Images: NCHW, or channels in blocks ([N, C / B, H, W, B])
//===----------------------------------------------------------------------===//

namespace {
/// An image operand's sizes whatever its layout; `block` 0 for NCHW.
struct Image {
  RankedTensorType type;
  int64_t n, c, h, w, block = 0;
};
} // namespace

/// The image `value` of rank 4 (NCHW) or 5 (channels in blocks), or an empty
/// Image after reporting what was found.
static Image expectImage(std::optional<Location> location, StringRef opName,
                         Value value) {
  RankedTensorType type = expectTensor(location, opName, value, "input");
  if (!type)
    return {};
  if (type.getRank() == 4)
    return {type, type.getDimSize(0), type.getDimSize(1), type.getDimSize(2),
            type.getDimSize(3)};
  if (type.getRank() == 5 && !ShapedType::isDynamic(type.getDimSize(4))) {
    int64_t blocks = type.getDimSize(1), block = type.getDimSize(4);
    return {type, type.getDimSize(0),
            ShapedType::isDynamic(blocks) ? ShapedType::kDynamic : blocks * block,
            type.getDimSize(2), type.getDimSize(3), block};
  }
  (void)shapeError(location, opName,
                   llvm::formatv("expects the input to be an NCHW image (rank "
                                 "4) or one with its channels in blocks of a "
                                 "static size (rank 5, [N, C / B, H, W, B]), "
                                 "found {0}",
                                 q(type))
                       .str());
  return {};
}

/// The type of an image of `n` x `c` channels (in blocks of `block`, or NCHW
/// for 0) of h x w.
static RankedTensorType imageType(int64_t n, int64_t c, int64_t h, int64_t w,
                                  int64_t block, Type element) {
  if (!block)
    return RankedTensorType::get({n, c, h, w}, element);
  int64_t blocks = ShapedType::isDynamic(c) ? c : c / block;
  return RankedTensorType::get({n, blocks, h, w, block}, element);
}

static LogicalResult inferTensorToBlockedOpStrict(std::optional<Location> location,
    TensorToBlockedOp::Adaptor adaptor, SmallVectorImpl<Type> &results) {
  StringRef name = TensorToBlockedOp::getOperationName();
  RankedTensorType input =
      expectTensor(location, name, adaptor.getInput(), "input (NCHW)", 4);
  if (!input)
    return failure();
  int64_t block = adaptor.getBlock(), channels = input.getDimSize(1);
  if (block <= 0)
    return failure(); // the attribute's constraint reports it (builders aside)
  if (!ShapedType::isDynamic(channels) && channels % block != 0)
    return shapeError(location, name,
                      llvm::formatv("expects channels that blocks of {0} divide, "
                                    "found {1}",
                                    block, channels));
  results.push_back(imageType(input.getDimSize(0), channels, input.getDimSize(2),
                              input.getDimSize(3), block, input.getElementType()));
  return success();
}

static LogicalResult inferTensorFromBlockedOpStrict(std::optional<Location> location,
    TensorFromBlockedOp::Adaptor adaptor, SmallVectorImpl<Type> &results) {
  StringRef name = TensorFromBlockedOp::getOperationName();
  Image image = expectImage(location, name, adaptor.getInput());
  if (!image.type)
    return failure();
  if (!image.block)
    return shapeError(location, name,
                      llvm::formatv("expects channels in blocks (rank 5), found "
                                    "{0}",
                                    q(image.type)));
  results.push_back(imageType(image.n, image.c, image.h, image.w, 0,
                              image.type.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// conv2d: [N, C, H, W] * [F, C/groups, KH, KW] -> [N, F, OH, OW]
//===----------------------------------------------------------------------===//

static LogicalResult inferTensorConv2DOpStrict(std::optional<Location> location,
    TensorConv2DOp::Adaptor adaptor, SmallVectorImpl<Type> &results) {
  StringRef name = TensorConv2DOp::getOperationName();
  Image image = expectImage(location, name, adaptor.getInput());
  RankedTensorType input = image.type;
  RankedTensorType filter =
      expectTensor(location, name, adaptor.getFilter(), "filter (FCHW)", 4);
  if (!input || !filter)
    return failure();
  if (input.getElementType() != filter.getElementType())
    return shapeError(location, name,
                      llvm::formatv("expects input and filter of one element "
                                    "type, found {0} and {1}",
                                    q(input.getElementType()),
                                    q(filter.getElementType())));
  int64_t groups = adaptor.getGroups();
  if (groups <= 0)
    return shapeError(location, name,
                      llvm::formatv("expects groups > 0, found {0}", groups));
  int64_t channels = image.c, filterChannels = filter.getDimSize(1);
  if (!ShapedType::isDynamic(channels) &&
      !ShapedType::isDynamic(filterChannels) &&
      channels != filterChannels * groups)
    return shapeError(location, name,
                      llvm::formatv("input has {0} channels but the filter "
                                    "expects {1} x {2} groups = {3}",
                                    channels, filterChannels, groups,
                                    filterChannels * groups));
  int64_t filters = filter.getDimSize(0);
  if (!ShapedType::isDynamic(filters) && filters % groups != 0)
    return shapeError(location, name,
                      llvm::formatv("{0} filters cannot be split into {1} "
                                    "groups",
                                    filters, groups));
  int64_t block = 0;
  if (IntegerAttr attr = adaptor.getResultBlockAttr()) {
    block = attr.getInt();
    if (block <= 0 || (!ShapedType::isDynamic(filters) && filters % block != 0))
      return shapeError(location, name,
                        llvm::formatv("expects a result_block > 0 that divides "
                                      "the {0} filters, found {1}",
                                      dimText(filters), block));
  }
  int64_t in[2] = {image.h, image.w};
  int64_t window[2] = {filter.getDimSize(2), filter.getDimSize(3)};
  int64_t out[2];
  if (failed(inferWindow(location, name, adaptor.getPadding(),
                         adaptor.getStrides(), in, window, out)))
    return failure();
  results.push_back(imageType(image.n, filters, out[0], out[1], block,
                              input.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// pool: [N, C, H, W] -> [N, C, OH, OW]
//===----------------------------------------------------------------------===//

static LogicalResult inferTensorPoolOpStrict(std::optional<Location> location,
    TensorPoolOp::Adaptor adaptor, SmallVectorImpl<Type> &results) {
  StringRef name = TensorPoolOp::getOperationName();
  Image image = expectImage(location, name, adaptor.getInput());
  RankedTensorType input = image.type;
  if (!input)
    return failure();
  int64_t window[2];
  if (!readPair(adaptor.getWindow(), window))
    return shapeError(location, name,
                      "expects 'window' to have 2 integers (height, width)");
  if (window[0] <= 0 || window[1] <= 0)
    return shapeError(location, name,
                      llvm::formatv("expects a window > 0, found [{0}, {1}]",
                                    window[0], window[1]));
  // A window entirely in padding would have no element of the image.
  int64_t padding[2];
  for (auto [attrName, attr] :
       {std::pair<StringRef, ArrayAttr>{"padding", adaptor.getPadding()},
        {"padding_end", adaptor.getPaddingEndAttr()}})
    if (readPair(attr, padding) &&
        (padding[0] >= window[0] || padding[1] >= window[1]))
      return shapeError(location, name,
                        llvm::formatv("expects {0} smaller than the window "
                                      "{1}x{2}, found [{3}, {4}]",
                                      attrName, window[0], window[1],
                                      padding[0], padding[1]));
  int64_t in[2] = {image.h, image.w};
  int64_t out[2];
  if (failed(inferWindow(location, name, adaptor.getPadding(),
                         adaptor.getStrides(), in, window, out,
                         adaptor.getPaddingEndAttr())))
    return failure();
  results.push_back(imageType(image.n, image.c, out[0], out[1], image.block,
                              input.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Activations, softmax, batchnorm
//===----------------------------------------------------------------------===//

// relu, tanh, sigmoid, clipped_relu and softmax get inferReturnTypes from
// SameOperandsAndResultType.


LogicalResult TensorClippedReluOp::verify() {
  double max = getMax().convertToDouble();
  if (!(max > 0) || std::isinf(max))
    return emitOpError() << "expects a finite 'max' > 0, found " << max;
  return success();
}

LogicalResult TensorSoftmaxOp::verify() {
  int64_t rank = getInput().getType().getRank();
  int64_t axis = getAxisAttr().getInt();
  if (axis < 0 || axis >= rank)
    return emitOpError() << "axis " << axis << " out of range for a "
                         << "tensor of rank " << rank;
  return success();
}

static LogicalResult inferTensorBatchNormOpStrict(std::optional<Location> location,
    TensorBatchNormOp::Adaptor adaptor, SmallVectorImpl<Type> &results) {
  StringRef name = TensorBatchNormOp::getOperationName();
  Image image = expectImage(location, name, adaptor.getInput());
  if (!image.type)
    return failure();
  RankedTensorType input = image.type;
  int64_t channels = image.c;
  // Each parameter is [C] or [1, C, 1, 1].
  std::pair<Value, StringRef> params[] = {{adaptor.getGamma(), "gamma"},
                                          {adaptor.getBeta(), "beta"},
                                          {adaptor.getMean(), "mean"},
                                          {adaptor.getVariance(), "variance"}};
  for (auto [value, role] : params) {
    RankedTensorType type = expectTensor(location, name, value, role);
    if (!type)
      return failure();
    if (type.getElementType() != input.getElementType())
      return shapeError(location, name,
                        llvm::formatv("{0} has element type {1} but the input "
                                      "has {2}",
                                      role, q(type.getElementType()),
                                      q(input.getElementType())));
    bool vector = type.getRank() == 1;
    bool image = type.getRank() == 4 && type.getDimSize(0) == 1 &&
                 type.getDimSize(2) == 1 && type.getDimSize(3) == 1;
    int64_t size = vector ? type.getDimSize(0) : image ? type.getDimSize(1) : -2;
    if (size == -2 || (!ShapedType::isDynamic(size) &&
                       !ShapedType::isDynamic(channels) && size != channels))
      return shapeError(location, name,
                        llvm::formatv("expects {0} of shape [{1}] or [1, {1}, "
                                      "1, 1] (one value per channel), found {2}",
                                      role, dimText(channels), q(type)));
  }
  results.push_back(input);
  return success();
}

LogicalResult TensorBatchNormOp::verify() {
  SmallVector<Type> inferred;
  if (failed(inferTensorBatchNormOpStrict(getLoc(), Adaptor(*this), inferred)))
    return failure();
  double epsilon = getEpsilon().convertToDouble();
  if (!(epsilon > 0) || std::isinf(epsilon))
    return emitOpError() << "expects a finite epsilon > 0, found " << epsilon;
  return success();
}

//===----------------------------------------------------------------------===//
// map and reduce
//===----------------------------------------------------------------------===//

/// Checks the region of map/reduce: argument types and the yielded type.
static LogicalResult verifyElementRegion(Operation *op, Region &region,
                                         TypeRange expectedArgs,
                                         Type expectedYield) {
  Block &block = region.front();
  if (block.getArgumentTypes() != expectedArgs) {
    std::string expected, found;
    llvm::raw_string_ostream e(expected), f(found);
    llvm::interleaveComma(expectedArgs, e);
    llvm::interleaveComma(block.getArgumentTypes(), f);
    return op->emitOpError() << "expects region arguments (" << expected
                             << "), found (" << found << ")";
  }
  auto yield = dyn_cast<TensorYieldOp>(block.getTerminator());
  if (!yield)
    return op->emitOpError() << "expects the region to end in 'hpvm.tensor.yield'";
  if (yield.getValue().getType() != expectedYield)
    return op->emitOpError() << "expects the region to yield "
                             << expectedYield << ", found "
                             << yield.getValue().getType();
  return success();
}

LogicalResult TensorMapOp::verifyRegions() {
  if (getInputs().empty())
    return emitOpError() << "expects at least one input tensor";
  auto first = cast<RankedTensorType>(getInputs()[0].getType());
  SmallVector<Type> elements;
  for (auto [index, input] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    if (failed(verifyCompatibleShape(type.getShape(), first.getShape())))
      return emitOpError() << "expects inputs of one shape, but input "
                           << index << " is " << type << " and input 0 is "
                           << first;
    elements.push_back(type.getElementType());
  }
  RankedTensorType result = getResult().getType();
  if (failed(verifyCompatibleShape(result.getShape(), first.getShape())))
    return emitOpError() << "expects the result to have the inputs' shape, "
                         << "found " << result << " for inputs of type "
                         << first;
  return verifyElementRegion(*this, getMapper(), elements,
                             result.getElementType());
}

static LogicalResult inferTensorReduceOpStrict(std::optional<Location> location,
    TensorReduceOp::Adaptor adaptor, SmallVectorImpl<Type> &results) {
  StringRef name = TensorReduceOp::getOperationName();
  RankedTensorType input = expectTensor(location, name, adaptor.getInput(), "input");
  if (!input)
    return failure();
  int64_t axis = adaptor.getAxisAttr().getInt();
  if (axis < 0 || axis >= input.getRank())
    return shapeError(location, name,
                      llvm::formatv("axis {0} out of range for {1}", axis,
                                    q(input)));
  SmallVector<int64_t> shape(input.getShape());
  shape.erase(shape.begin() + axis);
  results.push_back(
      RankedTensorType::get(shape, adaptor.getInit().getType()));
  return success();
}

LogicalResult TensorReduceOp::verifyRegions() {
  Type accumulator = getInit().getType();
  Type element = getInput().getType().getElementType();
  return verifyElementRegion(*this, getCombiner(), {accumulator, element},
                             accumulator);
}

HPVM_INFERRED_TENSOR_OP(TensorAddOp)
HPVM_INFERRED_TENSOR_OP(TensorMulOp)
HPVM_INFERRED_TENSOR_OP(TensorConv2DOp)
HPVM_INFERRED_TENSOR_OP(TensorPoolOp)
HPVM_INFERRED_TENSOR_OP(TensorToBlockedOp)
HPVM_INFERRED_TENSOR_OP(TensorFromBlockedOp)
HPVM_INFERRED_TENSOR_OP(TensorReduceOp)
#undef HPVM_INFERRED_TENSOR_OP

SmallVector<int64_t> TensorPoolOp::getEndPadding() {
  ArrayAttr end = getPaddingEndAttr();
  return llvm::map_to_vector(end ? end : getPadding(), [](Attribute a) {
    return cast<IntegerAttr>(a).getInt();
  });
}

// batchnorm has its own verifier (epsilon) besides the shape rules.
HPVM_LENIENT_INFERENCE(TensorBatchNormOp)
#undef HPVM_LENIENT_INFERENCE
