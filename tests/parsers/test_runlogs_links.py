"""Symbolic links in a study folder: the walk tells links from files by its listing, a link to a
log already read counts once, and a link to a folder is not followed."""

from __future__ import annotations

import os
from pathlib import Path

from gpuscope.parsers.files import walk, walk_kinds
from gpuscope.parsers.runlogs.read import read_runs

LOG = "Total Training Time: 12.5 s\nNumber of epochs: 2\n"


def _study(tmp_path: Path) -> Path:
    study = tmp_path / "study"
    (study / "c4").mkdir(parents=True)
    (study / "c4" / "work-c4-101.out").write_text(LOG)
    (study / "c8").mkdir()
    (study / "c8" / "work-c8-102.out").write_text(LOG.replace("12.5", "7.5"))
    return study


def test_walk_kinds_tells_links_from_files(tmp_path: Path) -> None:
    study = _study(tmp_path)
    (study / "again.out").symlink_to(study / "c4" / "work-c4-101.out")
    (study / "c4-link").symlink_to(study / "c4", target_is_directory=True)
    kinds = {path.relative_to(study).as_posix(): kind for path, kind in walk_kinds(study)}
    assert kinds == {"again.out": "link", "c4-link": "link", "c4/work-c4-101.out": "file", "c8/work-c8-102.out": "file"}
    assert [p.relative_to(study).as_posix() for p in walk(study)] == list(kinds)  # the same paths, in the same order


def test_a_link_to_a_log_counts_once_and_a_link_to_a_folder_is_not_followed(tmp_path: Path) -> None:
    study = _study(tmp_path)
    plain = read_runs([study]).runs
    (study / "again.out").symlink_to(study / "c4" / "work-c4-101.out")
    (study / "c8-link").symlink_to(study / "c8", target_is_directory=True)
    linked = read_runs([study])
    assert sorted(linked.runs["time_s"].tolist()) == sorted(plain["time_s"].tolist()) == [7.5, 12.5]
    assert not any("c8-link" in source for source in linked.runs["source"])


def test_a_link_given_by_itself_is_read(tmp_path: Path) -> None:
    study = _study(tmp_path)
    link = tmp_path / "given.out"
    link.symlink_to(study / "c8" / "work-c8-102.out")
    assert read_runs([link]).runs["time_s"].tolist() == [7.5]
    assert list(walk_kinds(link)) == [(link, "link")]
    assert os.path.islink(link)
