"""tui/model/settings.py: the setup's config file. Where it lives (XDG_CONFIG_HOME honoured, a
relative one ignored), what it writes reads back the same, and a file that is missing,
unreadable, not TOML, binary, huge or full of odd values gives the defaults and a message,
never an exception."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings as hypothesis_settings, strategies as st

from gpuscope.tui.model.settings import HIDEABLE, MAX_BYTES, Settings, config_path, dumps, load, save
from gpuscope.tui.model.watch import INTERVALS


def test_the_file_is_under_xdg_config_home_else_home_dot_config(tmp_path: Path) -> None:
    assert config_path({"XDG_CONFIG_HOME": str(tmp_path), "HOME": "/home/x"}) == tmp_path / "gpuscope" / "config.toml"
    assert config_path({"HOME": "/home/x"}) == Path("/home/x/.config/gpuscope/config.toml")
    assert config_path({"XDG_CONFIG_HOME": "relative/dir", "HOME": "/home/x"}) == Path("/home/x/.config/gpuscope/config.toml")


def test_saved_settings_read_back_and_a_missing_file_is_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "gpuscope" / "config.toml"
    assert load(path) == (Settings(), None)
    chosen = Settings(frozenset({"state", "sm_percent"}), 2.0, "textual-light")
    assert save(chosen, path) is None
    assert load(path) == (chosen, None)
    assert not list(path.parent.glob("*.partial"))


def test_bad_files_give_the_defaults_and_say_why(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    for content, said in ((b"theme = [", "not valid TOML"), (b"\xff\xfe\x00binary", "not UTF-8"),
                          (b"# " + b"x" * MAX_BYTES, "larger than")):
        path.write_bytes(content)
        got, problem = load(path)
        assert got == Settings() and problem is not None and said in problem and str(path) in problem
    path.write_text('theme = 3\n[watch]\ninterval = 7\nhidden_columns = ["gpus", "pid", "nonsense"]\n')
    got, problem = load(path)
    assert got == Settings(hidden_columns=frozenset({"gpus"}))
    assert problem is not None and "theme" in problem and "watch.interval" in problem and "nonsense" in problem and "pid" in problem
    path.write_text("watch = 1\n")
    assert load(path)[0] == Settings() and "[watch]" in (load(path)[1] or "")


def test_an_unreadable_file_or_folder_is_said(tmp_path: Path) -> None:
    folder = tmp_path / "config.toml"
    folder.mkdir()  # a folder where the file should be
    got, problem = load(folder)
    assert got == Settings() and problem is not None and "cannot be read" in problem
    assert "cannot be written" in (save(Settings(), folder) or "")


@hypothesis_settings(max_examples=60, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_load_without_an_exception(data: bytes) -> None:
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"gpuscope-settings-{os.getpid()}.toml"
    try:
        path.write_bytes(data)
        got, problem = load(path)
        assert isinstance(got, Settings) and (problem is None or str(path) in problem)
    finally:
        path.unlink(missing_ok=True)


@hypothesis_settings(max_examples=60, deadline=None)
@given(st.frozensets(st.sampled_from(HIDEABLE)), st.none() | st.sampled_from(INTERVALS),
       st.none() | st.from_regex(r"[A-Za-z0-9_.-]{1,64}", fullmatch=True))
def test_what_is_written_reads_back(hidden: frozenset[str], interval: float | None, theme: str | None) -> None:
    import tomllib

    from gpuscope.tui.model.settings import _settings

    chosen = Settings(hidden, interval, theme)
    assert _settings(tomllib.loads(dumps(chosen)), Path("x")) == (chosen, None)
