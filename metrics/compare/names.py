"""Provides `match_names`: which kernel of a baseline is which kernel of a candidate.

A kernel keeps its name from run to run, except where a template argument changed (a tile size,
a vector width, a functor type after a library update): `gemm<128, 64>(…)` becomes
`gemm<256, 64>(…)`. Names are matched exactly first; what is left is matched on the name with
every template and argument list emptied (`gemm<>()`), pairing the most alike names first where
several share that form. A name with no bracket group, or with brackets that do not pair up
(`operator<`, `->`), matches only itself, so two unrelated names never match.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Iterable

SAME = "same"
CHANGED = "template args changed"
NEW = "new"
GONE = "vanished"
PAIRWISE_MAX = 400
"""Above this many (base, new) pairs of one folded form, names are paired in sorted order
instead of by likeness: difflib on a few hundred C++ names each way would take seconds."""


@dataclass(frozen=True, slots=True)
class Match:
    base: str | None
    new: str | None
    how: str
    """SAME, CHANGED, NEW (only in the candidate) or GONE (only in the baseline)."""


OPEN = {"<": ">", "(": ")"}
CLOSE = {">": "<", ")": "("}


def skeleton(name: str) -> str | None:
    """`name` with the contents of its template and argument lists left out (`f<>()`); None
    when it has no such list or its brackets do not pair up."""
    out: list[str] = []
    stack: list[str] = []
    for char in name:
        if char in OPEN:
            if not stack:
                out.append(char)
            stack.append(char)
        elif char in CLOSE:
            if not stack or stack.pop() != CLOSE[char]:
                return None
            if not stack:
                out.append(char)
        elif not stack:
            out.append(char)
    if stack or len(out) == len(name):
        return None
    return "".join(out)


def match_names(base: Iterable[str], new: Iterable[str]) -> list[Match]:
    """Every name of both sides once: pairs in the candidate's order, then what vanished."""
    base_names, new_names = list(dict.fromkeys(base)), list(dict.fromkeys(new))
    in_base = set(base_names)
    paired: dict[str, Match] = {n: Match(n, n, SAME) for n in new_names if n in in_base}
    left_base = [b for b in base_names if b not in paired]
    left_new = [n for n in new_names if n not in paired]
    by_form: dict[str, tuple[list[str], list[str]]] = {}
    for side, names in ((0, left_base), (1, left_new)):
        for name in names:
            form = skeleton(name)
            if form is not None:
                by_form.setdefault(form, ([], []))[side].append(name)
    taken: set[str] = set()
    for olds, news in by_form.values():
        for old, name in _pairs(olds, news):
            paired[name] = Match(old, name, CHANGED)
            taken.add(old)
    out = [paired.get(n) or Match(None, n, NEW) for n in new_names]
    out.extend(Match(b, None, GONE) for b in left_base if b not in taken)
    return out


def _pairs(olds: list[str], news: list[str]) -> list[tuple[str, str]]:
    """One-to-one pairs of two lists of names of one folded form, the most alike first."""
    if not olds or not news:
        return []
    if len(olds) == 1 and len(news) == 1:
        return [(olds[0], news[0])]
    if len(olds) * len(news) > PAIRWISE_MAX:
        return list(zip(sorted(olds), sorted(news)))
    scored = sorted(((-difflib.SequenceMatcher(None, o, n, autojunk=False).ratio(), i, j) for i, o in enumerate(olds) for j, n in enumerate(news)))
    used_old: set[int] = set()
    used_new: set[int] = set()
    pairs = []
    for _, i, j in scored:
        if i not in used_old and j not in used_new:
            used_old.add(i)
            used_new.add(j)
            pairs.append((olds[i], news[j]))
    return pairs
