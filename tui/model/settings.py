"""Provides `Settings`: what the watch screen's setup (F2) keeps between runs (the process
table's columns, the refresh period, the theme), and `load` / `save` for the file that keeps
them, `$XDG_CONFIG_HOME/gpuscope/config.toml` (by default `~/.config/gpuscope/config.toml`):

```toml
theme = "textual-light"

[watch]
interval = 2.0
hidden_columns = ["sm_percent", "state"]
```

Written here by hand (a few keys need no TOML writer), read with `tomllib` (`tomli` before
Python 3.11). A file that cannot be read or makes no sense gives the defaults and one message
saying why, never an exception: a broken config must not stop gpuscope from starting. Saving
replaces the whole file with the keys above.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from gpuscope.metrics.snapshot_tables import PROCESS_COLUMNS
from gpuscope.tui.model.watch import INTERVALS

HIDEABLE = tuple(c.key for c in PROCESS_COLUMNS if c.key not in ("pid", "command"))
"""Process-table columns the setup can hide; PID and COMMAND always show."""
MAX_BYTES = 64 * 1024
"""A config file bigger than this is not one gpuscope wrote: not read."""
THEME_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


@dataclass(frozen=True)
class Settings:
    """None: not set (the command line's or the app's default applies)."""

    hidden_columns: frozenset[str] = frozenset()
    """Keys of `snapshot_tables.PROCESS_COLUMNS` the process table leaves out."""
    interval: float | None = None
    """Seconds between refreshes, one of `watch.INTERVALS`."""
    theme: str | None = None
    """A Textual theme's name."""


def config_path(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CONFIG_HOME/gpuscope/config.toml`; `~/.config` when that is unset or relative (as
    the XDG spec says to ignore a relative one)."""
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(env.get("HOME") or os.path.expanduser("~"), ".config")
    return Path(base) / "gpuscope" / "config.toml"


def load(path: Path | None = None) -> tuple[Settings, str | None]:
    """The settings in `path` (default `config_path()`) and what was wrong with the file, if
    anything: a missing file is the defaults and no message; an unreadable or invalid one is
    the defaults and a message; values that make no sense are left out, and said."""
    path = path or config_path()
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return Settings(), None
    except OSError as error:
        return Settings(), f"{path}: cannot be read ({error.strerror or error}): using the default settings"
    if len(data) > MAX_BYTES:
        return Settings(), f"{path}: larger than {MAX_BYTES // 1024} KiB, not a gpuscope config: using the default settings"
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        return Settings(), f"{path}: not UTF-8 text: using the default settings"
    except tomllib.TOMLDecodeError as error:
        return Settings(), f"{path}: not valid TOML ({error}): using the default settings"
    return _settings(table, path)


def _settings(table: dict[str, Any], path: Path) -> tuple[Settings, str | None]:
    ignored: list[str] = []
    theme = table.get("theme")
    if theme is not None and not (isinstance(theme, str) and THEME_NAME.fullmatch(theme)):
        ignored.append("theme (a theme's name)")
        theme = None
    watch = table.get("watch", {})
    if not isinstance(watch, dict):
        ignored.append("[watch] (a table)")
        watch = {}
    interval = watch.get("interval")
    if interval is not None and (isinstance(interval, bool) or not isinstance(interval, (int, float))
                                 or not any(abs(interval - i) < 1e-9 for i in INTERVALS)):
        ignored.append(f"watch.interval (one of {', '.join(f'{i:g}' for i in INTERVALS)} seconds)")
        interval = None
    hidden = watch.get("hidden_columns", [])
    if not isinstance(hidden, list) or not all(isinstance(k, str) for k in hidden):
        ignored.append("watch.hidden_columns (a list of column names)")
        hidden = []
    unknown = sorted({k for k in hidden if k not in HIDEABLE})
    if unknown:
        ignored.append(f"hidden column{'s' if len(unknown) > 1 else ''} {', '.join(unknown[:5])} (known: {', '.join(HIDEABLE)})")
    settings = Settings(frozenset(k for k in hidden if k in HIDEABLE), None if interval is None else float(interval), theme)
    problem = f"{path}: ignored {'; '.join(ignored)}" if ignored else None
    return settings, problem


def dumps(settings: Settings) -> str:
    """The TOML text of `settings` (JSON's string quoting is valid TOML for these values)."""
    lines = ["# gpuscope settings, written by the watch screen's setup (F2).", ""]
    if settings.theme is not None:
        lines += [f"theme = {json.dumps(settings.theme)}", ""]
    lines.append("[watch]")
    if settings.interval is not None:
        lines.append(f"interval = {float(settings.interval)!r}")
    hidden = [k for k in HIDEABLE if k in settings.hidden_columns]  # the table's order
    lines.append(f"hidden_columns = [{', '.join(json.dumps(k) for k in hidden)}]")
    return "\n".join(lines) + "\n"


def save(settings: Settings, path: Path | None = None) -> str | None:
    """Write `settings` to `path` (default `config_path()`), replacing the file whole (a crash
    mid-write leaves the old one); what went wrong, or None."""
    path = path or config_path()
    partial = path.with_name(path.name + ".partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(dumps(settings), encoding="utf-8")
        os.replace(partial, path)
    except OSError as error:
        try:
            partial.unlink(missing_ok=True)
        except OSError:
            pass
        return f"{path}: cannot be written ({error.strerror or error})"
    return None
