//===- ApplyKnobs.cpp - The hpvm-apply-knobs pass -------------------------===//
// A configuration of approximation knobs is data (JSON), written by a tuner or
// by hand; this pass puts it on the tensor ops it names, all or nothing.
#include "HPVM/Transforms/Passes.h"

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"
#include "HPVM/Transforms/ParameterArchive.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMAPPLYKNOBS
#include "HPVM/Transforms/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;
using namespace mlir::hpvm;

namespace {

/// Configurations are a few levels deep ({"knobs": [{...}]}) and small.
constexpr unsigned kMaxJSONDepth = 16;
constexpr size_t kMaxConfigurationBytes = size_t(64) << 20;

/// Checks what llvm::json::parse does not before it runs: the nesting depth
/// (its parser recurses, and 50,000 levels overflowed the stack) and keys
/// given twice in one object (it keeps the last silently). Returns "" when
/// the text is fine, else what is wrong and where (a byte offset).
static std::string checkJSONShape(StringRef text) {
  // One entry per open bracket: whether it is an object, and its keys.
  struct Level {
    bool object;
    llvm::StringSet<> keys;
    bool expectKey; // in an object, after '{' or ','
  };
  SmallVector<Level> levels;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      size_t start = ++i;
      while (i < text.size() && text[i] != '"')
        i += text[i] == '\\' ? 2 : 1;
      if (i >= text.size())
        return ""; // unterminated: the parser says where
      if (!levels.empty() && levels.back().object && levels.back().expectKey) {
        StringRef key = text.slice(start, i);
        if (!levels.back().keys.insert(key).second)
          return llvm::formatv("key '{0}' appears twice in one object (at byte {1}); "
                               "expected each key once",
                               key, start - 1)
              .str();
        levels.back().expectKey = false;
      }
      continue;
    }
    if (c == '{' || c == '[') {
      if (levels.size() == kMaxJSONDepth)
        return llvm::formatv("nested deeper than {0} levels (at byte {1}); a knob "
                             "configuration is {{\"knobs\": [{{...}, ...]}",
                             kMaxJSONDepth, i)
            .str();
      levels.push_back({c == '{', {}, c == '{'});
    } else if ((c == '}' || c == ']') && !levels.empty()) {
      levels.pop_back();
    } else if (c == ',' && !levels.empty() && levels.back().object) {
      levels.back().expectKey = true;
    }
  }
  return "";
}

/// Reads the entries of one configuration and resolves them against a module.
class KnobConfiguration {
public:
  KnobConfiguration(ModuleOp module, StringRef file)
      : module(module), symbols(module),
        location(FileLineColLoc::get(module.getContext(), file, 1, 1)) {}

  /// The ops and the knob each gets (null: none, exact), or failure after
  /// reporting every problem found.
  FailureOr<SmallVector<std::pair<Operation *, Attribute>>> resolve(const llvm::json::Value &root) {
    const llvm::json::Object *object = root.getAsObject();
    if (!object)
      return error("") << "expected a JSON object with \"knobs\": [...], found " << kind(root);
    for (const auto &member : *object)
      if (member.first != "knobs" && member.first != "info")
        error("") << "unknown key \"" << member.first.str()
                  << "\" at the top level; expected \"knobs\" (and optionally \"info\")";
    const llvm::json::Array *knobs = object->getArray("knobs");
    if (!knobs)
      return error("knobs") << "expected an array of entries, found "
                            << (object->get("knobs") ? kind(*object->get("knobs")) : "nothing");
    for (auto [index, item] : llvm::enumerate(*knobs))
      resolveEntry(item, llvm::formatv("knobs[{0}]", index).str());
    if (failed)
      return failure();
    return changes;
  }

  /// Reports a problem of the entry at `path` (empty: the file itself).
  InFlightDiagnostic error(const std::string &path) {
    failed = true;
    InFlightDiagnostic diagnostic = emitError(location);
    if (!path.empty())
      diagnostic << path << ": ";
    return diagnostic;
  }

private:
  static StringRef kind(const llvm::json::Value &value) {
    switch (value.kind()) {
    case llvm::json::Value::Null: return "null";
    case llvm::json::Value::Boolean: return "a boolean";
    case llvm::json::Value::Number: return "a number";
    case llvm::json::Value::String: return "a string";
    case llvm::json::Value::Array: return "an array";
    case llvm::json::Value::Object: return "an object";
    }
    return "a value";
  }

