"""Pilot tests of the kernels screen: the bundled sample (always) and the seed's real PyProf run
(when ../shared is present). Profiles are read by the screen's own worker, as for a user."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.model.kernels import KernelsModel, build_model
from gpuscope.tui.screens.modals import ExportModal
from gpuscope.tui.screens.help import HelpScreen
from gpuscope.tui.screens.studies.kernels import KernelsScreen
from gpuscope.tui.screens.studies.kernel_bars import ShareBars
from gpuscope.tui.screens.studies.kernel_cards import KernelCards
from gpuscope.tui.screens.studies.kernel_ranking import KernelDetail, KernelRanking
from gpuscope.tui.widgets.result_table import ResultTableView
from gpuscope.tui.screens.studies.roofline import RooflinePane, RooflinePlot
from loading_helpers import open_screen, settled, until
from paths import ROOT

SAMPLE = ROOT / "tests" / "data" / "kernels"
NSYS_TRACE = ROOT / "tests" / "data" / "profiles" / "nsys_cuda_gpu_trace_2023.csv"
EXAMPLES = ROOT / "examples" / "profiles"
SEED_RUN = ROOT.parent / "shared/data/pyprof/data/pcm/pyprof_kernels/run_0_config_8_2_ib_nvprof_2_resnet50_dali-gpu_32_fp16_fp32_ret_0_0.gzip"
needs_seed_run = pytest.mark.skipif(not SEED_RUN.is_file(), reason="../shared/data/pyprof is absent")


def kernels_app(*paths: Path | str, **options: Any) -> GpuscopeApp:
    options.setdefault("gpu", "K40m")
    return GpuscopeApp(first_screen=lambda: KernelsScreen([str(p) for p in paths], **options))


async def settle(app: GpuscopeApp, pilot: Any) -> KernelsScreen:
    return await settled(app, pilot, KernelsScreen)


def ranking(screen: KernelsScreen) -> list[dict[str, Any]]:
    """The ranking the screen shows, with its full names (the table folds them to its width)."""
    model = screen.query_one("#kernels-ranking", KernelRanking).ranking
    assert model is not None
    return model.records()


def first_names(screen: KernelsScreen, n: int = 1) -> list[str]:
    key = screen.query_one("#kernels-ranking", KernelRanking).ranking.keys[0]  # type: ignore[union-attr]
    return [row[key] for row in ranking(screen)[:n]]


def card_texts(screen: KernelsScreen) -> list[str]:
    """Each card as 'title: value / detail' (the title is on its border)."""
    return [f"{card.border_title}: {card.render()}" for card in screen.query_one(KernelCards).query(".kernel-card")]


async def test_sample_cards_sort_filter_help_zoom_and_resize() -> None:
    """One screen on the bundled sample through its keys: what it shows once loaded, the sort
    keys, the filter box, help and the command palette, zoom, then a smaller terminal."""
    from gpuscope.tui.commands import GpuscopeCommands

    async with open_screen(kernels_app(SAMPLE), KernelsScreen, (120, 40)) as (app, pilot, screen):
        # Loaded: cards, ranking, bars, roofline.
        assert screen.model is not None and not screen.model.empty
        assert len(ranking(screen)) == 11  # 12 kernel lines, elementwise_kernel under two ops
        assert first_names(screen) == ["cudnn::detail::implicit_convolve_sgemm"]  # default: FLOPS efficiency
        cards = card_texts(screen)
        assert "94.70 %" in cards[0] and "14.23 %" in cards[1] and "17.29 %" in cards[2]
        assert "n/a" in cards[3]  # PyProf has no start times
        assert cards[4].startswith("Peak FP32:") and "4.29 TFLOPS" in cards[4] and "288 GB/s" in cards[4]
        peak = str(screen.query_one("#kernels-peak").render())
        assert "Tesla K40m FP32 4.29 TFLOPS" in peak and "base-clock" in peak  # items 5 and 8 of the issue
        bars = screen.query_one(ShareBars)
        assert len(bars.frame) == 11 and "21.8%" in bars.render().plain  # wgrad_alg0_engine's share
        roofline = screen.query_one(RooflinePane)
        assert roofline.points == 9 and "2 row(s) without FLOPs or bytes" in roofline.note
        assert "2 profile(s)" in (screen.sub_title or "")
        # Sort keys: t b s f.
        await pilot.press("t")
        await pilot.pause()
        assert screen.view.sort == "time" and first_names(screen) == ["cudnn::detail::wgrad_alg0_engine"]
        totals = [row["total_ms"] for row in ranking(screen)]
        assert totals == sorted(totals, reverse=True)
        await pilot.press("b")
        await pilot.pause()
        assert first_names(screen) == ["elementwise_kernel"]  # 79.3 % of 288 GB/s
        await pilot.press("s")  # the cycle goes on from bandwidth to time
        await pilot.pause()
        assert screen.view.sort == "time" and first_names(screen) == ["cudnn::detail::wgrad_alg0_engine"]
        await pilot.press("f")
        await pilot.pause()
        assert first_names(screen) == ["cudnn::detail::implicit_convolve_sgemm"]
        table = screen.query_one("#kernels-ranking", ResultTableView)
        assert table.get_cell_at((0, 0)).plain == "cudnn::detail::implicit_convolve_sgemm"  # the view, too
        # The filter box narrows rows case-insensitively; Enter keeps it, Escape restores.
        await pilot.press("slash")
        await pilot.pause()
        box = screen.query_one("#kernels-filter", Input)
        assert box.display and box.has_focus
        await pilot.press(*"DETAIL")
        await pilot.pause()
        names = first_names(screen, 99)
        assert len(names) == 5 and all("detail" in n for n in names)
        assert len(screen.query_one(ShareBars).frame) == 5  # bars and roofline follow the filter
        assert screen.query_one(RooflinePane).points == 5
        assert "5 of 11 shown" in str(screen.query_one("#kernels-view").render())
        await pilot.press("enter")  # keeps the filter, back to the table
        await pilot.pause()
        assert screen.view.filter == "DETAIL" and len(ranking(screen)) == 5
        await pilot.press("escape")
        await pilot.pause()
        assert screen.view.filter == "" and len(ranking(screen)) == 11 and not box.display
        # Help and the command palette list the kernel keys.
        titles = [title for title, _, _ in GpuscopeCommands(screen)._available()]
        assert titles == ["Next sort", "Group kernels", "Filter rows", "Export table", "Toggle theme"]
        await pilot.press("question_mark")
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert isinstance(app.screen, HelpScreen)
        described = {description for _, description, _ in app.screen.keys}
        assert {"Sort", "By time", "By FLOPS", "By bandwidth", "Filter", "Group", "Export", "Zoom", "Help"} <= described
        await pilot.press("escape")
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen, "escape closes help"
        # Zoom fills the screen with the tables or the roofline.
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is screen.query_one("#kernels-tables")
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is None
        screen.query_one(RooflinePlot).focus()
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is screen.query_one(RooflinePane)
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is None
        # A smaller terminal: plots are rebuilt at every render and must not degrade.
        await pilot.resize_terminal(100, 36)  # plots are rebuilt at every render: must not degrade
        await pilot.pause()
        plot = str(roofline.query_one(RooflinePlot).render())
        assert plot == str(roofline.query_one(RooflinePlot).render())
        assert "roofs" in plot and "memory-bound" in plot and "compute-bound" in plot and "1T" in plot


async def test_group_by_direction_then_op_then_kernel_and_after_a_name_filter() -> None:
    """`g` cycles direction, op, kernel; then `/cudnn` and `g`: cudnn's time per direction, not
    the directions whose name has 'cudnn'."""
    async with open_screen(kernels_app(SAMPLE), KernelsScreen, (160, 40)) as (app, pilot, screen):
        assert screen.model is not None and screen.model.groups == ("kernel", "direction", "op")
        await pilot.press("g")
        await pilot.pause()
        rows = ranking(screen)
        assert screen.view.group == "direction" and {r["direction"] for r in rows} == {"fprop", "bprop"}
        assert sum(r["calls"] for r in rows) == 80
        await pilot.press("g")
        await pilot.pause()
        ops = {r["op"] for r in ranking(screen)}
        assert {"conv2d", "batch_norm", "relu", "add_", "linear", "mul_"} <= ops
        # An op name with brackets, as DALI writes them, is shown as typed (never markup).
        assert "[Executor] Run GPU op __Resize_3" in ops
        table = screen.query_one("#kernels-ranking", ResultTableView)
        lines = [table.render_line(y).text for y in range(table.size.height)]
        assert any("[Executor] Run GPU op __Resize_3" in line for line in lines)
        await pilot.press("g")
        await pilot.pause()
        assert screen.view.group == "kernel" and len(ranking(screen)) == 11
        # A name filter, then grouping ranks the matching launches.
        await pilot.press("slash", *"cudnn", "enter")
        await pilot.pause()
        matching = ranking(screen)
        assert matching and all("cudnn" in r["kernel"].lower() for r in matching)
        await pilot.press("g")
        await pilot.pause()
        rows = ranking(screen)
        assert screen.view.group == "direction" and {r["direction"] for r in rows} <= {"fprop", "bprop"} and rows
        assert sum(r["calls"] for r in rows) == sum(r["calls"] for r in matching)
        assert sum(r["total_ms"] for r in rows) == pytest.approx(sum(r["total_ms"] for r in matching))
        await pilot.press("escape")
        await pilot.pause()
        assert sum(r["calls"] for r in ranking(screen)) == 80  # every launch again


async def test_group_is_not_offered_when_the_profile_has_no_ops() -> None:
    async with open_screen(kernels_app(NSYS_TRACE, gpu="A100"), KernelsScreen, (120, 40)) as (app, pilot, screen):
        assert screen.model is not None and screen.model.groups == ("kernel",)
        assert screen.check_action("cycle_group", ()) is False
        await pilot.press("g")
        await pilot.pause()
        assert screen.view.group == "kernel"
        assert "ms" in card_texts(screen)[3]  # nsys traces have start times: busy vs summed


async def test_export_writes_the_current_view_as_csv(tmp_path: Path) -> None:
    app = kernels_app(SAMPLE)
    target = tmp_path / "kernels.csv"
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(app, pilot)
        await pilot.press("t", "slash", *"cudnn", "enter")
        await pilot.pause()
        shown = first_names(screen, 99)
        await pilot.press("e")
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, ExportModal))
        assert isinstance(app.screen, ExportModal)
        field = app.screen.query_one("#export-path", Input)
        assert field.value == "kernels.csv"
        field.value = str(target)
        await pilot.press("enter")
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen
    with target.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["kernel"] for r in rows] == shown and len(shown) == 6  # five cudnn::detail + winograd
    assert list(rows[0])[:4] == ["kernel", "calls", "total_ms", "share_pct"]  # the model's order, raw values


async def test_export_of_the_runs_tab_as_markdown(tmp_path: Path) -> None:
    app = kernels_app(SAMPLE, group_by=("nodes",))
    target = tmp_path / "runs.md"
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(app, pilot)
        await pilot.press("r", "e")
        await pilot.pause()
        field = app.screen.query_one("#export-path", Input)
        assert field.value == "kernel-runs.csv"
        field.value = str(target)
        await pilot.press("enter")
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen
        grouped = screen.query_one("#kernels-grouped", ResultTableView)
        assert grouped.display and grouped.model is not None and len(grouped.model.rows) == 2
    text = target.read_text()
    assert "### Runs" in text and "### Runs grouped by nodes" in text and "Scaled FLOPS eff %" in text


async def test_missing_path_shows_a_message_not_a_traceback() -> None:
    async with open_screen(kernels_app("/nonexistent/report.sqlite"), KernelsScreen, (100, 30)) as (app, pilot, screen):
        assert screen.query_one("#kernels-switch").current == "kernels-empty"  # type: ignore[attr-defined]
        assert "No kernel launches found" in str(screen.query_one("#kernels-empty-message").render())
        assert screen.model is not None and screen.model.findings[0].kind == "missing"
        await pilot.press("s", "g", "e", "slash")  # keys without data do nothing, raise nothing
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen


async def test_corrupt_file_shows_a_message(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gzip"
    broken.write_bytes(b"PAR1" + bytes(range(256)) * 4)  # Parquet magic, then garbage
    async with open_screen(kernels_app(broken), KernelsScreen, (100, 30)) as (app, pilot, screen):
        assert "No kernel launches found" in str(screen.query_one("#kernels-empty-message").render())
        assert screen.model is not None and any(f.severity == "error" for f in screen.model.findings)


async def test_bad_group_by_field_shows_the_fields_there_are() -> None:
    async with open_screen(kernels_app(SAMPLE, group_by=("nope",)), KernelsScreen, (100, 30)) as (app, pilot, screen):
        message = str(screen.query_one("#kernels-empty-message").render())
        assert "cannot group by nope" in message and "batch_size" in message and "Traceback" not in message


async def test_markup_in_kernel_names_is_shown_as_typed(tmp_path: Path) -> None:
    (tmp_path / "evil.csv").write_text(
        '"Kernel","Op","Sil(ns)","FLOPs","Bytes"\n'
        '"[bold]evil_kernel","[red]op","5000","1000000","20000"\n'
        '"plain_kernel","relu","1000","0","4000"\n')
    async with open_screen(kernels_app(tmp_path), KernelsScreen, (120, 40)) as (app, pilot, screen):
        table = screen.query_one("#kernels-ranking", ResultTableView)
        lines = [table.render_line(y).text for y in range(table.size.height)]
        assert any("[bold]evil_kernel" in line for line in lines)
        assert "[bold]evil_kernel" in screen.query_one(ShareBars).render().plain


@needs_seed_run
async def test_seed_run_reproduces_the_notebook() -> None:
    async with open_screen(kernels_app(SEED_RUN), KernelsScreen, (120, 40)) as (app, pilot, screen):
        cards = card_texts(screen)
        assert "69.75 %" in cards[0] and "8.26 %" in cards[1] and "9.04 %" in cards[2]
        top = ranking(screen)[0]
        # Seed 001, cell In [13]: the most efficient kernel and its FLOPS efficiency.
        assert top["kernel"] == "cudnn_convolve_sgemm_sm35_ldg_nn_64x16x64x16x16"
        assert top["flops_eff_pct"] == pytest.approx(34.812331, rel=1e-6)
        await pilot.press("t")
        await pilot.pause()
        assert first_names(screen) == ["cudnn::detail::wgrad_alg0_engine"]  # 5,908.7 ms of 42.4 s
        await pilot.press("g")
        await pilot.pause()
        assert {r["direction"] for r in ranking(screen)} == {"fprop", "bprop"}
        await pilot.press("g")
        await pilot.pause()
        assert first_names(screen) == ["conv2d"]  # by time, per op
        assert screen.query_one(RooflinePane).points > 0


async def test_incomplete_peak_draws_points_but_no_roofs() -> None:
    async with open_screen(kernels_app(SAMPLE, gpu=None, peak_tflops=4.29), KernelsScreen, (120, 40)) as (app, pilot, screen):
        roofline = screen.query_one(RooflinePane)
        assert roofline.points == 9 and roofline.note.startswith("no roofs: the peak is incomplete")
        drawn = str(roofline.query_one(RooflinePlot).render())
        assert "compute-bound" not in drawn and "roofs" not in drawn  # no verdicts without a ridge point
        assert "unknown" in drawn
        assert "? GB/s" in card_texts(screen)[4] and "n/a" in card_texts(screen)[2]


@pytest.fixture(scope="module")
def examples_model() -> KernelsModel:
    """examples/profiles read once for the tests below (the screen's own worker reads it in
    the tests above)."""
    return build_model([str(EXAMPLES)], gpu="A100")


def examples_app(model: KernelsModel) -> GpuscopeApp:
    return GpuscopeApp(first_screen=lambda: KernelsScreen([str(EXAMPLES)], loader=lambda: model))


def table_lines(table: ResultTableView) -> list[str]:
    """The table's rows as rendered on screen (the part in view)."""
    return [table.render_line(y).text for y in range(table.size.height)]


