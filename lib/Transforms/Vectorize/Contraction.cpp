//===- Contraction.cpp - Reduction leaves as one packed contraction -------===//
// See Contraction.h. The loop must have the shape clang gives a counted loop
// at -O1 and above (rotated, guarded, one block, not unrolled: hpvm-cc asks
// the frontend not to unroll loops of run-time trip counts):
//
//   G:  ... cond_br %guard, P, E(%init)
//   P:  (pure ops) br L(0, %init)            (P may be absent: G -> L)
//   L(%kk, %acc):
//       %a = load (base_a + affine(x, y, kk)); %b = load (base_b + ...)
//       %acc2 = fmuladd(%a, %b, %acc)         (or fma, or fadd(acc, fmul))
//       %kk2 = add %kk, 1
//       cond_br (icmp eq %kk2, %n), E(%acc2), L(%kk2, %acc2)
//   E(%sum): the rest of the leaf
//
// Addresses are analysed as exact affine forms over the atoms x, y (this
// leaf's ids), the parent's x and y ids and kk, whose coefficients are
// polynomials in values equal in every instance (inputs, grid extents and
// what pure ops make of them). Where the C code could wrap (a sign or zero
// extension, an exact shift right, a 32-bit GEP index) the form gets an
// obligation: its exact value must fit the type over the whole grid. The
// plan evaluates the coefficients with overflow checks and checks each
// obligation at the extremes of its form over the box of atoms (an affine
// form takes them at corners), so that when it goes on, the loop's
// addresses are exactly the affine ones it hands to the runtime.
#include "Contraction.h"

#include "LaneAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "HPVM/Conversion/RuntimeABI.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <optional>

using namespace mlir;
using namespace mlir::hpvm;

namespace {

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

constexpr unsigned kMaxSymbolsPerTerm = 2;

bool sameSymbols(const Term &a, const Term &b) {
  if (a.symbols.size() != b.symbols.size())
    return false;
  SmallVector<void *, 2> x, y;
  for (Value v : a.symbols)
    x.push_back(v.getAsOpaquePointer());
  for (Value v : b.symbols)
    y.push_back(v.getAsOpaquePointer());
  llvm::sort(x);
  llvm::sort(y);
  return x == y;
}

/// a + b; nullopt on a factor overflow.
std::optional<Poly> addPoly(const Poly &a, const Poly &b) {
  Poly sum(a);
  for (const Term &t : b) {
    auto it =
        llvm::find_if(sum, [&](const Term &s) { return sameSymbols(s, t); });
    if (it == sum.end()) {
      sum.push_back(t);
      continue;
    }
    std::optional<int64_t> f = llvm::checkedAdd(it->factor, t.factor);
    if (!f)
      return std::nullopt;
    it->factor = *f;
  }
  llvm::erase_if(sum, [](const Term &t) { return t.factor == 0; });
  return sum;
}

std::optional<Poly> mulPoly(const Poly &a, const Poly &b) {
  Poly product;
  for (const Term &x : a)
    for (const Term &y : b) {
      std::optional<int64_t> f = llvm::checkedMul(x.factor, y.factor);
      if (!f || x.symbols.size() + y.symbols.size() > kMaxSymbolsPerTerm)
        return std::nullopt;
      Term t{*f, x.symbols};
      t.symbols.append(y.symbols.begin(), y.symbols.end());
      std::optional<Poly> sum = addPoly(product, Poly{t});
      if (!sum)
        return std::nullopt;
      product = *sum;
    }
  return product;
}

std::optional<Poly> scalePoly(const Poly &a, int64_t c) {
  return mulPoly(a, Poly{Term{c, {}}});
}

std::optional<Form> addForms(const Form &a, const Form &b, int64_t sign) {
  Form sum;
  for (unsigned i = 0; i <= NumAtoms; ++i) {
    const Poly &x = i < NumAtoms ? a.coef[i] : a.constant;
    std::optional<Poly> y =
        scalePoly(i < NumAtoms ? b.coef[i] : b.constant, sign);
    if (!y)
      return std::nullopt;
    std::optional<Poly> s = addPoly(x, *y);
    if (!s)
      return std::nullopt;
    (i < NumAtoms ? sum.coef[i] : sum.constant) = *s;
  }
  return sum;
}

/// form * poly (poly equal in every instance).
std::optional<Form> scaleForm(const Form &a, const Poly &p) {
  Form product;
  for (unsigned i = 0; i <= NumAtoms; ++i) {
    std::optional<Poly> y = mulPoly(i < NumAtoms ? a.coef[i] : a.constant, p);
    if (!y)
      return std::nullopt;
    (i < NumAtoms ? product.coef[i] : product.constant) = *y;
  }
  return product;
}

/// form / d when every factor is a multiple of d.
std::optional<Form> divideForm(const Form &a, int64_t d) {
  Form quotient = a;
  for (unsigned i = 0; i <= NumAtoms; ++i)
    for (Term &t : i < NumAtoms ? quotient.coef[i] : quotient.constant) {
      if (t.factor % d != 0)
        return std::nullopt;
      t.factor /= d;
    }
  return quotient;
}

unsigned widthOf(Type type) {
  return type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
}

std::optional<int64_t> constantOf(Value v) {
  APInt value;
  if (matchPattern(v, m_ConstantInt(&value)) && value.getBitWidth() <= 64)
    return value.getSExtValue();
  return std::nullopt;
}

/// Ops that may run in the plan whatever the leaf's control flow: pure and
/// unable to trap (no divisions).
bool isCloneable(Operation *op) {
  if (op->getNumRegions() || op->getNumResults() != 1 ||
      op->hasTrait<::mlir::OpTrait::IsTerminator>() || !isMemoryEffectFree(op))
    return false;
  if (isa<InstanceIdOp>(op))
    return false;
  if (isa<LLVM::SDivOp, LLVM::UDivOp, LLVM::SRemOp, LLVM::URemOp,
          arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
          arith::CeilDivSIOp, arith::CeilDivUIOp, arith::FloorDivSIOp>(op))
    return false;
  StringRef dialect = op->getDialect() ? op->getDialect()->getNamespace() : "";
  return dialect == "llvm" || dialect == "arith" || isa<NumInstancesOp>(op);
}

class Analysis {
public:
  Analysis(LeafOp leaf) : leaf(leaf), layout(DataLayout::closest(leaf)) {}

