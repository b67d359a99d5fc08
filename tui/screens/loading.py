"""Provides `LoadingScreen`: the base of screens that read result files before showing them.

Reading can take seconds (thousands of files, a 10-million-row profile), so it runs in a worker
thread and the main thread only gets the finished model, as `Loaded`, or the reason it could
not be built, as `LoadFailed`: never a traceback. Subclasses say how to build the model
(`read_model`) and handle the two messages (`on_loading_screen_loaded`, `..._load_failed`).
"""

from __future__ import annotations

from typing import Any

from textual import work
from textual.message import Message
from textual.screen import Screen


class LoadingScreen(Screen[None]):
    INJECTED = "(injected)"
    """What `paths_text` says when a test injects the model instead of paths."""

    class Loaded(Message):
        """The worker read the files and built the model."""

        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

    class LoadFailed(Message):
        """The worker could not build a model at all (e.g. a bad --path-pattern or --group-by)."""

        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    paths: list[Any]

    def read_model(self) -> Any:
        """Build the model; runs in the worker thread."""
        raise NotImplementedError

    def error_text(self, error: Exception) -> str:
        return f"{type(error).__name__}: {error}"

    @work(thread=True, exclusive=True, group="results", exit_on_error=False)
    def load(self) -> None:
        try:
            model = self.read_model()
        except Exception as error:  # noqa: BLE001 - shown to the user instead of a traceback
            self.post_message(self.LoadFailed(self.error_text(error)))
        else:
            self.post_message(self.Loaded(model))

    def paths_text(self) -> str:
        return ", ".join(str(p) for p in self.paths) or self.INJECTED
