//===- InferLaunchShapes.cpp - Tensor shapes from the host's tensor objects ===//
// ApproxHPVM's programs never declare the shapes of their tensors: the host
// creates tensor objects with the tensor API (tensorUtils.h:
// readTrainedWeights(path, type, N, C, H, W), readInputBatch(path, type,
// start, end, C, H, W), create4DTensor(type, layout, N, C, H, W)), stores
// them in the launch's argument struct and the graph takes their shapes at
// run time. Here the shapes are read from those calls at compile time, where
// their sizes are constants (readInputBatch's batch is `end - start`, a
// constant difference of the same index): a root input whose field receives
// only such tensors, all of one shape, flows into the graph as that tensor
// type. The compiled launch checks each object's shape against it at run time
// (hpvm_rt_tensor_input), so the inferred shape stays a checked promise.
#include "HPVMCRaiser.h"

using namespace mlir;
using namespace mlir::hpvm;

namespace mlir::hpvm::hpvmc {
namespace {

/// A value as `base + offset` through integer additions of constants and
/// extensions (the batch bounds of readInputBatch: `start`, `start + B`).
std::pair<Value, int64_t> decompose(Value value) {
  int64_t offset = 0;
  for (int steps = 0; steps < 16; ++steps) {
    if (std::optional<int64_t> constant = constantInt(value))
      return {Value(), offset + *constant};
    Operation *op = value.getDefiningOp();
    if (isa_and_nonnull<LLVM::SExtOp, LLVM::ZExtOp>(op)) {
      value = op->getOperand(0);
      continue;
    }
    if (isa_and_nonnull<LLVM::AddOp, LLVM::SubOp>(op)) {
      std::optional<int64_t> rhs = constantInt(op->getOperand(1));
      std::optional<int64_t> lhs = constantInt(op->getOperand(0));
      if (rhs) {
        offset += isa<LLVM::AddOp>(op) ? *rhs : -*rhs;
        value = op->getOperand(0);
        continue;
      }
      if (lhs && isa<LLVM::AddOp>(op)) {
        offset += *lhs;
        value = op->getOperand(1);
        continue;
      }
    }
    break;
  }
  return {value, offset};
}

/// `end - start` when it is a constant.
std::optional<int64_t> constantDifference(Value end, Value start) {
  auto [endBase, endOffset] = decompose(end);
  auto [startBase, startOffset] = decompose(start);
  if (endBase != startBase)
    return std::nullopt;
  return endOffset - startOffset;
}

/// The byte offset a GEP with constant indices adds to its base.
std::optional<int64_t> constantOffset(LLVM::GEPOp gep, const DataLayout &layout) {
  Type type = gep.getElemType();
  int64_t offset = 0;
  bool first = true;
  for (auto index : gep.getIndices()) {
    std::optional<int64_t> value;
    if (auto attr = llvm::dyn_cast_if_present<IntegerAttr>(index))
      value = attr.getInt();
    else if (auto operand = llvm::dyn_cast_if_present<Value>(index))
      value = constantInt(operand);
    if (!value)
      return std::nullopt;
    if (first) {
      offset += *value * static_cast<int64_t>(layout.getTypeSize(type));
      first = false;
      continue;
    }
    if (auto structType = dyn_cast<LLVM::LLVMStructType>(type)) {
      ArrayRef<Type> body = structType.getBody();
      if (*value < 0 || static_cast<size_t>(*value) >= body.size())
        return std::nullopt;
      int64_t fieldOffset = 0;
      for (int64_t i = 0; i <= *value; ++i) {
        if (!structType.isPacked())
          fieldOffset = llvm::alignTo(fieldOffset, layout.getTypeABIAlignment(body[i]));
        if (i < *value)
          fieldOffset += layout.getTypeSize(body[i]);
      }
      offset += fieldOffset;
      type = body[*value];
    } else if (auto array = dyn_cast<LLVM::LLVMArrayType>(type)) {
      type = array.getElementType();
      offset += *value * static_cast<int64_t>(layout.getTypeSize(type));
    } else {
      return std::nullopt;
    }
  }
  return offset;
}

/// The stores into the object at `base`: (byte offset, store), through
/// constant GEPs. Stores through other paths (a callee that fills the
/// struct, a pointer kept in memory) are missed: the shapes found are then
/// promises the launch checks at run time all the same.
void storesInto(Value base, const DataLayout &layout,
                SmallVectorImpl<std::pair<int64_t, LLVM::StoreOp>> &stores) {
  SmallVector<std::pair<Value, int64_t>> work{{base, 0}};
  DenseSet<Value> seen;
  while (!work.empty()) {
    auto [value, offset] = work.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    for (Operation *user : value.getUsers()) {
      if (auto store = dyn_cast<LLVM::StoreOp>(user)) {
        if (store.getAddr() == value)
          stores.push_back({offset, store});
      } else if (auto gep = dyn_cast<LLVM::GEPOp>(user)) {
        if (gep.getBase() != value)
          continue;
        if (std::optional<int64_t> more = constantOffset(gep, layout))
          work.push_back({gep.getResult(), offset + *more});
      }
    }
  }
}

/// The shape of the tensor a call of the tensor API creates, when its sizes
/// are constants; which function it is, for diagnostics.
struct Created {
  SmallVector<int64_t> shape;
  StringRef function;
};

std::optional<Created> createdTensor(Value value) {
  // A call, or in C++ an invoke (the call may throw).
  std::optional<StringRef> callee;
  OperandRange operands(nullptr, 0);
  if (auto call = value.getDefiningOp<LLVM::CallOp>()) {
    callee = call.getCallee();
    operands = call.getArgOperands();
  } else if (auto invoke = value.getDefiningOp<LLVM::InvokeOp>()) {
    callee = invoke.getCallee();
    operands = invoke.getArgOperands();
  }
  if (!callee)
    return std::nullopt;
  Created created{{}, *callee};
  auto sizes = [&](unsigned first, unsigned count) -> bool {
    if (operands.size() < first + count)
      return false;
    for (unsigned i = first; i < first + count; ++i) {
      std::optional<int64_t> size = constantInt(operands[i]);
      if (!size || *size < 1)
        return false;
      created.shape.push_back(*size);
    }
    return true;
  };
  if (*callee == "readTrainedWeights" || *callee == "create4DTensor")
    return sizes(2, 4) ? std::optional(created) : std::nullopt;
  if (*callee == "readInputBatch") {
    if (operands.size() != 7)
      return std::nullopt;
    std::optional<int64_t> batch = constantDifference(operands[3], operands[2]);
    if (!batch || *batch < 1)
      return std::nullopt;
    created.shape.push_back(*batch);
    return sizes(4, 3) ? std::optional(created) : std::nullopt;
  }
  return std::nullopt;
}

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(shape, os, "x");
  return text;
}

} // namespace

