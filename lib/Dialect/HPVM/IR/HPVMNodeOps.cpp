//===- HPVMNodeOps.cpp - Node definitions and leaf intrinsics -------------===//
// hpvm.leaf and hpvm.internal (parsing, printing, signatures, what an internal
// node may hold), the placement traits, the grid queries checked against the
// hierarchy, hpvm.return and hpvm.alloc. The child graph is checked in
// HPVMGraphOps.cpp, host code in HPVMHostOps.cpp.
#include "VerifierSupport.h"

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"
#include "HPVM/Dialect/HPVM/IR/NodeUses.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::verifier;

//===----------------------------------------------------------------------===//
// Placement traits
//===----------------------------------------------------------------------===//

LogicalResult mlir::hpvm::detail::verifyInLeaf(Operation *op) {
  if (op->getParentOfType<LeafOp>())
    return success();
  Operation *parent = op->getParentOp();
  InFlightDiagnostic diag = op->emitOpError()
                            << "expects to be nested in an 'hpvm.leaf': only "
                               "leaf nodes compute";
  if (parent)
    diag << "; found in '" << parent->getName() << "'";
  return diag;
}

LogicalResult mlir::hpvm::detail::verifyHostOnly(Operation *op) {
  if (auto node = op->getParentOfType<NodeOpInterface>())
    return op->emitOpError()
           << "is host code and must be outside node definitions; found in '"
           << node->getName() << "' " << nodeName(node);
  // Host code runs when a function runs; a module body never does.
  if (!op->getParentOfType<FunctionOpInterface>())
    return op->emitOpError() << "is host code and must be inside a function; found in '"
                             << op->getParentOp()->getName() << "'";
  return success();
}

//===----------------------------------------------------------------------===//
// Node definitions: hpvm.leaf, hpvm.internal
//===----------------------------------------------------------------------===//

/// Parses `@name(%arg: type {attrs}, ...) -> (types) attributes {...} {body}`.
/// Unlike func.func, a body is mandatory: a node must say what it does.
template <typename NodeOp>
static ParseResult parseNodeDefinition(OpAsmParser &parser,
                                       OperationState &result) {
  Builder &builder = parser.getBuilder();
  StringAttr nameAttr;
  (void)mlir::impl::parseOptionalVisibilityKeyword(parser, result.attributes);
  if (parser.parseSymbolName(nameAttr, SymbolTable::getSymbolAttrName(),
                             result.attributes))
    return failure();

  SmallVector<OpAsmParser::Argument> arguments;
  SmallVector<DictionaryAttr> resultAttrs;
  SmallVector<Type> resultTypes;
  bool isVariadic = false;
  SMLoc signatureLoc = parser.getCurrentLocation();
  if (function_interface_impl::parseFunctionSignatureWithArguments(
          parser, /*allowVariadic=*/false, arguments, isVariadic, resultTypes,
          resultAttrs))
    return failure();
  SmallVector<Type> argumentTypes;
  for (OpAsmParser::Argument &argument : arguments) {
    if (argument.ssaName.name.empty())
      return parser.emitError(signatureLoc)
             << "node arguments must be named (%name: type) because the "
                "body uses them";
    argumentTypes.push_back(argument.type);
  }
  result.addAttribute(NodeOp::getFunctionTypeAttrName(result.name),
                      TypeAttr::get(builder.getFunctionType(argumentTypes,
                                                            resultTypes)));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  call_interface_impl::addArgAndResultAttrs(
      builder, result, arguments, resultAttrs,
      NodeOp::getArgAttrsAttrName(result.name),
      NodeOp::getResAttrsAttrName(result.name));

  Region *body = result.addRegion();
  SMLoc bodyLoc = parser.getCurrentLocation();
  OptionalParseResult parsedBody =
      parser.parseOptionalRegion(*body, arguments, /*enableNameShadowing=*/false);
  if (!parsedBody.has_value())
    return parser.emitError(parser.getNameLoc())
           << "expected a body: node definitions cannot be declarations";
  if (failed(*parsedBody))
    return failure();
  // An internal node without children and inputs prints as `{}`.
  if (body->empty()) {
    if constexpr (std::is_same_v<NodeOp, LeafOp>)
      return parser.emitError(bodyLoc)
             << "expected a non-empty body ending in 'hpvm.return'";
    body->emplaceBlock();
  }
  return success();
}

