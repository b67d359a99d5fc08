"""Provides `ReplayScreen`: the watch screen over a recording, with a time cursor.

The panes are the watch's (`WatchScreen`, never polling: `interval=None`); what they show is
the sample under the cursor (`tui.model.replay_model`): its snapshot decoded from its own
batch, and the history of the 10 minutes before it for the meters and means. The history plots
show the whole recording with a mark at the cursor. Keys step, jump to a time, play at 1x to
600x and jump from event to event (memory peaks, GPUs going idle, throttling, processes
starting and ending). Beside the watch's plots, one GPU's power and energy so far and its SM,
tensor and DRAM activity over the recording (`G`: the next GPU), n/a and why where the
recording has none. Signals are refused: the processes are a recording's, not live ones.

Opening a long recording takes a second or two, so when the screen is given a path alone
(the browser), it reads it in a worker thread and says so meanwhile.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Input

from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.samples import Snapshot
from gpuscope.tui.model.replay import BIG_STEP_S, GOTO_HELP, Event, Replay, ReplayCursor, clock_text, open_replay, summary
from gpuscope.tui.model.replay_energy import ACTIVITY, activity_text, power_text
from gpuscope.tui.model.watch import window_verdicts
from gpuscope.tui.screens.replay_plots import GpuReplayPlot
from gpuscope.tui.screens.watch.screen import WatchScreen
from gpuscope.tui.widgets.history_plot import HistoryPlot
from gpuscope.tui.screens.watch.process_table import ProcessTable

TICK = 0.25
"""Seconds of wall time between play steps (at 600x a tick moves 150 s of a 1 Hz recording)."""
DISABLED = frozenset({"toggle_pause", "interval", "cycle_window", "browse", "signal", "node", "record"})
"""The live watch's actions that mean nothing over a recording; their keys serve the replay's."""


class _CursorSource:
    """What the watch screen's poller would poll: the sample under the cursor (a replay never
    polls on its own; this is only for `poll_now`)."""

    def __init__(self, screen: "ReplayScreen") -> None:
        self.screen = screen

    def poll(self) -> Snapshot:
        snapshot = self.screen.snapshot
        if snapshot is None:
            raise RuntimeError("nothing to replay yet")
        return snapshot


QUIET = frozenset({"cycle_sort", "toggle_tree", "cycle_user", "export"})
"""Watch keys kept out of the replay's footer (the help lists them): room for the replay's own
at 80 columns, with Quit, Help and (over the browser) Back."""


def _binding_action(binding: Binding) -> str:
    return binding.action.split("(")[0]


class ReplayScreen(WatchScreen, inherit_bindings=False):
    """A recording under a time cursor, in the watch's panes."""

    DEFAULT_CSS = """
    #replay-gpu-plots {
        height: auto;
    }
    ReplayScreen.-plots #replay-gpu-plots {
        height: 1fr;
    }
    #replay-power-plot {
        width: 1fr;
        border-right: vkey $panel;
    }
    #replay-activity-plot {
        width: 1fr;
    }
    """
    HELP_TITLE = "Keys: replay"
    READS_OUTPUT = False  # the job's output files as they are now are not the recording's
    OFF_REASON = "this is a replay: its processes are a recording's, not live ones"
    BINDINGS = [
        Binding("space", "play", "Play", tooltip="Play the recording at the speed shown (+/- change it); again to pause"),
        Binding("space", "pause", "Pause", tooltip="Pause the recording"),
        Binding("n", "event(1)", "Event", tooltip="Jump to the next event: a GPU memory peak, a GPU going idle, throttling, a process starting or ending"),
        Binding("N", "event(-1)", "Prev event", show=False, tooltip="Jump to the previous event"),
        Binding("g", "goto", "Go to", tooltip=f"Jump to {GOTO_HELP}"),
        Binding("o", "other_node", "Node", show=False, tooltip="A recording of several nodes: show the next node, at the same time"),
        Binding("G", "plot_gpu", "GPU plots", show=False, tooltip="The power, energy and activity plots: the next GPU"),
        Binding("full_stop", "step(1)", "Step", tooltip="One sample forward (, back)"),
        Binding("comma", "step(-1)", "Step back", show=False, tooltip="One sample back"),
        Binding("less_than_sign", f"step_time(-{BIG_STEP_S:g})", "-1 min", show=False, tooltip="A minute of the recording back"),
        Binding("greater_than_sign", f"step_time({BIG_STEP_S:g})", "+1 min", show=False, tooltip="A minute of the recording forward"),
        Binding("plus,equals_sign", "speed(1)", "Faster", show=False, tooltip="Play faster: 1x, 10x, 60x, 600x"),
        Binding("minus", "speed(-1)", "Slower", show=False, tooltip="Play slower"),
        Binding("home", "edge(0)", "Start", show=False, priority=True, tooltip="The first sample"),
        Binding("end", "edge(1)", "End", show=False, priority=True, tooltip="The last sample"),
        Binding("escape", "close_goto", "Close", show=False),
        *(dataclasses.replace(b, show=b.show and _binding_action(b) not in QUIET)
          for b in WatchScreen.BINDINGS if isinstance(b, Binding) and _binding_action(b) not in DISABLED),
        *Screen.BINDINGS,  # focus and copy: not inherited, as the watch's live keys are not
    ]
    """The replay's keys, then the watch's (sort, filter, tree, plots, export...) without the
    live ones (pause, refresh period, window, browse, signals, nodes, record): their keys serve
    the replay's here; `k` says why there are no signals."""

    def __init__(self, path: str | Path, replay: Replay | None = None) -> None:
        super().__init__(_CursorSource(self), interval=None, readonly=True)
        self.path = Path(path)
        self.replay = replay
        self.cursor: ReplayCursor | None = None
        self.full = None  # History of the whole recording, for the plots
        self.plot_gpu: int | None = None
        """The GPU whose power, energy and activity are plotted (`G` steps through them)."""
        self._played_at = 0.0

    def on_mount(self) -> None:  # before the watch's own (Textual calls each class's, this one first)
        goto = Input(id="replay-goto", placeholder="go to: 14:05, +10m, -30s, 1h30m or #1234 (Enter jumps, Escape closes)", compact=True)
        goto.display = False
        self.mount(goto, after=self.query_one("#watch-filter"))
        plots = Horizontal(GpuReplayPlot(id="replay-power-plot", classes="watch-plot"),
                           GpuReplayPlot(id="replay-activity-plot", classes="watch-plot"), id="replay-gpu-plots")
        self.mount(plots, after=self.query_one("#watch-resources"))
        self._play_timer = self.set_interval(TICK, self._play_tick, pause=True)
        self.call_later(self._begin)  # once the watch's on_mount has set up the panes

    def _begin(self) -> None:
        self.sub_title = f"replay · {clean(self.path.name)} · opening…"
        self._status()
        if self.replay is None:
            self._open()
        else:
            self._start(self.replay)

    @work(thread=True, exclusive=True)
    def _open(self, node: str | None = None) -> None:
        # a replay held in memory (a past job from Prometheus) changes node there, not from a file
        replay = self.replay.for_node(node) if self.replay is not None else open_replay(self.path, node)
        self.app.call_from_thread(self._start, replay)

    def _start(self, replay: Replay) -> None:
        if not self.is_attached:  # closed (Escape) while the worker was reading
            replay.close()
            return
        if self.replay is not None and self.replay is not replay:
            self.replay.close()  # another node of the same recording replaces it
        old = self.cursor
        self.replay = replay
        if replay.problem is not None:
            self.sub_title = f"replay · {clean(self.path.name)} · nothing to replay"
            self.notify(clean(f"{self.path.name}: {replay.problem}"), title="Not a recording" if replay.recording.table is None else "Replay",
                        severity="error", markup=False, timeout=10)
            return
        self.cursor = ReplayCursor(replay)
        if old is not None:  # another node: the same moment, speed and play state
            self.cursor.go_time(old.time)
            self.cursor.position = max(old.position, self.cursor.time)
            self.cursor.speed, self.cursor.playing = old.speed, old.playing
        self.full = replay.full_history()
        if self.plot_gpu not in replay.gpu_energy:
            self.plot_gpu = min(replay.gpu_energy, default=None)
        self.query_one("#replay-gpu-plots").display = self.plot_gpu is not None
        start, end = float(replay.times[0]), float(replay.clock[-1])
        step = (end - start) / max(1, replay.samples - 1)
        span = end - start
        for plot in self.query(HistoryPlot):
            plot.span = (start - step, end)  # a plot's time slices are (start, end]: the first sample is in
            plot.span_label = lambda t, span=span: clock_text(t, span)[-8:-3] if span >= 600 else clock_text(t, span)[-8:]
        if (cut := replay.cut_short) is not None:
            self.notify(clean(cut), title="Recording cut short", severity="warning", markup=False, timeout=10)
        if len(replay.nodes) > 1:
            self.notify(clean(f"This recording holds {len(replay.nodes)} nodes ({', '.join(replay.nodes)}): showing {replay.node} (o: the next)."),
                        title="Several nodes", markup=False, timeout=8)
        self.show_cursor()

    def on_unmount(self) -> None:
        if self.replay is not None:
            self.replay.close()

    # --- the cursor --------------------------------------------------------------------------

    def show_cursor(self) -> None:
        """Draw the sample under the cursor."""
        if self.cursor is None or self.replay is None:
            return
        self.apply(self.replay.snapshot(self.cursor.index))

    def apply(self, snapshot: Snapshot) -> None:
        """The sample under the cursor, with the history up to it (nothing is recorded)."""
        assert self.cursor is not None and self.replay is not None
        self.snapshot = snapshot
        self.applied_at = None  # never live: signals are refused anyway
        self.history = self.replay.history_at(self.cursor.index, snapshot)
        self.verdicts = snapshot.verdicts or window_verdicts(snapshot, self.history)
        self.redraw()

    def redraw(self, force_plots: bool = False) -> None:
        super().redraw(force_plots)
        if self.cursor is not None:
            self.sub_title = clean(self.cursor.title(self.path.name)) + (" · ▶" if self.cursor.playing else "")

    def update_plots(self, force: bool = False) -> None:
        """The whole recording, the cursor marked (the lines are drawn once per size)."""
        if self.full is None or self.cursor is None:
            return
        self._show_gpu_plots()
        for plot in self.query(HistoryPlot):
            plot.cursor = self.cursor.time
            if plot.display and plot.parent is not None and plot.parent.display:
                plot.replot(self.full)

    def _show_gpu_plots(self) -> None:
        """The plotted GPU's lines, and their legends at the cursor."""
        assert self.replay is not None and self.cursor is not None
        view = self.replay.gpu_energy.get(self.plot_gpu) if self.plot_gpu is not None else None
        if view is None:
            return
        g, i, series = view.index, self.cursor.index, self.replay.series
        self.query_one("#replay-power-plot", GpuReplayPlot).show((f"gpu{g}.power_pct", f"gpu{g}.energy_pct"), power_text(view, series, i))
        self.query_one("#replay-activity-plot", GpuReplayPlot).show(tuple(f"gpu{g}.{name}" for _f, name, _l in ACTIVITY),
                                                                     activity_text(view, series, i))

    def mode_text(self, narrow: bool) -> Text | None:
        """`▶ REPLAY 14:03:22 · 1,234/86,400 · 10x`: the status line's start, in place of
        the watch's live state (the header, hidden on short terminals, says it too)."""
        line = Text()
        cursor = self.cursor
        playing = cursor is not None and cursor.playing
        line.append(" ▶ REPLAY " if playing else " ❚❚ REPLAY ", style="bold reverse magenta")
        if cursor is None:
            return line.append(" opening…" if self.replay is None else " nothing to replay")
        span = float(self.replay.clock[-1] - self.replay.clock[0]) if self.replay is not None else 0.0
        line.append(f"{clock_text(cursor.time, span)}", style="bold")
        line.append(f" · {cursor.index + 1:,}/{cursor.last + 1:,} · {cursor.speed:g}x" if narrow else
                    f" · sample {cursor.index + 1:,} of {cursor.last + 1:,} · {cursor.speed:g}x (+/-) · recorded, not live")
        return line

    def _moved(self) -> None:
        self.show_cursor()
        self._status()

    # --- actions -----------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in DISABLED:
            return False
        if action in ("play", "pause"):  # one key, its footer word following the state
            return (action == "pause") == bool(self.cursor is not None and self.cursor.playing)
        if action == "signal_refused":
            return True
        if action == "close_goto":
            return bool(self.query("#replay-goto")) and self._goto_box().display
        if action == "clear_filter":  # else Escape goes back (to the browser this was opened from)
            return bool(self.view.text or self.searching or self.query_one("#watch-filter", Input).display)
        if action == "edge" and isinstance(self.focused, Input):
            return False  # Home/End move in the box being typed in
        return super().check_action(action, parameters)

    def _goto_box(self) -> Input:
        return self.query_one("#replay-goto", Input)

    def action_signal_refused(self) -> None:
        self.notify("No signals in a replay: these processes are a recording's, not live ones.", title="Replay", severity="warning")

    def action_play(self) -> None:
        if self.cursor is None:
            return
        self.cursor.toggle_play()
        self._played_at = time.monotonic()
        if self.cursor.playing:
            self._play_timer.resume()
        else:
            self._play_timer.pause()
        self.refresh_bindings()
        self.redraw()
        self._status()

    def action_pause(self) -> None:
        self.action_play()

    def _play_tick(self) -> None:
        if self.cursor is None:
            return
        now = time.monotonic()
        moved = self.cursor.tick(now - self._played_at)
        self._played_at = now
        if moved:
            self._moved()
        if not self.cursor.playing:
            self._play_timer.pause()
            self.refresh_bindings()
            self.notify("End of the recording.", title="Replay", timeout=3)
            self.redraw()
            self._status()

    def action_other_node(self) -> None:
        """`o`: the next node of a multi-node recording, read in a worker, the cursor's time kept."""
        replay = self.replay
        if replay is None or self.cursor is None:
            return
        if len(replay.nodes) < 2:
            self.notify("This recording holds one node.", title="Node", timeout=3)
            return
        node = replay.nodes[(replay.nodes.index(replay.node) + 1) % len(replay.nodes)] if replay.node in replay.nodes else replay.nodes[0]
        self.sub_title = f"replay · {clean(self.path.name)} · opening {clean(node)}…"
        self._open(node)

    def action_plot_gpu(self) -> None:
        """`G`: the power, energy and activity plots show the next GPU."""
        gpus = sorted(self.replay.gpu_energy) if self.replay is not None else []
        if len(gpus) < 2:
            self.notify("This recording holds one GPU." if gpus else "This recording holds no GPU.", title="GPU plots", timeout=3)
            return
        self.plot_gpu = gpus[(gpus.index(self.plot_gpu) + 1) % len(gpus)] if self.plot_gpu in gpus else gpus[0]
        self.update_plots()

    def action_speed(self, step: int) -> None:
        if self.cursor is not None:
            self.cursor.set_speed(step)
            self.redraw()
            self._status()

    def action_step(self, samples: int) -> None:
        if self.cursor is not None:
            self.cursor.step(samples)
            self._moved()

    def action_step_time(self, seconds: float) -> None:
        if self.cursor is not None:
            self.cursor.step_time(seconds)
            self._moved()

    def action_edge(self, end: int) -> None:
        if self.cursor is not None:
            self.cursor.go(self.cursor.last if end else 0)
            self._moved()

    def action_event(self, step: int) -> None:
        if self.cursor is None:
            return
        found = self.cursor.next_event(step)
        self.app.clear_notifications()  # the last event's news, not a pile of them over the panes
        if not found:
            self.notify("No later event." if step > 0 else "No earlier event.", title="Events", timeout=3)
            return
        self._moved()
        self.say_events(found)

    def say_events(self, events: list[Event]) -> None:
        self.notify(clean("; ".join(summary(events))), title=f"{clock_text(events[0].time)} · event", markup=False, timeout=5)

    def action_goto(self) -> None:
        if self.cursor is None:
            return
        box = self._goto_box()
        box.display = True
        box.value = ""
        box.focus()

    def action_close_goto(self) -> None:
        box = self._goto_box()
        box.display = False
        self.query_one(ProcessTable).focus()

    @on(Input.Submitted, "#replay-goto")
    def _goto_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.cursor is None:
            return
        try:
            self.cursor.goto(event.value)
        except ValueError as exc:
            self.notify(clean(str(exc)), title="Go to", severity="warning", markup=False)
            return
        self.action_close_goto()
        self._moved()
