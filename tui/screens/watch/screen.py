"""Provides `WatchScreen`: a live view of a job (or user, process tree, node) and its GPUs.

The dolphie loop keeps the UI thread free: `source.poll()` (procfs, NVML, cgroups; it may
block for hundreds of ms) runs in the screen's own poll thread (`tui.poller`), which posts the
immutable `Snapshot`; the handler on the main thread appends it to `History`, redraws the
visible panes and only then arms the timer for the next poll, so polls never overlap and a
slow one stretches the period.
Keys only re-cut data already on the main thread, so they repaint at once mid-poll.

A job on several nodes (`collectors.fanout.NodesSource`): each poll is a `NodesReading`, kept
in a `tui.model.nodes_view.NodesView` (a history per node and for the all-nodes aggregate); a
switcher line shows the entries, `n`/`N` step through them, and the panes draw the one
selected. `R` records what the watch polls (`collectors.recorder.RecordingSource`), again stops.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from typing import Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Header, Input, Static

from gpuscope.collectors.fanout import NodesReading
from gpuscope.collectors.recorder import Recorder, RecordingError, RecordingSource
from gpuscope.metrics.history import History
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.samples import Snapshot, Verdict
from gpuscope.metrics.snapshot_tables import process_table
from gpuscope.metrics.table import ResultTable
from gpuscope.tui.model.job_outputs import JobFiles, OutputTails, TailView, job_files
from gpuscope.tui.model.poller import PollDone, Poller
from gpuscope.tui.model.watch import (
    INTERVALS, ProcessView, base_rows, browse_target, record, recording_name, select_rows, step_interval, unseen_gpu_pids,
    window_verdicts,
)
from gpuscope.tui.model.nodes import ALL, NodesView
from gpuscope.tui.screens.base import ExportingScreen, FreezesStartup
from gpuscope.tui.screens.watch.cpu_pane import CpuPane
from gpuscope.tui.screens.watch.gpu_pane import GpuPane
from gpuscope.tui.widgets.history_plot import WINDOWS, HistoryPlot
from gpuscope.tui.screens.watch.job_panel import JobPanel
from gpuscope.tui.screens.watch.output_pane import OutputPane
from gpuscope.tui.widgets.quiet_update import set_text
from gpuscope.tui.screens.watch.process_table import ProcessTable
from gpuscope.tui.screens.watch.node_switcher import NodeSwitcher
from gpuscope.tui.screens.watch.dialogs import RecordModal
from gpuscope.tui.screens.watch.process_keys import ProcessKeys
from gpuscope.tui.screens.watch.status import StatusLine, output_hint, status_text
from gpuscope.tui.widgets.keys_footer import NARROW, KeysFooter

PLOT_PERIOD = 5.0
"""Seconds of sample time between plot redraws once the plots have filled in. A braille redraw
is cheap (bench/plot_bench.py), but drawing two plots of ~20 lines through Textual every
second was a fifth of the screen's CPU, and a plot of up to an hour gains little from it."""
PLOTS_FROM_HEIGHT = 48
"""Terminals this tall show the plots without asking: below, meters and processes come first."""
TALL = 36
"""Terminals this tall are `-tall`: the output pane shows under the job panel (else `o` shows it)."""
PLOT_MIN = 6
"""Rows a history plot keeps (title, four rows of dots, time axis) when the process table
needs the others; on taller terminals a fifth of the height (`_fit_table`)."""
TABLE_SLACK = 3
"""Blank rows the process table may keep before it gives them back to the plots: processes
come and go every second, and each new height is a layout pass of the whole screen."""
GPU_SERIES = (("gpu.util_mean", "util mean"), ("gpu.util_max", "util max"), ("gpu.mem_mean", "memory"))
CPU_SERIES = (("cpu.mean", "node cpu"), ("host.mem", "node memory"), ("scope.cpu_share", "job cores"))
DEFAULT_EXPORT = "gpuscope-processes.csv"
OUTPUT_TIP = "The job's StdOut and StdErr in place of the meters and processes (o again: back); there Enter follows StdOut, m merges all its files"
BROWSE_TIP = "Browse the job's working directory with its output file selected (w comes back; the watch keeps recording)"


