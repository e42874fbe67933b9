//===- DescribeStreamItems.cpp - Item layouts for the MPI layer ----------===//
// hpvm-describe-stream-items (Passes.td): the layout of each streaming root's
// items, which the runtime's MPI layer needs to copy them to other ranks.
#include "HPVM/Pipelines/Passes.h"

#include "HPVM/Dialect/HPVM/IR/HPVMDialect.h"
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <cctype>
#include <optional>

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMDESCRIBESTREAMITEMS
#include "HPVM/Pipelines/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;
using namespace mlir::hpvm;

namespace {
constexpr StringLiteral kDescribeFunction = "hpvm_rt_mpi_describe_items";

/// `<kind><size>.<align>` of a field of type `type`.
std::string field(char kind, Type type, const DataLayout &layout) {
  return (Twine(kind) + Twine(layout.getTypeSize(type).getFixedValue()) + "." +
          Twine(layout.getTypeABIAlignment(type)))
      .str();
}

/// `<kind><size>.8:<rank>:<element bytes>` of a memref field (its descriptor: two
/// pointers, an offset, the sizes and the strides); none when its elements are not whole
/// bytes of integers or floats.
std::optional<std::string> memrefField(char kind, MemRefType type) {
  Type element = type.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  int64_t rank = type.getRank();
  return (Twine(kind) + Twine(24 + 16 * rank) + ".8:" + Twine(rank) + ":" +
          Twine(element.getIntOrFloatBitWidth() / 8))
      .str();
}

/// The memref a port of type `type` is when the items travel: a memref as it is, a ranked
/// tensor as the buffer of its shape (what the tensor lowering makes of a tensor port);
/// null for other types.
MemRefType bufferType(Type type) {
  if (auto memref = dyn_cast<MemRefType>(type))
    return memref;
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return MemRefType::get(tensor.getShape(), tensor.getElementType());
  return {};
}

/// "memref" or "tensor", as the diagnostics name a port's type.
StringRef shapedKind(Type type) { return isa<TensorType>(type) ? "tensor" : "memref"; }

/// Whether output `output` of `root` is bound from a port of a leaf that nothing else
/// reads (through nested internal nodes): the buffer a tensor leaf allocates for it is
/// then the host's alone.
bool boundAlone(NodeOpInterface root, unsigned output, SymbolTableCollection &tables) {
  auto internal = dyn_cast<InternalOp>(root.getOperation());
  if (!internal)
    return isa<LeafOp>(root.getOperation());
  BindOutOp bind;
  for (auto candidate : internal.getBody().getOps<BindOutOp>())
    if (candidate.getOutput() == output) {
      if (bind)
        return false;
      bind = candidate;
    }
  auto create = bind ? bind.getSource().getDefiningOp<CreateNodeOp>() : CreateNodeOp();
  if (!create)
    return false;
  for (Operation *user : create.getHandle().getUsers()) {
    if (auto edge = dyn_cast<EdgeOp>(user);
        edge && edge.getSource() == create.getHandle() &&
        edge.getSourcePort() == bind.getSourcePort())
      return false;
    if (auto other = dyn_cast<BindOutOp>(user);
        other && other != bind && other.getSourcePort() == bind.getSourcePort())
      return false;
  }
  auto child = tables.lookupNearestSymbolFrom<NodeOpInterface>(create, create.getNodeAttr());
  return child && boundAlone(child, bind.getSourcePort(), tables);
}

/// The buffer kind of input `index` of `root` from its hpvm.access.
char bufferKind(NodeOpInterface root, unsigned index) {
  auto function = cast<FunctionOpInterface>(root.getOperation());
  auto access =
      function.getArgAttrOfType<AccessAttr>(index, HPVMDialect::getAccessAttrName());
  if (!access || access.getValue() == Access::inout)
    return 'b';
  return access.getValue() == Access::in ? 'i' : 'o';
}

/// The input fields of `root`'s items; failure (reported) when one cannot
/// travel.
FailureOr<std::string> describeInputs(NodeOpInterface root, const DataLayout &layout) {
  std::string text;
  ArrayRef<Type> types = root.getInputTypes();
  StringRef name = cast<SymbolOpInterface>(root.getOperation()).getName();
  for (unsigned i = 0; i < types.size(); ++i) {
    if (!text.empty())
      text += ",";
    Type type = types[i];
    if (MemRefType memref = bufferType(type)) {
      // The graph never writes a tensor input.
      char kind = isa<TensorType>(type) ? 'I' : std::toupper(bufferKind(root, i));
      std::optional<std::string> described = memrefField(kind, memref);
      if (!described) {
        root.emitError() << "--distribute=mpi: input " << i << " of the streaming root @"
                         << name << " is a " << shapedKind(type) << " of "
                         << memref.getElementType()
                         << ", whose elements are not whole bytes of data; the items of a "
                            "distributed stream carry buffers of integers or floats";
        return failure();
      }
      text += *described;
      continue;
    }
    if (!isa<LLVM::LLVMPointerType>(type)) {
      text += field('d', type, layout);
      continue;
    }
    if (i + 1 >= types.size() || !isa<IntegerType>(types[i + 1])) {
      std::string found = "found no further input";
      if (i + 1 < types.size()) {
        llvm::raw_string_ostream os(found = "found ");
        os << types[i + 1];
      }
      root.emitError() << "--distribute=mpi: input " << i << " of the streaming root @"
                       << name << " is a host pointer not followed by its size in bytes ("
                       << found << "); the items of a distributed stream carry buffers as a "
                          "pointer and its size, which can travel to another rank";
      return failure();
    }
    text += field(bufferKind(root, i), type, layout) + "," +
            field('n', types[i + 1], layout);
    ++i;
  }
  return text;
}

/// The output fields of `root`'s items; failure (reported) when one cannot travel.
FailureOr<std::string> describeOutputs(NodeOpInterface root, const DataLayout &layout,
                                       SymbolTableCollection &tables) {
  std::string text;
  for (auto [index, type] : llvm::enumerate(root.getOutputTypes())) {
    if (!text.empty())
      text += ",";
    MemRefType memrefType = bufferType(type);
    if (!memrefType) {
      text += field(isa<LLVM::LLVMPointerType>(type) ? 'p' : 'd', type, layout);
      continue;
    }
    char kind = isa<TensorType>(type) && boundAlone(root, index, tables) ? 'F' : 'P';
    std::optional<std::string> memref = memrefField(kind, memrefType);
    if (!memref) {
      root.emitError() << "--distribute=mpi: an output of the streaming root @"
                       << cast<SymbolOpInterface>(root.getOperation()).getName() << " is a "
                       << shapedKind(type) << " of " << memrefType.getElementType()
                       << ", whose elements are not whole bytes of data; the items of a "
                          "distributed stream carry buffers of integers or floats";
      return failure();
    }
    text += *memref;
  }
  return text;
}

/// The declaration of hpvm_rt_mpi_describe_items(const char *).
LLVM::LLVMFuncOp getDescribeFunction(ModuleOp module) {
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(kDescribeFunction))
    return existing;
  OpBuilder b(module.getBodyRegion());
  MLIRContext *context = module.getContext();
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                          {LLVM::LLVMPointerType::get(context)});
  return LLVM::LLVMFuncOp::create(b, module.getLoc(), kDescribeFunction, type);
}