  LeafOp leaf;
  DataLayout layout;
  Block *loop = nullptr, *exit = nullptr, *guard = nullptr,
        *preheader = nullptr;
  BlockArgument kk, acc;
  Operation *stepOp = nullptr, *productOp = nullptr; // productOp: the fmul
  LLVM::LoadOp loads[2];
  Value tripCount, guardCondition, init, stepped;
  /// What the loop passes to `exit`.
  SmallVector<Value> exitOperands;
  bool guardTrueEnters = true;
  std::pair<Value, Form> addresses[2];
  SmallVector<Obligation, 4> obligations;
  std::string reason;

  bool run();
  bool isInvariant(Value v);
  std::optional<Form> formOf(Value v);

private:
  bool fail(const Twine &why) {
    reason = why.str();
    return false;
  }
  bool matchLoop(Block *candidate);
  /// The counter, which steps by 1, and the trip count where the loop exits.
  bool matchCounter(LLVM::CondBrOp branch, OperandRange again,
                    bool exitOnTrue);
  /// The sum's step: a multiply-add of two plain loads in the loop.
  bool matchStep(OperandRange again);
  /// Nothing else happens in the loop, and only the sum leaves it (`out`).
  bool matchBody(LLVM::CondBrOp branch, OperandRange out);
  /// The guard (and preheader) that enters the loop.
  bool matchEntry();
  /// The counter starts at 0 and the sum from a constant or an input.
  bool matchStart();
  /// The factors' addresses as affine forms.
  bool matchAddresses();
  std::optional<std::pair<Value, Form>> addressOf(Value pointer);
  bool oblige(const Form &form, Type type, bool isSigned);
  DenseMap<Value, bool> invariant;
  DenseMap<Value, std::optional<Form>> forms;
};

bool Analysis::isInvariant(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() == &leaf.getBody().front();
  auto found = invariant.find(v);
  if (found != invariant.end())
    return found->second;
  Operation *op = v.getDefiningOp();
  bool result = false;
  if (auto query = dyn_cast<NumInstancesOp>(op)) {
    result = (query.getDim() == Dim::x || query.getDim() == Dim::y) &&
             query.getLevel() <= 1;
  } else if (isCloneable(op)) {
    invariant[v] = false; // no cycles through a block's own ops
    result = llvm::all_of(op->getOperands(),
                          [&](Value operand) { return isInvariant(operand); });
  }
  invariant[v] = result;
  return result;
}

bool Analysis::oblige(const Form &form, Type type, bool isSigned) {
  unsigned width = widthOf(type);
  if (width == 0 || width > 64)
    return false;
  if (form.isConstantOnly())
    return true; // equal in every instance: taken as it is
  Obligation o{form, 0, 0};
  if (isSigned) {
    o.lo = width == 64 ? INT64_MIN : -(int64_t(1) << (width - 1));
    o.hi = width == 64 ? INT64_MAX : (int64_t(1) << (width - 1)) - 1;
  } else {
    o.lo = 0;
    o.hi = width >= 63 ? INT64_MAX : (int64_t(1) << width) - 1;
  }
  obligations.push_back(o);
  return true;
}

std::optional<Form> Analysis::formOf(Value v) {
  auto found = forms.find(v);
  if (found != forms.end())
    return found->second;
  std::optional<Form> result;
  auto finish = [&]() {
    forms[v] = result;
    return result;
  };
  if (!v.getType().isIntOrIndex())
    return finish();
  if (isInvariant(v)) {
    Form f;
    if (std::optional<int64_t> c = constantOf(v))
      f.constant = {Term{*c, {}}};
    else
      f.constant = {Term{1, {v}}};
    result = f;
    return finish();
  }
  if (v == kk) {
    Form f;
    f.coef[AtomK] = {Term{1, {}}};
    result = f;
    return finish();
  }
  Operation *op = v.getDefiningOp();
  if (!op)
    return finish();
  if (auto id = dyn_cast<InstanceIdOp>(op)) {
    if ((id.getDim() != Dim::x && id.getDim() != Dim::y) || id.getLevel() > 1)
      return finish();
    Form f;
    unsigned atom = (id.getDim() == Dim::x ? AtomX : AtomY) + 2 * id.getLevel();
    f.coef[atom] = {Term{1, {}}};
    result = f;
    return finish();
  }
  auto operandForm = [&](unsigned i) { return formOf(op->getOperand(i)); };
  // Casts: widening ones see the exact value only when it fits.
  if (isa<LLVM::SExtOp, arith::ExtSIOp, LLVM::ZExtOp, arith::ExtUIOp,
          LLVM::TruncOp, arith::TruncIOp, arith::IndexCastOp,
          arith::IndexCastUIOp>(op)) {
    std::optional<Form> in = operandForm(0);
    if (!in)
      return finish();
    Type from = op->getOperand(0).getType();
    if (widthOf(v.getType()) > widthOf(from)) {
      bool isSigned = isa<LLVM::SExtOp, arith::ExtSIOp, arith::IndexCastOp>(op);
      if (!oblige(*in, from, isSigned))
        return finish();
    }
    result = in;
    return finish();
  }
  if (isa<LLVM::AddOp, arith::AddIOp, LLVM::SubOp, arith::SubIOp>(op) ||
      (isa<LLVM::OrOp>(op) && cast<LLVM::OrOp>(op).getIsDisjoint())) {
    std::optional<Form> a = operandForm(0), b = operandForm(1);
    if (a && b)
      result = addForms(*a, *b, isa<LLVM::SubOp, arith::SubIOp>(op) ? -1 : 1);
    return finish();
  }
  // Not: ~a = -a - 1.
  if (isa<LLVM::XOrOp, arith::XOrIOp>(op)) {
    for (unsigned i = 0; i < 2; ++i)
      if (constantOf(op->getOperand(1 - i)) == -1) {
        std::optional<Form> a = operandForm(i);
        Form minusOne;
        minusOne.constant = {Term{-1, {}}};
        if (a)
          result = addForms(minusOne, *a, -1);
        break;
      }
    return finish();
  }
  if (isa<LLVM::MulOp, arith::MulIOp>(op)) {
    std::optional<Form> a = operandForm(0), b = operandForm(1);
    if (!a || !b)
      return finish();
    if (b->isConstantOnly())
      result = scaleForm(*a, b->constant);
    else if (a->isConstantOnly())
      result = scaleForm(*b, a->constant);
    return finish();
  }
  if (isa<LLVM::ShlOp, arith::ShLIOp>(op)) {
    std::optional<int64_t> shift = constantOf(op->getOperand(1));
    std::optional<Form> a = operandForm(0);
    if (a && shift && *shift >= 0 && *shift < 63)
      result = scaleForm(*a, Poly{Term{int64_t(1) << *shift, {}}});
    return finish();
  }
  if (auto shr = dyn_cast<LLVM::AShrOp>(op); shr && shr.getIsExact()) {
    std::optional<int64_t> shift = constantOf(op->getOperand(1));
    std::optional<Form> a = operandForm(0);
    if (a && shift && *shift >= 0 && *shift < 63 &&
        oblige(*a, v.getType(), /*isSigned=*/true))
      result = divideForm(*a, int64_t(1) << *shift);
    return finish();
  }
  return finish();
}

std::optional<std::pair<Value, Form>> Analysis::addressOf(Value pointer) {
  if (isInvariant(pointer))
    return std::make_pair(pointer, Form());
  auto gep = pointer.getDefiningOp<LLVM::GEPOp>();
  if (!gep)
    return std::nullopt;
  std::optional<std::pair<Value, Form>> base = addressOf(gep.getBase());
  if (!base)
    return std::nullopt;
  Form offset = base->second;
  bool ok = true;
  bool walked = lanes::forEachGEPIndex(
      gep, layout, /*structs=*/true, [&](lanes::GEPIndex index, int64_t scale) {
        if (!ok)
          return;
        std::optional<Form> f;
        if (auto attr = dyn_cast<IntegerAttr>(index)) {
          f = Form();
          f->constant = {Term{attr.getInt(), {}}};
        } else {
          Value value = cast<Value>(index);
          f = formOf(value);
          // An index narrower than a pointer is sign-extended.
          if (f && widthOf(value.getType()) < 64 &&
              !oblige(*f, value.getType(), /*isSigned=*/true))
            f.reset();
        }
        std::optional<Form> scaled =
            f ? scaleForm(*f, Poly{Term{scale, {}}}) : std::nullopt;
        std::optional<Form> sum =
            scaled ? addForms(offset, *scaled, 1) : std::nullopt;
        if (!sum) {
          ok = false;
          return;
        }
        offset = *sum;
      });
  if (!walked || !ok)
    return std::nullopt;
  return std::make_pair(base->first, offset);
}

bool Analysis::matchLoop(Block *l) {
  loop = l;
  auto branch = dyn_cast<LLVM::CondBrOp>(l->getTerminator());
  if (!branch)
    return fail("the loop does not end in a conditional branch");
  bool exitOnTrue = branch.getFalseDest() == l;
  exit = exitOnTrue ? branch.getTrueDest() : branch.getFalseDest();
  if (exit == l ||
      (exitOnTrue ? branch.getFalseDest() : branch.getTrueDest()) != l)
    return fail("the loop does not branch to itself and one exit");
  if (l->getNumArguments() != 2)
    return fail("the loop carries other values than a counter and a sum");
  OperandRange again =
      exitOnTrue ? branch.getFalseDestOperands() : branch.getTrueDestOperands();
  OperandRange out =
      exitOnTrue ? branch.getTrueDestOperands() : branch.getFalseDestOperands();
  return matchCounter(branch, again, exitOnTrue) && matchStep(again) &&
         matchBody(branch, out) && matchEntry() && matchStart() &&
         matchAddresses();
}

bool Analysis::matchCounter(LLVM::CondBrOp branch, OperandRange again,
                            bool exitOnTrue) {
  // The counter and the accumulator.
  for (unsigned i = 0; i < 2; ++i) {
    BlockArgument arg = loop->getArgument(i);
    if (arg.getType().isF32())
      acc = arg;
    else if (arg.getType().isInteger())
      kk = arg;
  }
  if (!acc || !kk)
    return fail("the loop does not carry an f32 sum and an integer counter");
  Value next = again[kk.getArgNumber()];
  auto increment = next.getDefiningOp<LLVM::AddOp>();
  if (!increment || increment->getBlock() != loop ||
      !((increment.getLhs() == kk && constantOf(increment.getRhs()) == 1) ||
        (increment.getRhs() == kk && constantOf(increment.getLhs()) == 1)))
    return fail("the loop counter does not step by 1");
  // Exit when the next count equals n.
  auto compare = branch.getCondition().getDefiningOp<LLVM::ICmpOp>();
  if (!compare)
    return fail("the loop's exit is not a comparison of its counter");
  Value bound;
  if (compare.getLhs() == next)
    bound = compare.getRhs();
  else if (compare.getRhs() == next)
    bound = compare.getLhs();
  bool eq = compare.getPredicate() == LLVM::ICmpPredicate::eq;
  bool ne = compare.getPredicate() == LLVM::ICmpPredicate::ne;
  if (!bound || !isInvariant(bound) ||
      !((eq && exitOnTrue) || (ne && !exitOnTrue)))
    return fail("the loop's trip count is not a value equal in every instance");
  tripCount = bound;
  return true;
}

bool Analysis::matchStep(OperandRange again) {
  stepped = again[acc.getArgNumber()];
  stepOp = stepped.getDefiningOp();
  if (!stepOp || stepOp->getBlock() != loop)
    return fail("the sum is not updated in the loop");
  Value factors[2];
  if (isa<LLVM::FMulAddOp, LLVM::FMAOp>(stepOp)) {
    if (stepOp->getOperand(2) != acc)
      return fail("the sum is not the addend of the multiply-add");
    factors[0] = stepOp->getOperand(0);
    factors[1] = stepOp->getOperand(1);
  } else if (isa<LLVM::FAddOp>(stepOp)) {
    Value other = stepOp->getOperand(0) == acc ? stepOp->getOperand(1)
                                               : stepOp->getOperand(0);
    if (other == acc ||
        (stepOp->getOperand(0) != acc && stepOp->getOperand(1) != acc))
      return fail("the sum is not one of the addition's operands");
    productOp = other.getDefiningOp<LLVM::FMulOp>();
    if (!productOp || productOp->getBlock() != loop || !other.hasOneUse())
      return fail("the sum does not add a product");
    factors[0] = productOp->getOperand(0);
    factors[1] = productOp->getOperand(1);
  } else {
    return fail("the loop's sum is not a sum of products");
  }
  if (!acc.hasOneUse())
    return fail("the sum is used otherwise in the loop");
  for (unsigned i = 0; i < 2; ++i) {
    loads[i] = factors[i].getDefiningOp<LLVM::LoadOp>();
    if (!loads[i] || loads[i]->getBlock() != loop || loads[i].getVolatile_() ||
        loads[i].getOrdering() != LLVM::AtomicOrdering::not_atomic ||
        !factors[i].hasOneUse())
      return fail("a factor is not a plain load in the loop");
  }
  return true;
}

bool Analysis::matchBody(LLVM::CondBrOp branch, OperandRange out) {
  // Nothing else happens in the loop, and only the sum leaves it.
  for (Operation &op : *loop) {
    if (&op == loads[0] || &op == loads[1] || &op == branch)
      continue;
    if (!isMemoryEffectFree(&op) || op.getNumRegions())
      return fail("the loop does more than sum products");
    for (Value result : op.getResults())
      for (Operation *user : result.getUsers())
        if (user->getBlock() != loop && result != stepped)
          return fail(
              "a value of the loop other than its sum is used after it");
  }
  // What leaves the loop: its sum, and values from before the loop. (Other uses
  // of the sum are in blocks the loop dominates: after its one exit edge.)
  for (Value v : out)
    if (v != stepped && v.getParentBlock() == loop)
      return fail("a value of the loop other than its sum is used after it");
  exitOperands.assign(out.begin(), out.end());
  return true;
}

bool Analysis::matchEntry() {
  // Entry: G -> (P ->) L, G choosing between the loop and something else.
  SmallVector<Block *> entries;
  for (Block *pred : loop->getPredecessors())
    if (pred != loop && !llvm::is_contained(entries, pred))
      entries.push_back(pred);
  if (entries.size() != 1)
    return fail("the loop is not entered from one place");
  Block *entry = entries.front();
  guard = entry;
  if (isa<LLVM::BrOp>(entry->getTerminator())) {
    preheader = entry;
    guard = preheader->getSinglePredecessor();
    if (!guard)
      return fail("the loop's preheader is not behind a guard");
    // The sums variant keeps the preheader (its values may be used after
    // the loop), so it may only compute.
    for (Operation &op : *preheader) {
      if (&op == preheader->getTerminator())
        continue;
      if (!isMemoryEffectFree(&op) || op.getNumRegions())
        return fail("the loop's preheader has side effects");
    }
  }
  auto guardBranch = dyn_cast<LLVM::CondBrOp>(guard->getTerminator());
  if (!guardBranch)
    return fail("the loop has no guard");
  Block *enters = preheader ? preheader : loop;
  if (guardBranch.getTrueDest() == enters &&
      guardBranch.getFalseDest() != enters)
    guardTrueEnters = true;
  else if (guardBranch.getFalseDest() == enters &&
           guardBranch.getTrueDest() != enters)
    guardTrueEnters = false;
  else
    return fail(
        "the guard does not choose between the loop and something else");
  guardCondition = guardBranch.getCondition();
  return true;
}

bool Analysis::matchStart() {
  Value start[2];
  if (preheader) {
    auto br = cast<LLVM::BrOp>(preheader->getTerminator());
    start[0] = br.getDestOperands()[0];
    start[1] = br.getDestOperands()[1];
  } else {
    auto guardBranch = cast<LLVM::CondBrOp>(guard->getTerminator());
    OperandRange enter = guardTrueEnters ? guardBranch.getTrueDestOperands()
                                         : guardBranch.getFalseDestOperands();
    start[0] = enter[0];
    start[1] = enter[1];
  }
  if (constantOf(start[kk.getArgNumber()]) != 0)
    return fail("the loop counter does not start at 0");
  init = start[acc.getArgNumber()];
  if (!(isa<BlockArgument>(init) && isInvariant(init)) &&
      !matchPattern(init, m_Constant()))
    return fail("the sum does not start from a constant or an input");
  if (!isInvariant(guardCondition))
    return fail("the guard differs between instances");
  return true;
}

bool Analysis::matchAddresses() {
  for (unsigned i = 0; i < 2; ++i) {
    std::optional<std::pair<Value, Form>> address =
        addressOf(loads[i].getAddr());
    if (!address)
      return fail("a factor's address is not an affine function of the "
                  "instance ids and the loop counter");
    addresses[i] = *address;
  }
  return true;
}

bool Analysis::run() {
  Region &body = leaf.getBody();
  for (Block &block : body)
    for (Operation &op : block)
      if (op.getNumRegions())
        return fail("the leaf has ops with regions (not imported C)");
  for (Block &block : body) {
    if (!llvm::is_contained(block.getSuccessors(), &block))
      continue;
    reason.clear();
    kk = acc = BlockArgument();
    stepOp = productOp = nullptr;
    preheader = guard = exit = nullptr;
    obligations.clear();
    forms.clear();
    if (matchLoop(&block))
      return true;
  }
  if (reason.empty())
    reason = "no loop sums products";
  return false;
}

//===----------------------------------------------------------------------===//
// The plan.
//===----------------------------------------------------------------------===//

class PlanEmitter {
public:
  PlanEmitter(Analysis &a, OpBuilder &b, Location loc, Block *entry)
      : a(a), b(b), loc(loc), context(b.getContext()) {
    i64 = b.getI64Type();
    i1 = b.getI1Type();
    overflow = LLVM::ConstantOp::create(b, loc, i1, b.getBoolAttr(false));
    unsigned inputs = a.leaf.getNumArguments();
    for (unsigned i = 0; i < inputs; ++i)
      mapping.map(a.leaf.getBody().front().getArgument(i),
                  entry->getArgument(i));
    for (unsigned d = 0; d < 4; ++d)
      extents[d] = entry->getArgument(inputs + d);
  }