static void printNodeDefinition(OpAsmPrinter &printer, FunctionOpInterface op) {
  printer << ' ';
  if (auto visibility =
          op->getAttrOfType<StringAttr>(SymbolTable::getVisibilityAttrName()))
    printer << visibility.getValue() << ' ';
  printer.printSymbolName(op.getName());
  function_interface_impl::printFunctionSignature(
      printer, op, op.getArgumentTypes(), /*isVariadic=*/false,
      op.getResultTypes());
  function_interface_impl::printFunctionAttributes(
      printer, op,
      {SymbolTable::getVisibilityAttrName(), "function_type", "arg_attrs",
       "res_attrs"});
  printer << ' ';
  printer.printRegion(op->getRegion(0), /*printEntryBlockArgs=*/false,
                      /*printBlockTerminators=*/true);
}

ParseResult LeafOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseNodeDefinition<LeafOp>(parser, result);
}
void LeafOp::print(OpAsmPrinter &printer) {
  printNodeDefinition(printer, *this);
}
ParseResult InternalOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseNodeDefinition<InternalOp>(parser, result);
}
void InternalOp::print(OpAsmPrinter &printer) {
  printNodeDefinition(printer, *this);
}

/// Builds a node definition with an entry block whose arguments are the
/// inputs; the caller fills the body.
template <typename NodeOp>
static void buildNodeDefinition(OpBuilder &builder, OperationState &state,
                                StringRef name, FunctionType type,
                                ArrayRef<NamedAttribute> attrs) {
  state.addAttribute(SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addAttribute(NodeOp::getFunctionTypeAttrName(state.name),
                     TypeAttr::get(type));
  state.attributes.append(attrs.begin(), attrs.end());
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Type input : type.getInputs())
    block->addArgument(input, state.location);
}

void LeafOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                   FunctionType type, ArrayRef<NamedAttribute> attrs) {
  buildNodeDefinition<LeafOp>(builder, state, name, type, attrs);
}
void InternalOp::build(OpBuilder &builder, OperationState &state,
                       StringRef name, FunctionType type,
                       ArrayRef<NamedAttribute> attrs) {
  buildNodeDefinition<InternalOp>(builder, state, name, type, attrs);
}

bool LeafOp::isLeafNode() { return true; }
bool InternalOp::isLeafNode() { return false; }

/// Rules shared by both kinds of node definition.
static LogicalResult verifyNodeSignature(FunctionOpInterface node) {
  auto isHandle = [](Type type) { return isa<NodeType, hpvm::GraphType>(type); };
  for (auto [index, type] : llvm::enumerate(node.getArgumentTypes()))
    if (isHandle(type))
      return node->emitOpError()
             << "input " << index << " has type " << type
             << ", but node and graph handles cannot cross node boundaries";
  for (auto [index, type] : llvm::enumerate(node.getResultTypes()))
    if (isHandle(type))
      return node->emitOpError()
             << "output " << index << " has type " << type
             << ", but node and graph handles cannot cross node boundaries";
  return success();
}

LogicalResult LeafOp::verify() { return verifyNodeSignature(*this); }

std::optional<SmallVector<unsigned>> LeafOp::getPassedOnInputs() {
  SmallVector<unsigned> inputs(getResultTypes().size(), 0);
  bool seen = false;
  Block *entry = &getBodyBlock();
  WalkResult result = walk([&](ReturnOp ret) {
    for (auto [port, value] : llvm::enumerate(ret.getOperands())) {
      auto argument = dyn_cast<BlockArgument>(value);
      if (!argument || argument.getOwner() != entry ||
          (seen && inputs[port] != argument.getArgNumber()))
        return WalkResult::interrupt();
      inputs[port] = argument.getArgNumber();
    }
    seen = true;
    return WalkResult::advance();
  });
  if (result.wasInterrupted() || (!seen && !inputs.empty()))
    return std::nullopt;
  return inputs;
}

