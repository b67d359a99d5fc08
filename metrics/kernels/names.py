"""Provides `short_name`: a C++ kernel name shortened to a width, its function name kept.

    short_name("void at::native::elementwise_kernel<128, 2, ...>(int, ...)")
    -> "void at::native::elementwise_kernel<…>(…)"

Demangled CUDA kernel names run to thousands of characters (PyTorch's elementwise kernels carry
their whole functor and lambda types), yet differ from each other in the function name. Cutting
such a name at its end or in its middle loses that name; folding the contents of its bracket
groups to `…` keeps it. Groups are folded, until the name fits, in this order:

1. argument lists `(...)` at the top level, rightmost first: the parameter types say least;
2. every other `<...>` and `(...)` from the innermost out, rightmost first, so the outer
   template arguments (which functor, which vector width) stay while there is room.

A name still too wide loses its `void ` return type, then the namespaces before the function
name (`…elementwise_kernel<…>(…)`), then the folded groups after it, and, as a last resort, the
middle of the function name. Braces (`{lambda(int)#1}`)
are never folded themselves, only the groups inside them; `(anonymous namespace)`, `operator()`,
`operator<` and `->` are text, not brackets. Unbalanced brackets are text too, so any string,
a mangled `_Z...` name included, is shortened without error. Pure: no I/O, no third-party
imports beyond rich's cell widths.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rich.cells import cell_len

ELLIPSIS = "…"
OPENERS = {"<": ">", "(": ")", "{": "}", "[": "]"}
CLOSERS = {close: open_ for open_, close in OPENERS.items()}
FOLDED = ("<", "(")
"""Brackets whose contents are folded; braces and square brackets only nest."""
TOKENS = re.compile(r"\(anonymous namespace\)|(?<!\w)operator(?:\(\)|\[\]|->|[<>=!+\-*/%^&|~,]+)|->|[<>(){}\[\]]")
"""Brackets, and the text that holds brackets but is no group: `(anonymous namespace)`,
`operator()`, `operator<<=`, `->`."""
RETURN_TYPE = "void "


@dataclass(eq=False)
class _Group:
    """One balanced bracket pair: `start` and `end` index the opener and the closer."""

    opener: str
    start: int
    end: int
    depth: int
    parent: _Group | None
    children: list[_Group] = field(default_factory=list)


def _groups(name: str) -> list[_Group]:
    """The balanced bracket groups of `name`, in order of their opening bracket. A closer with
    no opener is text; so is an opener never closed (a `<` that meant less-than)."""
    found: list[_Group] = []
    open_groups: list[_Group] = []
    for token in TOKENS.finditer(name):
        char, i = token.group(), token.start()
        if char in OPENERS:
            open_groups.append(_Group(char, i, -1, 0, open_groups[-1] if open_groups else None))
        elif char in CLOSERS:
            match = next((k for k in range(len(open_groups) - 1, -1, -1) if open_groups[k].opener == CLOSERS[char]), None)
            if match is not None:
                del open_groups[match + 1:]
                group = open_groups.pop()
                group.end = i
                found.append(group)
    found.sort(key=lambda g: g.start)
    kept = {id(g) for g in found}
    for group in found:  # parents were opened first, so they are settled before their children
        parent = group.parent
        while parent is not None and id(parent) not in kept:
            parent = parent.parent
        group.parent, group.depth = parent, 0 if parent is None else parent.depth + 1
        if parent is not None:
            parent.children.append(group)
    return found


def _fold_order(groups: list[_Group]) -> list[_Group]:
    """Top-level argument lists rightmost first, then the other foldable groups innermost first."""
    foldable = [g for g in groups if g.opener in FOLDED and g.end - g.start > 2]
    top_args = [g for g in foldable if g.depth == 0 and g.opener == "("]
    rest = [g for g in foldable if not (g.depth == 0 and g.opener == "(")]
    return sorted(top_args, key=lambda g: -g.start) + sorted(rest, key=lambda g: (-g.depth, -g.start))


def fold(name: str, width: int | None = None) -> str:
    """`name` with bracket groups folded to `…` in `_fold_order` until it is at most `width`
    characters long; every foldable group when `width` is None."""
    if width is not None and len(name) <= width:
        return name
    groups = _groups(name)
    order = _fold_order(groups)
    inner = {id(g): g.end - g.start - 1 for g in groups}  # characters now shown inside each group
    length, folded = len(name), []
    hidden: set[int] = set()
    for group in order:
        if width is not None and length <= width:
            break
        if id(group) in hidden or inner[id(group)] <= 1:
            continue
        saving = inner[id(group)] - 1
        length -= saving
        inner[id(group)] = 1
        parent = group.parent
        while parent is not None:
            inner[id(parent)] -= saving
            parent = parent.parent
        folded.append(group)
        hidden.update(id(d) for d in _descendants(group))
    return _render(name, folded)


def _descendants(group: _Group) -> list[_Group]:
    out, todo = [], list(group.children)
    while todo:
        child = todo.pop()
        out.append(child)
        todo.extend(child.children)
    return out


def _render(name: str, folded: list[_Group]) -> str:
    """`name` with each folded group's contents replaced by the ellipsis (outermost wins)."""
    spans = sorted((g.start, g.end) for g in folded)
    out, at = [], 0
    for start, end in spans:
        if start < at:  # inside a group already folded
            continue
        out.append(name[at:start + 1])
        out.append(ELLIPSIS)
        at = end
    out.append(name[at:])
    return "".join(out)


def short_name(name: str, width: int | None = None) -> str:
    """`name` in at most `width` cells (any width below 1 counts as 1), its function name kept
    where the width allows; with no width, every template and argument list folded."""
    if width is None:
        return fold(name)
    width = max(1, width)
    if cell_len(name) <= width:
        return name
    text = fold(name, width)
    if cell_len(text) > width and text.startswith(RETURN_TYPE):
        text = text[len(RETURN_TYPE):]
    if cell_len(text) > width:
        text = _without_qualifiers(text, width)
    if cell_len(text) > width:  # the function name alone, cut in its middle if it must be
        text = text[:_first_bracket(text)] or text
    return _middle(text, width)


def _without_qualifiers(text: str, width: int) -> str:
    """`text` from a later `::` on (`…kernel<…>(…)`): the fewest namespaces dropped that fit,
    else all before the function name (the last top-level `::` before the first bracket)."""
    cuts = [i + 2 for i in range(_first_bracket(text) - 1) if text.startswith("::", i)]
    for cut in cuts:
        shorter = ELLIPSIS + text[cut:]
        if cell_len(shorter) <= width:
            return shorter
    return ELLIPSIS + text[cuts[-1]:] if cuts else text


def _first_bracket(text: str) -> int:
    """Where the first top-level bracket group starts (the end of the qualified function name)."""
    return min((g.start for g in _groups(text) if g.depth == 0), default=len(text))


def _middle(text: str, width: int) -> str:
    """`text` in at most `width` cells, its middle replaced by the ellipsis."""
    if cell_len(text) <= width:
        return text
    if width == 1:
        return ELLIPSIS
    head, tail = _prefix(text, width // 2), _prefix(text[::-1], (width - 1) // 2)[::-1]
    return head + ELLIPSIS + tail


def _prefix(text: str, cells: int) -> str:
    out, used = [], 0
    for char in text:
        used += cell_len(char)
        if used > cells:
            break
        out.append(char)
    return "".join(out)
