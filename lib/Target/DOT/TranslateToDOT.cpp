//===- TranslateToDOT.cpp - Graphviz export of HPVM dataflow graphs -------===//
// Expands the node hierarchy from each root and prints clusters, ports and edges.
#include "HPVM/Target/DOT.h"

#include "HPVM/Dialect/HPVM/Analysis/DataflowGraph.h"
#include "HPVM/Dialect/HPVM/Analysis/NodeHierarchy.h"
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::hpvm;

namespace {
/// Where edges attach to a drawn node instance: a leaf box is both its input
/// and output; an internal cluster has separate `in` and `out` port nodes.
struct DrawnNode {
  std::string input;
  std::string output;
};

class DOTWriter {
public:
  DOTWriter(ModuleOp module, llvm::raw_ostream &os)
      : module(module), os(os), hierarchy(module) {}

  LogicalResult write();

private:
  /// Draws an instance of `definition` created by `create` (null for a root)
  /// and returns its attachment points.
  DrawnNode draw(NodeOpInterface definition, CreateNodeOp create,
                 unsigned depth);
  DrawnNode drawInternal(InternalOp internal, StringRef label, unsigned depth);

  std::string freshId(StringRef prefix) {
    return (prefix + Twine(counter++)).str();
  }
  void indent(unsigned depth) { os.indent(2 * depth + 2); }

  ModuleOp module;
  llvm::raw_ostream &os;
  NodeHierarchy hierarchy;
  SymbolTableCollection symbols;
  unsigned counter = 0;
};
} // namespace

