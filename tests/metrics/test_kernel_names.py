"""`short_name`: C++ kernel names folded to a width, the function name kept; on the real names
of the bundled profiles and on generated ones (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from gpuscope.metrics.kernels.names import short_name
from gpuscope.parsers import registry
from paths import ROOT

ADD = ("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::CUDAFunctor_add<float> >"
       "(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> const&)::{lambda(int)#1}>(int, at::native::"
       "gpu_kernel_impl<at::native::CUDAFunctor_add<float> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> "
       "const&)::{lambda(int)#1})")
"""A real PyTorch kernel name (examples/profiles/hta_simple_add_a100.pt.trace.json.gz)."""


@pytest.fixture(scope="module")
def example_names() -> list[str]:
    """Every kernel name in examples/profiles, longest first (one runs to 5,123 characters)."""
    loaded = registry.read_profiles([str(ROOT / "examples" / "profiles")])
    return sorted(set(loaded.kernels["kernel"].astype(str)), key=len, reverse=True)


def test_templates_and_arguments_fold_to_the_qualified_function_name() -> None:
    assert short_name(ADD) == "void at::native::elementwise_kernel<…>(…)"
    assert short_name(ADD, 60) == "void at::native::elementwise_kernel<…>(…)"


def test_the_argument_list_goes_first_and_outer_template_arguments_stay_while_they_fit() -> None:
    fft = "void fft2d_r2c_32x32<float, false, 5u, true>(float2*, float const*, int, int, cudnn::reduced_divisor, bool, int2)"
    assert short_name(fft, 60) == "void fft2d_r2c_32x32<float, false, 5u, true>(…)"
    assert short_name(fft, 30) == "void fft2d_r2c_32x32<…>(…)"
    assert short_name(ADD, 100) == "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<…>(…)::{lambda(…)#1}>(…)"


def test_narrow_widths_drop_the_return_type_then_namespaces_then_the_folded_groups() -> None:
    assert short_name(ADD, 38) == "at::native::elementwise_kernel<…>(…)"
    assert short_name(ADD, 34) == "…native::elementwise_kernel<…>(…)"
    assert short_name(ADD, 30) == "…elementwise_kernel<…>(…)"
    assert short_name(ADD, 20) == "…elementwise_kernel"
    assert short_name(ADD, 12) == "…eleme…ernel" and cell_len(short_name(ADD, 12)) == 12


def test_names_that_fit_and_plain_names_are_left_as_they_are() -> None:
    assert short_name("sgemm_largek_lds64", 40) == "sgemm_largek_lds64"
    assert short_name("_Z6vecAddPfS_S_i") == "_Z6vecAddPfS_S_i"  # mangled: no brackets to fold
    assert short_name("_Z6vecAddPfS_S_i", 9) == "_Z6v…_S_i"


@pytest.mark.parametrize(("name", "folded"), [
    ("bool operator<(A const&, B const&)", "bool operator<(…)"),
    ("operator()(int) const", "operator()(…) const"),
    ("Functor::operator()<float>(float*, int)", "Functor::operator()<…>(…)"),
    ("std::ostream& operator<<(std::ostream&, Foo const&)", "std::ostream& operator<<(…)"),
    ("ns::(anonymous namespace)::k<int, float>(float*, int)", "ns::(anonymous namespace)::k<…>(…)"),
    ("foo(int)::{lambda(float)#1}::operator()(float) const", "foo(…)::{lambda(…)#1}::operator()(…) const"),
    ("a->b<c, d>(e, f)", "a->b<…>(…)"),
    ("x)y>z<<(", "x)y>z<<("),  # unbalanced: text
    ("k<(a<b)>(int, int)", "k<…>(…)"),
])
def test_operators_lambdas_and_unbalanced_brackets(name: str, folded: str) -> None:
    assert short_name(name) == folded


def test_every_example_name_fits_and_keeps_its_function_name(example_names: list[str]) -> None:
    assert len(example_names[0]) > 5000
    for name in example_names:
        full = short_name(name)
        assert len(full) <= len(name) and (len(full) < 100 or "(" not in name)
        for width in (80, 40, 25):
            shown = short_name(name, width)
            assert cell_len(shown) <= width
        base = _base(name)
        assert base in short_name(name, max(len(base) + 1, 25)), name


def _base(name: str) -> str:
    """The function name: the identifier before the first bracket, after the last `::`."""
    head = name.replace("(anonymous namespace)", "").split("(")[0].split("<")[0]
    return head.split("::")[-1].split(" ")[-1]


IDENT = st.builds(lambda first, rest: first + rest, st.sampled_from("abkxAK_"), st.text("abk9_", max_size=6))


@st.composite
def cpp_types(draw: st.DrawFn, depth: int = 0) -> str:
    """A C++-like type: a qualified name with template arguments nested a few levels."""
    name = "::".join(draw(st.lists(IDENT, min_size=1, max_size=3)))
    if depth < 2 and draw(st.booleans()):
        args = draw(st.lists(st.one_of(st.integers(0, 999).map(str), cpp_types(depth + 1)), min_size=1, max_size=3))
        name += "<" + ", ".join(args) + ">"
    return name + draw(st.sampled_from(["", "*", " const&", "&"]))


@st.composite
def kernel_names(draw: st.DrawFn) -> tuple[str, str]:
    """(a demangled kernel name, its function name)."""
    base = draw(IDENT)
    spaces = draw(st.lists(st.one_of(IDENT, st.just("(anonymous namespace)")), max_size=3))
    name = draw(st.sampled_from(["", "void "])) + "::".join([*spaces, base])
    if draw(st.booleans()):
        name += "<" + ", ".join(draw(st.lists(cpp_types(), min_size=1, max_size=3))) + ">"
    name += "(" + ", ".join(draw(st.lists(cpp_types(), max_size=4))) + ")"
    return name, base


@settings(max_examples=50, deadline=None)
@given(kernel_names(), st.one_of(st.none(), st.integers(1, 150)))
def test_generated_names_shrink_fit_keep_their_function_name_and_settle(drawn: tuple[str, str], width: int | None) -> None:
    name, base = drawn
    shown = short_name(name, width)
    assert len(shown) <= len(name)
    if width is not None:
        assert cell_len(shown) <= width
        assert short_name(shown, width) == shown  # fits: left alone
    assert short_name(short_name(name)) == short_name(name)
    if width is None or width > len(base) + 1:  # '…' and the function name fit
        assert base in shown, (name, width, shown)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from([*"<>(){}[]:; ab,-_~#é界", "operator", "(anonymous namespace)", "\x1b[31m"]), max_size=40).map("".join),
       st.one_of(st.none(), st.integers(-3, 60)))
def test_any_text_is_shortened_without_error(text: str, width: int | None) -> None:
    shown = short_name(text, width)
    assert len(shown) <= len(text)
    if width is not None:
        assert cell_len(shown) <= max(1, width)
    assert short_name(short_name(text)) == short_name(text)
