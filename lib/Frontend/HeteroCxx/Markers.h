//===- Markers.h - Hetero-C++ marker calls and their argument lists -*- C++ -*-===//
// Which Hetero-C++ marker a call is, the declared inputs and outputs a marker
// lists, and the errors of the lowering (with the C++ line of the call).
#ifndef LIB_FRONTEND_HETEROCXX_MARKERS_H
#define LIB_FRONTEND_HETEROCXX_MARKERS_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/InstrTypes.h"

#include <string>

namespace hpvm::hetero {

enum class Marker {
  None,
  Launch, Wait, LaunchBegin, LaunchEnd,
  SectionBegin, SectionEnd, TaskBegin, TaskEnd, ParallelLoop,
  Hint, Priv, Malloc, Free, RequestMem, CopyMem, IsNonZeroLoop,
};

/// Which marker `call` calls (by name: C or C++ linkage alike, HPVM 2.x's
/// earlier spellings such as __hpvm_parallel_section_begin too).
Marker classify(const llvm::CallBase &call);
/// Which marker a function of this name is (None when it is none).
Marker markerNamed(llvm::StringRef name);
/// The marker's C spelling, for diagnostics.
llvm::StringRef spelling(Marker marker);

/// One declared input or output: a buffer pair (pointer and its size in bytes)
/// or, for inputs, a scalar.
struct Item {
  llvm::Value *value;
  llvm::Value *size = nullptr; // set for a buffer pair
  bool isPair() const { return size != nullptr; }
};

/// What a task, parallel loop or launch declares.
struct Declared {
  llvm::SmallVector<Item> inputs;
  llvm::SmallVector<Item> outputs; // buffer pairs only
  std::string name;                // the optional trailing node name
  /// The inputs as the node's parameters: a pair is its pointer then its size.
  llvm::SmallVector<llvm::Value *> flatInputs() const;
};

/// Errors of the lowering, each "file:line:col: error: ..." at the source line
/// of an instruction (else of its function).
class Reporter {
public:
  explicit Reporter(llvm::function_ref<void(llvm::StringRef)> report) : report(report) {}
  void error(const llvm::Instruction *at, const llvm::Twine &message);
  void error(const llvm::Function *at, const llvm::Twine &message);
  void error(const llvm::DILocation *at, const llvm::Function *fallback,
             const llvm::Twine &message);
  /// A warning at the source line of `at`: the lowering goes on.
  void warning(const llvm::Instruction *at, const llvm::Twine &message);
  bool failed() const { return anyError; }

private:
  void emit(const std::string &where, const llvm::Twine &message);
  llvm::function_ref<void(llvm::StringRef)> report;
  bool anyError = false;
};

/// The lists of `call` from operand `first` on: `nIn, items..., nOut, pairs...,
/// ["name"]`. With `flags`, each buffer pair may be followed by a bool (as
/// __hetero_launch's callers write `ptr, size, false`). Fails with an error.
bool parseDeclared(llvm::CallBase &call, unsigned first, Reporter &reporter, Declared &out);

/// "file:line:col" of a source location ("" without one).
std::string position(const llvm::DILocation *location);

/// A C name for a value, for diagnostics ("'Res'", "a value").
std::string describe(const llvm::Value *value);

/// The C++ name of a function, without its parameters ("root", "ns::f").
std::string cName(const llvm::Function *function);

/// Whether two values of the code are the same buffer or number: clang's
/// unoptimized code computes `a` again at each mention of an array `a` (an
/// array-to-pointer GEP), and `n * 4` at each `n * 4`.
bool sameValue(const llvm::Value *a, const llvm::Value *b);

} // namespace hpvm::hetero

#endif // LIB_FRONTEND_HETEROCXX_MARKERS_H
