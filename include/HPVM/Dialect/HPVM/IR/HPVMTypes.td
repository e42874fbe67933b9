// Types of the hpvm dialect: handles of child nodes and of launched graphs.
#ifndef HPVM_DIALECT_HPVM_IR_HPVMTYPES_TD
#define HPVM_DIALECT_HPVM_IR_HPVMTYPES_TD

include "HPVM/Dialect/HPVM/IR/HPVMDialect.td"
include "mlir/IR/AttrTypeBase.td"

class HPVM_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<HPVM_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def HPVM_NodeType : HPVM_Type<"Node", "node"> {
  let summary = "handle of a child node inside an internal node";
  let description = [{
    Produced by `hpvm.create_node` and consumed by `hpvm.edge`, `hpvm.bind_in`
    and `hpvm.bind_out` in the same internal node. It names a static node and
    all of its dynamic instances; it never crosses a node boundary.

    ```mlir
    %n = hpvm.create_node @leaf [%size] : !hpvm.node
    ```
  }];
}

def HPVM_GraphType : HPVM_Type<"Graph", "graph"> {
  let summary = "handle of a launched dataflow graph (host side)";
  let description = [{
    Produced by `hpvm.launch`; host code waits on it and, for streaming graphs,
    pushes inputs to and pops outputs from it.

    ```mlir
    %g = hpvm.launch @root(%a, %n) : (memref<?xf32>, index) -> !hpvm.graph
    hpvm.wait %g
    ```
  }];
}

#endif // HPVM_DIALECT_HPVM_IR_HPVMTYPES_TD
