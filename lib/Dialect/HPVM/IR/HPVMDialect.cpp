//===- HPVMDialect.cpp - The hpvm dialect ---------------------------------===//
// Registers the hpvm ops, types and attributes, and verifies hpvm.* discardable attributes.
#include "llvm/Demangle/Demangle.h"
#include <cstdlib>
#include "HPVM/Dialect/HPVM/IR/HPVMDialect.h"
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::hpvm;

#include "HPVM/Dialect/HPVM/IR/HPVMDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "HPVM/Dialect/HPVM/IR/HPVMTypes.cpp.inc"

void HPVMDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "HPVM/Dialect/HPVM/IR/HPVMOps.cpp.inc"
      >();
  registerTypes();
  registerAttributes();
}

void HPVMDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "HPVM/Dialect/HPVM/IR/HPVMTypes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Discardable attributes: hpvm.targets and hpvm.dispatch on node definitions,
// hpvm.access on their arguments.
//===----------------------------------------------------------------------===//

static LogicalResult verifyTargetList(Operation *op, Attribute value) {
  auto list = dyn_cast<ArrayAttr>(value);
  if (!list)
    return op->emitError() << "'hpvm.targets' expects an array of "
                              "#hpvm.target attributes, found "
                           << value;
  if (list.empty())
    return op->emitError()
           << "'hpvm.targets' expects at least one target, found []";
  llvm::SmallSet<Target, 5> seen;
  for (Attribute element : list) {
    auto target = dyn_cast<TargetAttr>(element);
    if (!target)
      return op->emitError() << "'hpvm.targets' expects #hpvm.target "
                                "attributes, found "
                             << element;
    if (!seen.insert(target.getValue()).second)
      return op->emitError()
             << "'hpvm.targets' lists target '"
             << stringifyTarget(target.getValue()) << "' twice";
  }
  return success();
}

/// 'hpvm.dispatch' on `op`: a unit attribute on a node with at least two
/// targets.
static LogicalResult verifyDispatch(Operation *op, Attribute value) {
  if (!isa<NodeOpInterface>(op))
    return op->emitError()
           << "'hpvm.dispatch' is only valid on node definitions "
              "(hpvm.leaf, hpvm.internal), found on '"
           << op->getName() << "'";
  if (!isa<UnitAttr>(value))
    return op->emitError() << "'hpvm.dispatch' is a unit attribute, found "
                           << value;
  // Dispatch chooses among the node's targets at run time: it needs at
  // least two of them.
  auto list = op->getAttrOfType<ArrayAttr>(HPVMDialect::getTargetsAttrName());
  size_t count = list ? list.size() : 0;
  if (count < 2)
    return op->emitError()
           << "'hpvm.dispatch' expects a node with at least two targets in "
              "'hpvm.targets', found "
           << count;
  return success();
}

/// The error for attribute `name` found on `op`, which is not a leaf.
static LogicalResult emitNotOnLeaf(Operation *op, StringRef name) {
  return op->emitError() << "'" << name << "' is only valid on hpvm.leaf, found on '"
                         << op->getName() << "'";
}

/// 'hpvm.kernel_per_instance' on `op`: a leaf's two port masks (inputs,
/// outputs), each naming only ports the leaf has.
static LogicalResult verifyKernelPerInstance(Operation *op, Attribute value) {
  auto leaf = dyn_cast<LeafOp>(op);
  if (!leaf)
    return emitNotOnLeaf(op, HPVMDialect::getKernelPerInstanceAttrName());
  auto masks = dyn_cast<DenseI64ArrayAttr>(value);
  if (!masks || masks.size() != 2)
    return op->emitError()
           << "'hpvm.kernel_per_instance' expects array<i64: inputs, "
              "outputs> (two port masks), found "
           << value;
  size_t ports[2] = {leaf.getInputTypes().size(),
                     leaf.getOutputTypes().size()};
  const char *kinds[2] = {"inputs", "outputs"};
  for (int i = 0; i < 2; ++i) {
    uint64_t mask = static_cast<uint64_t>(masks[i]);
    if (ports[i] < 64 && (mask >> ports[i]) != 0)
      return op->emitError()
             << "'hpvm.kernel_per_instance' names " << kinds[i]
             << " beyond the node's " << ports[i] << ": mask " << mask;
  }
  return success();
}