  Analysis &a;
  OpBuilder &b;
  Location loc;
  MLIRContext *context;
  Type i64, i1;
  IRMapping mapping;
  Value overflow;
  /// x, y, tiles x, tiles y (the plan's last four inputs), then the trip count.
  Value extents[NumAtoms];

  Value constant(int64_t v) {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
  }

  /// `v` (invariant) computed in the plan.
  Value clone(Value v) {
    if (Value mapped = mapping.lookupOrNull(v))
      return mapped;
    Operation *op = v.getDefiningOp();
    if (auto query = dyn_cast<NumInstancesOp>(op)) {
      unsigned d = (query.getDim() == Dim::x ? 0 : 1) + 2 * query.getLevel();
      Value index =
          arith::IndexCastOp::create(b, loc, b.getIndexType(), extents[d]);
      mapping.map(v, index);
      return index;
    }
    for (Value operand : op->getOperands())
      clone(operand);
    Operation *copy = b.clone(*op, mapping);
    // Flags that make poison of values the leaf computes only on some paths.
    if (auto flags = dyn_cast<LLVM::IntegerOverflowFlagsInterface>(copy))
      flags.setOverflowFlags(LLVM::IntegerOverflowFlags::none);
    if (auto exact = dyn_cast<LLVM::ExactFlagInterface>(copy))
      exact.setIsExact(false);
    if (auto disjoint = dyn_cast<LLVM::DisjointFlagInterface>(copy))
      disjoint.setIsDisjoint(false);
    if (auto nneg = dyn_cast<LLVM::NonNegFlagInterface>(copy))
      nneg.setNonNeg(false);
    if (auto gep = dyn_cast<LLVM::GEPOp>(copy))
      gep.setNoWrapFlags(LLVM::GEPNoWrapFlags::none);
    return copy->getResult(0);
  }

