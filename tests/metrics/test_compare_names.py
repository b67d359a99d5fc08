"""Kernel name matching for `gpuscope diff`: a name matches itself, a name whose template
arguments changed matches its old self, unrelated names never match (hypothesis), and real
C++ kernel names from a PyTorch profile."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscope.metrics.compare.names import CHANGED, GONE, NEW, SAME, match_names, skeleton

IDENT = st.text(alphabet=string.ascii_letters + "_", min_size=1, max_size=12)
ARGS = st.lists(st.text(alphabet=string.ascii_letters + string.digits + "_:*& ", min_size=1, max_size=10), min_size=1, max_size=4).map(", ".join)


@given(st.text(max_size=80))
@settings(max_examples=200, deadline=None)
def test_a_name_matches_itself(name: str) -> None:
    assert match_names([name], [name]) == [match_names([name], [name])[0]]
    assert match_names([name], [name])[0].how == SAME


@given(IDENT, ARGS, ARGS, ARGS)
@settings(max_examples=200, deadline=None)
def test_changed_template_arguments_match(function: str, old: str, new: str, params: str) -> None:
    before, after = f"void {function}<{old}>({params})", f"void {function}<{new}>({params})"
    got = match_names([before], [after])
    if before == after:
        assert [m.how for m in got] == [SAME]
    else:
        assert [(m.base, m.new, m.how) for m in got] == [(before, after, CHANGED)]


@given(IDENT, IDENT, ARGS, ARGS)
@settings(max_examples=200, deadline=None)
def test_unrelated_names_never_match(a: str, b: str, args_a: str, args_b: str) -> None:
    first, second = f"{a}<{args_a}>", f"{b}<{args_b}>"
    if a == b:
        return
    got = {(m.base, m.new, m.how) for m in match_names([first], [second])}
    assert got == {(None, second, NEW), (first, None, GONE)}


@given(st.lists(st.text(max_size=30), max_size=8), st.lists(st.text(max_size=30), max_size=8))
@settings(max_examples=200, deadline=None)
def test_every_name_is_said_once(base: list[str], new: list[str]) -> None:
    got = match_names(base, new)
    assert sorted(m.new for m in got if m.new is not None) == sorted(set(new))
    assert sorted(m.base for m in got if m.base is not None) == sorted(set(base))


def test_plain_names_match_only_themselves() -> None:
    """sgemm tile names carry no template: a different tile is another kernel."""
    assert skeleton("sgemm_128x64_nn") is None
    got = match_names(["sgemm_128x64_nn"], ["sgemm_64x64_nn"])
    assert {m.how for m in got} == {NEW, GONE}


def test_real_pytorch_names_pair_by_likeness() -> None:
    """Two elementwise kernels whose vector width changed pair with their own old selves."""
    add_old = "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, at::detail::Array<char*, 3> >(int, at::native::AddFunctor<float>, at::detail::Array<char*, 3>)"
    mul_old = "void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float>, at::detail::Array<char*, 3> >(int, at::native::MulFunctor<float>, at::detail::Array<char*, 3>)"
    add_new, mul_new = add_old.replace("<4,", "<8,"), mul_old.replace("<4,", "<8,")
    got = {m.new: m.base for m in match_names([add_old, mul_old], [mul_new, add_new])}
    assert got == {add_new: add_old, mul_new: mul_old}
