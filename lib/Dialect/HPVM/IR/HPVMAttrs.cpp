//===- HPVMAttrs.cpp - Attributes of the hpvm dialect ---------------------===//
// Enum and attribute definitions, the error-budget syntax and the target query.
#include "HPVM/Dialect/HPVM/IR/HPVMAttrs.h"
#include "HPVM/Dialect/HPVM/IR/HPVMDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::hpvm;

#include "HPVM/Dialect/HPVM/IR/HPVMEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "HPVM/Dialect/HPVM/IR/HPVMAttrs.cpp.inc"

void HPVMDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "HPVM/Dialect/HPVM/IR/HPVMAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// #hpvm.error<l1 = f, l2 = f>
//===----------------------------------------------------------------------===//

Attribute ErrorBudgetAttr::parse(AsmParser &parser, Type) {
  double l1 = 0, l2 = 0;
  if (parser.parseLess() || parser.parseKeyword("l1") || parser.parseEqual() ||
      parser.parseFloat(l1) || parser.parseComma() ||
      parser.parseKeyword("l2") || parser.parseEqual() ||
      parser.parseFloat(l2) || parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), llvm::APFloat(l1), llvm::APFloat(l2));
}

void ErrorBudgetAttr::print(AsmPrinter &printer) const {
  printer << "<l1 = ";
  printer.printFloat(getL1());
  printer << ", l2 = ";
  printer.printFloat(getL2());
  printer << ">";
}

LogicalResult
ErrorBudgetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        llvm::APFloat l1, llvm::APFloat l2) {
  for (auto [name, value] : {std::pair{"l1", l1}, std::pair{"l2", l2}}) {
    if (value.isNaN() || value.isInfinity() ||
        (value.isNegative() && !value.isZero())) {
      llvm::SmallString<16> text;
      value.toString(text);
      return emitError() << "#hpvm.error expects a finite " << name
                         << " budget >= 0, found " << text;
    }
  }
  return success();
}

ErrorBudgetAttr mlir::hpvm::strictestNodeError(ArrayRef<Operation *> nodes) {
  ErrorBudgetAttr strictest;
  for (Operation *node : nodes) {
    auto budget = node->getAttrOfType<ErrorBudgetAttr>(HPVMDialect::getErrorAttrName());
    if (!budget)
      continue;
    if (!strictest) {
      strictest = budget;
      continue;
    }
    strictest = ErrorBudgetAttr::get(node->getContext(),
                                     llvm::minimum(strictest.getL1(), budget.getL1()),
                                     llvm::minimum(strictest.getL2(), budget.getL2()));
  }
  return strictest;
}

Attribute KnobAttr::parse(AsmParser &parser, Type) {
  llvm::SMLoc kindLoc = parser.getCurrentLocation();
  StringRef name;
  if (parser.parseLess() || parser.parseKeyword(&name))
    return {};
  std::optional<KnobKind> kind = symbolizeKnobKind(name);
  if (!kind) {
    parser.emitError(kindLoc) << "expected a knob kind (perforate_rows, perforate_cols, "
                                 "sample_filter, sample_reduction, fp16, bf16), found '"
                              << name << "'";
    return {};
  }
  int64_t rate = 0, offset = 0;
  if (succeeded(parser.parseOptionalComma()) &&
      (parser.parseKeyword("rate") || parser.parseEqual() || parser.parseInteger(rate) ||
       parser.parseComma() || parser.parseKeyword("offset") || parser.parseEqual() ||
       parser.parseInteger(offset)))
    return {};
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), *kind, rate, offset);
}

void KnobAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyKnobKind(getKind());
  if (!isPrecision() || getRate() != 0 || getOffset() != 0)
    printer << ", rate = " << getRate() << ", offset = " << getOffset();
  printer << ">";
}

LogicalResult KnobAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               KnobKind kind, int64_t rate, int64_t offset) {
  if (isPrecision(kind)) {
    if (rate != 0 || offset != 0)
      return emitError() << "#hpvm.knob<" << stringifyKnobKind(kind)
                         << "> takes no rate or offset (it changes the precision of "
                            "the op's storage and skips nothing), found rate = "
                         << rate << ", offset = " << offset;
    return success();
  }
  if (rate < 2)
    return emitError() << "#hpvm.knob<" << stringifyKnobKind(kind)
                       << "> expects rate >= 2 (one element skipped in rate), found "
                       << rate;
  if (offset < 0 || offset >= rate)
    return emitError() << "#hpvm.knob<" << stringifyKnobKind(kind)
                       << "> expects 0 <= offset < rate (" << rate << "), found "
                       << offset;
  return success();
}

//===----------------------------------------------------------------------===//
// Target hints
//===----------------------------------------------------------------------===//

SmallVector<Target> mlir::hpvm::getNodeTargets(Operation *node) {
  SmallVector<Target> targets;
  if (auto list = node->getAttrOfType<ArrayAttr>(
          HPVMDialect::getTargetsAttrName()))
    for (Attribute element : list)
      if (auto target = dyn_cast<TargetAttr>(element))
        targets.push_back(target.getValue());
  if (targets.empty())
    targets.push_back(Target::cpu);
  return targets;
}
