//===- ContractionForms.cpp - Addresses as exact affine forms -------------===//
// See ContractionForms.h.
#include "ContractionForms.h"

#include "LaneAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::contraction;

namespace {

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

} // namespace

std::optional<int64_t> contraction::constantOf(Value v) {
  APInt value;
  if (matchPattern(v, m_ConstantInt(&value)) && value.getBitWidth() <= 64)
    return value.getSExtValue();
  return std::nullopt;
}

bool AffineForms::isInvariant(Value v) {
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

bool AffineForms::oblige(const Form &form, Type type, bool isSigned) {
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

std::optional<Form> AffineForms::formOf(Value v) {
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

std::optional<std::pair<Value, Form>> AffineForms::addressOf(Value pointer) {
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
