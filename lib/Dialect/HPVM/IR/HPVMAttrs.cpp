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

LogicalResult KnobAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               KnobKind kind, int64_t rate, int64_t offset) {
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
