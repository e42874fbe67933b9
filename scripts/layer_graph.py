"""The graph walks the layering checks share (check-call-layers.py for the files of a class,
check-runtime-layers.py for the runtime's files and folders): the cycles of a dependency
graph, and the layer of each node of one without cycles.

A graph is {node: set of the nodes it depends on}; every node it names is a key.
"""


def find_cycles(edges):
    """Strongly connected components with more than one node (Tarjan), each sorted."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []
    counter = [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(edges[node]):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return components


def layers(edges):
    """Layer of each node: 0 when it depends on nothing, else one more than what it depends
    on."""
    level = {}

    def depth(node):
        if node not in level:
            level[node] = 0
            level[node] = 1 + max((depth(s) for s in edges[node]), default=-1)
        return level[node]

    for node in edges:
        depth(node)
    return level


def print_layers(edges):
    """Prints the nodes of each layer, the lowest first ("layer 0: a, b")."""
    level = layers(edges)
    for depth in sorted(set(level.values())):
        print(f"layer {depth}: {', '.join(sorted(n for n in level if level[n] == depth))}")
