//===- SplitBitcode.cpp - LLVM modules split for parallel code generation -===//
// hpvmSplitBitcode: one LLVM module as several, whose objects linked together
// are the module's program, so that clang compiles them at once on several
// cores. A part is a set of whole clusters: a function and every function it
// calls directly that may be inlined (not noinline) stay together, so that
// what the optimizer would inline in the whole module it still inlines; the
// cuts are where no inlining happens anyway: the graph's root calling its
// noinline leaves, function addresses handed to the runtime. Clusters go to
// the least loaded part, largest first (their size in instructions). A local
// symbol used from another part becomes a hidden global one, renamed with the
// module's digest (two modules linked together keep their symbols apart), so
// that the shared library exports nothing more. Local constants without
// addresses in them that several parts read (strings, tables) are copied into
// each, as linkonce functions are: the optimizer of each part still folds
// them, and copies a part does not use are dropped.
#include "HPVM/C/Compiler.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalAlias.h"
#include "llvm/IR/GlobalIFunc.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MD5.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

using namespace llvm;

namespace {
/// Whether every part gets its own copy of `value`'s definition: functions and
/// variables the linker merges (linkonce, available_externally), and local
/// constants whose initializer holds no address.
bool inEveryPart(const GlobalValue &value) {
  if (value.isDeclaration())
    return false;
  if (value.hasLinkOnceLinkage() || value.hasAvailableExternallyLinkage())
    return true;
  const auto *variable = dyn_cast<GlobalVariable>(&value);
  if (!variable || !variable->hasLocalLinkage() || !variable->isConstant() ||
      variable->hasComdat())
    return false;
  SmallVector<const Constant *, 8> work{variable->getInitializer()};
  while (!work.empty()) {
    const Constant *constant = work.pop_back_val();
    if (isa<GlobalValue>(constant) || isa<BlockAddress>(constant))
      return false;
    for (const Use &operand : constant->operands())
      work.push_back(cast<Constant>(operand.get()));
  }
  return true;
}

/// The functions and variables whose users' code refers to `value`: each
/// instruction's function, each initializer's variable, each alias.
void forEachUserObject(const Value &value,
                       function_ref<void(const GlobalValue &)> callback) {
  SmallVector<const User *, 8> work(value.users());
  while (!work.empty()) {
    const User *user = work.pop_back_val();
    if (const auto *instruction = dyn_cast<Instruction>(user))
      callback(*instruction->getFunction());
    else if (const auto *global = dyn_cast<GlobalValue>(user))
      callback(*global);
    else if (isa<Constant>(user))
      append_range(work, user->users());
  }
}

/// The module's definitions in clusters, the clusters in parts.
class Partition {
public:
  explicit Partition(Module &module);

  /// Spreads the clusters over at most `parts` parts of at least `minSize`
  /// instructions each; the number of parts.
  unsigned assign(unsigned parts, size_t minSize);
  /// Local symbols that another part uses become hidden global ones.
  void externalize(StringRef suffix);
  /// Whether part `part` holds `value`'s definition.
  bool holds(const GlobalValue &value, unsigned part) const;

private:
  unsigned find(unsigned node);
  /// Puts `a` and `b` in one cluster (nothing when either is in every part).
  void join(const GlobalValue &a, const GlobalValue &b);
  int nodeOf(const GlobalValue &value) const {
    auto found = index.find(&value);
    return found == index.end() ? -1 : static_cast<int>(found->second);
  }
  /// The part of `value` (a node), or -1 when it is in every part.
  int partOf(const GlobalValue &value) const {
    int node = nodeOf(value);
    return node < 0 ? -1 : partOfCluster[leader[node]];
  }

  std::vector<GlobalValue *> nodes;
  DenseMap<const GlobalValue *, unsigned> index;
  std::vector<unsigned> parent, leader;
  std::vector<int> partOfCluster;
};
} // namespace