/// A private constant global holding `text` (NUL-terminated), one per text.
LLVM::GlobalOp getLayoutGlobal(ModuleOp module, StringRef text,
                               llvm::StringMap<LLVM::GlobalOp> &globals) {
  auto it = globals.find(text);
  if (it != globals.end())
    return it->second;
  OpBuilder b(module.getBodyRegion());
  std::string value = (text + Twine('\0')).str();
  auto type = LLVM::LLVMArrayType::get(IntegerType::get(module.getContext(), 8),
                                       value.size());
  std::string name = "__hpvm_mpi_items_" + std::to_string(globals.size());
  while (module.lookupSymbol(name))
    name += "_";
  auto global = LLVM::GlobalOp::create(b, module.getLoc(), type, /*isConstant=*/true,
                                       LLVM::Linkage::Private, name,
                                       b.getStringAttr(value));
  globals[text] = global;
  return global;
}

struct DescribeStreamItemsPass
    : public hpvm::impl::HPVMDescribeStreamItemsBase<DescribeStreamItemsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection tables;
    SmallVector<LaunchOp> launches;
    module.walk([&](LaunchOp launch) {
      if (launch.getStreaming())
        launches.push_back(launch);
    });
    llvm::StringMap<LLVM::GlobalOp> globals;
    DataLayout layout(module);
    for (LaunchOp launch : launches) {
      auto root = tables.lookupNearestSymbolFrom<NodeOpInterface>(launch,
                                                                  launch.getRootAttr());
      if (!root)
        continue; // the verifier reports it
      FailureOr<std::string> outputs = describeOutputs(root, layout, tables);
      if (failed(outputs))
        return signalPassFailure();
      FailureOr<std::string> inputs = describeInputs(root, layout);
      if (failed(inputs))
        return signalPassFailure();
      std::string text = *inputs + ";" + *outputs;
      LLVM::GlobalOp global = getLayoutGlobal(module, text, globals);
      OpBuilder b(launch);
      Value address = LLVM::AddressOfOp::create(b, launch.getLoc(), global);
      LLVM::CallOp::create(b, launch.getLoc(), getDescribeFunction(module),
                           ValueRange{address});
    }
  }
};
} // namespace
