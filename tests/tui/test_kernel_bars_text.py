"""The time-share bars printed by `kernels --format text` are the screen's bars, as plain text."""

from __future__ import annotations

from gpuscope.tui.model.kernels import KernelView
from gpuscope.tui.model.kernels_report import KernelsOptions, load
from gpuscope.tui.render.kernel_plots import share_bars, share_bars_text


def test_text_bars_are_the_screens_bars() -> None:
    model = load(KernelsOptions(paths=("examples/profiles",), gpu="A100"))
    for group in model.groups:
        rows = model.rows(KernelView(sort="time", group=group))
        for width in (40, 100, 160):
            text = share_bars_text(rows, width, label=group)
            assert text == share_bars(rows, width, label=group).plain
            assert "█" in text and all(len(line) <= width for line in text.splitlines())
    empty = model.rows(KernelView(sort="time", group="kernel")).iloc[:0]
    assert share_bars_text(empty, 80) == share_bars(empty, 80).plain == "No kernel to show."
