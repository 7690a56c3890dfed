"""The ``scope`` and ``graph`` views (tfprof's ``TFScope`` and ``TFGraph``): graph nodes as a
tree of ``GraphNodeProto``s under ``_TFProfRoot``.

* scope: a node's parent is the node named by its name up to the last ``/`` (a scope with no
  node of its own appears as an empty node); totals add the accounted nodes below.
* graph: a node's children are its inputs, the roots are the nodes nothing consumes; each
  graph node is accounted once, where the depth-first walk first meets it.
"""

from __future__ import annotations

from typing import Any

from flowmesh.profiler.model import ProfileModel
from flowmesh.profiler.options import Options
from flowmesh.profiler.show_node import (
    ROOT_NAME,
    ShowNode,
    re_account,
    should_expand,
    should_show,
    sort_nodes,
)

ROOT_DEPTH = 1
"""The depth tfprof gives the root when it compares depths with ``max_depth``."""


def _search_starts(nodes: list[ShowNode], options: Options) -> list[ShowNode]:
    """The highest nodes matching ``start_name_regexes`` (tfprof's ``SearchRoot``), in order."""
    found: list[ShowNode] = []
    stack = list(reversed(nodes))
    while stack:
        show = stack.pop()
        if options.matches("start_name_regexes", show.name):
            found.append(show)
        else:
            stack.extend(reversed(show.show_children))
    return found


def _finish(show: ShowNode, visible: bool, children: list[ShowNode], out: list[ShowNode],
            options: Options) -> None:
    if not visible:
        out.extend(children)
        return
    show.show_children = sort_nodes(children, options)
    if options.account_displayed_op_only:
        show.reset_totals()
        show.add_self_to_totals()
        for child in show.show_children:
            show.aggregate_totals(child)
    out.append(show)


def _fill_protos(roots: list[ShowNode]) -> None:
    """Nests each shown node's proto under its parent's, deepest first (no recursion: graph
    views can be thousands of nodes deep)."""
    order: list[ShowNode] = []
    stack = list(roots)
    while stack:
        show = stack.pop()
        order.append(show)
        stack.extend(show.show_children)
    for show in reversed(order):
        show.proto.ClearField("children")
        for child in show.show_children:
            show.proto.children.add().CopyFrom(child.proto)


def _display(nodes: list[ShowNode], options: Options, depth: int) -> list[ShowNode]:
    """tfprof's ``PrintScope``/``PrintGraph``: the shown nodes among ``nodes``; a hidden node
    passes its shown descendants up to its shown ancestor. Iterative, for deep graphs."""
    top: list[ShowNode] = []
    # frame: the nodes left at this level, what they yield, the node owning them, its visibility, depth
    frames: list[tuple[Any, list[ShowNode], ShowNode | None, bool, int]] = [(iter(nodes), top, None, False, depth)]
    while frames:
        remaining, shown, owner, owner_visible, level = frames[-1]
        for show in remaining:
            visible = should_show(show, options, level)
            if should_expand(show, options, level):
                frames.append((iter(show.show_children), [], show, visible, level + 1))
                break
            _finish(show, visible, [], shown, options)
        else:
            frames.pop()
            if owner is not None:
                _finish(owner, owner_visible, shown, frames[-1][1], options)
    _fill_protos(top)
    return top


class ScopeView:
    """Graph nodes organised by name scope."""

    def __init__(self, model: ProfileModel) -> None:
        nodes = {name: ShowNode(name, node) for name, node in model.nodes.items()}
        roots: list[ShowNode] = []
        for name in sorted(nodes):
            self._attach(nodes, roots, nodes[name])
        self.root = ShowNode(ROOT_NAME)
        self.root.children = roots

    @staticmethod
    def _attach(nodes: dict[str, ShowNode], roots: list[ShowNode], show: ShowNode) -> None:
        while True:
            prefix, slash, _ = show.name.rpartition("/")
            if not slash:
                roots.append(show)
                return
            parent = nodes.get(prefix)
            if parent is not None:
                parent.children.append(show)
                return
            parent = nodes[prefix] = ShowNode(prefix)  # a scope with no node of its own
            parent.children.append(show)
            show = parent

    def _account(self, nodes: list[ShowNode], options: Options) -> list[ShowNode]:
        accounted = []
        for show in nodes:
            children = self._account(show.children, options)
            show.account = re_account(show, options)
            if show.account or children:
                show.reset_totals()
                show.add_self_to_totals()
                for child in children:
                    show.aggregate_totals(child)
                show.show_children = children
                accounted.append(show)
        return accounted

    def show(self, options: Options) -> ShowNode:
        """Accounts, filters and orders the view for ``options``; returns the shown root."""
        root = self.root
        root.reinit(options.step)
        accounted = self._account(root.children, options)
        for child in accounted:
            root.aggregate_totals(child)
        root.show_children = _search_starts(accounted, options)
        return _display([root], options, ROOT_DEPTH)[0]


class GraphView:
    """Graph nodes organised by data flow (children are inputs)."""

    def __init__(self, model: ProfileModel) -> None:
        self.nodes = {name: ShowNode(name, node) for name, node in model.nodes.items()}
        consumed: set[str] = set()
        for show in self.nodes.values():
            show.children = [self.nodes[i] for i in show.node.inputs if i in self.nodes]
            consumed.update(i for i in show.node.inputs)
        self.root = ShowNode(ROOT_NAME)
        self.root.children = [s for name, s in sorted(self.nodes.items()) if name not in consumed]

    def _account(self, roots: list[ShowNode], options: Options) -> list[ShowNode]:
        """Depth first over inputs, each node once; an unaccounted node hands its accounted
        inputs to its consumer (iterative: graphs can be thousands of ops deep)."""
        visited: set[str] = set()
        top: list[ShowNode] = []
        frames: list[tuple[Any, list[ShowNode], ShowNode | None]] = [(iter(roots), top, None)]
        while frames:
            remaining, collected, owner = frames[-1]
            for show in remaining:
                if show.name not in visited:
                    visited.add(show.name)
                    frames.append((iter(show.children), [], show))
                    break
            else:
                frames.pop()
                if owner is None:
                    continue
                parent = frames[-1][1]
                owner.account = re_account(owner, options)
                if owner.account:
                    owner.reset_totals()
                    owner.add_self_to_totals()
                    for child in collected:
                        owner.aggregate_totals(child)
                    owner.show_children = collected
                    parent.append(owner)
                else:
                    parent.extend(collected)
        return top

    def show(self, options: Options) -> ShowNode:
        """Accounts, filters and orders the view for ``options``; returns the shown root."""
        root = self.root
        root.reinit(options.step)
        accounted = self._account(root.children, options)
        for child in accounted:
            root.aggregate_totals(child)
        root.show_children = _search_starts(accounted, options)
        return _display([root], options, ROOT_DEPTH)[0]


def tree_view(model: ProfileModel, cmd: str) -> Any:
    """The view for ``cmd`` ``scope`` or ``graph``."""
    return ScopeView(model) if cmd == "scope" else GraphView(model)
