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

def HPVMTileNodes : Pass<"hpvm-tile-nodes", "ModuleOp"> {
  let summary = "Split a replicated leaf into a grid of tiles of a smaller leaf grid";
  let description = [{
    Replaces a replicated leaf child (`hpvm.create_node @leaf [%n0, %n1]`) by an
    internal node whose grid counts tiles, `ceil(n_d / size_d)` in dimension d,
    and whose one child is a copy of the leaf over one tile (`[size_0, size_1]`
    instances). The copy keeps the meaning of every grid query of the
    original leaf:

    * `hpvm.instance_id d` becomes `tile_d * size_d + local_d`, where
      `tile_d = hpvm.instance_id d level 1` and `local_d = hpvm.instance_id d`;
    * `hpvm.num_instances d` becomes the original extent `n_d` (a constant, or
      recomputed in the leaf from the parent's inputs it depends on, which the
      new nodes receive as extra inputs);
    * queries of ancestors (`level N`) become `level N+1`.

    When an extent is not a constant multiple of the tile size the last tile
    is partial: the tile count is rounded up and the leaf's body runs under
    `scf.if` (all global ids < extents), so out-of-range instances do
    nothing. Every instance of the original grid runs exactly once, with the
    same ids and extents as before.

    With `scratch=<element type>` an allocation leaf is added to each tile:
    it returns `hpvm.alloc() : memref<size_z x size_y x size_x x type>`
    (x fastest), fed to the tile leaf as a new last input through an
    all_to_all edge: memory per tile (GPU shared memory, on the CPU one
    allocation per tile freed when the tile is done). The original body does
    not use it; it is there for code that stages data per tile.

    With `nodes=a,b` the children instantiating those node definitions are
    tiled and every refusal is a remark saying why; without `nodes` every
    replicated leaf child is tiled where legal (remarks for the refused
    replicated leaves). Refused: definitions that are not leaves, leaves that
    are not replicated, `sizes` with a different rank than the grid, leaves
    with barriers (a barrier would then only wait for one tile), children
    joined by one_to_one edges (their grid changes) or streaming edges and
    binds, extents the leaf cannot recompute, and, when the last tile may be
    partial, leaves with outputs or several blocks.

    Example: `hpvm-opt --hpvm-tile-nodes="nodes=mm sizes=64,4" prog.mlir`.
  }];
  let options = [
    ListOption<"nodes", "nodes", "std::string",
               "Node definitions whose replicated children are tiled (default: all)">,
    ListOption<"sizes", "sizes", "int64_t",
               "Tile size per grid dimension, x first (e.g. 64,4)">,
    Option<"scratch", "scratch", "std::string", /*default=*/"\"\"",
           "Element type of per-tile scratch memory from an allocation node "
           "(e.g. f32; empty: no allocation node)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::scf::SCFDialect"];
}

#endif // HPVM_TRANSFORMS_PASSES_TD
