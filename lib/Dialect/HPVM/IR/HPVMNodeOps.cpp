//===- HPVMNodeOps.cpp - Node definitions, graph, intrinsic and host ops --===//
// Parsing, printing and verification of every hpvm op except the tensor ops.
#include "HPVM/Dialect/HPVM/Analysis/DataflowGraph.h"
#include "HPVM/Dialect/HPVM/Analysis/NodeHierarchy.h"
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::hpvm;

//===----------------------------------------------------------------------===//
// Diagnostic helpers
//===----------------------------------------------------------------------===//

/// "1 output", "3 inputs".
static std::string count(size_t n, StringRef noun) {
  return std::to_string(n) + " " + noun.str() + (n == 1 ? "" : "s");
}

/// "(f32, i64)" for a list of types.
static std::string typeList(TypeRange types) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "(";
  llvm::interleaveComma(types, os);
  os << ")";
  return text;
}

/// The name of a node definition for diagnostics, "@name".
static std::string nodeName(NodeOpInterface node) {
  return ("@" + cast<SymbolOpInterface>(node.getOperation()).getName()).str();
}

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
// Graph verification (needs the children's signatures)
//===----------------------------------------------------------------------===//

namespace {
/// Checks the child graph of one internal node against DESIGN.md §2.
class GraphVerifier {
public:
  GraphVerifier(InternalOp internal, SymbolTableCollection &symbolTable)
      : internal(internal), graph(internal, &symbolTable) {}

  LogicalResult verify() {
    if (failed(verifyEdges()) || failed(verifyBindIns()) ||
        failed(verifyBindOuts()) || failed(verifyInputsFedOnce()) ||
        failed(verifyOutputsBoundOnce()) || failed(verifyAcyclic()))
      return failure();
    return success();
  }

private:
  LogicalResult verifyEdges();
  LogicalResult verifyOneToOne(EdgeOp edge, unsigned source, unsigned dest);
  LogicalResult verifyBindIns();
  LogicalResult verifyBindOuts();
  LogicalResult verifyInputsFedOnce();
  LogicalResult verifyOutputsBoundOnce();
  LogicalResult verifyAcyclic();

  /// Checks that `port` is an output (`isOutput`) or input of `child`.
  LogicalResult verifyPort(Operation *op, StringRef what, unsigned child,
                           unsigned port, bool isOutput) {
    NodeOpInterface definition = graph.getDefinition(child);
    size_t available = isOutput ? definition.getOutputTypes().size()
                                : definition.getInputTypes().size();
    if (port < available)
      return success();
    return op->emitOpError()
           << what << " " << port << " out of range: "
           << graph.describeChild(child) << " has "
           << count(available, isOutput ? "output" : "input");
  }

  InternalOp internal;
  DataflowGraph graph;
};
} // namespace

LogicalResult GraphVerifier::verifyEdges() {
  llvm::DenseMap<std::pair<unsigned, unsigned>, EdgeOp> bySourcePort;
  for (EdgeOp edge : graph.getEdges()) {
    unsigned source = *graph.getChildIndex(edge.getSource());
    unsigned dest = *graph.getChildIndex(edge.getDest());
    NodeOpInterface sourceDef = graph.getDefinition(source);
    NodeOpInterface destDef = graph.getDefinition(dest);
    if (!sourceDef || !destDef)
      continue; // The unresolved create_node reports the error.
    unsigned sourcePort = edge.getSourcePort();
    unsigned destPort = edge.getDestPort();
    if (failed(verifyPort(edge, "source port", source, sourcePort, true)) ||
        failed(verifyPort(edge, "destination port", dest, destPort, false)))
      return failure();
    Type produced = sourceDef.getOutputTypes()[sourcePort];
    Type consumed = destDef.getInputTypes()[destPort];
    if (produced != consumed)
      return edge.emitOpError()
             << "type mismatch: output " << sourcePort << " of "
             << graph.describeChild(source) << " is " << produced
             << " but input " << destPort << " of "
             << graph.describeChild(dest) << " is " << consumed;
    auto [it, inserted] = bySourcePort.try_emplace({source, sourcePort}, edge);
    if (!inserted) {
      InFlightDiagnostic diag =
          edge.emitOpError()
          << "output " << sourcePort << " of " << graph.describeChild(source)
          << " already feeds an edge; expected one edge per output port";
      diag.attachNote(it->second.getLoc()) << "the first edge is here";
      return diag;
    }
    if (source == dest)
      return edge.emitOpError()
             << "connects " << graph.describeChild(source)
             << " to itself; the child graph must be acyclic";
    if (edge.getReplication() == Replication::one_to_one &&
        failed(verifyOneToOne(edge, source, dest)))
      return failure();
  }
  return success();
}