def selected_line(table: ResultTableView) -> str:
    """The row under the cursor as rendered on screen."""
    return table.render_line(table.header_height + table.cursor_row - round(table.scroll_y)).text


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_ranking_numbers_stay_in_view_and_long_names_fold_to_the_column(examples_model: KernelsModel, size: tuple[int, int]) -> None:
    """On the real profiles of examples/ (PyTorch's elementwise kernels, hundreds to thousands of
    characters): calls, total, share and both efficiencies of the selected row are on screen at
    80 and 200 columns, the name is folded, not cut, and the detail line under the table has the
    whole name (at 24 lines, once the tables fill the screen: two lines hold it folded)."""
    async with open_screen(examples_app(examples_model), KernelsScreen, size) as (app, pilot, screen):
        table = screen.query_one("#kernels-ranking", KernelRanking)
        await pilot.press("t")
        table.focus()
        await until(pilot, lambda: table.ranking is not None and table.has_focus)
        full = [row["kernel"] for row in ranking(screen)]
        row = next(i for i, name in enumerate(full) if name.startswith("void at::native::elementwise_kernel<128, 2, "))
        assert len(full[row]) > 300
        table.move_cursor(row=row)
        await pilot.pause()
        selected = ranking(screen)[row]
        line = selected_line(table)
        numbers = [f"{selected['calls']:d}", f"{selected['total_ms']:.3f}", f"{selected['share_pct']:.1f}"]
        assert all(number in line for number in numbers), (numbers, line)
        assert line.count("n/a") >= 2  # both efficiencies (no FLOPs in a torch trace), in view
        widths = [column.get_render_width(table) for column in table.columns.values()]
        keys = [str(key.value) for key in table.columns]
        assert sum(widths[:keys.index("bw_eff_pct") + 1]) <= table.size.width
        assert "elementwise_kernel<…>(…)" in line and "CUDAFunctor_add" not in line
        detail = screen.query_one("#kernels-detail", KernelDetail)
        assert detail.full == full[row]
        if size[1] < 36:
            assert detail.lines == 2 and "Kernel: void at::native::elementwise_kernel<128, 2, " in str(detail.render())
            await pilot.press("z")
            await pilot.pause()
            assert "elementwise_kernel<…>(…)" in selected_line(table)
        assert "".join(str(detail.render()).split("\n")) == "Kernel: " + full[row]
        if size[0] >= 200:  # every column fits, the name keeps what is left
            assert sum(widths) <= table.size.width and widths[0] > 60


