"""General dataflow graphs: leaf and internal nodes, edges, binds and grids.

    m = hpvm.Module("vadd")
    leaf = m.leaf("vadd_leaf",
                  [("a", "memref<?xf32>", "in"), ("b", "memref<?xf32>", "in"),
                   ("c", "memref<?xf32>", "out")],
                  body='''
                    %i = hpvm.instance_id x : index
                    %x = memref.load %a[%i] : memref<?xf32>
                    %y = memref.load %b[%i] : memref<?xf32>
                    %s = arith.addf %x, %y : f32
                    memref.store %s, %c[%i] : memref<?xf32>
                  ''')
    root = m.internal("vadd_root", [("a", "memref<?xf32>"), ("b", "memref<?xf32>"),
                                    ("c", "memref<?xf32>"), ("n", "index")])
    node = root.create_node(leaf, grid=[root.arg("n")])
    for port, name in enumerate("abc"):
        root.bind_in(root.arg(name), node, port)
    m.host("vadd", root)              # track, launch, wait, request, untrack
    lib = hpvm.compile(m)
    lib.vadd(a, b, c, len(a))

Leaf bodies are MLIR text (the scalar code of one instance) naming the
parameters `%<name>`; `hpvm.return` is appended when the body has none. The
structure (nodes, ports, edges, binds, grids, hints, access modes) is built
here and checked by the dialect's verifier (`Module.verify()`).
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple, Union

from .errors import HPVMError
from .ir import MemRefType, ScalarType, TensorType, parse_type, symbol_name
from . import toolchain

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ACCESS = ("in", "out", "inout")
_TARGETS = ("cpu", "vector", "gpu", "spirv", "tensor")
_REPLICATION = ("one_to_one", "all_to_all")


def _params(params, what: str, with_access: bool):
    result = []
    for entry in params:
        if not isinstance(entry, (tuple, list)) or len(entry) not in ((2, 3) if with_access else (2,)):
            expected = "(name, type) or (name, type, access)" if with_access else "(name, type)"
            raise HPVMError(f"{what}: expected parameters as {expected}, found {entry!r}")
        name, type_ = entry[0], parse_type(entry[1])
        access = entry[2] if len(entry) == 3 else None
        if not isinstance(name, str) or not _IDENTIFIER.match(name):
            raise HPVMError(f"{what}: parameter name {name!r} is not an identifier")
        if access is not None and access not in _ACCESS:
            raise HPVMError(f"{what}: parameter '{name}' has access {access!r}; "
                            f"expected one of {', '.join(_ACCESS)}")
        if any(n == name for n, _, _ in result):
            raise HPVMError(f"{what}: two parameters are named '{name}'")
        result.append((name, type_, access))
    return result


class Node:
    """A leaf or internal node definition (`hpvm.leaf` / `hpvm.internal`)."""

    def __init__(self, module: "Module", kind: str, name: str, params, results, targets):
        self.module = module
        self.kind = kind
        self.name = name
        self.params = _params(params, f"node '{name}'", with_access=True)
        self.results = [parse_type(t) for t in results]
        for target in targets or ():
            if target not in _TARGETS:
                raise HPVMError(f"node '{name}': unknown target '{target}'; expected one of "
                                f"{', '.join(_TARGETS)}")
        self.targets = list(targets or ())

    def _signature(self) -> str:
        params = []
        for name, type_, access in self.params:
            attr = f" {{hpvm.access = #hpvm.access<{access}>}}" if access else ""
            params.append(f"%{name}: {type_}{attr}")
        text = f"@{self.name}({', '.join(params)})"
        if self.results:
            text += f" -> ({', '.join(str(t) for t in self.results)})"
        if self.targets:
            text += (" attributes {hpvm.targets = ["
                     + ", ".join(f"#hpvm.target<{t}>" for t in self.targets) + "]}")
        return text


class Leaf(Node):
    def __init__(self, module, name, params, results, targets, body: str):
        super().__init__(module, "leaf", name, params, results, targets)
        if not isinstance(body, str):
            raise HPVMError(f"leaf '{name}': expected the body as MLIR text, found {body!r}")
        self.body = body

    def text(self) -> str:
        lines = [line.strip() for line in self.body.strip().splitlines() if line.strip()]
        if not any(line.startswith("hpvm.return") for line in lines):
            if self.results:
                raise HPVMError(f"leaf '{self.name}' has results "
                                f"({', '.join(str(t) for t in self.results)}) but its body "
                                "does not end with hpvm.return")
            lines.append("hpvm.return")
        return "\n".join([f"hpvm.leaf {self._signature()} {{"] + ["  " + l for l in lines] + ["}"])


class Arg:
    """A parameter of an internal node, usable as a bind source or a grid extent."""

    def __init__(self, node: "Internal", index: int):
        self.node, self.index = node, index
        self.name, self.type, _ = node.params[index]

    def __repr__(self):
        return f"<argument %{self.name}: {self.type} of @{self.node.name}>"


class Instance:
    """A child created in an internal node (`hpvm.create_node`), with its grid."""

    def __init__(self, parent: "Internal", node: Node, handle: str, grid: List,
                 dims: Sequence = ()):
        self.parent, self.node, self.handle, self.grid = parent, node, handle, grid
        #: The grid's extents as given: an Arg of the parent or a positive int, per dimension.
        self.dims = list(dims)
        #: (parameter index of the parent, input port of this child) of each bind_in.
        self.binds: List[Tuple[int, int]] = []


class Internal(Node):
    def __init__(self, module, name, params, results, targets):
        super().__init__(module, "internal", name, params, results, targets)
        self.children: List[Instance] = []
        self.statements: List[str] = []
        self._constants: Dict[int, str] = {}
        self._prelude: List[str] = []

    def arg(self, name: str) -> Arg:
        for index, (n, _, _) in enumerate(self.params):
            if n == name:
                return Arg(self, index)
        raise HPVMError(f"internal node '{self.name}' has no parameter '{name}' "
                        f"(has {', '.join(n for n, _, _ in self.params) or 'none'})")

    def _extent(self, value) -> str:
        if isinstance(value, Arg):
            if value.node is not self:
                raise HPVMError(f"grid extent {value!r} is not a parameter of '{self.name}'")
            if str(value.type) != "index":
                raise HPVMError(f"grid extent %{value.name} of '{self.name}' has type "
                                f"{value.type}; expected index")
            return f"%{value.name}"
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            if value not in self._constants:
                name = f"%c{value}"
                self._constants[value] = name
                self._prelude.append(f"{name} = arith.constant {value} : index")
            return self._constants[value]
        raise HPVMError(f"grid extent {value!r}: expected a positive integer or an index "
                        f"parameter of '{self.name}'")

    def create_node(self, node: Node, grid: Sequence = ()) -> Instance:
        """A child instance of `node` with an instance grid of up to 3 dimensions (x, y, z)."""
        if not isinstance(node, Node) or node.module is not self.module:
            raise HPVMError(f"create_node: expected a node of this module, found {node!r}")
        if len(grid) > 3:
            raise HPVMError(f"create_node: a grid has at most 3 dimensions (x, y, z), found {len(grid)}")
        extents = [self._extent(e) for e in grid]
        handle = f"%{symbol_name(node.name)}_{len(self.children)}"
        instance = Instance(self, node, handle, extents, grid)
        self.children.append(instance)
        dims = f" [{', '.join(extents)}]" if extents else ""
        self.statements.append(f"{handle} = hpvm.create_node @{node.name}{dims} : !hpvm.node")
        return instance

    def _child(self, instance, what: str) -> Instance:
        if not isinstance(instance, Instance) or instance.parent is not self:
            raise HPVMError(f"{what}: expected a child created in '{self.name}', found {instance!r}")
        return instance

    def bind_in(self, arg: Arg, child: Instance, port: int, streaming: bool = False) -> None:
        """Parameter `arg` of this node flows into input `port` of `child`."""
        child = self._child(child, "bind_in")
        if not isinstance(arg, Arg) or arg.node is not self:
            raise HPVMError(f"bind_in: expected a parameter of '{self.name}', found {arg!r}")
        mark = " streaming" if streaming else ""
        child.binds.append((arg.index, int(port)))
        self.statements.append(f"hpvm.bind_in %{arg.name} -> {child.handle}[{int(port)}]{mark} "
                               f": {arg.type}")

    def edge(self, source: Instance, source_port: int, dest: Instance, dest_port: int,
             replication: str = "all_to_all", streaming: bool = False) -> None:
        """Output `source_port` of `source` flows into input `dest_port` of `dest`."""
        source, dest = self._child(source, "edge"), self._child(dest, "edge")
        if replication not in _REPLICATION:
            raise HPVMError(f"edge: unknown replication '{replication}'; expected "
                            f"{' or '.join(_REPLICATION)}")
        mark = " streaming" if streaming else ""
        self.statements.append(f"hpvm.edge {source.handle}[{int(source_port)}] -> "
                               f"{dest.handle}[{int(dest_port)}] {replication}{mark}")

    def bind_out(self, child: Instance, port: int, output: int, streaming: bool = False) -> None:
        """Output `port` of `child` is output `output` of this node."""
        child = self._child(child, "bind_out")
        mark = " streaming" if streaming else ""
        self.statements.append(f"hpvm.bind_out {child.handle}[{int(port)}] -> {int(output)}{mark}")

    def text(self) -> str:
        lines = [f"hpvm.internal {self._signature()} {{"]
        lines += ["  " + s for s in self._prelude + self.statements]
        lines.append("}")
        return "\n".join(lines)


class Module:
    """A module of node definitions and host functions."""

    def __init__(self, name: str = "module"):
        self.name = symbol_name(name)
        self.nodes: List[Node] = []
        self.hosts: List[Tuple[str, Internal, list]] = []
        self._names: set = set()  # of the nodes and host functions

    def _name(self, name: str) -> str:
        if not isinstance(name, str) or not _IDENTIFIER.match(name):
            raise HPVMError(f"node name {name!r} is not an identifier")
        if name in self._names:
            raise HPVMError(f"module '{self.name}' already defines '{name}'")
        return name

    def leaf(self, name: str, params, body: str, results=(), targets=None) -> Leaf:
        """A leaf node: `params` as (name, type[, access]), `body` the MLIR of one instance."""
        node = Leaf(self, self._name(name), params, results, targets, body)
        self.nodes.append(node)
        self._names.add(name)
        return node

    def internal(self, name: str, params, results=(), targets=None) -> Internal:
        """An internal node; add children with create_node, then edges and binds."""
        node = Internal(self, self._name(name), params, results, targets)
        self.nodes.append(node)
        self._names.add(name)
        return node

    def host(self, name: str, root: Internal) -> None:
        """A host function `@name` with the root's parameters: it tracks the memrefs,
        launches the root, waits, requests the memrefs back and untracks them."""
        if not isinstance(root, Internal) or root.module is not self:
            raise HPVMError(f"host '{name}': expected an internal node of this module as the root")
        if root.results:
            raise HPVMError(f"host '{name}': the root '{root.name}' has outputs; a generated host "
                            "function returns nothing (write the outputs into memrefs, or use "
                            "a TensorGraph)")
        self.hosts.append((self._name(name), root, list(root.params)))
        self._names.add(name)

    def mlir(self) -> str:
        parts = [f"// Module '{self.name}' built by the hpvm Python package."]
        parts += [node.text() for node in self.nodes]
        for name, root, params in self.hosts:
            memrefs = [(n, t) for n, t, _ in params if isinstance(t, MemRefType)]
            lines = [f"func.func @{name}({', '.join(f'%{n}: {t}' for n, t, _ in params)}) {{"]
            lines += [f"  hpvm.track %{n} : {t}" for n, t in memrefs]
            args = ", ".join(f"%{n}" for n, _, _ in params)
            types = ", ".join(str(t) for _, t, _ in params)
            lines.append(f"  %graph = hpvm.launch @{root.name}({args}) : ({types}) -> !hpvm.graph")
            lines.append("  hpvm.wait %graph")
            lines += [f"  hpvm.request %{n} : {t}" for n, t in memrefs]
            lines += [f"  hpvm.untrack %{n} : {t}" for n, t in memrefs]
            lines += ["  return", "}"]
            parts.append("\n".join(lines))
        return "\n\n".join(parts) + "\n"

    def verify(self) -> str:
        text = self.mlir()
        toolchain.verify(text, f"{self.name}.mlir")
        return text

    def functions(self):
        return [(name, [(n, t) for n, t, _ in params]) for name, _, params in self.hosts]

    def call_checks(self, name: str) -> "CallChecks":
        """What a call of host function `name` is checked for before it runs (see
        CallChecks): its grids' extents."""
        for host, root, params in self.hosts:
            if host == name:
                return CallChecks(host, root, params)
        raise HPVMError(f"module '{self.name}' has no host function '{name}'")