/// 'hpvm.tensor_kernel' on `op`: a leaf's array of the globals its tensor
/// kernel takes (flat symbol references), possibly empty.
static LogicalResult verifyTensorKernel(Operation *op, Attribute value) {
  if (!isa<LeafOp>(op))
    return emitNotOnLeaf(op, HPVMDialect::getTensorKernelAttrName());
  auto globals = dyn_cast<ArrayAttr>(value);
  if (!globals || !llvm::all_of(globals, llvm::IsaPred<FlatSymbolRefAttr>))
    return op->emitError() << "'hpvm.tensor_kernel' expects an array of "
                              "symbol references (the kernel's constant "
                              "tensors), found "
                           << value;
  return success();
}

/// 'hpvm.tensor_launch' on `op`: a tensor kernel's threads, its work-group
/// size (0: the runtime picks; else dividing the threads) and the bytes of
/// each work-group memory parameter, on a leaf that has 'hpvm.tensor_kernel'.
static LogicalResult verifyTensorLaunch(Operation *op, Attribute value) {
  if (!isa<LeafOp>(op))
    return emitNotOnLeaf(op, HPVMDialect::getTensorLaunchAttrName());
  auto sizes = dyn_cast<DenseI64ArrayAttr>(value);
  if (!sizes || sizes.size() < 2 || sizes[0] <= 0 || sizes[1] < 0 ||
      llvm::any_of(sizes.asArrayRef().drop_front(2),
                   [](int64_t bytes) { return bytes <= 0; }))
    return op->emitError() << "'hpvm.tensor_launch' expects array<i64: "
                              "threads, workgroup, bytes...> (threads and "
                              "bytes positive, workgroup 0 or more), found "
                           << value;
  if (sizes[1] && sizes[0] % sizes[1])
    return op->emitError() << "'hpvm.tensor_launch' runs " << sizes[0]
                           << " threads in work-groups of " << sizes[1]
                           << " (expected a multiple)";
  if (!op->hasAttr(HPVMDialect::getTensorKernelAttrName()))
    return op->emitError() << "'hpvm.tensor_launch' is only valid on a "
                              "leaf with 'hpvm.tensor_kernel' (a tensor "
                              "kernel's launch)";
  return success();
}

/// Whether `name` is an attribute of a leaf that names its variant leaf (or,
/// for 'hpvm.contraction_plan', its plan function).
static bool isVariantAttribute(StringRef name) {
  return name == HPVMDialect::getVectorVariantAttrName() ||
         name == HPVMDialect::getBlockVariantAttrName() ||
         name == HPVMDialect::getRemainderVariantAttrName() ||
         name == HPVMDialect::getTileVariantAttrName() ||
         name == HPVMDialect::getContractionVariantAttrName() ||
         name == HPVMDialect::getContractionPlanAttrName();
}

/// A variant attribute `name` on `op` (see isVariantAttribute): a symbol
/// reference on a leaf.
static LogicalResult verifyVariant(Operation *op, StringRef name,
                                   Attribute value) {
  if (!isa<LeafOp>(op))
    return emitNotOnLeaf(op, name);
  if (!isa<FlatSymbolRefAttr>(value))
    return op->emitError() << "'" << name
                           << "' expects a symbol reference (the "
                           << (name == HPVMDialect::getContractionPlanAttrName()
                                   ? "plan function"
                                   : "variant leaf")
                           << "), found " << value;
  return success();
}