/// DOT string literal escaping.
static std::string quote(StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

/// "[64 x ?]" for the extents of a create_node (constants shown, else "?").
static std::string gridText(CreateNodeOp create) {
  if (!create || create.getRank() == 0)
    return "";
  SmallVector<std::string> extents;
  for (Value dim : create.getDims()) {
    APInt value;
    extents.push_back(matchPattern(dim, m_ConstantInt(&value))
                          ? std::to_string(value.getSExtValue())
                          : std::string("?"));
  }
  return "[" + llvm::join(extents, " x ") + "]";
}

static std::string targetText(NodeOpInterface node) {
  SmallVector<std::string> names;
  for (Target target : node.getTargets())
    names.push_back(stringifyTarget(target).str());
  return llvm::join(names, ",");
}

DrawnNode DOTWriter::draw(NodeOpInterface definition, CreateNodeOp create,
                          unsigned depth) {
  std::string name =
      ("@" + cast<SymbolOpInterface>(definition.getOperation()).getName())
          .str();
  std::string grid = gridText(create);
  std::string label = name + (grid.empty() ? "" : " " + grid);
  if (auto internal = dyn_cast<InternalOp>(definition.getOperation()))
    return drawInternal(internal, label, depth);
  std::string id = freshId("leaf");
  indent(depth);
  os << id << " [shape=box, style=\"rounded,filled\", fillcolor=\"#e8f0fe\", "
     << "label=" << quote(label + "\n" + targetText(definition)) << "];\n";
  return {id, id};
}

DrawnNode DOTWriter::drawInternal(InternalOp internal, StringRef label,
                                  unsigned depth) {
  std::string cluster = freshId("cluster_");
  DrawnNode ports{freshId("in"), freshId("out")};
  indent(depth);
  os << "subgraph " << cluster << " {\n";
  indent(depth + 1);
  os << "label=" << quote(label.str() + " (" + targetText(internal) + ")")
     << "; style=rounded; color=\"#5f6368\";\n";
  indent(depth + 1);
  os << ports.input << " [shape=invhouse, label=\"in\", fontsize=10];\n";
  if (internal.getNumResults() != 0) {
    indent(depth + 1);
    os << ports.output << " [shape=house, label=\"out\", fontsize=10];\n";
  }

  DataflowGraph graph(internal, &symbols);
  SmallVector<DrawnNode> children;
  for (unsigned i = 0, e = graph.getNumChildren(); i < e; ++i) {
    NodeOpInterface definition = graph.getDefinition(i);
    // The verifier rejects recursion; the depth limit keeps unverified input
    // from looping.
    if (!definition || depth > 64) {
      std::string id = freshId("missing");
      indent(depth + 1);
      os << id << " [shape=box, style=dashed, label="
         << quote("@" + graph.getChild(i).getNode().str() + " (unresolved)")
         << "];\n";
      children.push_back({id, id});
      continue;
    }
    children.push_back(draw(definition, graph.getChild(i), depth + 1));
  }
  for (EdgeOp edge : graph.getEdges()) {
    std::optional<unsigned> source = graph.getChildIndex(edge.getSource());
    std::optional<unsigned> dest = graph.getChildIndex(edge.getDest());
    if (!source || !dest)
      continue;
    // all_to_all: bold; streaming: dashed and blue; one_to_one: plain.
    SmallVector<StringRef> styles;
    if (edge.getReplication() == Replication::all_to_all)
      styles.push_back("bold");
    if (edge.getStreaming())
      styles.push_back("dashed");
    indent(depth + 1);
    os << children[*source].output << " -> " << children[*dest].input
       << " [label=" << quote(std::to_string(edge.getSourcePort()) + "->" +
                              std::to_string(edge.getDestPort()));
    if (!styles.empty())
      os << ", style=" << quote(llvm::join(styles, ","));
    if (edge.getStreaming())
      os << ", color=blue";
    os << "];\n";
  }
  for (BindInOp bind : graph.getBindIns()) {
    std::optional<unsigned> dest = graph.getChildIndex(bind.getDest());
    auto argument = dyn_cast<BlockArgument>(bind.getInput());
    if (!dest || !argument)
      continue;
    indent(depth + 1);
    os << ports.input << " -> " << children[*dest].input
       << " [style=dotted, label="
       << quote(std::to_string(argument.getArgNumber()) + "->" +
                std::to_string(bind.getDestPort()))
       << (bind.getStreaming() ? ", color=blue" : "") << "];\n";
  }
  for (BindOutOp bind : graph.getBindOuts()) {
    std::optional<unsigned> source = graph.getChildIndex(bind.getSource());
    if (!source)
      continue;
    indent(depth + 1);
    os << children[*source].output << " -> " << ports.output
       << " [style=dotted, label="
       << quote(std::to_string(bind.getSourcePort()) + "->" +
                std::to_string(bind.getOutput()))
       << (bind.getStreaming() ? ", color=blue" : "") << "];\n";
  }
  indent(depth);
  os << "}\n";
  return ports;
}

LogicalResult DOTWriter::write() {
  // Roots: the nodes no other node instantiates (launched or not), so that
  // every graph of the module is drawn once.
  SmallVector<NodeOpInterface> roots;
  for (auto node : module.getOps<NodeOpInterface>()) {
    StringAttr name =
        cast<SymbolOpInterface>(node.getOperation()).getNameAttr();
    if (llvm::none_of(hierarchy.getUses(name), [](const NodeUse &use) {
          return isa<CreateNodeOp>(use.op);
        }))
      roots.push_back(node);
  }

  os << "digraph hpvm {\n";
  os << "  rankdir=TB; compound=true; fontname=\"Helvetica\";\n";
  os << "  node [fontname=\"Helvetica\"]; edge [fontname=\"Helvetica\", "
        "fontsize=9];\n";
  for (NodeOpInterface root : roots)
    draw(root, CreateNodeOp(), 0);
  os << "}\n";
  return success();
}

LogicalResult mlir::hpvm::translateModuleToDOT(ModuleOp module,
                                               llvm::raw_ostream &os) {
  return DOTWriter(module, os).write();
}

void mlir::hpvm::registerToDOTTranslation() {
  TranslateFromMLIRRegistration registration(
      "hpvm-to-dot", "write the HPVM dataflow graphs as Graphviz DOT",
      [](Operation *op, raw_ostream &output) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        return translateModuleToDOT(module, output);
      },
      [](DialectRegistry &registry) {
        registry.insert<HPVMDialect, arith::ArithDialect, func::FuncDialect,
                        LLVM::LLVMDialect, math::MathDialect,
                        memref::MemRefDialect, scf::SCFDialect,
                        tensor::TensorDialect, vector::VectorDialect>();
      });
}
