"""The kernels model ranks a grouping when first asked for (`gpuscope kernels --format text`
prints one): the same rankings as the screen's model, which ranks every grouping up front."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from gpuscope.tui.model.kernels import build_model

PROFILES = Path(__file__).resolve().parents[2] / "examples" / "profiles"


def test_a_grouping_ranked_later_equals_one_ranked_up_front():
    eager = build_model([str(PROFILES)], gpu="A100")
    lazy = build_model([str(PROFILES)], gpu="A100", ranked=("kernel",))
    assert tuple(lazy.rankings) == tuple(eager.rankings) == lazy.groups == eager.groups
    assert len(eager.groups) > 1, "the examples rank by direction or op too"
    assert all(group in lazy.rankings for group in eager.groups)
    assert list(lazy.rankings._done) == ["kernel"]  # the others are not made until asked for
    for group in eager.groups:
        pd.testing.assert_frame_equal(lazy.rankings[group], eager.rankings[group])
    assert lazy.rankings._kernels is None  # every ranking made: the launches are let go


def test_an_unknown_grouping_is_not_a_ranking():
    model = build_model([str(PROFILES)], gpu="A100", ranked=())
    assert "nothing" not in model.rankings and not model.rankings._done