LogicalResult GraphVerifier::verifyOneToOne(EdgeOp edge, unsigned source,
                                            unsigned dest) {
  CreateNodeOp from = graph.getChild(source), to = graph.getChild(dest);
  if (from.getRank() != to.getRank())
    return edge.emitOpError()
           << "one_to_one edge joins " << graph.describeChild(source)
           << " with " << count(from.getRank(), "dimension") << " to "
           << graph.describeChild(dest) << " with "
           << count(to.getRank(), "dimension")
           << "; expected grids of equal rank";
  for (unsigned d = 0, e = from.getRank(); d < e; ++d) {
    Value a = from.getDims()[d], b = to.getDims()[d];
    if (a == b)
      continue;
    APInt extentA, extentB;
    if (matchPattern(a, m_ConstantInt(&extentA)) &&
        matchPattern(b, m_ConstantInt(&extentB)) && extentA != extentB)
      return edge.emitOpError()
             << "one_to_one edge joins grids of different extents: dimension "
             << d << " is " << extentA.getSExtValue() << " in "
             << graph.describeChild(source) << " but "
             << extentB.getSExtValue() << " in " << graph.describeChild(dest);
  }
  return success();
}

LogicalResult GraphVerifier::verifyBindIns() {
  for (BindInOp bind : graph.getBindIns()) {
    unsigned dest = *graph.getChildIndex(bind.getDest());
    NodeOpInterface destDef = graph.getDefinition(dest);
    if (!destDef)
      continue;
    unsigned port = bind.getDestPort();
    if (failed(verifyPort(bind, "destination port", dest, port, false)))
      return failure();
    Type consumed = destDef.getInputTypes()[port];
    auto argument = cast<BlockArgument>(bind.getInput());
    if (argument.getType() != consumed)
      return bind.emitOpError()
             << "type mismatch: input " << argument.getArgNumber() << " of "
             << nodeName(internal) << " is " << argument.getType()
             << " but input " << port << " of " << graph.describeChild(dest)
             << " is " << consumed;
  }
  return success();
}

LogicalResult GraphVerifier::verifyBindOuts() {
  for (BindOutOp bind : graph.getBindOuts()) {
    unsigned source = *graph.getChildIndex(bind.getSource());
    NodeOpInterface sourceDef = graph.getDefinition(source);
    if (!sourceDef)
      continue;
    unsigned port = bind.getSourcePort();
    if (failed(verifyPort(bind, "source port", source, port, true)))
      return failure();
    Type produced = sourceDef.getOutputTypes()[port];
    Type expected = internal.getResultTypes()[bind.getOutput()];
    if (produced != expected)
      return bind.emitOpError()
             << "type mismatch: output " << port << " of "
             << graph.describeChild(source) << " is " << produced
             << " but output " << bind.getOutput() << " of "
             << nodeName(internal) << " is " << expected;
  }
  return success();
}