/// 'hpvm.rows' on `op`: the row count (at least 2) of a block variant, which
/// is also a lane variant.
static LogicalResult verifyRows(Operation *op, Attribute value) {
  auto rows = dyn_cast<IntegerAttr>(value);
  if (!rows || !rows.getType().isInteger(64) || rows.getInt() < 2)
    return op->emitError()
           << "'hpvm.rows' expects an i64 row count of at least 2, found "
           << value;
  if (!op->hasAttr(HPVMDialect::getLanesAttrName()))
    return op->emitError() << "'hpvm.rows' marks a block variant, which "
                              "is a lane variant: 'hpvm.lanes' is missing";
  return success();
}

/// 'hpvm.lanes' on `op`: the lane count (at least 2) of a lane variant leaf,
/// whose first output is the i1 'ran all lanes'.
static LogicalResult verifyLanes(Operation *op, Attribute value) {
  auto leaf = dyn_cast<LeafOp>(op);
  if (!leaf)
    return emitNotOnLeaf(op, HPVMDialect::getLanesAttrName());
  auto lanes = dyn_cast<IntegerAttr>(value);
  if (!lanes || !lanes.getType().isInteger(64) || lanes.getInt() < 2)
    return op->emitError()
           << "'hpvm.lanes' expects an i64 lane count of at least 2, found "
           << value;
  ArrayRef<Type> results = leaf.getResultTypes();
  if (results.empty() || !results.front().isInteger(1))
    return op->emitError() << "'hpvm.lanes' marks a lane variant, whose "
                              "first output is the i1 'ran all lanes'; "
                              "found outputs ("
                           << results << ")";
  return success();
}

LogicalResult HPVMDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  if (name == getTargetsAttrName()) {
    if (!isa<NodeOpInterface>(op))
      return op->emitError()
             << "'hpvm.targets' is only valid on node definitions "
                "(hpvm.leaf, hpvm.internal), found on '"
             << op->getName() << "'";
    return verifyTargetList(op, attribute.getValue());
  }
  if (name == getDispatchAttrName())
    return verifyDispatch(op, attribute.getValue());
  if (name == getKernelAttrName()) {
    if (!isa<NodeOpInterface>(op))
      return op->emitError()
             << "'hpvm.kernel' is only valid on node definitions "
                "(hpvm.leaf, hpvm.internal), found on '"
             << op->getName() << "'";
    if (!isa<SymbolRefAttr>(attribute.getValue()))
      return op->emitError() << "'hpvm.kernel' expects a symbol reference "
                                "(the node's kernel), found "
                             << attribute.getValue();
    return success();
  }
  if (name == getKernelPerInstanceAttrName())
    return verifyKernelPerInstance(op, attribute.getValue());
  if (name == getTensorKernelAttrName())
    return verifyTensorKernel(op, attribute.getValue());
  if (name == getTensorLaunchAttrName())
    return verifyTensorLaunch(op, attribute.getValue());
  if (name == getTensorLibraryAttrName()) {
    if (!isa<LeafOp>(op))
      return emitNotOnLeaf(op, name);
    if (!isa<DictionaryAttr>(attribute.getValue()))
      return op->emitError() << "'hpvm.tensor_library' expects a dictionary (the "
                                "library call), found "
                             << attribute.getValue();
    return success();
  }
  if (isVariantAttribute(name))
    return verifyVariant(op, name, attribute.getValue());
  if (name == getRowsAttrName())
    return verifyRows(op, attribute.getValue());
  if (name == getLanesAttrName())
    return verifyLanes(op, attribute.getValue());
  if (name == getKnobAttrName()) {
    if (!isa<KnobAttr>(attribute.getValue()))
      return op->emitError() << "'hpvm.knob' expects a #hpvm.knob, found "
                             << attribute.getValue();
    return verifyKnobPlacement(op, cast<KnobAttr>(attribute.getValue()), [op] {
      return op->emitError() << "'hpvm.knob' ";
    });
  }
  if (name == getErrorAttrName()) {
    if (!isa<NodeOpInterface>(op))
      return op->emitError()
             << "'hpvm.error' is only valid on node definitions (hpvm.leaf, "
                "hpvm.internal; tensor ops carry their budget as 'error'), found on '"
             << op->getName() << "'";
    if (!isa<ErrorBudgetAttr>(attribute.getValue()))
      return op->emitError() << "'hpvm.error' expects a #hpvm.error<l1 = .., l2 = ..>, found "
                             << attribute.getValue();
    return success();
  }
  if (name == getParametersAttrName()) {
    if (!isa<ModuleOp>(op))
      return op->emitError() << "'hpvm.parameters' is only valid on a module, found on '"
                             << op->getName() << "'";
    auto path = dyn_cast<StringAttr>(attribute.getValue());
    if (!path || path.getValue().empty())
      return op->emitError() << "'hpvm.parameters' expects the path of a parameter "
                                "archive (a non-empty string), found "
                             << attribute.getValue();
    return success();
  }
  if (name == getAccessAttrName())
    return op->emitError() << "'hpvm.access' is an argument attribute of node "
                              "definitions, found on the op '"
                           << op->getName() << "' itself";
  return op->emitError() << "unknown hpvm attribute '" << name
                         << "'; expected 'hpvm.targets', 'hpvm.dispatch', "
                            "'hpvm.kernel', 'hpvm.kernel_per_instance', "
                            "'hpvm.tensor_kernel', 'hpvm.tensor_launch', 'hpvm.tensor_library', "
                            "'hpvm.vector_variant', 'hpvm.lanes', "
                            "'hpvm.block_variant', 'hpvm.remainder_variant', "
                            "'hpvm.tile_variant', 'hpvm.contraction_variant', "
                            "'hpvm.contraction_plan', 'hpvm.rows', 'hpvm.knob', "
                            "'hpvm.error' or 'hpvm.parameters'";
}