# --------------------------------------------------------------------------
# Checks of a call against the graph's grids
# --------------------------------------------------------------------------

_INT64_MAX = 2 ** 63 - 1


class CallChecks:
    """What a call of a host function is checked for before the runtime sees it, from the
    graph as built (the leaves' bodies are MLIR text; only this much is read of them):

    * each grid extent that is an argument (directly, or passed down through bind_in into
      internal nodes) is >= 0;
    * the instances of each leaf, the product of the extents of its grid and of the grids
      of the internal nodes above it, are at most 2^63 - 1.

    Grids larger than the arrays their leaves index are found by the compiled code itself
    (hpvm_rt_grid_fits, before a grid runs), whose error the runtime's guard returns.
    """

    def __init__(self, name: str, root: Internal, params):
        self.name = name
        self.params = [(n, t) for n, t, _ in params]
        #: host argument index of each extent argument -> the leaves whose grids it sizes.
        self.extents: Dict[int, List[str]] = {}
        #: (leaf name, [(source, dimension letter)]) of each leaf's grids, root to leaf.
        self.grids: List[Tuple[str, List]] = []
        self._walk(root, {i: i for i in range(len(params))}, [], set())
        #: host argument indices of the memrefs that no leaf writes: every leaf port they
        #: reach (through bind_in, into internal nodes) has access "in". Calls from several
        #: threads may pass one such array at once (compiled._Admission).
        written: set = set()
        self._writers(root, {i: {i} for i in range(len(params))}, written, set())
        self.read_only = {i for i, (_, t) in enumerate(self.params)
                          if isinstance(t, MemRefType) and i not in written}

    def _writers(self, node: Internal, env: Dict[int, set], written: set, seen: set) -> None:
        """Adds to `written` the host arguments (`env`: node parameter -> host arguments)
        that reach a leaf port other than "in" (unknown access counts as written), or a
        node that returns results (what it returns may be one of them)."""
        if id(node) in seen:
            return
        seen = seen | {id(node)}
        if node.results:
            for hosts in env.values():
                written |= hosts
        for child in node.children:
            ports: Dict[int, set] = {}
            for index, port in child.binds:
                if index in env:
                    ports.setdefault(port, set()).update(env[index])
            if isinstance(child.node, Internal):
                self._writers(child.node, ports, written, seen)
                continue
            for port, hosts in ports.items():
                params = child.node.params
                if port >= len(params) or params[port][2] != "in" or child.node.results:
                    written |= hosts

    def _walk(self, node: Internal, env: Dict[int, int], above: List, seen: set) -> None:
        if id(node) in seen:  # a node cannot hold itself (the verifier says so); no loop here
            return
        seen = seen | {id(node)}
        for child in node.children:
            grid = []
            for d, extent in enumerate(child.dims[:3]):
                if isinstance(extent, Arg):
                    source = ("arg", env[extent.index]) if extent.index in env else None
                else:
                    source = ("const", int(extent))
                grid.append((source, "xyz"[d]))
                if source is not None and source[0] == "arg":
                    self.extents.setdefault(source[1], []).append(child.node.name)
            path = above + grid
            ports = {port: env[index] for index, port in child.binds if index in env}
            if isinstance(child.node, Leaf):
                self.grids.append((child.node.name, path))
            elif isinstance(child.node, Internal):
                self._walk(child.node, ports, path, seen)

    def __bool__(self) -> bool:
        return bool(self.extents or self.grids)

    def check(self, function: str, values: Sequence) -> None:
        """Raises HPVMError when the call with `values` (the host arguments: ints for the
        index scalars, arrays for the memrefs) would break one of the rules."""
        names = [n for n, _ in self.params]

        def value(source):
            return source[1] if source[0] == "const" else int(values[source[1]])

        for index, leaves in self.extents.items():
            extent = int(values[index])
            if extent < 0:
                raise HPVMError(f"{function}: argument '{names[index]}' is {extent}, the "
                                f"number of instances of '{leaves[0]}' along a grid "
                                "dimension; expected a size >= 0")
        for leaf, path in self.grids:
            known = [(value(s), d) for s, d in path if s is not None]
            total = 1
            for extent, _ in known:
                total *= extent
            if total > _INT64_MAX:
                sizes = " x ".join(str(e) for e, _ in known)
                raise HPVMError(f"{function}: the grid of '{leaf}' has {sizes} = {total} "
                                "instances; expected at most 2^63 - 1")