LogicalResult GraphVerifier::verifyInputsFedOnce() {
  for (unsigned child = 0, e = graph.getNumChildren(); child < e; ++child) {
    NodeOpInterface definition = graph.getDefinition(child);
    if (!definition)
      continue;
    ArrayRef<Type> inputs = definition.getInputTypes();
    for (unsigned port = 0, n = inputs.size(); port < n; ++port) {
      SmallVector<Operation *> feeders = graph.getFeeders(child, port);
      if (feeders.empty())
        return graph.getChild(child).emitOpError()
               << "input " << port << " (" << inputs[port] << ") of "
               << graph.describeChild(child)
               << " is never fed: expected one hpvm.edge or hpvm.bind_in "
                  "to it";
      if (feeders.size() == 1)
        continue;
      // The three ways to feed an input twice: DESIGN.md's "(dst, dp) unique
      // among edges", "(dst, ic) unique among binds" and "fed exactly once".
      bool firstIsEdge = isa<EdgeOp>(feeders[0]);
      bool secondIsEdge = isa<EdgeOp>(feeders[1]);
      StringRef how = firstIsEdge && secondIsEdge ? "is the destination of two edges"
                      : !firstIsEdge && !secondIsEdge
                          ? "is bound twice by hpvm.bind_in"
                          : "is fed by both an edge and a bind_in";
      InFlightDiagnostic diag = feeders[1]->emitOpError()
                                << "input " << port << " of "
                                << graph.describeChild(child) << " " << how
                                << "; expected exactly one edge or bind_in";
      diag.attachNote(feeders[0]->getLoc()) << "first fed here";
      return diag;
    }
  }
  return success();
}

LogicalResult GraphVerifier::verifyOutputsBoundOnce() {
  for (unsigned output = 0, e = internal.getNumResults(); output < e;
       ++output) {
    SmallVector<BindOutOp> binds = graph.getOutputBinds(output);
    if (binds.empty())
      return internal.emitOpError()
             << "output " << output << " ("
             << internal.getResultTypes()[output]
             << ") is never bound: expected one hpvm.bind_out to it";
    if (binds.size() > 1) {
      InFlightDiagnostic diag = binds[1].emitOpError()
                                << "output " << output << " of "
                                << nodeName(internal)
                                << " is bound twice; expected exactly once";
      diag.attachNote(binds[0].getLoc()) << "first bound here";
      return diag;
    }
  }
  return success();
}

LogicalResult GraphVerifier::verifyAcyclic() {
  SmallVector<unsigned> cycle = graph.findCycle();
  if (cycle.empty())
    return success();
  std::string path;
  for (auto [i, child] : llvm::enumerate(cycle))
    path += (i ? " -> " : "") + graph.describeChild(child);
  // Report on the edge closing the cycle.
  unsigned last = cycle[cycle.size() - 2], first = cycle.back();
  EdgeOp closing;
  for (EdgeOp edge : graph.getOutgoingEdges(last))
    if (*graph.getChildIndex(edge.getDest()) == first)
      closing = edge;
  return closing.emitOpError()
         << "closes a cycle in the child graph of " << nodeName(internal)
         << ": " << path << "; the graph must be acyclic";
}

LogicalResult InternalOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  // Recursion first: graph checks of a recursive hierarchy are meaningless.
  if (Operation *module =
          (*this)->getParentWithTrait<mlir::OpTrait::SymbolTable>()) {
    SmallVector<StringAttr> chain =
        findNodeRecursion(getSymNameAttr(), [&](StringAttr name) {
          return dyn_cast_or_null<NodeOpInterface>(
              symbolTable.lookupSymbolIn(module, name));
        });
    if (!chain.empty()) {
      std::string path;
      for (auto [i, name] : llvm::enumerate(chain))
        path += (i ? " -> @" : "@") + name.str();
      return emitOpError() << "instantiates itself: " << path
                           << "; the node hierarchy must not be recursive";
    }
  }
  return GraphVerifier(*this, symbolTable).verify();
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
/// it; deeper ones, from the leaf up through a module-wide NodeHierarchy.
static constexpr unsigned kTopDownQueryLevels = 8;