Partition::Partition(Module &module) {
  for (GlobalValue &value : module.global_values())
    if (!value.isDeclaration() && !inEveryPart(value)) {
      index[&value] = nodes.size();
      nodes.push_back(&value);
    }
  parent.resize(nodes.size());
  std::iota(parent.begin(), parent.end(), 0u);
  // A function with the functions it may inline.
  for (Function &function : module.functions())
    for (BasicBlock &block : function)
      for (Instruction &instruction : block)
        if (auto *call = dyn_cast<CallBase>(&instruction))
          if (Function *callee = call->getCalledFunction())
            if (!callee->hasFnAttribute(Attribute::NoInline))
              join(function, *callee);
  // An alias with what it names; a comdat's members together.
  DenseMap<const Comdat *, GlobalValue *> comdats;
  for (GlobalValue *value : nodes) {
    if (auto *alias = dyn_cast<GlobalAlias>(value))
      if (const GlobalObject *object = alias->getAliaseeObject())
        join(*alias, *object);
    if (const Comdat *comdat = value->getComdat())
      join(*value, *comdats.try_emplace(comdat, value).first->second);
  }
  // A local variable with its users when they are all in one cluster.
  for (GlobalVariable &variable : module.globals()) {
    if (nodeOf(variable) < 0 || !variable.hasLocalLinkage())
      continue;
    int cluster = -1;
    bool one = true;
    forEachUserObject(variable, [&](const GlobalValue &user) {
      int node = nodeOf(user);
      int root = node < 0 ? -2 : static_cast<int>(find(node));
      one = one && (cluster == -1 || cluster == root) && root >= 0;
      cluster = root;
    });
    if (one && cluster >= 0)
      join(variable, *nodes[cluster]);
  }
  leader.resize(nodes.size());
  for (unsigned node = 0; node < nodes.size(); ++node)
    leader[node] = find(node);
}

unsigned Partition::find(unsigned node) {
  while (parent[node] != node)
    node = parent[node] = parent[parent[node]];
  return node;
}

void Partition::join(const GlobalValue &a, const GlobalValue &b) {
  int first = nodeOf(a), second = nodeOf(b);
  if (first < 0 || second < 0) // one of them is in every part
    return;
  unsigned x = find(first), y = find(second);
  if (x != y)
    parent[std::max(x, y)] = std::min(x, y);
}

unsigned Partition::assign(unsigned parts, size_t minSize) {
  std::vector<size_t> size(nodes.size(), 0);
  size_t total = 0;
  for (unsigned node = 0; node < nodes.size(); ++node) {
    size_t own = 1;
    if (auto *function = dyn_cast<Function>(nodes[node]))
      own += function->getInstructionCount();
    size[leader[node]] += own;
    total += own;
  }
  std::vector<unsigned> clusters;
  for (unsigned node = 0; node < nodes.size(); ++node)
    if (leader[node] == node)
      clusters.push_back(node);
  size_t most = minSize ? std::max<size_t>(total / minSize, 1) : parts;
  parts = std::max(1u, std::min({parts, static_cast<unsigned>(clusters.size()),
                                 static_cast<unsigned>(std::min<size_t>(most, ~0u))}));
  // Largest first (the module's order among equals), each to the lightest part.
  llvm::sort(clusters, [&](unsigned a, unsigned b) {
    return size[a] != size[b] ? size[a] > size[b] : a < b;
  });
  std::vector<size_t> load(parts, 0);
  partOfCluster.assign(nodes.size(), 0);
  for (unsigned cluster : clusters) {
    unsigned lightest = std::min_element(load.begin(), load.end()) - load.begin();
    partOfCluster[cluster] = lightest;
    load[lightest] += size[cluster];
  }
  return parts;
}

void Partition::externalize(StringRef suffix) {
  for (GlobalValue *value : nodes) {
    if (!value->hasLocalLinkage())
      continue;
    int home = partOf(*value);
    bool shared = false;
    forEachUserObject(*value, [&](const GlobalValue &user) {
      shared = shared || partOf(user) != home;
    });
    if (!shared)
      continue;
    value->setName(value->getName() + suffix);
    value->setLinkage(GlobalValue::ExternalLinkage);
    value->setVisibility(GlobalValue::HiddenVisibility);
  }
}

bool Partition::holds(const GlobalValue &value, unsigned part) const {
  int home = partOf(value);
  return home < 0 || static_cast<unsigned>(home) == part;
}