  /// An invariant integer as a signed i64.
  Value asI64(Value v) {
    Value c = clone(v);
    Type type = c.getType();
    if (type.isIndex())
      return arith::IndexCastOp::create(b, loc, i64, c);
    if (type.getIntOrFloatBitWidth() < 64)
      return LLVM::SExtOp::create(b, loc, i64, c);
    return c;
  }

  Value checked(bool multiply, Value x, Value y) {
    auto pair = LLVM::LLVMStructType::getLiteral(context, {i64, i1});
    Value r =
        multiply
            ? LLVM::SMulWithOverflowOp::create(b, loc, pair, x, y).getResult()
            : LLVM::SAddWithOverflowOp::create(b, loc, pair, x, y).getResult();
    overflow = LLVM::OrOp::create(
        b, loc, overflow,
        LLVM::ExtractValueOp::create(b, loc, r, ArrayRef<int64_t>{1}));
    return LLVM::ExtractValueOp::create(b, loc, r, ArrayRef<int64_t>{0});
  }
  Value add(Value x, Value y) { return checked(false, x, y); }
  Value mul(Value x, Value y) { return checked(true, x, y); }

  Value poly(const Poly &p) {
    Value sum = constant(0);
    for (const Term &t : p) {
      Value term = constant(t.factor);
      for (Value s : t.symbols)
        term = mul(term, asI64(s));
      sum = add(sum, term);
    }
    return sum;
  }