  /// The integer `key` of `entry`, reporting it when missing or not one.
  std::optional<int64_t> integer(const llvm::json::Object &entry, StringRef key,
                                 const std::string &path) {
    const llvm::json::Value *value = entry.get(key);
    if (!value) {
      error(path + "." + key.str()) << "expected an integer, found nothing";
      return std::nullopt;
    }
    std::optional<int64_t> number = value->getAsInteger();
    if (!number)
      error(path + "." + key.str()) << "expected an integer, found " << kind(*value);
    return number;
  }

  void resolveEntry(const llvm::json::Value &item, const std::string &path) {
    const llvm::json::Object *entry = item.getAsObject();
    if (!entry) {
      error(path) << "expected an object {\"node\": ..., \"knob\": ...}, found " << kind(item);
      return;
    }
    static const llvm::StringSet<> keys = {"node", "op", "knob", "rate", "offset"};
    for (const auto &member : *entry)
      if (!keys.contains(member.first))
        error(path) << "unknown key \"" << member.first.str()
                    << "\"; expected node, op, knob, rate and offset";
    std::optional<StringRef> node = entry->getString("node");
    if (!node) {
      error(path + ".node") << "expected the name of a leaf (a string)";
      return;
    }
    auto leaf = symbols.lookup<LeafOp>(*node);
    if (!leaf) {
      if (symbols.lookup<InternalOp>(*node))
        error(path + ".node") << "'" << *node
                              << "' is an internal node; knobs go to the leaves that hold "
                                 "tensor ops";
      else
        error(path + ".node") << "no leaf named '" << *node << "' in the module";
      return;
    }
    std::optional<StringRef> name = entry->getString("knob");
    std::optional<KnobKind> knobKind;
    if (name && *name != "exact")
      knobKind = symbolizeKnobKind(*name);
    if (!name || (*name != "exact" && !knobKind)) {
      error(path + ".knob") << "expected perforate_rows, perforate_cols, sample_filter, "
                               "sample_reduction, fp16, bf16 or exact, found "
                            << (name ? ("\"" + name->str() + "\"") : std::string("nothing"));
      return;
    }

    bool precision = knobKind && KnobAttr::isPrecision(*knobKind);

    // The op: by index among the leaf's tensor ops, by name (the leaf's only
    // op of that name), or the leaf's only op the knob applies to.
    SmallVector<Operation *> ops;
    leaf.walk([&](ApproximableOpInterface op) { ops.push_back(op); });
    Operation *op = nullptr;
    int64_t opIndex = 0;
    // How many of the leaf's ops `fits`; `op` and `opIndex` are the last one.
    auto selectOnly = [&](function_ref<bool(Operation *)> fits) {
      unsigned count = 0;
      for (auto [index, candidate] : llvm::enumerate(ops))
        if (fits(candidate)) {
          ++count;
          op = candidate;
          opIndex = index;
        }
      return count;
    };
    if (const llvm::json::Value *selector = entry->get("op")) {
      if (std::optional<StringRef> opName = selector->getAsString()) {
        // "reduce" is short for "hpvm.tensor.reduce".
        std::string fullName =
            opName->contains('.') ? opName->str() : "hpvm.tensor." + opName->str();
        unsigned count = selectOnly([&](Operation *candidate) {
          return candidate->getName().getStringRef() == fullName;
        });
        if (count != 1) {
          error(path + ".op") << "'" << *node << "' holds " << count << " " << fullName
                              << " ops, expected one; name the op by its index among the "
                              << ops.size() << " tensor ops of the leaf instead";
          return;
        }
      } else if (std::optional<int64_t> index = selector->getAsInteger()) {
        if (*index < 0 || *index >= int64_t(ops.size())) {
          error(path + ".op") << "'" << *node << "' holds " << ops.size()
                              << " tensor ops; expected an index from 0 to "
                              << int64_t(ops.size()) - 1 << ", found " << *index;
          return;
        }
        opIndex = *index;
        op = ops[opIndex];
      } else {
        error(path + ".op") << "expected the index of a tensor op of the leaf or the name of "
                               "its only op of a kind (\"conv2d\", \"reduce\"), found "
                            << kind(*selector);
        return;
      }
    } else {
      // Without "op": the leaf's only op the knob applies to (either kind for
      // exact).
      StringRef what = "hpvm.tensor.conv2d";
      unsigned count;
      if (!knobKind) {
        what = "hpvm.tensor.conv2d, hpvm.tensor.reduce or hpvm.tensor.mul";
        count = selectOnly(llvm::IsaPred<TensorConv2DOp, TensorReduceOp, TensorMulOp>);
      } else if (precision) {
        what = "hpvm.tensor.mul";
        count = selectOnly(llvm::IsaPred<TensorMulOp>);
      } else if (*knobKind == KnobKind::sample_reduction) {
        what = "hpvm.tensor.reduce";
        count = selectOnly(llvm::IsaPred<TensorReduceOp>);
      } else {
        count = selectOnly(llvm::IsaPred<TensorConv2DOp>);
      }
      if (count != 1) {
        error(path) << "'" << *node << "' holds " << count << " " << what
                    << " ops; say which with \"op\" (its index among the " << ops.size()
                    << " tensor ops of the leaf)";
        return;
      }
    }

    Attribute knob;
    if (precision && (entry->get("rate") || entry->get("offset"))) {
      error(path) << "the " << *name
                  << " knob takes no rate or offset (it changes the precision of the "
                     "op's storage and skips nothing)";
      return;
    }
    if (knobKind) {
      std::optional<int64_t> rate = precision ? 0 : integer(*entry, "rate", path);
      std::optional<int64_t> offset = precision ? 0 : integer(*entry, "offset", path);
      if (!rate || !offset)
        return;
      auto checked = KnobAttr::getChecked([&] { return error(path); }, module.getContext(),
                                          *knobKind, *rate, *offset);
      if (!checked)
        return;
      // The rule of the verifier, reported here with the entry's path.
      if (mlir::failed(verifyKnobPlacement(op, checked, [&] {
            return error(path) << "op " << opIndex << " of '" << *node << "': ";
          })))
        return;
      knob = checked;
    } else if (entry->get("rate") || entry->get("offset")) {
      error(path) << "the exact knob takes no rate or offset";
      return;
    }
    auto [it, inserted] = configured.try_emplace(op, path);
    if (!inserted) {
      error(path) << "configures op " << opIndex << " of '" << *node << "' again (first in "
                  << it->second << ")";
      return;
    }
    changes.push_back({op, knob});
  }