/// The dimension and level of a grid query, if `op` is one.
static std::optional<std::pair<Dim, unsigned>> getGridQuery(Operation *op) {
  if (auto id = dyn_cast<InstanceIdOp>(op))
    return std::make_pair(id.getDim(), id.getLevel());
  if (auto count = dyn_cast<NumInstancesOp>(op))
    return std::make_pair(count.getDim(), count.getLevel());
  return std::nullopt;
}

/// Checks the grid queries that refer to the instances of `use` (a
/// create_node of `node`, or a launch of it): in each leaf k levels below,
/// the queries of level k. Below a launch, a query of a level beyond the
/// launched root is an error too.
static LogicalResult verifyGridQueriesBelow(const NodeUse &use,
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
  NodeHierarchy hierarchy(module);
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
// Graph ops
//===----------------------------------------------------------------------===//

NodeOpInterface
CreateNodeOp::getNodeDefinition(SymbolTableCollection &symbolTable) {
  return dyn_cast_or_null<NodeOpInterface>(
      symbolTable.lookupNearestSymbolFrom(*this, getNodeAttr()));
}

LogicalResult CreateNodeOp::verify() {
  if (getDims().size() > 3)
    return emitOpError() << "expects 0 to 3 replication dimensions, found "
                         << getDims().size();
  return success();
}

LogicalResult
CreateNodeOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Operation *symbol =
      symbolTable.lookupNearestSymbolFrom(*this, getNodeAttr());
  if (!symbol)
    return emitOpError() << "refers to @" << getNode()
                         << ", which is not defined";
  if (!isa<NodeOpInterface>(symbol))
    return emitOpError() << "refers to @" << getNode() << ", a '"
                         << symbol->getName()
                         << "'; expected a node definition (hpvm.leaf or "
                            "hpvm.internal)";
  auto parent = dyn_cast_or_null<InternalOp>((*this)->getParentOp());
  if (!parent)
    return success();
  return verifyGridQueriesBelow({*this, getRank(), parent},
                                getNodeAttr().getAttr(), symbolTable);
}

/// True when running `node` can have no effect but its outputs: every op in
/// it (and in the nodes it instantiates) at most reads memory. Calls, writes,
/// atomics, barriers and unknown ops count as effects.
static bool hasNoSideEffects(NodeOpInterface node,
                             SymbolTableCollection &symbolTable,
                             unsigned depth = 0) {
  if (!node || depth > 64)
    return false;
  WalkResult result = node->walk([&](Operation *op) {
    if (op == node.getOperation())
      return WalkResult::advance();
    if (auto create = dyn_cast<CreateNodeOp>(op))
      return hasNoSideEffects(create.getNodeDefinition(symbolTable),
                              symbolTable, depth + 1)
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    if (isa<EdgeOp, BindInOp, BindOutOp, ReturnOp>(op) ||
        op->hasTrait<mlir::OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const auto &instance : instances)
      if (!isa<MemoryEffects::Read>(instance.getEffect()))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

namespace {
/// Erases a child nobody reads from (no edge out of it, no bind_out) whose
/// definition has no side effects, together with the binds and edges into it.
struct EraseUnusedPureChild : public OpRewritePattern<CreateNodeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CreateNodeOp create,
                                PatternRewriter &rewriter) const override {
    Value handle = create.getHandle();
    for (Operation *user : handle.getUsers()) {
      if (auto edge = dyn_cast<EdgeOp>(user); edge && edge.getSource() == handle)
        return rewriter.notifyMatchFailure(create, "an edge reads an output");
      if (isa<BindOutOp>(user))
        return rewriter.notifyMatchFailure(create, "an output is bound out");
    }
    SymbolTableCollection symbolTable;
    if (!hasNoSideEffects(create.getNodeDefinition(symbolTable), symbolTable))
      return rewriter.notifyMatchFailure(create, "the node may have effects");
    for (Operation *user : llvm::make_early_inc_range(handle.getUsers()))
      rewriter.eraseOp(user);
    rewriter.eraseOp(create);
    return success();
  }
};
} // namespace

void CreateNodeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                               MLIRContext *context) {
  patterns.add<EraseUnusedPureChild>(context);
}