/// Erases the local functions and variables nothing uses, and then those only
/// they used: the whole module's optimizer drops them, but a part could not
/// see that a symbol it exports is dead in the part that would use it (a
/// leaf fused away, whose loop function it hands to the runtime).
static void eraseDeadLocals(Module &module) {
  bool erased = true;
  while (erased) {
    erased = false;
    SmallVector<GlobalValue *, 16> dead;
    for (GlobalValue &value : module.global_values())
      if (value.hasLocalLinkage() && !value.isDeclaration() && value.use_empty() &&
          !isa<GlobalAlias>(value) && !isa<GlobalIFunc>(value))
        dead.push_back(&value);
    for (GlobalValue *value : dead) {
      if (auto *function = dyn_cast<Function>(value))
        function->deleteBody(); // its uses of others go first
      else
        cast<GlobalVariable>(value)->setInitializer(nullptr);
    }
    for (GlobalValue *value : dead)
      value->eraseFromParent();
    erased = !dead.empty();
  }
}

/// Part `part` of `module`: its clusters' definitions, declarations of the
/// rest, the copies it uses of what every part may copy.
static std::unique_ptr<Module> clonePart(const Module &module, const Partition &partition,
                                         unsigned part) {
  ValueToValueMapTy map;
  std::unique_ptr<Module> clone = CloneModule(module, map, [&](const GlobalValue *value) {
    return partition.holds(*value, part);
  });
  if (part != 0)
    clone->setModuleInlineAsm("");
  // Copies of local constants no function of the part reads, and declarations
  // of the special variables (llvm.used, llvm.global_ctors) another part holds.
  SmallVector<GlobalVariable *, 16> unused;
  for (GlobalVariable &variable : clone->globals())
    if (variable.use_empty() && ((variable.hasLocalLinkage() && variable.isConstant()) ||
                                 (variable.isDeclaration() &&
                                  variable.getName().starts_with("llvm."))))
      unused.push_back(&variable);
  for (GlobalVariable *variable : unused)
    variable->eraseFromParent();
  return clone;
}

bool hpvmSplitBitcode(const char *input, size_t size, unsigned parts, size_t min_part_size,
                      char **output, size_t *part_sizes, unsigned *count,
                      char **diagnostics) {
  std::string text;
  auto fail = [&](const Twine &message) {
    text = ("hpvmSplitBitcode: " + message + "\n").str();
    if (diagnostics)
      *diagnostics = strdup(text.c_str());
    return false;
  };
  if (output)
    *output = nullptr;
  if (diagnostics)
    *diagnostics = nullptr;
  if (!input || !output || !part_sizes || !count || parts == 0)
    return fail("expected a bitcode buffer, an output pointer, part sizes, a count "
                "and at least one part");
  LLVMContext context;
  Expected<std::unique_ptr<Module>> read =
      parseBitcodeFile(MemoryBufferRef(StringRef(input, size), "<bitcode>"), context);
  if (!read)
    return fail("cannot read the bitcode: " + toString(read.takeError()));
  Module &module = **read;
  eraseDeadLocals(module);
  Partition partition(module);
  unsigned made = partition.assign(parts, min_part_size);
  std::string result;
  if (made == 1) { // as it came
    result.assign(input, size);
    part_sizes[0] = size;
  } else {
    MD5 digest;
    digest.update(StringRef(input, size));
    MD5::MD5Result hash = digest.final();
    partition.externalize(".hpvm." + toHex(ArrayRef<uint8_t>(hash).take_front(4), true));
    raw_string_ostream stream(result);
    for (unsigned part = 0; part < made; ++part) {
      std::unique_ptr<Module> clone = clonePart(module, partition, part);
      std::string problems;
      raw_string_ostream problemStream(problems);
      if (verifyModule(*clone, &problemStream))
        return fail("part " + Twine(part) + " does not verify: " + problems);
      size_t before = result.size();
      WriteBitcodeToFile(*clone, stream);
      stream.flush();
      part_sizes[part] = result.size() - before;
    }
  }
  *count = made;
  *output = static_cast<char *>(std::malloc(result.size() + 1));
  std::memcpy(*output, result.data(), result.size());
  (*output)[result.size()] = '\0';
  return true;
}