//===----------------------------------------------------------------------===//
// Approximation knobs: which op each kind implements.
//===----------------------------------------------------------------------===//

ReduceCombiner mlir::hpvm::classifyReduceCombiner(TensorReduceOp reduce,
                                                  std::string *found) {
  auto say = [&](const Twine &what) {
    if (found)
      *found = what.str();
    return ReduceCombiner::other;
  };
  // Attributes are verified before the op's own invariants: the region may be
  // anything yet.
  Region &region = reduce.getCombiner();
  if (!region.hasOneBlock())
    return say("no single block");
  Block &block = region.front();
  if (block.getNumArguments() != 2)
    return say(Twine(block.getNumArguments()) +
               (block.getNumArguments() == 1 ? " block argument" : " block arguments"));
  if (block.empty() || !isa<TensorYieldOp>(block.back()))
    return say("a region without hpvm.tensor.yield");
  if (!llvm::hasSingleElement(block.without_terminator()))
    return say(Twine(std::distance(block.without_terminator().begin(),
                                   block.without_terminator().end())) +
               " ops before the yield");
  Operation &combine = block.front();
  StringRef name = combine.getName().getStringRef();
  ReduceCombiner kind = ReduceCombiner::other;
  if (name == "arith.addf")
    kind = ReduceCombiner::sum;
  else if (llvm::is_contained({"arith.maximumf", "arith.minimumf", "arith.maxnumf",
                               "arith.minnumf"},
                              name))
    kind = ReduceCombiner::extremum;
  if (kind == ReduceCombiner::other)
    return say("'" + name + "'");
  Value accumulator = block.getArgument(0), element = block.getArgument(1);
  bool operandsFit = combine.getNumOperands() == 2 && combine.getNumResults() == 1 &&
                     ((combine.getOperand(0) == accumulator && combine.getOperand(1) == element) ||
                      (combine.getOperand(0) == element && combine.getOperand(1) == accumulator));
  if (!operandsFit)
    return say("'" + name + "' of other operands than the accumulator and the element");
  if (cast<TensorYieldOp>(block.back()).getValue() != combine.getResult(0))
    return say("'" + name + "' whose result is not the value yielded");
  return kind;
}

