//===- ContractionForms.h - Addresses as exact affine forms ---------------===//
// The affine forms of hpvm-vectorize's contraction analysis: an integer value
// of a leaf as sum over atoms (x, y, the parent's x and y ids, and the loop
// counter kk) of coefficient * atom + constant, exactly (no wrapping), whose
// coefficients are polynomials in values equal in every instance (inputs,
// grid extents and what pure ops make of them). Where the C code could wrap
// (a sign or zero extension, an exact shift right, a 32-bit GEP index) the
// form gets an obligation: its exact value must fit the type over the whole
// grid (the plan checks it at run time). ContractionMatch.h matches the loop
// on top of these forms; Contraction.cpp builds the plan.
#ifndef HPVM_LIB_TRANSFORMS_VECTORIZE_CONTRACTIONFORMS_H
#define HPVM_LIB_TRANSFORMS_VECTORIZE_CONTRACTIONFORMS_H

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <utility>

namespace mlir::hpvm::contraction {

/// The instance coordinates an address may depend on.
enum Atom : unsigned { AtomX, AtomY, AtomTileX, AtomTileY, AtomK, NumAtoms };

/// factor * product of symbols (values equal in every instance, taken as
/// signed integers).
struct Term {
  int64_t factor = 0;
  SmallVector<Value, 2> symbols;
};
/// A sum of terms.
using Poly = SmallVector<Term, 2>;

/// sum over atoms of coef[atom] * atom + constant, exactly (no wrapping).
struct Form {
  Poly coef[NumAtoms];
  Poly constant;
  bool isConstantOnly() const {
    for (const Poly &p : coef)
      if (!p.empty())
        return false;
    return true;
  }
};

/// The exact value of `form` must lie in [lo, hi] over the whole grid.
struct Obligation {
  Form form;
  int64_t lo, hi;
};

/// The value of an integer constant `v` (as a signed 64-bit integer).
std::optional<int64_t> constantOf(Value v);

/// The affine forms of a leaf's integer values and addresses, with the
/// obligations they took on. `kk` (the loop counter) is the fifth atom.
class AffineForms {
public:
  AffineForms(LeafOp leaf) : leaf(leaf), layout(DataLayout::closest(leaf)) {}

  LeafOp leaf;
  DataLayout layout;
  BlockArgument kk;
  SmallVector<Obligation, 4> obligations;

  /// Whether `v` is equal in every instance (computed from the leaf's
  /// inputs and grid extents by ops that may run anywhere).
  bool isInvariant(Value v);
  std::optional<Form> formOf(Value v);
  /// A pointer as an invariant base plus an affine offset in bytes.
  std::optional<std::pair<Value, Form>> addressOf(Value pointer);

protected:
  bool oblige(const Form &form, Type type, bool isSigned);
  DenseMap<Value, bool> invariant;
  DenseMap<Value, std::optional<Form>> forms;
};

} // namespace mlir::hpvm::contraction

#endif // HPVM_LIB_TRANSFORMS_VECTORIZE_CONTRACTIONFORMS_H