async def test_detail_follows_the_cursor_and_folds_a_name_too_long_for_its_lines(examples_model: KernelsModel) -> None:
    async with open_screen(examples_app(examples_model), KernelsScreen, (80, 24)) as (app, pilot, screen):
        table = screen.query_one("#kernels-ranking", KernelRanking)
        table.focus()
        await pilot.press("t")
        await until(pilot, lambda: table.ranking is not None)
        full = [row["kernel"] for row in ranking(screen)]
        longest = max(range(len(full)), key=lambda i: len(full[i]))
        assert len(full[longest]) > 5000  # distribution_elementwise_grid_stride_kernel<...>
        table.move_cursor(row=longest)
        await pilot.pause()
        detail = screen.query_one("#kernels-detail", KernelDetail)
        rendered = str(detail.render())
        assert detail.full == full[longest] and len(rendered.split("\n")) <= detail.lines
        assert "distribution_elementwise_grid_stride_kernel<" in rendered.replace("\n", "")
        await pilot.press("up")
        await pilot.pause()
        assert detail.full == full[longest - 1]


async def test_bars_fold_long_names_keeping_the_function_name(examples_model: KernelsModel) -> None:
    async with open_screen(examples_app(examples_model), KernelsScreen, (200, 60)) as (app, pilot, screen):
        await pilot.press("b")  # rows only: the bars are the longest kernels whatever the sort
        bars = screen.query_one(ShareBars)
        assert "saxpy(double *, double *, double *, double, int)" in set(bars.frame["kernel"])
        assert "saxpy(…)" in bars.render().plain