class SnapshotSource(Protocol):
    """What the screen polls: `collectors.snapshot.SnapshotSource`, or a fake in tests."""

    def poll(self) -> Snapshot: ...


class WatchScreen(ProcessKeys, FreezesStartup, ExportingScreen):
    """Job panel, the job's output, GPU rows, CPU/memory meters, history plots and the process table."""

    READS_OUTPUT = True
    """Read the job's output files after each poll (a replay shows a recording, not the files now)."""

    HELP_TITLE = "Keys: watch"
    VERTICAL_BREAKPOINTS = [(0, "-short"), (TALL, "-tall")]
    """Below 36 lines the meters get capped heights and the plots start hidden."""
    BINDINGS = [
        Binding("space", "toggle_pause", "Pause", tooltip="Freeze the display; again to resume"),
        Binding("s,f6", "cycle_sort", "Sort", tooltip="Sort by CPU%, MEM, GPU MEM, PID, TIME in turn"),
        Binding("I", "invert_sort", "Invert", show=False, tooltip="Reverse the sort order"),
        Binding("slash,f4", "filter", "Filter", tooltip="Show only commands containing a text"),
        Binding("f3", "search", "Search", show=False, tooltip="Jump to the next process whose command contains a text"),
        Binding("escape", "clear_filter", "Clear filter", show=False, tooltip="Drop the command filter"),
        Binding("t,f5", "toggle_tree", "Tree", tooltip="Processes as a tree (children under parents)"),
        Binding("left", "fold(True)", "Fold", show=False, tooltip="Tree view: hide the children of the selected process"),
        Binding("right", "fold(False)", "Unfold", show=False, tooltip="Tree view: show them again"),
        Binding("K", "toggle_kernel", "Kernel threads", show=False, tooltip="Show or hide kernel threads (hidden by default)"),
        Binding("u", "cycle_user", "User", tooltip="Everyone, you, then each user present"),
        Binding("a", "toggle_everyone", "All", show=False, tooltip="Every process on the node, or only the scope's"),
        Binding("k,f9", "signal", "Kill", tooltip="Send TERM, KILL or INT to the selected process (htop's F9 Kill): yours only, after confirming (off with --readonly)"),
        Binding("k,f9", "signal_refused", "Kill", show=False, tooltip="Off here: gpuscope was started with --readonly, or this is a replay"),
        Binding("p", "toggle_plots", "Plots", tooltip="Show or hide the history plots"),
        Binding("w", "cycle_window", "Window", show=False, tooltip="History plots: the last 1, 5, 15 or 60 minutes"),
        Binding("e", "export", "Export", tooltip="Write the process table as shown to CSV, markdown, JSON or text"),
        Binding("o", "output", "Output", tooltip=OUTPUT_TIP),
        Binding("o", "output(True)", "Output", show=False, tooltip=OUTPUT_TIP),
        Binding("b", "browse", "Browse", tooltip=BROWSE_TIP),
        Binding("b", "browse(True)", "Browse", show=False, tooltip=BROWSE_TIP),
        Binding("f2", "setup", "Setup", show=False, tooltip="Columns, refresh period and theme, kept in ~/.config/gpuscope/config.toml"),
        Binding("f7", "renice(-1)", "Nice -", show=False, tooltip="Raise the selected process's priority (nice -1): yours only, after confirming; the kernel allows it to root only"),
        Binding("f8", "renice(1)", "Nice +", show=False, tooltip="Lower the selected process's priority (nice +1): yours only, after confirming"),
        Binding("f10", "app.quit", "Quit", show=False, tooltip="Leave gpuscope (F10 as in htop)"),
        Binding("plus,equals_sign", "interval(1)", "Slower", show=False, tooltip="Refresh less often (up to 10 s)"),
        Binding("minus", "interval(-1)", "Faster", show=False, tooltip="Refresh more often (down to 0.5 s)"),
        Binding("z", "zoom", "Zoom", show=False, tooltip="Fill the screen with the focused pane (again to restore)"),
        Binding("R", "record", "Record", show=False, tooltip="Record what the watch shows to a file (asks where); R again stops"),
        Binding("n", "node(1)", "Node", show=False, tooltip="A job on several nodes: show the next node (all nodes, then each)"),
        Binding("N", "node(-1)", "Prev node", show=False, tooltip="A job on several nodes: show the previous node"),
    ]
    """htop/nvitop habits; the second k is what read-only mode answers with (it says why), the
    first is then hidden from the footer. The second b and o are the same keys kept out of the
    narrow footer, where they would push Quit and Help off the edge (help lists them)."""

    class Polled(Message):
        """The worker read one snapshot (a `NodesReading` from a multi-node source), or
        `source.poll()` raised `error` (polling goes on)."""

        def __init__(self, snapshot: Snapshot | NodesReading | None, error: str | None = None) -> None:
            super().__init__()
            self.snapshot = snapshot
            self.error = error

    def __init__(self, source: SnapshotSource, *, interval: float | None = 1.0, readonly: bool = False,
                 freeze_gc: bool = False) -> None:
        super().__init__()
        self.freeze_gc = freeze_gc
        """After the first frame, exempt the objects alive then from garbage collection
        (`FreezesStartup`); `gpuscope watch` sets it, tests leave the collector alone."""
        self.source = source
        self.auto = interval is not None
        """False (interval=None): polls only when `poll_now()` is called, for tests."""
        self.interval = min(max(interval or 1.0, INTERVALS[0]), INTERVALS[-1])
        self.readonly = readonly
        self.paused = False
        self.view = ProcessView()
        self.history = History()
        self.snapshot: Snapshot | None = None
        self.verdicts: tuple[Verdict, ...] = ()
        self.error: str | None = None
        self.window = WINDOWS[1]
        """Seconds of history the plots show (`w` switches)."""
        self.show_plots: bool | None = None
        """None until `p` is pressed: plots then follow the terminal size."""
        self.in_flight = False
        self.applied_at: float | None = None
        self._timer: asyncio.TimerHandle | None = None
        self.nodes: NodesView | None = None
        """A job on several nodes: set by the first `NodesReading` (the switcher shows then)."""
        self._recording: RecordingSource | None = None
        """The recording `R` started (stopped by `R` again or when the screen closes)."""
        self._poller: Poller[Snapshot | NodesReading] = Poller(self._poll_source, self._deliver)
        self._done: PollDone | None = None
        self._plotted_at = float("-inf")
        self._stale = False
        self.outputs = OutputTails()
        """The job's StdOut and StdErr, read in the poll thread after each poll."""
        self.output_read: tuple[JobFiles | None, tuple[TailView, ...]] = (None, ())
        """What the last poll read of them (written by the poll thread before it posts)."""
        self.output_tab = False
        """`o`: the output pane in place of the meters and the process table."""
        self._output_known = False
        self._host = socket.gethostname().split(".")[0]
        """This node's short name, Slurm's %N in output file names."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield NodeSwitcher(id="watch-nodes")
        yield Static(id="watch-nogpu", markup=False)
        yield JobPanel(id="watch-job")
        output = OutputPane(id="watch-output")
        output.display = False  # until a job's output is known (hidden, it cannot take the first focus)
        yield output
        with Horizontal(id="watch-resources"):
            with Vertical(id="watch-gpu-col"):
                yield GpuPane(id="watch-gpus")
                yield HistoryPlot("GPU %", GPU_SERIES, id="watch-gpu-plot", classes="watch-plot")
            with Vertical(id="watch-cpu-col"):
                yield CpuPane(id="watch-cpu")
                yield HistoryPlot("Node %", CPU_SERIES, id="watch-cpu-plot", classes="watch-plot")
        # Right above the table it describes: a key repaints these two only (the compositor
        # redraws the box around all dirty regions; a status line at the top made it the screen).
        yield StatusLine(id="watch-status")
        yield ProcessTable(id="watch-procs")
        yield Input(id="watch-filter", placeholder="filter: part of a command (Enter keeps it, Escape clears)", compact=True)
        yield KeysFooter()

    def on_mount(self) -> None:
        self._poller.start()
        self.sub_title = "watch · starting"
        self.query_one("#watch-filter", Input).display = False
        self.query_one("#watch-nogpu", Static).display = False
        self.query_one(NodeSwitcher).display = False
        self.query_one(ProcessTable).focus()
        self._layout_plots()
        self._status()
        if self.auto:
            self.poll_now()

    # --- polling -------------------------------------------------------------------------

    def poll_now(self) -> PollDone | None:
        """Start one poll unless one is running; tests await the returned `PollDone`."""
        if self.in_flight:
            return None
        self.in_flight = True
        self._done = PollDone()
        self._poller.request()
        return self._done

    def _poll_source(self) -> Snapshot | NodesReading:
        """In the poll thread: `self.source` as of now (`R` wraps it in a recording and unwraps
        it), then the new lines of the job's output files."""
        snapshot = self.source.poll()
        if self.READS_OUTPUT:
            shown = snapshot if isinstance(snapshot, Snapshot) else next(iter(snapshot.latest.values()), None)
            files = job_files(shown.scope, self._host) if shown is not None else None
            self.output_read = (files, self.outputs.read(files))
        return snapshot

    def _deliver(self, snapshot: Snapshot | NodesReading | None, error: str | None) -> None:
        """From the poll thread: the result goes to the main thread as a message."""
        self.post_message(self.Polled(snapshot, error))

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _arm(self) -> None:
        self._disarm()
        if self.auto and not self.paused and not self.in_flight:
            # The event loop's own timer: Textual's set_timer makes a Timer, an asyncio task
            # and a callback message for each call (and reads the callback's signature each
            # time), a share of every idle refresh this does not need.
            self._timer = asyncio.get_running_loop().call_later(self.interval, self._tick)

    def _tick(self) -> None:
        self._timer = None
        self.poll_now()

    def on_watch_screen_polled(self, message: Polled) -> None:
        self.in_flight = False
        self.error = message.error
        if message.snapshot is None:
            self._status()
        elif not self.paused:  # a poll that was running when space was pressed is dropped
            if isinstance(message.snapshot, NodesReading):
                self.apply_nodes(message.snapshot)
            else:
                self.apply(message.snapshot)
        self._arm()
        if self._done is not None:
            self._done.set()

    def apply(self, snapshot: Snapshot) -> None:
        """Take a snapshot in: history first (even when hidden), then the visible panes."""
        self.snapshot = snapshot
        self.applied_at = time.time()  # the signal check compares start times from here
        record(self.history, snapshot)
        # The source's own verdicts when it judges (SnapshotSource does, as `--once` shows them);
        # else judged here on this screen's history.
        self.verdicts = snapshot.verdicts or window_verdicts(snapshot, self.history)
        first = len(self.history) == 1
        self.redraw()
        if first:
            self.call_after_refresh(self.freeze_startup_objects)

    def apply_nodes(self, reading: NodesReading) -> None:
        """A multi-node poll: every node's latest reading into its history and the aggregate's,
        then the selected entry drawn (the first reading shows the switcher)."""
        if self.nodes is None:
            self.nodes = NodesView()
            self.query_one(NodeSwitcher).display = True
            self.refresh_bindings()  # n / N join the footer
        first = self.nodes.total is None
        if self.nodes.take(reading):
            self._show_node(force_plots=False)
        else:  # nothing new to draw; the switcher may still have news (no node answered)
            self.query_one(NodeSwitcher).show(self.nodes)
        if first and self.nodes.total is not None:
            self.call_after_refresh(self.freeze_startup_objects)

    def _show_node(self, force_plots: bool = True) -> None:
        """Point the panes at the selected entry's snapshot and history, and draw them."""
        assert self.nodes is not None
        shown = self.nodes.shown()
        if shown.snapshot is not None:
            self.snapshot, self.history, self.verdicts = shown.snapshot, shown.history, shown.verdicts
            self.applied_at = time.time()
        self.query_one(NodeSwitcher).show(self.nodes)
        self.redraw(force_plots=force_plots)
        self._status()

    def on_unmount(self) -> None:
        self._disarm()  # not one of Textual's timers, which stop with the screen
        self._poller.close()
        if self._recording is not None:
            self._recording.stop()  # its open batch written (the source stays the caller's to close)
        self.thaw_startup_objects()

    # --- drawing -------------------------------------------------------------------------

    def redraw(self, force_plots: bool = False) -> None:
        """Redraw every visible pane from the latest snapshot (nothing while covered)."""
        snap = self.snapshot
        if snap is None:
            return
        if self.app.screen is not self:
            self._stale = True  # a dialog is open: catch up when it closes
            return
        self._stale = False
        host = snap.host
        self._title()
        no_gpu = snap.gpu_status.backend == "none"
        nogpu = self.query_one("#watch-nogpu", Static)
        nogpu.display = no_gpu
        set_text(nogpu, Text(f"No GPU view: {snap.gpu_status.reason or 'no GPU backend'}"))
        self.query_one("#watch-gpu-col").display = not no_gpu
        every_node = self.nodes is not None and self.nodes.selected == ALL
        self.query_one(ProcessTable).show_gpu_columns(not no_gpu, node=every_node)
        with self.app.batch_update():
            self.query_one(JobPanel).show(snap, self.history, self.verdicts)
            if not no_gpu:
                allocated = frozenset(g.index for g in snap.scope.gpus if g.index is not None)
                self.query_one(GpuPane).show(snap.gpu_status, snap.gpus, self.history, allocated, unseen_gpu_pids(snap),
                                             labels=self.nodes.gpu_labels if every_node and self.nodes is not None else None)
            self.query_one(CpuPane).show(host, frozenset(snap.scope.cpu_ids))
            self.show_output()
            self.refresh_table()
            self.update_plots(force_plots)

    def update_plots(self, force: bool = False) -> None:
        """Replot the visible history plots when due: every tick while the history is short
        (the plots fill in at start), then every PLOT_PERIOD. The replay screen overrides it
        (the whole recording, with a cursor)."""
        timestamp = self.snapshot.host.timestamp if self.snapshot is not None else 0.0
        if force or len(self.history) <= PLOT_PERIOD or timestamp - self._plotted_at >= PLOT_PERIOD:
            self._plotted_at = timestamp
            for plot in self.query(HistoryPlot):
                if plot.display and plot.parent is not None and plot.parent.display:
                    plot.replot(self.history)

    def show_output(self) -> None:
        """The output pane: shown for a job whose output files scontrol named, small on tall
        terminals, in the table's place as a tab (`o`), hidden on short ones otherwise."""
        files, views = self.output_read
        pane = self.query_one(OutputPane)
        if files is None and self.output_tab:
            self.action_output()  # the scope has no output any more: back to the table
        pane.display = files is not None and (self.output_tab or self.app.size.height >= TALL)
        if files is not None:
            pane.show(views, files)
        if (files is not None) != self._output_known:  # o joins or leaves the footer
            self._output_known = files is not None
            self.refresh_bindings()

    def _fit_table(self) -> None:
        """With plots on, the process table gets the rows its processes need and the plots the
        rest, down to `PLOT_MIN` rows each (a fifth of a tall terminal: a table longer than the
        screen scrolls anyway); without plots the stylesheet's split holds."""
        table = self.query_one(ProcessTable)
        plots = [p for p in self.query(HistoryPlot) if p.display and p.parent is not None and p.parent.display]  # type: ignore[attr-defined]
        if not plots or self.output_tab:
            if table.styles.clear_rule("height"):  # an inline height was set: the stylesheet's again
                table.refresh(layout=True)
            return
        needed = len(table.shown) + 1  # the header line
        floor = max(PLOT_MIN, self.app.size.height // 5)
        room = min(p.outer_size.height for p in plots) - floor  # what the plots can give (negative: what they lack)
        height = table.size.height
        target = max(5, min(needed, height + room))
        if target > height or height - target >= TABLE_SLACK or room < 0:
            if target != height:
                table.styles.height = target

    def _title(self) -> None:
        """`watch · job 42 · node cn02 · recording to FILE (N samples)`: scope, node, recording."""
        snap = self.snapshot
        if snap is None:
            return
        where = snap.scope.label or snap.host.hostname
        if self.nodes is not None:
            where += f" · {self.nodes.title()}"
        recording = getattr(self.source, "label", None)  # watch --record or R: say so, and why it stopped
        self.sub_title = f"watch · {where}" + (f" · {clean(recording)}" if isinstance(recording, str) else "")

    def refresh_table(self) -> None:
        """Re-cut the rows for the current view; what every process key ends with."""
        if self.snapshot is not None:
            table = self.query_one(ProcessTable)
            on_screen = {shown.row.pid: i for i, shown in enumerate(table.shown)}
            table.show(select_rows(self.snapshot, self.view, on_screen), self.view.sort, self.view.descending)
            self._fit_table()
        self._status()

    def _status(self) -> None:
        counts = None
        if self.snapshot is not None:
            scope = "all" if self.view.everyone else ("node" if self.snapshot.scope.kind == "node" else "scope")
            counts = (len(self.query_one(ProcessTable).shown), len(base_rows(self.snapshot, self.view)), scope)
        box = self.query_one("#watch-filter", Input)
        search = box.value.strip() if self.searching and box.display else None
        narrow = self.app.size.width < 110
        files, views = self.output_read
        line = status_text(self.paused, self.interval, self.view, counts, self.readonly, self.error, narrow=narrow,
                           search=search, mode=self.mode_text(narrow), output=output_hint(views, self.output_tab) if files else None)
        if isinstance(self.source, RecordingSource) and self.source.recorder is not None:  # the header says where; it is hidden on short terminals
            line.append(" · ", style="").append("● REC", style="bold red")
        self.query_one(StatusLine).show(line)

    def mode_text(self, narrow: bool) -> Text | None:
        """What starts the status line in place of the live state (pause, refresh period); None
        for a live watch. The replay screen says its cursor there."""
        return None

    def _layout_plots(self) -> None:
        show = self.show_plots
        if show is None:
            show = self.app.size.width >= 100 and self.app.size.height >= PLOTS_FROM_HEIGHT
        self.set_class(show, "-plots")
        for plot in self.query(HistoryPlot):
            plot.display = show
            plot.styles.min_height = PLOT_MIN  # the table's rows come first (`_fit_table`)
        self.call_after_refresh(self._fit_table)

    def on_resize(self) -> None:
        if self.show_plots is None:
            self._layout_plots()
        self.show_output()
        self.call_after_refresh(self._fit_table)

    def on_screen_resume(self) -> None:
        if self._stale:
            self.redraw(force_plots=True)

    # --- actions -------------------------------------------------------------------------

    def action_toggle_pause(self) -> None:
        self.paused = not self.paused
        self._arm()
        if not self.paused and self.auto:
            self.poll_now()
        self._status()

    def action_interval(self, step: int) -> None:
        self.interval = step_interval(self.interval, step)
        if self._timer is not None:
            self._arm()  # the pending wait restarts at the new period
        self._status()

    def action_cycle_window(self) -> None:
        """`w`: the plots' time window, 1 → 5 → 15 → 60 minutes → 1."""
        self.window = WINDOWS[(WINDOWS.index(self.window) + 1) % len(WINDOWS)] if self.window in WINDOWS else WINDOWS[1]
        plots = list(self.query(HistoryPlot))
        for plot in plots:
            plot.window = self.window
        self.redraw(force_plots=True)
        self._status()
        # Feedback where the time axis is not on screen (plots hidden, or too short for it).
        minutes = self.window / 60
        hidden = not (plots and plots[0].display)
        self.notify(f"History plots: the last {minutes:g} minute{'s' if minutes != 1 else ''}" + (" (p shows them)" if hidden else ""),
                    title="Window", timeout=2)

    def action_export(self) -> None:
        """`e`: write the process table as shown (rows, order, the screen's columns)."""
        if self.snapshot is None:
            self.notify("Nothing to export yet.", severity="warning")
            return
        self.ask_export(DEFAULT_EXPORT, "process table (as shown)")

    def export_tables(self, fmt: str) -> tuple[list[ResultTable], tuple[str, ...]] | None:
        """The process table as shown: its rows, their order, the screen's columns."""
        if self.snapshot is None:
            return None
        rows = [shown.row for shown in self.query_one(ProcessTable).shown]
        title = f"Processes ({self.snapshot.scope.label or self.snapshot.host.hostname}), sorted by {self.view.sort_label}"
        return [process_table(self.snapshot, rows=rows, title=title)], ()

    def action_browse(self, narrow: bool = False) -> None:
        """`b`: the browser mode, first opened on the job's WorkDir with its StdOut selected."""
        scope = self.snapshot.scope if self.snapshot is not None else None
        root, select, note = browse_target(scope, os.getcwd(), os.path.isdir)
        if note:
            self.notify(clean(note), title="Browse", markup=False)
        self.app.show_browser(root, select)  # type: ignore[attr-defined]

    def action_node(self, step: int) -> None:
        """`n` / `N`: the next or previous entry of the node switcher (all nodes, then each)."""
        if self.nodes is not None:
            self.nodes.cycle(step)
            self._show_node()

    def action_record(self) -> None:
        """`R`: ask where to record, then record every poll; `R` again stops and says what was written."""
        if isinstance(self.source, RecordingSource):
            recording = self.source
            self.source = recording.source  # the next poll is unrecorded; a running one finishes first (stop waits)
            self._recording = None
            self.notify(clean(recording.stop()), title="Recording stopped", markup=False)
            self._title()
            return
        snap = self.snapshot
        self.app.push_screen(RecordModal(recording_name(snap.scope if snap else None, snap.host.hostname if snap else socket.gethostname())),
                             self.record_to)

    def record_to(self, path: str | None) -> None:
        """Start recording to `path` (a new file); a file that cannot be made is said, nothing else."""
        if not path or isinstance(self.source, RecordingSource):
            return
        try:
            recorder = Recorder(os.path.expanduser(path))
        except RecordingError as error:
            self.notify(clean(str(error)), title="Not recording", severity="error", markup=False)
            return
        self.source = self._recording = RecordingSource(self.source, recorder)
        self.notify(f"Recording to {clean(recorder.path)} (R stops)", title="Recording", markup=False)
        self._title()

    def action_output(self, narrow: bool = False) -> None:
        """`o`: the job's output in place of the meters and the process table, as a tab; again: back."""
        self.output_tab = not self.output_tab and self.output_read[0] is not None
        pane, table = self.query_one(OutputPane), self.query_one(ProcessTable)
        pane.set_class(self.output_tab, "-tab")
        table.display = self.query_one("#watch-resources").display = not self.output_tab
        self.show_output()
        (pane if self.output_tab else table).focus()
        self._fit_table()
        self._status()

    def action_toggle_plots(self) -> None:
        plots = list(self.query(HistoryPlot))
        self.show_plots = not (plots and plots[0].display)
        self._layout_plots()
        self.redraw(force_plots=True)

    def action_zoom(self) -> None:
        if self.maximized is not None:
            self.minimize()
            return
        focused = self.focused
        target = focused if isinstance(focused, (GpuPane, CpuPane)) else self.query_one(ProcessTable)
        self.maximize(target)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Read-only: `signal` is hidden and `signal_refused` answers the key instead."""
        if action == "signal":
            return not self.readonly
        if action == "signal_refused":
            return self.readonly
        if action == "node":
            return self.nodes is not None
        if action == "output":
            narrow = self.app.size.width < NARROW
            return self.output_read[0] is not None and bool(parameters) == narrow
        if action == "browse":  # only in the app of watch and browse modes (not a watch alone, as tests make)
            narrow = self.app.size.width < NARROW
            return getattr(self.app, "first_mode", None) in ("watch", "browse") and bool(parameters) == narrow
        return True
