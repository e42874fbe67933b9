//===- DescribeStreamItems.cpp - Item layouts for the MPI layer ----------===//
// Runs on the hpvm dialect, before the graph lowering packs the items: each
// streaming root's pushed item is the packed struct of its inputs, its
// popped item that of its outputs (natural alignment). The runtime's MPI
// layer copies items to other ranks and needs to know which fields are host
// buffers and how many bytes they hold; HPVM-C passes a buffer as a pointer
// followed by its size in bytes, which is what this pass requires.
//
// The layout is a string: the input fields, ';', the output fields, each
// field `<kind><size>.<align>` separated by ',':
//   d  plain data (integers, floats, vectors)
//   i, o, b  a buffer pointer the root reads (in), writes (out) or both
//   n  the size in bytes of the buffer just before
//   p  a pointer among the outputs (must point into one of the item's buffers)
//   I, O, B, P  a memref (its descriptor) read, written, both, or among the outputs, with
//      `:<rank>:<element bytes>` after the alignment: its buffer spans from the aligned
//      pointer to the last element the sizes and strides reach
#include "HPVM/Pipelines/DescribeStreamItems.h"

#include "HPVM/Dialect/HPVM/IR/HPVMDialect.h"
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <cctype>
#include <optional>

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
    if (auto memref = dyn_cast<MemRefType>(type)) {
      std::optional<std::string> described =
          memrefField(std::toupper(bufferKind(root, i)), memref);
      if (!described) {
        root.emitError() << "--distribute=mpi: input " << i << " of the streaming root @"
                         << name << " is a memref of " << memref.getElementType()
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
FailureOr<std::string> describeOutputs(NodeOpInterface root, const DataLayout &layout) {
  std::string text;
  for (Type type : root.getOutputTypes()) {
    if (!text.empty())
      text += ",";
    std::optional<std::string> memref;
    if (auto memrefType = dyn_cast<MemRefType>(type))
      memref = memrefField('P', memrefType);
    if (isa<MemRefType>(type) && !memref) {
      root.emitError() << "--distribute=mpi: an output of the streaming root @"
                       << cast<SymbolOpInterface>(root.getOperation()).getName()
                       << " is a memref of " << cast<MemRefType>(type).getElementType()
                       << ", whose elements are not whole bytes of data; the items of a "
                          "distributed stream carry buffers of integers or floats";
      return failure();
    }
    text += memref ? *memref : field(isa<LLVM::LLVMPointerType>(type) ? 'p' : 'd', type, layout);
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
    : public PassWrapper<DescribeStreamItemsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DescribeStreamItemsPass)
  StringRef getArgument() const override { return "hpvm-describe-stream-items"; }
  StringRef getDescription() const override {
    return "Tell the runtime's MPI layer the layout of streaming items";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<LLVM::LLVMDialect>();
  }

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
      FailureOr<std::string> outputs = describeOutputs(root, layout);
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

std::unique_ptr<Pass> mlir::hpvm::createHPVMDescribeStreamItems() {
  return std::make_unique<DescribeStreamItemsPass>();
}