/// Ops an internal node may hold besides graph ops: side-effect-free scalar
/// arithmetic computing child extents (constants, arith and index ops).
static bool isExtentArithmetic(Operation *op) {
  if (op->getNumRegions() != 0 || !isMemoryEffectFree(op))
    return false;
  return llvm::all_of(op->getResultTypes(), [](Type type) {
    return type.isIntOrIndexOrFloat();
  });
}

LogicalResult InternalOp::verify() {
  if (failed(verifyNodeSignature(*this)))
    return failure();
  for (Operation &op : getBodyBlock()) {
    if (isa<CreateNodeOp, EdgeOp, BindInOp, BindOutOp>(op) ||
        isExtentArithmetic(&op))
      continue;
    // Leaf-only and host-only hpvm ops report their misplacement themselves,
    // more precisely.
    if (op.hasTrait<OpTrait::InLeaf>() || op.hasTrait<OpTrait::HostOnly>())
      continue;
    return op.emitOpError()
           << "cannot appear in 'hpvm.internal' " << nodeName(*this)
           << ": an internal node holds only graph ops and side-effect-free "
              "scalar arithmetic computing child extents";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Leaf verification that needs the hierarchy: grid queries
//===----------------------------------------------------------------------===//

/// Describes a use of a node for diagnostics.
static std::string describeUse(NodeUse use) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto create = dyn_cast<CreateNodeOp>(use.op)) {
    os << "'hpvm.create_node @" << create.getNode() << "' in @"
       << use.parent.getSymName() << " gives it "
       << count(use.rank, "dimension");
  } else {
    os << "it is launched as a root by 'hpvm.launch', which has a single "
          "instance";
  }
  return text;
}

/// The error of a grid query whose dimension `use` does not replicate.
static InFlightDiagnostic emitDimensionError(Operation *query, Dim dim,
                                             unsigned level, LeafOp leaf,
                                             const NodeUse &use) {
  std::string subject =
      level == 0 ? ("@" + leaf.getSymName()).str()
                 : "the ancestor " + std::to_string(level) + " level" +
                       (level == 1 ? "" : "s") + " above @" +
                       leaf.getSymName().str();
  InFlightDiagnostic diag = query->emitOpError()
                            << "refers to dimension " << stringifyDim(dim)
                            << " of " << subject << ", but "
                            << describeUse(use);
  diag.attachNote(use.op->getLoc()) << "instantiated here";
  return diag;
}

static InFlightDiagnostic emitRootTooLowError(Operation *query, unsigned level,
                                              LeafOp leaf, Operation *launch) {
  InFlightDiagnostic diag = query->emitOpError()
                            << "refers to level " << level << " above @"
                            << leaf.getSymName()
                            << ", but the hierarchy above it ends earlier "
                               "at a launched root";
  diag.attachNote(launch->getLoc()) << "the root is launched here";
  return diag;
}

/// Grid queries of levels up to this are checked from the uses down
/// (verifyGridQueriesBelow), which costs each use only the few levels below
/// it; deeper ones, from the leaf up through a module-wide NodeUses.
static constexpr unsigned kTopDownQueryLevels = 8;

/// The dimension and level of a grid query, if `op` is one.
static std::optional<std::pair<Dim, unsigned>> getGridQuery(Operation *op) {
  if (auto id = dyn_cast<InstanceIdOp>(op))
    return std::make_pair(id.getDim(), id.getLevel());
  if (auto count = dyn_cast<NumInstancesOp>(op))
    return std::make_pair(count.getDim(), count.getLevel());
  return std::nullopt;
}