void CreateNodeOp::getAsmResultNames(
    function_ref<void(Value, StringRef)> setNameFn) {
  setNameFn(getHandle(), "node");
}

/// Checks that a node handle comes from a create_node of the same internal node.
static LogicalResult verifyChildHandle(Operation *op, Value handle,
                                       StringRef role) {
  auto create = handle.getDefiningOp<CreateNodeOp>();
  if (create && create->getBlock() == op->getBlock())
    return success();
  return op->emitOpError() << "expects its " << role
                           << " to be a child created by 'hpvm.create_node' "
                              "in the same internal node";
}

LogicalResult EdgeOp::verify() {
  return failure(failed(verifyChildHandle(*this, getSource(), "source")) ||
                 failed(verifyChildHandle(*this, getDest(), "destination")));
}

LogicalResult BindInOp::verify() {
  if (failed(verifyChildHandle(*this, getDest(), "destination")))
    return failure();
  auto argument = dyn_cast<BlockArgument>(getInput());
  if (!argument || argument.getOwner() != (*this)->getBlock()) {
    InFlightDiagnostic diag = emitOpError()
                              << "expects an input (block argument) of the "
                                 "enclosing hpvm.internal";
    if (Operation *def = getInput().getDefiningOp())
      diag << "; found a value defined by '" << def->getName() << "'";
    return diag;
  }
  return success();
}

LogicalResult BindOutOp::verify() {
  if (failed(verifyChildHandle(*this, getSource(), "source")))
    return failure();
  auto parent = cast<InternalOp>((*this)->getParentOp());
  if (getOutput() >= parent.getNumResults())
    return emitOpError() << "output index " << getOutput()
                         << " out of range: @" << parent.getSymName()
                         << " has " << count(parent.getNumResults(), "output");
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

//===----------------------------------------------------------------------===//
// Host ops
//===----------------------------------------------------------------------===//

/// Resolves the root node of a launch.
static FailureOr<NodeOpInterface> lookupRoot(LaunchOp launch,
                                             SymbolTableCollection &symbols) {
  Operation *symbol = symbols.lookupNearestSymbolFrom(launch, launch.getRootAttr());
  if (!symbol)
    return launch.emitOpError()
           << "refers to @" << launch.getRoot() << ", which is not defined";
  auto node = dyn_cast<NodeOpInterface>(symbol);
  if (!node)
    return launch.emitOpError()
           << "refers to @" << launch.getRoot() << ", a '" << symbol->getName()
           << "'; expected a node definition (hpvm.leaf or hpvm.internal)";
  return node;
}

LogicalResult LaunchOp::verify() {
  if (getPushed() && !getStreaming())
    return emitOpError("with 'pushed' must be 'streaming'");
  if (getPushed() && !getArgs().empty())
    return emitOpError() << "with 'pushed' takes its items from 'hpvm.push' and "
                            "has no operands, found "
                         << getArgs().size();
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<NodeOpInterface> root = lookupRoot(*this, symbolTable);
  if (failed(root))
    return failure();
  if (failed(verifyGridQueriesBelow({*this, 0, InternalOp()},
                                    getRootAttr().getAttr(), symbolTable)))
    return failure();
  if (getPushed())
    return success();
  ArrayRef<Type> inputs = root->getInputTypes();
  if (getArgs().getTypes() != TypeRange(inputs))
    return emitOpError() << "passes " << typeList(getArgs().getTypes())
                         << " but the root " << nodeName(*root)
                         << " expects inputs " << typeList(inputs);
  return success();
}

/// The launch that produced a graph handle and its root, when the handle is
/// traceable (a handle passed in as a function argument is not).
static std::optional<std::pair<LaunchOp, NodeOpInterface>>
traceGraph(Value graph, SymbolTableCollection &symbolTable) {
  auto launch = graph.getDefiningOp<LaunchOp>();
  if (!launch)
    return std::nullopt;
  auto root = dyn_cast_or_null<NodeOpInterface>(
      symbolTable.lookupNearestSymbolFrom(launch, launch.getRootAttr()));
  if (!root)
    return std::nullopt;
  return std::make_pair(launch, root);
}

/// Checks that a push/pop acts on a streaming graph.
static LogicalResult verifyStreamingUse(Operation *op, LaunchOp launch,
                                        NodeOpInterface root) {
  if (launch.getStreaming())
    return success();
  InFlightDiagnostic diag = op->emitOpError()
                            << "needs a streaming graph, but "
                            << nodeName(root)
                            << " was launched without 'streaming'";
  diag.attachNote(launch.getLoc()) << "launched here";
  return diag;
}

LogicalResult WaitOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto traced = traceGraph(getGraph(), symbolTable);
  if (!traced)
    return success();
  auto [launch, root] = *traced;
  if (launch.getStreaming()) {
    if (getNumResults() != 0)
      return emitOpError() << "on a streaming graph returns nothing (its "
                              "outputs are popped with hpvm.pop), found "
                           << count(getNumResults(), "result");
    return success();
  }
  ArrayRef<Type> outputs = root.getOutputTypes();
  if (getResultTypes() != TypeRange(outputs))
    return emitOpError() << "returns " << typeList(getResultTypes())
                         << " but the root " << nodeName(root)
                         << " has outputs " << typeList(outputs);
  return success();
}

