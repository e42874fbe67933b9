// Interfaces of the hpvm dialect: what every node definition and every tensor op offers.
#ifndef HPVM_DIALECT_HPVM_IR_HPVMINTERFACES_TD
#define HPVM_DIALECT_HPVM_IR_HPVMINTERFACES_TD

include "mlir/IR/OpBase.td"

def HPVM_NodeOpInterface : OpInterface<"NodeOpInterface"> {
  let cppNamespace = "::mlir::hpvm";
  let description = [{
    A node definition (`hpvm.leaf` or `hpvm.internal`): a symbol whose inputs
    are its arguments and whose outputs are its results.
  }];
  let methods = [
    InterfaceMethod<"Returns true for a leaf node (one holding computation).",
      "bool", "isLeafNode", (ins)>,
    InterfaceMethod<"Returns the node's input types.",
      "::llvm::ArrayRef<::mlir::Type>", "getInputTypes", (ins), [{}], [{
        return ::llvm::cast<::mlir::FunctionOpInterface>($_op.getOperation())
            .getArgumentTypes();
      }]>,
    InterfaceMethod<"Returns the node's output types.",
      "::llvm::ArrayRef<::mlir::Type>", "getOutputTypes", (ins), [{}], [{
        return ::llvm::cast<::mlir::FunctionOpInterface>($_op.getOperation())
            .getResultTypes();
      }]>,
    InterfaceMethod<[{
        Returns the target hints of the node in order of preference; a node
        without the `hpvm.targets` attribute targets the CPU.
      }], "::llvm::SmallVector<::mlir::hpvm::Target>", "getTargets", (ins), [{}], [{
        return ::mlir::hpvm::getNodeTargets($_op.getOperation());
      }]>,
  ];
}

def HPVM_ApproximableOpInterface : OpInterface<"ApproximableOpInterface"> {
  let cppNamespace = "::mlir::hpvm";
  let description = [{
    A tensor op that an accuracy tuner may implement approximately within its
    optional `#hpvm.error` budget.
  }];
  let methods = [
    InterfaceMethod<"Returns the error budget, or null when the op must be exact.",
      "::mlir::hpvm::ErrorBudgetAttr", "getErrorBudget", (ins), [{}], [{
        return $_op.getErrorAttr();
      }]>,
  ];
}

#endif // HPVM_DIALECT_HPVM_IR_HPVMINTERFACES_TD