LogicalResult
mlir::hpvm::verifier::verifyGridQueriesBelow(const NodeUse &use,
                                                StringAttr node,
                                                SymbolTableCollection &symbols) {
  // The symbol table holding the node definitions, as for the leaf.
  Operation *module = use.op->getParentWithTrait<mlir::OpTrait::SymbolTable>();
  if (!module)
    return success();
  bool launched = !use.parent;
  SmallVector<StringAttr> frontier{node};
  for (unsigned depth = 0; depth <= kTopDownQueryLevels && !frontier.empty();
       ++depth) {
    SmallVector<StringAttr> next;
    llvm::SmallDenseSet<StringAttr> seen;
    for (StringAttr name : frontier) {
      auto definition =
          dyn_cast_or_null<NodeOpInterface>(symbols.lookupSymbolIn(module, name));
      if (!definition)
        continue;
      if (auto internal = dyn_cast<InternalOp>(definition.getOperation())) {
        if (internal.getBody().empty())
          continue;
        for (auto create : internal.getBodyBlock().getOps<CreateNodeOp>())
          if (seen.insert(create.getNodeAttr().getAttr()).second)
            next.push_back(create.getNodeAttr().getAttr());
        continue;
      }
      auto leaf = cast<LeafOp>(definition.getOperation());
      WalkResult result = leaf.walk([&](Operation *op) {
        std::optional<std::pair<Dim, unsigned>> query = getGridQuery(op);
        if (!query || query->second > kTopDownQueryLevels)
          return WalkResult::advance();
        auto [dim, level] = *query;
        if (level == depth && static_cast<unsigned>(dim) >= use.rank) {
          (void)emitDimensionError(op, dim, level, leaf, use);
          return WalkResult::interrupt();
        }
        if (launched && level > depth) {
          (void)emitRootTooLowError(op, level, leaf, use.op);
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
      if (result.wasInterrupted())
        return failure();
    }
    frontier = std::move(next);
  }
  return success();
}

LogicalResult LeafOp::verifySymbolUses(SymbolTableCollection &) {
  // Queries of the usual levels are checked at the uses above the leaf
  // (verifyGridQueriesBelow); only deeper ones need the whole hierarchy.
  Operation *module = (*this)->getParentWithTrait<mlir::OpTrait::SymbolTable>();
  if (!module)
    return success();
  SmallVector<Operation *> queries;
  walk([&](Operation *op) {
    std::optional<std::pair<Dim, unsigned>> query = getGridQuery(op);
    if (query && query->second > kTopDownQueryLevels)
      queries.push_back(op);
  });
  if (queries.empty())
    return success();
  NodeUses hierarchy(module);
  for (Operation *op : queries) {
    auto [dim, level] = *getGridQuery(op);
    Operation *rootTooLow = nullptr;
    SmallVector<NodeUse> ancestors =
        hierarchy.getAncestorUses(getSymNameAttr(), level, &rootTooLow);
    if (rootTooLow)
      return emitRootTooLowError(op, level, *this, rootTooLow);
    for (const NodeUse &use : ancestors)
      if (static_cast<unsigned>(dim) >= use.rank)
        return emitDimensionError(op, dim, level, *this, use);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// hpvm.return
//===----------------------------------------------------------------------===//

LogicalResult ReturnOp::verify() {
  auto leaf = cast<LeafOp>((*this)->getParentOp());
  ArrayRef<Type> expected = leaf.getResultTypes();
  if (getOperandTypes() != TypeRange(expected))
    return emitOpError() << "returns " << typeList(getOperandTypes())
                         << " but @" << leaf.getSymName() << " has outputs "
                         << typeList(expected);
  return success();
}

//===----------------------------------------------------------------------===//
// Leaf intrinsics
//===----------------------------------------------------------------------===//

LogicalResult AllocOp::verify() {
  if (isa<LLVM::LLVMPointerType>(getMemory().getType())) {
    if (getDynamicSizes().size() != 1)
      return emitOpError() << "expects one size in bytes for a '!llvm.ptr' "
                              "allocation, found "
                           << getDynamicSizes().size() << " sizes";
    return success();
  }
  auto type = cast<MemRefType>(getMemory().getType());
  if (getDynamicSizes().size() != static_cast<size_t>(type.getNumDynamicDims()))
    return emitOpError() << "expects one size per dynamic dimension of "
                         << type << " (" << type.getNumDynamicDims()
                         << "), found " << getDynamicSizes().size();
  if (!type.getLayout().isIdentity())
    return emitOpError() << "expects a memref with the identity layout, found "
                         << type;
  return success();
}

#define GET_OP_CLASSES
#include "HPVM/Dialect/HPVM/IR/HPVMOps.cpp.inc"

#include "HPVM/Dialect/HPVM/IR/HPVMInterfaces.cpp.inc"