LogicalResult
mlir::hpvm::verifyKnobPlacement(Operation *op, KnobAttr knob,
                                function_ref<InFlightDiagnostic()> emitError) {
  StringRef kind = stringifyKnobKind(knob.getKind());
  // The knob on an op it has no implementation for.
  auto onlyOn = [&](StringRef opName, StringRef why) {
    return emitError() << "#hpvm.knob<" << kind << "> applies to " << opName << " only ("
                       << why << "), found on '" << op->getName() << "'";
  };
  if (knob.isPrecision()) {
    if (!isa<TensorMulOp>(op))
      return onlyOn("hpvm.tensor.mul", "half-precision storage of a product's operands");
    for (Type type : llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
      if (!cast<RankedTensorType>(type).getElementType().isF32())
        return emitError() << "#hpvm.knob<" << kind
                           << "> expects f32 operands and result (stored in "
                           << kind << " by the knob), found " << type;
    return success();
  }
  if (knob.getKind() != KnobKind::sample_reduction) {
    if (!isa<TensorConv2DOp>(op))
      return onlyOn("hpvm.tensor.conv2d", "perforate_rows, perforate_cols and sample_filter "
                                          "approximate convolutions");
    return success();
  }
  auto reduce = dyn_cast<TensorReduceOp>(op);
  if (!reduce)
    return onlyOn("hpvm.tensor.reduce", "it samples the elements a reduction combines");
  std::string found;
  if (classifyReduceCombiner(reduce, &found) == ReduceCombiner::other)
    return emitError() << "#hpvm.knob<" << kind
                       << "> expects a combiner that is one arith.addf, arith.maximumf, "
                          "arith.minimumf, arith.maxnumf or arith.minnumf of the "
                          "accumulator and the element, found "
                       << found;
  return success();
}

LogicalResult HPVMDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  if (name != getAccessAttrName())
    return op->emitError() << "unknown hpvm argument attribute '" << name
                           << "'; expected 'hpvm.access'";
  if (!isa<NodeOpInterface>(op))
    return op->emitError() << "'hpvm.access' is only valid on arguments of "
                              "node definitions, found on '"
                           << op->getName() << "'";
  if (!isa<AccessAttr>(attribute.getValue()))
    return op->emitError() << "'hpvm.access' of argument " << argIndex
                           << " expects #hpvm.access<in|out|inout>, found "
                           << attribute.getValue();
  auto function = cast<FunctionOpInterface>(op);
  if (argIndex < function.getNumArguments()) {
    Type type = function.getArgumentTypes()[argIndex];
    if (!isa<MemRefType, LLVM::LLVMPointerType>(type))
      return op->emitError() << "'hpvm.access' on argument " << argIndex
                             << " expects a memref or !llvm.ptr argument, "
                                "found "
                             << type;
  }
  return success();
}

LogicalResult HPVMDialect::verifyRegionResultAttribute(
    Operation *op, unsigned regionIndex, unsigned resultIndex,
    NamedAttribute attribute) {
  return op->emitError() << "unknown hpvm result attribute '"
                         << attribute.getName().getValue()
                         << "': hpvm defines no result attributes";
}

std::string mlir::hpvm::getNodeDisplayName(StringRef symbol) {
  if (!symbol.starts_with("_Z"))
    return symbol.str();
  llvm::ItaniumPartialDemangler demangler;
  std::string mangled = symbol.str();
  if (demangler.partialDemangle(mangled.c_str()) || !demangler.isFunction())
    return mangled;
  char *name = demangler.getFunctionName(nullptr, nullptr);
  if (!name)
    return mangled;
  std::string result(name);
  std::free(name);
  return result;
}