LogicalResult Raiser::inferLaunchShapes() {
  // Per root input: the shape every tensor object stored for it has, and
  // where one was first seen; `unknown` when a store is not such an object.
  struct Seen {
    SmallVector<int64_t> shape;
    LLVM::StoreOp at;
    bool unknown = false;
  };
  llvm::MapVector<Node *, DenseMap<unsigned, Seen>> roots;
  SmallVector<LLVM::CallOp> launches;
  module.walk([&](LLVM::CallOp call) {
    if (classify(call).api == Api::Launch && call.getArgOperands().size() == 3)
      launches.push_back(call);
  });
  for (LLVM::CallOp launch : launches) {
    FailureOr<Node *> root = nodeOfFunctionOperand(launch, 1);
    if (failed(root))
      return failure();
    // Packed input offsets, as the launch reads them.
    DenseMap<int64_t, unsigned> inputAt;
    uint64_t offset = 0;
    for (auto [index, type] : llvm::enumerate((*root)->inputs)) {
      if (isa<LLVM::LLVMPointerType>(type))
        inputAt[offset] = index;
      offset += byteSize(layout, type);
    }
    SmallVector<std::pair<int64_t, LLVM::StoreOp>> stores;
    storesInto(launch.getArgOperands()[2], layout, stores);
    DenseMap<unsigned, Seen> &seen = roots[*root];
    for (auto [at, store] : stores) {
      auto input = inputAt.find(at);
      if (input == inputAt.end() || !isa<LLVM::LLVMPointerType>(store.getValue().getType()))
        continue;
      Seen &entry = seen[input->second];
      std::optional<Created> created = createdTensor(store.getValue());
      if (!created) {
        entry.unknown = true;
        continue;
      }
      if (!entry.at) {
        entry.shape = created->shape;
        entry.at = store;
        continue;
      }
      if (entry.shape != created->shape) {
        std::string where = "another store";
        if (auto first = dyn_cast<FileLineColLoc>(plain(sourceLoc(entry.at))))
          where = (first.getFilename().getValue() + ":" + Twine(first.getLine()) + ":" +
                   Twine(first.getColumn()))
                      .str();
        return emitError(sourceLoc(store))
               << "input " << input->second << " of '"
               << getNodeDisplayName((*root)->function.getName())
               << "' receives a tensor of shape " << shapeString(created->shape)
               << " (from " << created->function << ") here, but one of shape "
               << shapeString(entry.shape) << " at " << where
               << "; a graph is compiled for one shape per input (give "
                  "each shape its own root function)";
      }
    }
  }
  for (auto &[root, inputs] : roots)
    for (auto &[index, entry] : inputs) {
      if (entry.unknown || !entry.at)
        continue;
      root->incoming[index] = RankedTensorType::get(entry.shape, Float32Type::get(context));
    }
  return success();
}

} // namespace mlir::hpvm::hpvmc
