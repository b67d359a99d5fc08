"""Provides what the browser opens: the study screen over files or a folder (MAGMA, kernels,
scaling), the replay of a recording, and the view of one recognised file, chosen by the
registry's `Reader.screen`.

Screens are imported when first opened, so the browser starts without loading them all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from textual.screen import Screen

from gpuscope.parsers import registry


def titles() -> dict[str, str]:
    """kind -> what it is ("MAGMA tester output"), from the registry's one table."""
    return {reader.KIND: reader.TITLE for reader in registry.READERS}


def study_screen(screen: str, paths: Sequence[Path]) -> Screen[Any]:
    """The screen that reads `paths` as one study: magma, kernels or scaling."""
    if screen == "magma":
        from gpuscope.tui.screens.studies.magma import MagmaScreen

        return MagmaScreen(paths)
    if screen == "kernels":
        from gpuscope.tui.screens.studies.kernels import KernelsScreen

        return KernelsScreen(paths)
    from gpuscope.tui.screens.studies.scaling import ScalingScreen

    return ScalingScreen(paths)


def view_screen(rec: Any, path: Path, marks: set[tuple[int, str]] | None = None) -> Screen[Any] | None:
    """The screen for one recognised file (`path`: its name as the user typed the root), or
    None when no view reads its kind. `marks`: a table's cells outside their expected range."""
    if rec.screen in ("magma", "kernels", "scaling"):
        return study_screen(rec.screen, [path])
    if rec.screen == "replay":
        from gpuscope.tui.screens.replay import ReplayScreen

        return ReplayScreen(path)
    from gpuscope.tui.screens.views.pick import view_for

    return view_for(path, rec.screen, rec, **({"marks": marks} if marks and rec.screen == "table" else {}))
