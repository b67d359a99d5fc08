"""A view pushed over another screen is not restyled whole when it resumes the first time: its
nodes were styled as they were mounted, just before, so restyling them changes nothing."""

from __future__ import annotations

import sys

from gpuscope.tui.screens.views.table import TableViewScreen
from loading_helpers import open_screen, settled
from paths import ROOT

CSV = ROOT / "examples" / "specmoe" / "research_paper_table.csv"


def _styles(screen: TableViewScreen) -> list[tuple[str, str]]:
    return [(repr(node), repr(sorted(node.styles.base.get_rules().items(), key=str))) for node in screen.walk_children(with_self=True)]


async def test_the_first_resume_does_not_restyle_and_nothing_is_lost() -> None:
    restyled: list[int] = []

    class Counted(TableViewScreen):
        def update_node_styles(self, animate: bool = True) -> None:
            if sys._getframe(1).f_code.co_name == "_on_screen_resume":  # Textual's resume, not the app's start
                restyled.append(id(self))
            super().update_node_styles(animate)

    async with open_screen(lambda: Counted(CSV), Counted, (100, 30)) as (app, pilot, first):
        app.push_screen(Counted(CSV))
        second = await settled(app, pilot, Counted)
        assert second is not first and len(second.rows) == 25 and restyled == []
        shown = _styles(second)
        second.update_node_styles(animate=False)  # what Textual's resume would have done
        await pilot.pause()
        assert _styles(second) == shown