LogicalResult PushOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto traced = traceGraph(getGraph(), symbolTable);
  if (!traced)
    return success();
  auto [launch, root] = *traced;
  if (failed(verifyStreamingUse(*this, launch, root)))
    return failure();
  ArrayRef<Type> inputs = root.getInputTypes();
  if (getArgs().getTypes() != TypeRange(inputs))
    return emitOpError() << "pushes " << typeList(getArgs().getTypes())
                         << " but the root " << nodeName(root)
                         << " expects inputs " << typeList(inputs);
  return success();
}

LogicalResult PopOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto traced = traceGraph(getGraph(), symbolTable);
  if (!traced)
    return success();
  auto [launch, root] = *traced;
  if (failed(verifyStreamingUse(*this, launch, root)))
    return failure();
  ArrayRef<Type> outputs = root.getOutputTypes();
  if (getResultTypes() != TypeRange(outputs))
    return emitOpError() << "pops " << typeList(getResultTypes())
                         << " but the root " << nodeName(root)
                         << " has outputs " << typeList(outputs);
  return success();
}

/// Memory-tracker ops: a memref carries its size; a pointer needs one, except
/// for untrack, which only forgets the buffer.
static LogicalResult verifyTrackerOperands(Operation *op, Value memory,
                                           Value size, bool needsSize) {
  bool isPointer = isa<LLVM::LLVMPointerType>(memory.getType());
  if (!isPointer && size)
    return op->emitOpError()
           << "takes no size for a memref, which carries its own";
  if (isPointer && needsSize && !size)
    return op->emitOpError()
           << "expects a size in bytes after an !llvm.ptr buffer";
  if (!needsSize && size)
    return op->emitOpError() << "takes no size";
  return success();
}

LogicalResult TrackOp::verify() {
  return verifyTrackerOperands(*this, getMemory(), getSize(), true);
}
LogicalResult UntrackOp::verify() {
  return verifyTrackerOperands(*this, getMemory(), getSize(), false);
}
LogicalResult RequestOp::verify() {
  return verifyTrackerOperands(*this, getMemory(), getSize(), true);
}

#define GET_OP_CLASSES
#include "HPVM/Dialect/HPVM/IR/HPVMOps.cpp.inc"

#include "HPVM/Dialect/HPVM/IR/HPVMInterfaces.cpp.inc"
