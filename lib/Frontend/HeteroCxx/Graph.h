//===- Graph.h - Hetero-C++ regions to HPVM-C node functions -------*- C++ -*-===//
// The lowering's state: the HPVM-C functions it calls (HPVMCCalls.cpp), and
// the steps that turn a function holding a section (or a leaf's code) into
// HPVM-C node functions -- regions outlined (Regions.cpp), made nodes
// (Nodes.cpp), checked (Checks.cpp), a section's graph (Graph.cpp) -- and
// launches into HPVM-C host calls (Host.cpp).
#ifndef LIB_FRONTEND_HETEROCXX_GRAPH_H
#define LIB_FRONTEND_HETEROCXX_GRAPH_H

#include "Markers.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

#include <map>

namespace hpvm::hetero {

/// The HPVM-C functions (runtime/include/hpvm/hpvm.h) the lowering calls.
struct HPVMCApi {
  explicit HPVMCApi(llvm::Module &module);
  llvm::FunctionCallee hint, attributes, ret, createNode, bindIn, bindOut, edge;
  llvm::FunctionCallee getNode, instanceId[3];
  llvm::FunctionCallee launch, wait, push, track, untrack, request;
};

/// One level of a parallel loop nest: `for (iv = start; iv < bound; ++iv)`
/// (`<=` when inclusive), in the terms of the function holding the loop.
struct LoopLevel {
  llvm::PHINode *iv;
  llvm::Value *start;
  llvm::Value *bound;
  llvm::Instruction::CastOps ivCast; // how the compare widened iv (or CastOpsEnd)
  bool inclusive;
  bool isSigned;
};

/// A node made of a task or a parallel loop, seen from its parent.
struct Child {
  llvm::Function *node = nullptr;
  /// Per parameter of `node`: the parent's value it receives.
  llvm::SmallVector<llvm::Value *> ports;
  /// Per output of `node`: the parent's value it passes on (pointer, size, ...).
  llvm::SmallVector<llvm::Value *> outputs;
  /// Innermost first (x, y, z); empty for a task.
  llvm::SmallVector<LoopLevel> levels;
  /// The marker's line, for errors found when the parent is built.
  llvm::DebugLoc line;
};

class Lowering {
public:
  Lowering(llvm::Module &module, Reporter &reporter, bool streaming)
      : module(module), context(module.getContext()), reporter(reporter), api(module),
        streaming(streaming) {}

  /// Rewrites every marker of the module.
  bool run();
  /// Removes every marker; a launch calls its root (Sequential.cpp).
  bool runSequential();

private:
  // Graph.cpp: sections and roots as graphs of nodes.
  /// The node function of `root` launched with outputs `outputs` (argument
  /// numbers of `root`, pointer then size), made once per root.
  llvm::Function *lowerRoot(llvm::Function *root, llvm::ArrayRef<unsigned> outputs,
                            llvm::Instruction *launchedAt);
  /// `function` holds a section: its children become nodes, and it becomes
  /// an internal node returning `outputs` (values of `function`).
  llvm::Function *lowerSection(llvm::Function *function, llvm::ArrayRef<llvm::Value *> outputs);
  bool extractChild(llvm::Function *parent, llvm::CallInst *marker, Child &child);
  llvm::Function *buildInternal(llvm::Function *function, llvm::ArrayRef<Child> children,
                                llvm::ArrayRef<llvm::Value *> outputs, llvm::Value *hint);
  /// A child whose outputs nothing reads returns none (dropOutputs).
  void pruneUnreadOutputs(llvm::CallInst *handle);
  /// `node` returning nothing; its children's outputs pruned in turn.
  llvm::Function *dropOutputs(llvm::Function *node);

  // Regions.cpp: the code of a task or a parallel loop, outlined.
  /// The blocks between `begin` and the `endMarker` call that takes its value
  /// (a task, a launch region); errors for a return out of it, a jump into
  /// it, exception cleanups in it.
  bool markedRegion(llvm::CallInst *begin, Marker endMarker, llvm::StringRef what,
                    llvm::SmallVectorImpl<llvm::BasicBlock *> &blocks, llvm::CallInst *&end);
  bool loopRegion(llvm::CallInst *marker, unsigned loops,
                  llvm::SmallVectorImpl<llvm::BasicBlock *> &blocks,
                  llvm::SmallVectorImpl<LoopLevel> &levels);
  llvm::Function *extract(llvm::ArrayRef<llvm::BasicBlock *> blocks, llvm::CallInst *marker,
                          llvm::StringRef what, llvm::CallInst *&call);
  /// Clang puts every local's alloca in the function's entry block, outside
  /// the regions, and its lifetime end where its scope closes (after the end
  /// marker when the scope is the function's). A local declared in `blocks`
  /// (or, for a task, declared in its section) and used only there is the
  /// region's own: its alloca moves into the region (then to the node's entry,
  /// in makeNode) and its lifetime markers go. The destructor call of one
  /// declared there moves from after the region to its end; any other use
  /// after the region is an error.
  bool claimLocals(llvm::ArrayRef<llvm::BasicBlock *> blocks, llvm::StringRef what);

