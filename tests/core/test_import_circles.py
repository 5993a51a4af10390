"""No import circle inside the core: every module of ``core`` can be read bottom-up.

grimp builds the graph of the core's imports, the lazy ones inside functions included (a
circle closed at run time is still a circle to a reader); imports only for the type checker
are left out. A circle is a strongly connected component of more than one module.
"""

from collections.abc import Iterable, Mapping

import grimp


def circles(graph: Mapping[str, Iterable[str]]) -> list[set[str]]:
    """The strongly connected components of ``graph`` with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[set[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph.get(nxt, ()))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(component)
    return found


def core_imports() -> dict[str, set[str]]:
    graph = grimp.build_graph("core", exclude_type_checking_imports=True)
    return {module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules}


def test_the_finder_sees_a_circle_and_a_clean_graph():
    assert circles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [{"a", "b", "c"}]
    assert circles({"a": ["b"], "b": ["c"], "c": [], "d": ["a", "c"]}) == []
    assert sorted(map(sorted, circles({"a": ["b"], "b": ["a"], "c": ["d"], "d": ["c", "a"]}))) == [
        ["a", "b"],
        ["c", "d"],
    ]


def test_the_graph_includes_lazy_imports():
    # core.jobs.worker imports core.jobs.rq_backend only inside run_worker: grimp must see it
    assert "core.jobs.rq_backend" in core_imports()["core.jobs.worker"]


def test_the_core_has_no_import_circle():
    found = circles(core_imports())
    assert found == [], "import circles in core: " + "; ".join(" <-> ".join(sorted(c)) for c in found)