  struct Coefs {
    Value atom[NumAtoms];
    Value constant;
  };
  Coefs coefs(const Form &f) {
    Coefs c;
    for (unsigned i = 0; i < NumAtoms; ++i)
      c.atom[i] = poly(f.coef[i]);
    c.constant = poly(f.constant);
    return c;
  }

  Value cmp(LLVM::ICmpPredicate p, Value x, Value y) {
    return LLVM::ICmpOp::create(b, loc, p, x, y);
  }
  Value both(Value x, Value y) { return LLVM::AndOp::create(b, loc, x, y); }

  /// Whether the form stays in [lo, hi] over the box of atoms (extents >= 1).
  Value within(const Form &f, int64_t lo, int64_t hi) {
    Coefs c = coefs(f);
    Value zero = constant(0), one = constant(1);
    Value least = c.constant, most = c.constant;
    for (unsigned i = 0; i < NumAtoms; ++i) {
      if (f.coef[i].empty())
        continue;
      Value reach =
          mul(c.atom[i], LLVM::SubOp::create(b, loc, extents[i], one));
      Value positive = cmp(LLVM::ICmpPredicate::sgt, reach, zero);
      most = add(most, LLVM::SelectOp::create(b, loc, positive, reach, zero));
      least = add(least, LLVM::SelectOp::create(b, loc, positive, zero, reach));
    }
    return both(cmp(LLVM::ICmpPredicate::sge, least, constant(lo)),
                cmp(LLVM::ICmpPredicate::sle, most, constant(hi)));
  }
};

/// The step as a function of (a, b, acc): what the runtime calls to learn
/// whether the leaf's step is fused.
LLVM::LLVMFuncOp buildStep(Analysis &a, OpBuilder &b, SymbolTable &symbols) {
  Type f32 = b.getF32Type();
  auto type = LLVM::LLVMFunctionType::get(f32, {f32, f32, f32});
  Location loc = a.stepOp->getLoc();
  auto step = LLVM::LLVMFuncOp::create(
      b, loc, (a.leaf.getSymName() + "__sums_step").str(), type,
      LLVM::Linkage::Private);
  symbols.insert(step);
  Block *entry = step.addEntryBlock(b);
  OpBuilder sb = OpBuilder::atBlockBegin(entry);
  IRMapping mapping;
  mapping.map(a.loads[0].getResult(), entry->getArgument(0));
  mapping.map(a.loads[1].getResult(), entry->getArgument(1));
  mapping.map(a.acc, entry->getArgument(2));
  if (a.productOp)
    sb.clone(*a.productOp, mapping);
  Operation *copy = sb.clone(*a.stepOp, mapping);
  LLVM::ReturnOp::create(sb, loc, copy->getResult(0));
  return step;
}

/// What the plan's checks give: whether they all pass, and the runtime
/// contraction's operands (the one running along y, p, and the one along x,
/// q, with their strides in elements; the sums' shape and size in bytes).
struct CheckedOperands {
  Value ok;
  Value p, pRow, pDepth, q, qCol, qDepth, rows, cols, bytes;
};

/// Checks that the loop runs and that its addresses are the affine forms the
/// runtime takes; computes the contraction's operands.
CheckedOperands emitChecks(Analysis &a, PlanEmitter &e) {
  OpBuilder &pb = e.b;
  Location loc = e.loc;
  auto ptr = LLVM::LLVMPointerType::get(e.context);
  Type i64 = e.i64;
  CheckedOperands result;
  Value zero = e.constant(0), one = e.constant(1);
  Value &ok = result.ok;
  ok = LLVM::ConstantOp::create(pb, loc, pb.getI1Type(), pb.getBoolAttr(true));
  auto require = [&](Value condition) { ok = e.both(ok, condition); };
  for (unsigned d = 0; d < 4; ++d)
    require(e.cmp(LLVM::ICmpPredicate::sge, e.extents[d], one));
  // The trip count: n when the guard lets the loop run (n >= 1: the loop
  // runs n times), else no iteration (then the leaf is left as it is).
  Value guard = e.clone(a.guardCondition);
  if (!a.guardTrueEnters)
    guard =
        LLVM::XOrOp::create(pb, loc, guard,
                            LLVM::ConstantOp::create(pb, loc, pb.getI1Type(),
                                                     pb.getBoolAttr(true)));
  require(guard);
  Value trip = e.asI64(a.tripCount);
  require(e.cmp(LLVM::ICmpPredicate::sge, trip, one));
  e.extents[AtomK] = trip;
  for (const Obligation &o : a.obligations)
    require(e.within(o.form, o.lo, o.hi));
  // Each operand: base + cx * X + cy * Y + ck * kk + c0 with X = tile x *
  // width + x (the same coefficient through both ids), in bytes. Along a
  // dimension of one tile (a grid that is not tiled) the tile id is 0 and
  // its coefficient does not matter.
  PlanEmitter::Coefs c[2];
  Value oneTile[2] = {e.cmp(LLVM::ICmpPredicate::eq, e.extents[AtomTileX], one),
                      e.cmp(LLVM::ICmpPredicate::eq, e.extents[AtomTileY], one)};
  for (unsigned i = 0; i < 2; ++i) {
    c[i] = e.coefs(a.addresses[i].second);
    require(LLVM::OrOp::create(
        pb, loc, oneTile[0],
        e.cmp(LLVM::ICmpPredicate::eq, c[i].atom[AtomTileX],
              e.mul(c[i].atom[AtomX], e.extents[AtomX]))));
    require(LLVM::OrOp::create(
        pb, loc, oneTile[1],
        e.cmp(LLVM::ICmpPredicate::eq, c[i].atom[AtomTileY],
              e.mul(c[i].atom[AtomY], e.extents[AtomY]))));
  }
  // Which one runs along x (q: no y) and which along y (p: no x).
  Value firstIsQ =
      e.both(e.cmp(LLVM::ICmpPredicate::eq, c[0].atom[AtomY], zero),
             e.cmp(LLVM::ICmpPredicate::eq, c[1].atom[AtomX], zero));
  Value secondIsQ =
      e.both(e.cmp(LLVM::ICmpPredicate::eq, c[1].atom[AtomY], zero),
             e.cmp(LLVM::ICmpPredicate::eq, c[0].atom[AtomX], zero));
  require(LLVM::OrOp::create(pb, loc, firstIsQ, secondIsQ));
  auto pick = [&](Value q, Value p, bool wantQ) {
    return wantQ ? LLVM::SelectOp::create(pb, loc, firstIsQ, q, p).getResult()
                 : LLVM::SelectOp::create(pb, loc, firstIsQ, p, q).getResult();
  };
  Value four = e.constant(4);
  Value base[2];
  for (unsigned i = 0; i < 2; ++i) {
    for (Value v :
         {c[i].atom[AtomX], c[i].atom[AtomY], c[i].atom[AtomK], c[i].constant})
      require(e.cmp(LLVM::ICmpPredicate::eq,
                    LLVM::SRemOp::create(pb, loc, v, four), zero));
    base[i] = LLVM::GEPOp::create(pb, loc, ptr, pb.getI8Type(),
                                  e.clone(a.addresses[i].first),
                                  ArrayRef<LLVM::GEPArg>{c[i].constant});
    Value address = LLVM::PtrToIntOp::create(pb, loc, i64, base[i]);
    require(e.cmp(LLVM::ICmpPredicate::eq,
                  LLVM::AndOp::create(pb, loc, address, e.constant(3)), zero));
  }
  auto elements = [&](Value bytes) {
    return LLVM::SDivOp::create(pb, loc, bytes, four);
  };
  result.q = LLVM::SelectOp::create(pb, loc, firstIsQ, base[0], base[1]);
  result.p = LLVM::SelectOp::create(pb, loc, firstIsQ, base[1], base[0]);
  result.qCol = elements(pick(c[0].atom[AtomX], c[1].atom[AtomX], true));
  result.qDepth = elements(pick(c[0].atom[AtomK], c[1].atom[AtomK], true));
  result.pRow = elements(pick(c[0].atom[AtomY], c[1].atom[AtomY], false));
  result.pDepth = elements(pick(c[0].atom[AtomK], c[1].atom[AtomK], false));
  result.cols = e.mul(e.extents[AtomX], e.extents[AtomTileX]);
  result.rows = e.mul(e.extents[AtomY], e.extents[AtomTileY]);
  result.bytes = e.mul(e.mul(result.cols, result.rows), four);
  require(LLVM::XOrOp::create(
      pb, loc, e.overflow,
      LLVM::ConstantOp::create(pb, loc, pb.getI1Type(), pb.getBoolAttr(true))));
  return result;
}

/// Goes on where the checks pass and the runtime's contraction pays: the
/// sums' buffer, filled by the runtime, or null (the leaf runs as it is).
LogicalResult emitContraction(Analysis &a, PlanEmitter &e,
                              LLVM::LLVMFuncOp plan, LLVM::LLVMFuncOp step,
                              const CheckedOperands &operands) {
  OpBuilder &pb = e.b;
  Location loc = e.loc;
  auto ptr = LLVM::LLVMPointerType::get(e.context);
  Type i32 = pb.getI32Type();
  Value trip = e.extents[AtomK];
  // Checks done: go or decline.
  Block *run = plan.addBlock(), *decline = plan.addBlock();
  LLVM::CondBrOp::create(pb, loc, operands.ok, run, decline);
  pb.setInsertionPointToStart(decline);
  Value null = LLVM::ZeroOp::create(pb, loc, ptr);
  LLVM::ReturnOp::create(pb, loc, null);

  ModuleOp module = a.leaf->getParentOfType<ModuleOp>();
  auto declare = [&](abi::RuntimeFn fn) {
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    return abi::lookupOrCreate(mb, module, fn);
  };
  // The runtime's buffer cache (the memref lowering's allocation functions):
  // a grid launched again reuses the sums' pages instead of faulting in new
  // ones.
  auto mallocFn = declare(abi::RuntimeFn::MemrefAlloc);
  auto freeFn = declare(abi::RuntimeFn::MemrefFree);
  auto contract = declare(abi::RuntimeFn::ContractF32);
  auto pays = declare(abi::RuntimeFn::ContractPays);
  if (failed(mallocFn) || failed(freeFn) || failed(contract) || failed(pays))
    return failure();
  // Whether the runtime's contraction beats the leaf's own loops at this size
  // (it costs a pass over the operands and a second launch).
  pb.setInsertionPointToStart(run);
  Block *allocate = plan.addBlock();
  LLVM::CondBrOp::create(
      pb, loc,
      LLVM::ICmpOp::create(
          pb, loc, LLVM::ICmpPredicate::eq,
          LLVM::CallOp::create(
              pb, loc, *pays,
              ValueRange{operands.rows, operands.cols, e.extents[AtomK]})
              .getResult(),
          LLVM::ConstantOp::create(pb, loc, i32, pb.getI32IntegerAttr(0))),
      decline, allocate);
  pb.setInsertionPointToStart(allocate);
  Value sums = LLVM::CallOp::create(pb, loc, *mallocFn,
                                    ValueRange{operands.bytes})
                   .getResult();
  Block *compute = plan.addBlock(), *failed = plan.addBlock(),
        *done = plan.addBlock();
  LLVM::CondBrOp::create(
      pb, loc,
      LLVM::ICmpOp::create(pb, loc, LLVM::ICmpPredicate::eq, sums,
                           LLVM::ZeroOp::create(pb, loc, ptr)),
      decline, compute);
  pb.setInsertionPointToStart(compute);
  Value initial = e.clone(a.init);
  Value stepAddress = LLVM::AddressOfOp::create(pb, loc, step);
  Value status =
      LLVM::CallOp::create(
          pb, loc, *contract,
          ValueRange{operands.p, operands.pRow, operands.pDepth, operands.q,
                     operands.qCol, operands.qDepth, operands.rows,
                     operands.cols, trip, initial, stepAddress, sums,
                     operands.cols})
          .getResult();
  LLVM::CondBrOp::create(
      pb, loc,
      LLVM::ICmpOp::create(
          pb, loc, LLVM::ICmpPredicate::eq, status,
          LLVM::ConstantOp::create(pb, loc, i32, pb.getI32IntegerAttr(0))),
      done, failed);
  pb.setInsertionPointToStart(failed);
  LLVM::CallOp::create(pb, loc, *freeFn, ValueRange{sums});
  LLVM::BrOp::create(pb, loc, decline);
  pb.setInsertionPointToStart(done);
  LLVM::ReturnOp::create(pb, loc, sums);
  return success();
}

/// The plan: the checks, then the runtime's contraction into the sums.
LLVM::LLVMFuncOp buildPlan(Analysis &a, OpBuilder &b, LLVM::LLVMFuncOp step,
                           SymbolTable &symbols) {
  MLIRContext *context = b.getContext();
  LeafOp leaf = a.leaf;
  Location loc = leaf.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = b.getI64Type();
  SmallVector<Type> inputs(leaf.getArgumentTypes());
  inputs.append(4, i64);
  auto type = LLVM::LLVMFunctionType::get(ptr, inputs);
  auto plan = LLVM::LLVMFuncOp::create(
      b, loc, (leaf.getSymName() + "__sums_plan").str(), type,
      LLVM::Linkage::Private);
  symbols.insert(plan);
  Block *entry = plan.addEntryBlock(b);
  OpBuilder pb = OpBuilder::atBlockBegin(entry);
  PlanEmitter e(a, pb, loc, entry);
  CheckedOperands operands = emitChecks(a, e);
  if (failed(emitContraction(a, e, plan, step, operands)))
    return {};
  return plan;
}

/// The leaf with the loop replaced by a load of the instance's sum.
LeafOp buildSums(Analysis &a, OpBuilder &b, SymbolTable &symbols) {
  LeafOp leaf = a.leaf;
  MLIRContext *context = b.getContext();
  Location loc = leaf.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = b.getI64Type();
  SmallVector<Type> inputs(leaf.getArgumentTypes());
  inputs.append({ptr, i64});
  auto type = FunctionType::get(context, inputs, leaf.getResultTypes());
  auto sums =
      LeafOp::create(b, loc, (leaf.getSymName() + "__sums").str(), type);
  sums.getBody().getBlocks().clear();
  sums.setPrivate();
  symbols.insert(sums);
  if (ArrayAttr argAttrs = leaf.getArgAttrsAttr()) {
    SmallVector<Attribute> attrs(argAttrs.getValue());
    attrs.append({b.getDictionaryAttr({}), b.getDictionaryAttr({})});
    sums.setArgAttrsAttr(b.getArrayAttr(attrs));
  }
  if (Attribute targets = leaf->getAttr(HPVMDialect::getTargetsAttrName()))
    sums->setAttr(HPVMDialect::getTargetsAttrName(), targets);
  IRMapping mapping;
  leaf.getBody().cloneInto(&sums.getBody(), mapping);
  Block &entry = sums.getBody().front();
  Value buffer = entry.addArgument(ptr, loc);
  Value rowLength = entry.addArgument(i64, loc);
  // The guard's edge into the loop goes to a block that loads the sum and
  // goes where the loop went, the sum in place of the loop's.
  Block *loop = mapping.lookup(a.loop);
  Block *enters = a.preheader ? mapping.lookup(a.preheader) : loop;
  Block *exit = mapping.lookup(a.exit);
  SmallVector<Value> out;
  for (Value v : a.exitOperands)
    out.push_back(mapping.lookupOrDefault(v));
  Value stepped = mapping.lookup(a.stepped);
  Block *load = new Block();
  sums.getBody().push_back(load);
  if (a.preheader) {
    // The preheader (free of effects) stays: values it defines may leave the
    // loop on its exit edge. It goes to the load instead of the loop.
    Operation *enter = enters->getTerminator();
    OpBuilder eb(enter);
    LLVM::BrOp::create(eb, loc, ValueRange{}, load);
    enter->erase();
  } else {
    // The guard enters the loop directly, with the counter's and the sum's
    // first values, which the load does not take.
    auto guardBranch =
        cast<LLVM::CondBrOp>(mapping.lookup(a.guard)->getTerminator());
    bool trueEnters = guardBranch.getTrueDest() == enters;
    (trueEnters ? guardBranch.getTrueDestOperandsMutable()
                : guardBranch.getFalseDestOperandsMutable())
        .clear();
    guardBranch->setSuccessor(load, trueEnters ? 0 : 1);
  }
  OpBuilder gb = OpBuilder::atBlockBegin(load);
  auto id = [&](Dim dim, unsigned level) {
    return arith::IndexCastOp::create(
        gb, loc, i64, InstanceIdOp::create(gb, loc, dim, level).getResult());
  };
  auto count = [&](Dim dim) {
    return arith::IndexCastOp::create(
        gb, loc, i64,
        NumInstancesOp::create(gb, loc, dim, /*level=*/0).getResult());
  };
  // Instance (x, y) of tile (tx, ty): element (tx * w + x, ty * h + y).
  Value x = LLVM::AddOp::create(
      gb, loc, LLVM::MulOp::create(gb, loc, id(Dim::x, 1), count(Dim::x)),
      id(Dim::x, 0));
  Value y = LLVM::AddOp::create(
      gb, loc, LLVM::MulOp::create(gb, loc, id(Dim::y, 1), count(Dim::y)),
      id(Dim::y, 0));
  Value index = LLVM::AddOp::create(
      gb, loc, LLVM::MulOp::create(gb, loc, y, rowLength), x);
  Value address = LLVM::GEPOp::create(gb, loc, ptr, gb.getF32Type(), buffer,
                                      ArrayRef<LLVM::GEPArg>{index});
  Value sum = LLVM::LoadOp::create(gb, loc, gb.getF32Type(), address);
  for (Value &v : out)
    if (v == stepped)
      v = sum;
  LLVM::BrOp::create(gb, loc, out, exit);
  stepped.replaceUsesWithIf(
      sum, [&](OpOperand &use) { return use.getOwner()->getBlock() != loop; });
  loop->dropAllDefinedValueUses();
  loop->dropAllReferences();
  loop->erase();
  return sums;
}

} // namespace

ContractionVariant mlir::hpvm::buildContraction(LeafOp leaf,
                                                SymbolTable &symbols) {
  ContractionVariant result;
  Analysis analysis(leaf);
  if (!leaf.getPassedOnInputs()) {
    result.reason = "an output is computed (only inputs passed on are known "
                    "without running the instances)";
    return result;
  }
  for (Type type : leaf.getArgumentTypes())
    if (!LLVM::isCompatibleType(type)) {
      result.reason = "an input is not an LLVM type";
      return result;
    }
  if (!analysis.run()) {
    result.reason = analysis.reason;
    return result;
  }
  OpBuilder b(leaf->getContext());
  b.setInsertionPointAfter(leaf);
  LLVM::LLVMFuncOp step = buildStep(analysis, b, symbols);
  result.plan = buildPlan(analysis, b, step, symbols);
  if (!result.plan) {
    symbols.erase(step);
    result.reason =
        "a runtime declaration clashes with a symbol of the program";
    return result;
  }
  result.sums = buildSums(analysis, b, symbols);
  return result;
}