  // Nodes.cpp: outlined code as node functions.
  /// The node of the code `extracted` (called by `call` in the parent) that
  /// declares `declared`; `host` when the parent is host code (a launch).
  bool makeNode(llvm::Function *extracted, llvm::CallInst *call, const Declared &declared,
                llvm::ArrayRef<LoopLevel> levels, bool host, llvm::StringRef name,
                llvm::CallInst *marker, Child &child);
  bool collectPorts(llvm::Function *extracted, llvm::CallInst *call, const Declared &declared,
                    llvm::ArrayRef<LoopLevel> levels, bool host, llvm::StringRef name,
                    llvm::Instruction *at, llvm::SmallVectorImpl<llvm::Value *> &ports,
                    llvm::DenseMap<llvm::Value *, unsigned> &portOf);
  /// A parameter of `function` that always receives `value` (from the host).
  llvm::Argument *constantInput(llvm::Function *function, llvm::Constant *value);
  /// __hetero_priv in a leaf: each instance works on its own copy of the
  /// buffers it names.
  bool privatize(llvm::Function *node);
  /// The target of a __hetero_hint call (this compiler's numbering); null
  /// after an error.
  llvm::Value *hintTarget(llvm::CallInst *call);
  /// A leaf's hint and attributes, from the hints left in its code.
  void finishLeaf(llvm::Function *node, const Declared *declared,
                  llvm::ArrayRef<llvm::Value *> outputs);

  // Checks.cpp: what a section, a task and a leaf may not do.
  /// A task or a loop nest inside a loop of its section (it would run once
  /// per iteration as C, once as a node).
  bool checkNotRepeated(llvm::CallInst *marker, unsigned loops);
  /// Code of a section outside its tasks and parallel loops.
  bool checkSectionCode(llvm::Function *function, llvm::CallInst *begin);
  /// A leaf that writes a buffer it declares only as an input (`ports`: the
  /// parent's values of its parameters; `marker` null for a parallel loop).
  bool checkInputsOnlyRead(llvm::Function *node, llvm::ArrayRef<llvm::Value *> ports,
                           llvm::ArrayRef<llvm::Value *> outputs, llvm::StringRef name,
                           llvm::CallInst *marker);
  /// A task or loop marker left in a leaf's code: it is outside any section.
  bool checkLeafMarkers(llvm::Function *node);

  // Host.cpp: launches and the other markers.
  /// The root and arguments of a __hetero_launch, checked against the root's
  /// parameters (one value per parameter, of a kind C converts).
  bool parseLaunch(llvm::CallInst *launch, llvm::Function *&root, Declared &declared,
                   llvm::SmallVectorImpl<llvm::Value *> &values);
  bool lowerLaunch(llvm::CallInst *launch);
  bool lowerLaunchRegion(llvm::CallInst *begin);
  llvm::Value *emitLaunch(llvm::IRBuilder<> &b, llvm::Function *node,
                          llvm::ArrayRef<llvm::Value *> values, const Declared &declared);
  void emitWait(llvm::IRBuilder<> &b, llvm::Value *handle);
  /// The launch region at `region`, in a loop, as one streaming launch with a
  /// push per iteration, where iterations provably touch disjoint buffers
  /// (Streaming.cpp); false (nothing emitted) otherwise.
  bool streamLaunch(llvm::Instruction *region, llvm::Function *root,
                    llvm::ArrayRef<llvm::Value *> values, const Declared &declared);
  bool lowerRemaining();
  /// The memory markers, as libc's and the runtime's calls; false for others.
  bool lowerMemoryMarker(llvm::CallInst *call, Marker marker);

  llvm::Module &module;
  llvm::LLVMContext &context;
  Reporter &reporter;
  HPVMCApi api;
  /// Launch regions in loops may become streaming launches.
  bool streaming;
  std::map<std::pair<llvm::Function *, std::vector<unsigned>>, llvm::Function *> roots;
  /// Parameters of node functions that always receive a constant.
  llvm::DenseMap<const llvm::Argument *, llvm::Constant *> knownConstants;
  /// Locals claimLocals moved into a region, on their way to its node's entry.
  llvm::SmallPtrSet<llvm::AllocaInst *, 8> claimed;
  /// The declarations of each launch, by its handle, for its wait.
  llvm::DenseMap<llvm::Value *, Declared> launched;
};

/// Values of one function cloned into another: known values (`map`), and the
/// pure computation (arithmetic, casts, address arithmetic, compares) that
/// leads to others, cloned at `b`. Anything else fails, naming the value.
struct Rematerializer {
  llvm::DenseMap<llvm::Value *, llvm::Value *> &map;
  llvm::IRBuilder<> &b;
  llvm::Value *failedOn = nullptr;
  llvm::Value *get(llvm::Value *value);
};

/// Each return of `node` returns its outputs: __hpvm__return(outputs) when
/// `withOutputs` (a leaf; an internal node is rebuilt), then a return of the
/// node's type (its value is __hpvm__return's, never read) (Nodes.cpp).
void rewriteReturns(llvm::Function *node, llvm::ArrayRef<llvm::Value *> outputs,
                    bool withOutputs, llvm::FunctionCallee hpvmReturn);

/// Removes the section, task, loop and hint markers of `function`: its code as
/// sequential C (Sequential.cpp).
void stripSectionMarkers(llvm::Function &function);

/// `value` converted to the parameter type `type` as C converts an argument
/// (variadic calls promote int to int, float to double); null when C would not.
llvm::Value *asParameter(llvm::IRBuilder<> &b, llvm::Value *value, llvm::Type *type);
bool passableAs(llvm::Type *from, llvm::Type *type);

/// Pure computation that may be cloned into another function.
bool isPure(const llvm::Instruction *instruction);
/// The first instruction of `function` (layout order) that calls one of `markers`.
llvm::CallInst *findMarker(llvm::Function &function, std::initializer_list<Marker> markers);

} // namespace hpvm::hetero

#endif // LIB_FRONTEND_HETEROCXX_GRAPH_H
