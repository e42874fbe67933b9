// Graph transforms of the hpvm dialect: hpvm-<verb>-<noun>.
#ifndef HPVM_TRANSFORMS_PASSES_TD
#define HPVM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def HPVMFuseNodes : Pass<"hpvm-fuse-nodes", "ModuleOp"> {
  let summary = "Fuse sibling leaves that are independent or joined by one-to-one edges";
  let description = [{
    Replaces two children of an internal node by one leaf running both bodies,
    when that keeps the graph's meaning (the HPVM paper's legality, DESIGN.md
    §3): both are leaves, have the same targets and the same grid (rank and
    extents: the same values or equal constants), and are either independent
    (no path between them) or joined only by direct one_to_one edges (no path
    through a third node). Edges between them become SSA values; the fused
    leaf takes both nodes' other inputs and all their outputs.

    With `pairs=producer:consumer,...` the children instantiating those nodes
    are fused where legal, and a refusal is a remark saying why; with
    `greedy=true` every legal pair is fused until none is left.

    Leaves with several blocks or with barriers, and streaming edges between
    the two, are left alone.

    Example: `hpvm-opt --hpvm-fuse-nodes="pairs=square:store" prog.mlir`.
  }];
  let options = [
    ListOption<"pairs", "pairs", "std::string",
               "Node pairs to fuse, as producer:consumer (node definition names)">,
    Option<"greedy", "greedy", "bool", /*default=*/"false",
           "Fuse every legal pair of sibling leaves until none is left">,
  ];
}

#endif // HPVM_TRANSFORMS_PASSES_TD