  ModuleOp module;
  SymbolTable symbols;
  Location location;
  bool failed = false;
  DenseMap<Operation *, std::string> configured;
  SmallVector<std::pair<Operation *, Attribute>> changes;
};

struct HPVMApplyKnobsPass : public hpvm::impl::HPVMApplyKnobsBase<HPVMApplyKnobsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (file.empty()) {
      emitError(module.getLoc()) << "hpvm-apply-knobs expects a configuration file "
                                    "(file=<path>), found none";
      return signalPassFailure();
    }
    // A regular file only (a link to /dev/zero was read until memory ran out, a
    // named pipe blocked), mapped rather than read: the size is checked below.
    std::string error;
    std::unique_ptr<llvm::MemoryBuffer> buffer = openRegularFile(
        file, "the knob configuration '" + std::string(file) + "'", error);
    if (!buffer) {
      emitError(module.getLoc()) << error;
      return signalPassFailure();
    }
    KnobConfiguration configuration(module, file);
    StringRef text = buffer->getBuffer();
    if (text.size() > kMaxConfigurationBytes) {
      // At the module, not at the file's first line: the diagnostic would quote it.
      emitError(module.getLoc()) << "the knob configuration '" << file << "' is "
                                 << text.size() << " bytes; expected at most "
                                 << kMaxConfigurationBytes << " bytes";
      return signalPassFailure();
    }
    if (std::string problem = checkJSONShape(text); !problem.empty()) {
      configuration.error("") << problem;
      return signalPassFailure();
    }
    llvm::Expected<llvm::json::Value> root = llvm::json::parse(text);
    if (!root) {
      configuration.error("") << "expected JSON, found a syntax error: "
                              << llvm::toString(root.takeError());
      return signalPassFailure();
    }
    FailureOr<SmallVector<std::pair<Operation *, Attribute>>> changes =
        configuration.resolve(*root);
    if (failed(changes))
      return signalPassFailure();
    for (auto [op, knob] : *changes) {
      if (knob)
        op->setAttr(HPVMDialect::getKnobAttrName(), knob);
      else
        op->removeAttr(HPVMDialect::getKnobAttrName());
    }
  }
};

} // namespace
