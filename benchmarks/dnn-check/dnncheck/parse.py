"""Parsing a release source: each node function's __hpvm__tensor_* call, root()'s graph
(createNodeND, bindIn, edge, bindOut) and main()'s weight files, batch size and input shape.
The programs are machine generated and very regular, so regular expressions suffice; anything
that does not fit raises a CheckError that says where."""
import re

from .program import (NODE_CALLS_IGNORED, OPS, ROOT_CALLS_IGNORED, CheckError, Node, Program,
                      Weight, assign_roles, propagate_shapes)


def strip_comments(text):
    """The text with comments blanked out (newlines kept, so line numbers stay right)."""
    pat = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    return pat.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)) if m.group(0)[0] == "/"
                   else m.group(0), text)


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def functions(text):
    """{name: (params text, body text, body offset)} of every function definition."""
    out = {}
    for m in re.finditer(r"\b(?:void|int)\s+(\w+)\s*\(([^()]*)\)\s*\{", text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth:
            raise CheckError(f"line {line_of(text, m.start())}: unbalanced braces in "
                             f"{m.group(1)}()")
        out[m.group(1)] = (m.group(2), text[m.end():i - 1], m.end())
    return out


def split_params(params):
    """[(type, name)] of a C parameter list."""
    out = []
    for p in params.split(","):
        p = " ".join(p.split())
        if not p or p == "void":
            continue
        m = re.fullmatch(r"(.*?)\s*\b(\w+)", p)
        if not m:
            raise CheckError(f"cannot read parameter '{p}'")
        out.append((m.group(1).replace(" ", ""), m.group(2)))
    return out


def split_args(args):
    return [" ".join(a.split()) for a in args.split(",")] if args.strip() else []


def parse_number(text, kind):
    t = text.strip()
    try:
        if kind == "i":
            return int(t, 0)
        return float(t.rstrip("fF"))
    except ValueError:
        what = "an integer" if kind == "i" else "a number"
        raise CheckError(f"'{t}' is not {what} constant")


def parse_node(name, params, body, offset, text):
    """The Node of one node function (its name, ports and constants; sources come later)."""
    plist = split_params(params)
    index = {pname: i for i, (_, pname) in enumerate(plist)}
    for call in re.finditer(r"__hpvm__(\w+)", body):
        c = call.group(1)
        if c not in NODE_CALLS_IGNORED and not c.startswith("tensor_"):
            raise CheckError(f"line {line_of(text, offset + call.start())}: {name}() calls "
                             f"__hpvm__{c}, which the check does not know")
    calls = list(re.finditer(r"__hpvm__tensor_(\w+)\s*\(([^()]*)\)", body))
    if len(calls) != 1:
        raise CheckError(f"line {line_of(text, offset)}: {name}() has {len(calls)} tensor "
                         "intrinsic calls (expected exactly one)")
    m = calls[0]
    line = line_of(text, offset + m.start())
    op, args = m.group(1), split_args(m.group(2))
    if op not in OPS:
        raise CheckError(f"line {line}: {name}() calls __hpvm__tensor_{op}, which the check "
                         "does not handle")
    ntensors, kinds = OPS[op]
    if len(args) != ntensors + len(kinds):
        raise CheckError(f"line {line}: __hpvm__tensor_{op} has {len(args)} operands, "
                         f"expected {ntensors + len(kinds)}")
    ports = []
    for a in args[:ntensors]:
        if a not in index or "*" not in plist[index[a]][0]:
            raise CheckError(f"line {line}: tensor operand '{a}' of __hpvm__tensor_{op} is not "
                             f"a pointer parameter of {name}()")
        i = index[a]
        # Every tensor parameter is followed by its size (size_t); both are ports.
        if i + 1 >= len(plist) or plist[i + 1][0] != "size_t":
            raise CheckError(f"line {line}: parameter '{a}' of {name}() is not followed by "
                             "its size_t parameter")
        ports.append(i)
    consts = [parse_number(a, k) for a, k in zip(args[ntensors:], kinds)]
    ret = re.search(r"__hpvm__return\s*\(\s*2\s*,\s*(\w+)", body)
    before = body[:m.start()]
    res = re.search(r"(\w+)\s*=\s*$", before)
    if not ret or not res or ret.group(1) != res.group(1):
        raise CheckError(f"line {line}: {name}() does not return its intrinsic's result "
                         "(expected __hpvm__return(2, r, ...) of 'r = __hpvm__tensor_...')")
    return Node(name="", func=name, op=op, ports=ports, consts=consts, line=line)


def parse_program(name, source):
    """The Program of one release source file; raises CheckError on anything unexpected."""
    with open(source, encoding="utf-8", errors="replace") as f:
        text = strip_comments(f.read())
    prog = Program(name=name, source=source)
    funcs = functions(text)
    for required in ("root", "main"):
        if required not in funcs:
            raise CheckError(f"no {required}() function found")
    # main(): data directory, weights, input, arguments.
    _, main, moff = funcs["main"]
    paths = parse_paths(prog, main)
    parse_weights(prog, text, main, moff, paths)
    input_var = parse_input(prog, text, main, moff, paths)
    parse_sizes(prog, text)
    args = {}
    for m in re.finditer(r"\bargs\s*->\s*(\w+)\s*=\s*([^;]+);", main):
        args[m.group(1)] = " ".join(m.group(2).split())
    # root(): parameters, nodes, edges.
    rparams, rbody, roff = funcs["root"]
    bound = bind_root_params(prog, split_params(rparams), args, input_var)
    nodes = parse_nodes(text, rbody, roff, funcs)
    binds, edges, outs = parse_links(text, rbody, roff, nodes)
    connect_sources(prog, nodes, bound, binds, edges)
    res = [o for o in outs if o[2] == 0]
    if len(res) != 1 or res[0][1] != 0:
        raise CheckError("root(): expected one '__hpvm__bindOut(var, 0, 0, 0)' (the result)")
    prog.result = res[0][0]
    prog.nodes = [nodes[v] for v in needed_in_order(prog, nodes)]
    assign_roles(prog)
    propagate_shapes(prog)
    return prog


def parse_paths(prog, main):
    """Sets the data directory (dir_prefix); -> {C variable: file name} of main()'s
    'dir_prefix + std::string("FILE")' paths."""
    m = re.search(r'\bdir_prefix\s*=\s*std::string\s*\(\s*MODEL_PARAMS_DIR_STR\s*\)\s*\+\s*'
                  r'"([^"]*)"\s*;', main)
    if not m:
        raise CheckError("main(): no 'dir_prefix = std::string(MODEL_PARAMS_DIR_STR) + \"/DIR/\"'")
    prog.dir_name = m.group(1).strip("/")
    if not prog.dir_name or "/" in prog.dir_name or ".." in prog.dir_name:
        raise CheckError(f"main(): unexpected data directory '{m.group(1)}'")
    paths = {}
    for m in re.finditer(r'\bstd::string\s+(\w+)\s*=\s*dir_prefix\s*\+\s*'
                         r'std::string\s*\(\s*"([^"]+)"\s*\)\s*;', main):
        paths[m.group(1)] = m.group(2)
    return paths


def parse_weights(prog, text, main, moff, paths):
    """main()'s readTrainedWeights calls: prog.weights, each from its own file."""
    wpat = re.compile(r"\bvoid\s*\*\s*(\w+)\s*=\s*readTrainedWeights\s*\(\s*(\w+)\s*\.\s*c_str"
                      r"\s*\(\s*\)" + r"\s*,\s*(\d+)" * 5 + r"\s*\)")
    spans = []
    for m in wpat.finditer(main):
        spans.append((m.start(), m.end()))
        wname, pvar, dtype = m.group(1), m.group(2), int(m.group(3))
        line = line_of(text, moff + m.start())
        if pvar not in paths:
            raise CheckError(f"line {line}: weight {wname} is read from '{pvar}', which is not "
                             "a 'dir_prefix + std::string(\"FILE\")' path")
        if dtype != 0:
            raise CheckError(f"line {line}: weight {wname} has data type {dtype} (only 0, "
                             "float32, is known)")
        if wname in prog.weights:
            raise CheckError(f"line {line}: weight {wname} is read twice")
        dims = tuple(int(m.group(i)) for i in range(4, 8))
        if min(dims) <= 0:
            raise CheckError(f"line {line}: weight {wname} has dimensions {dims}")
        prog.weights[wname] = Weight(wname, paths[pvar], dims, line)
    for m in re.finditer(r"\breadTrainedWeights\s*\(", main):
        if not any(a <= m.start() < b for a, b in spans):
            raise CheckError(f"line {line_of(text, moff + m.start())}: a readTrainedWeights "
                             "call of an unexpected form (expected 'void *NAME = "
                             "readTrainedWeights(NAME_path.c_str(), 0, d1, d2, d3, d4)')")
    if not prog.weights:
        raise CheckError("main(): no readTrainedWeights calls found")
    files = {}
    for w in prog.weights.values():
        if w.file in files:
            raise CheckError(f"weights {files[w.file]} and {w.name} read the same file {w.file}")
        files[w.file] = w.name
        if w.file in ("test_input.bin", "test_labels.bin") or "/" in w.file:
            raise CheckError(f"line {w.line}: weight {w.name} reads file '{w.file}'")


def parse_input(prog, text, main, moff, paths):
    """main()'s readInputBatch call (prog.input_chw) and readLabels calls; -> the C variable
    of the input batch."""
    ipat = re.compile(r"\bvoid\s*\*\s*(\w+)\s*=\s*readInputBatch\s*\(\s*(\w+)\s*\.\s*c_str\s*\("
                      r"\s*\)\s*,\s*nchw\s*,\s*(\w+)\s*,\s*(\w+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,"
                      r"\s*(\d+)\s*\)")
    ins = list(ipat.finditer(main))
    if len(ins) != 1 or len(re.findall(r"\breadInputBatch\s*\(", main)) != 1:
        raise CheckError("main(): expected one 'void *X = readInputBatch(PATH.c_str(), nchw, "
                         "start, end, C, H, W)'")
    m = ins[0]
    input_var = m.group(1)
    if paths.get(m.group(2)) != "test_input.bin":
        raise CheckError(f"main(): the input is read from '{m.group(2)}', not a path to "
                         "test_input.bin")
    if (m.group(3), m.group(4)) != ("start", "end"):
        raise CheckError(f"main(): readInputBatch reads ({m.group(3)}, {m.group(4)}), "
                         "expected (start, end)")
    if not re.search(r"\bstart\s*=\s*i\s*\*\s*batch_size\s*,\s*end\s*=\s*start\s*\+\s*"
                     r"batch_size\b", main):
        raise CheckError("main(): batch i is not images [i*batch_size, (i+1)*batch_size)")
    prog.input_chw = tuple(int(m.group(i)) for i in (5, 6, 7))
    labels = [v for v, f in paths.items() if f == "test_labels.bin"]
    for m in re.finditer(r"\breadLabels\w*\s*\(\s*(\w+)\s*\.\s*c_str\s*\(\s*\)\s*,\s*(\d+)\s*\)",
                         main):
        if m.group(1) in labels:
            prog.labels_read = max(prog.labels_read, int(m.group(2)))
            prog.warnings.append(f"main() reads {m.group(2)} labels up front "
                                 f"(line {line_of(text, moff + m.start())})")
    return input_var


def parse_sizes(prog, text):
    """prog.batch_size and prog.input_size from their one 'int NAME = N' each."""
    for var in ("batch_size", "input_size"):
        found = re.findall(r"\b(?:const\s+)?int\b[^;]*?\b" + var + r"\s*=\s*(\d+)", text)
        if len(found) != 1:
            raise CheckError(f"expected one 'int {var} = N' definition, found {len(found)}")
        setattr(prog, var, int(found[0]))
    if prog.batch_size <= 0 or prog.input_size < prog.batch_size:
        raise CheckError(f"batch_size {prog.batch_size}, input_size {prog.input_size}")


def bind_root_params(prog, rplist, args, input_var):
    """{root parameter index: ("input"|"weight", name)} of root()'s tensor parameters, by what
    main() sets them to (args->NAME = ...)."""
    bound = {}
    for i, (ptype, pname) in enumerate(rplist):
        if "*" not in ptype:
            continue
        if i + 1 >= len(rplist) or rplist[i + 1][0] != "size_t":
            raise CheckError(f"root(): parameter '{pname}' is not followed by its size_t")
        val = args.get(pname)
        if val is None:
            raise CheckError(f"main(): root's parameter '{pname}' is never set (args->{pname})")
        if val == input_var:
            bound[i] = ("input", pname)
        elif val in prog.weights:
            bound[i] = ("weight", val)
        else:
            raise CheckError(f"main(): args->{pname} = {val}, which is neither the input batch "
                             "nor a weight")
    if sum(1 for k, _ in bound.values() if k == "input") != 1:
        raise CheckError("root(): expected exactly one parameter bound to the input batch")
    return bound


def parse_nodes(text, rbody, roff, funcs):
    """{var: Node} of root()'s __hpvm__createNodeND calls (after checking that root() calls
    nothing else the check does not know)."""
    for call in re.finditer(r"__hpvm__(\w+)\s*\(([^()]*)\)", rbody):
        c, line = call.group(1), line_of(text, roff + call.start())
        if c not in ROOT_CALLS_IGNORED | {"createNodeND", "bindIn", "edge", "bindOut"}:
            raise CheckError(f"line {line}: root() calls __hpvm__{c}, which the check does "
                             "not know")
    nodes = {}
    for m in re.finditer(r"\bvoid\s*\*\s*(\w+)\s*=\s*__hpvm__createNodeND\s*\(\s*(\d+)\s*,"
                         r"\s*(\w+)\s*\)", rbody):
        var, ndims, fn = m.group(1), int(m.group(2)), m.group(3)
        line = line_of(text, roff + m.start())
        if ndims != 0:
            raise CheckError(f"line {line}: node {var} has {ndims} dimensions (expected 0)")
        if fn not in funcs:
            raise CheckError(f"line {line}: node {var} runs {fn}, which is not defined")
        if var in nodes:
            raise CheckError(f"line {line}: node {var} is created twice")
        try:
            node = parse_node(fn, *funcs[fn], text)
        except CheckError as e:
            raise CheckError(f"node {var}: {e}")
        node.name = var
        nodes[var] = node
    if len(nodes) != len(re.findall(r"__hpvm__createNodeND\s*\(", rbody)):
        raise CheckError("root(): a __hpvm__createNodeND call of an unexpected form")
    return nodes


def parse_links(text, rbody, roff, nodes):
    """root()'s bindIn, edge and bindOut calls: ([(node, root port, node port, line)],
    [(source, destination, source port, destination port, line)],
    [(node, node port, root port, line)])."""
    binds, edges, outs = [], [], []

    def ints(call, kind, n):
        args_ = split_args(call.group(1))
        line = line_of(text, roff + call.start())
        if len(args_) != n:
            raise CheckError(f"line {line}: __hpvm__{kind} has {len(args_)} operands")
        for a in args_[:2 if kind == "edge" else 1]:
            if a not in nodes:
                raise CheckError(f"line {line}: __hpvm__{kind} names '{a}', not a node")
        return args_, [parse_number(a, "i") for a in args_[(2 if kind == "edge" else 1):]], line

    for call in re.finditer(r"__hpvm__bindIn\s*\(([^()]*)\)", rbody):
        a, (rport, nport, stream), line = ints(call, "bindIn", 4)
        if stream != 0:
            raise CheckError(f"line {line}: streaming bindIn")
        binds.append((a[0], rport, nport, line))
    for call in re.finditer(r"__hpvm__edge\s*\(([^()]*)\)", rbody):
        a, (repl, sport, dport, stream), line = ints(call, "edge", 6)
        if repl != 1 or stream != 0:
            raise CheckError(f"line {line}: edge of type {repl}, streaming {stream} "
                             "(expected type 1, all-to-all, and streaming 0)")
        edges.append((a[0], a[1], sport, dport, line))
    for call in re.finditer(r"__hpvm__bindOut\s*\(([^()]*)\)", rbody):
        a, (nport, rport, stream), line = ints(call, "bindOut", 4)
        outs.append((a[0], nport, rport, line))
    return binds, edges, outs


def connect_sources(prog, nodes, bound, binds, edges):
    """Each tensor operand's source (node.sources): exactly one bindIn or edge into its port."""
    for node in nodes.values():
        for port in node.ports:
            srcs = []
            for var, rport, nport, line in binds:
                if var == node.name and nport == port:
                    if rport not in bound:
                        raise CheckError(f"line {line}: bindIn of root port {rport}, which is "
                                         "not a tensor parameter of root()")
                    srcs.append(bound[rport])
            for src, dst, sport, dport, line in edges:
                if dst == node.name and dport == port:
                    if sport != 0:
                        raise CheckError(f"line {line}: edge from output {sport} of {src} into "
                                         f"tensor port {port} of {dst} (expected output 0)")
                    srcs.append(("node", src))
            if len(srcs) != 1:
                raise CheckError(f"node {node.name} ({node.op}): input port {port} has "
                                 f"{len(srcs)} sources (expected 1)")
            node.sources.append(srcs[0])
        # The size ports should come along with their tensors (a warning only: unused here).
        for port, src in zip(node.ports, node.sources):
            if src[0] == "node" and not any(s == src[1] and d == node.name and sp == 1 and
                                            dp == port + 1 for s, d, sp, dp, _ in edges):
                prog.warnings.append(f"{node.name}: port {port + 1} (size) is not fed by "
                                     f"{src[1]}'s output 1")


def needed_in_order(prog, nodes):
    """The nodes prog.result depends on, in topological order (creation order among the ready
    ones); cycles are errors, other nodes a warning (they would be dead code)."""
    order, done, pending = [], set(), list(nodes)
    while pending:
        ready = [v for v in pending
                 if all(k != "node" or s in done for k, s in nodes[v].sources)]
        if not ready:
            raise CheckError("root(): the graph has a cycle or unknown sources among "
                             f"{pending[:5]}")
        order.append(ready[0])
        done.add(ready[0])
        pending.remove(ready[0])
    needed, stack = set(), [prog.result]
    while stack:
        v = stack.pop()
        if v not in needed:
            needed.add(v)
            stack += [s for k, s in nodes[v].sources if k == "node"]
    dead = [v for v in order if v not in needed]
    if dead:
        prog.warnings.append(f"nodes not feeding the result: {', '.join(dead)}")
    return [v for v in order if v in needed]
