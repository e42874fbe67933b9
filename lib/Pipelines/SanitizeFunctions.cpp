//===- SanitizeFunctions.cpp - Sanitizer attributes on every function -----===//
// hpvm-sanitize-functions (Passes.td).
#include "HPVM/Pipelines/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMSANITIZEFUNCTIONS
#include "HPVM/Pipelines/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;

namespace {

/// The LLVM function attribute that asks for `sanitizer`'s instrumentation;
/// empty for a name that is none.
StringRef attributeOf(StringRef sanitizer) {
  return llvm::StringSwitch<StringRef>(sanitizer)
      .Case("address", "sanitize_address")
      .Case("thread", "sanitize_thread")
      .Case("memory", "sanitize_memory")
      .Case("hwaddress", "sanitize_hwaddress")
      .Default("");
}

/// Whether `passthrough` (an llvm.func's) holds the attribute `name`.
bool holds(ArrayAttr passthrough, StringRef name) {
  return passthrough && llvm::any_of(passthrough, [&](Attribute entry) {
           auto text = dyn_cast<StringAttr>(entry);
           return text && text.getValue() == name;
         });
}

struct SanitizeFunctionsPass
    : public hpvm::impl::HPVMSanitizeFunctionsBase<SanitizeFunctionsPass> {
  using HPVMSanitizeFunctionsBase::HPVMSanitizeFunctionsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<StringRef> attributes;
    for (const std::string &sanitizer : sanitizers) {
      StringRef attribute = attributeOf(sanitizer);
      if (attribute.empty()) {
        module.emitError() << "hpvm-sanitize-functions: unknown sanitizer '"
                           << sanitizer
                           << "'; expected address, thread, memory or hwaddress";
        return signalPassFailure();
      }
      attributes.push_back(attribute);
    }
    Builder builder(module.getContext());
    for (auto function : module.getOps<LLVM::LLVMFuncOp>()) {
      if (function.isExternal())
        continue;
      ArrayAttr passthrough = function.getPassthroughAttr();
      if (holds(passthrough, "disable_sanitizer_instrumentation"))
        continue;
      SmallVector<Attribute> entries;
      if (passthrough)
        llvm::append_range(entries, passthrough.getValue());
      bool changed = false;
      for (StringRef attribute : attributes)
        if (!holds(passthrough, attribute)) {
          entries.push_back(builder.getStringAttr(attribute));
          changed = true;
        }
      if (changed)
        function.setPassthroughAttr(builder.getArrayAttr(entries));
    }
  }
};
} // namespace
