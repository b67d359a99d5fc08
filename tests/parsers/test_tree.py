"""The texts a study reads from the paths given: skipped files, one budget, labels, path context."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpuscope.parsers.tree import categorical, context_columns, read_texts


def _is_ours(data: bytes) -> bool:
    return b"OURS" in data


def _tree(tmp_path: Path) -> Path:
    for folder in ("exp/aws/size4", "exp/gcp/size8"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "exp/aws/size4/a.out").write_bytes(b"OURS 1\nrow\n")
    (tmp_path / "exp/gcp/size8/b.out").write_bytes(b"OURS 1\nrow\n")  # the same bytes as a.out
    (tmp_path / "exp/gcp/size8/c.out").write_bytes(b"OURS 2\ncut")
    (tmp_path / "exp/gcp/size8/notes.txt").write_bytes(b"something else\n")
    (tmp_path / "exp/gcp/size8/empty.out").write_bytes(b"")
    return tmp_path / "exp"


def test_files_of_the_kind_are_read_with_their_context(tmp_path: Path) -> None:
    texts, findings = read_texts([_tree(tmp_path)], _is_ours, "OURS")
    assert [t.label for t in texts] == ["aws/size4/a.out", "gcp/size8/b.out", "gcp/size8/c.out"]
    assert [(t.context["environment"], t.context["nodes"]) for t in texts] == [("aws", 4), ("gcp", 8), ("gcp", 8)]
    cut = texts[2]
    assert cut.cut and cut.data == b"OURS 2\ncut\n"  # a text always ends with a newline
    assert texts[0].digest == texts[1].digest == "aws/size4/a.out" and texts[2].digest == ""
    [skipped] = findings
    assert skipped.kind == "skipped" and skipped.count == 2
    assert "hold no OURS output" in skipped.message and "notes.txt (no OURS header)" in skipped.message and "empty.out (empty)" in skipped.message


def test_a_file_given_by_itself_is_read_whatever_it_holds(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    texts, findings = read_texts([root / "gcp/size8/notes.txt", root / "gcp/size8/empty.out", tmp_path / "gone.out"], _is_ours, "OURS")
    assert [t.label for t in texts] == ["notes.txt"] and texts[0].context == {"environment": ".", "nodes": None}
    assert [(f.kind, f.file) for f in findings] == [("missing", str(tmp_path / "gone.out")), ("empty", "empty.out")]


def test_one_budget_for_all_files_names_the_file_over_it(tmp_path: Path) -> None:
    texts, findings = read_texts([_tree(tmp_path)], _is_ours, "OURS", budget=(10_000, 4))
    assert [t.label for t in texts] == ["aws/size4/a.out", "gcp/size8/b.out"]  # 2 + 2 lines: nothing left for c.out
    huge = [f for f in findings if f.kind == "huge"]
    assert [f.file for f in huge] == ["gcp/size8/c.out", "gcp/size8/notes.txt"]  # lines are counted before the kind is looked at
    assert "budget of one read" in huge[0].message


def test_excluded_folders_and_nothing_found(tmp_path: Path) -> None:
    texts, findings = read_texts([_tree(tmp_path)], _is_ours, "OURS", exclude=("size8",))
    assert [t.label for t in texts] == ["aws/size4/a.out"] and texts[0].context["environment"] == "aws"
    texts, findings = read_texts([tmp_path / "exp/gcp/size8/notes.txt"], lambda data: False, "OURS", exclude=("*.txt",))
    assert len(texts) == 1  # exclusion is for folders walked; a file given by itself is read
    empty = tmp_path / "none"
    empty.mkdir()
    assert [(f.kind, f.message) for f in read_texts([empty], _is_ours, "OURS")[1]] == [("no-data", "no OURS output files found")]


def test_context_columns_per_row(tmp_path: Path) -> None:
    texts, _ = read_texts([_tree(tmp_path)], _is_ours, "OURS", path_pattern="{environment}/size{nodes}/{name}.out")
    file_of = np.array([2, 0, 0, 1])
    columns = context_columns(file_of, texts)
    assert list(columns) == ["environment", "nodes", "name"]
    assert list(columns["environment"]) == ["gcp", "aws", "aws", "gcp"]
    assert list(columns["nodes"]) == [8, 4, 4, 8]
    assert list(columns["name"]) == ["c", "a", "a", "b"]
    picked = categorical(np.array([1, 0, 1]), ["x", None])  # None: missing
    assert list(picked.categories) == ["x"] and picked.isna().tolist() == [True, False, True]


def test_texts_alike_in_size_head_and_tail_are_identical_only_when_every_byte_is(tmp_path: Path) -> None:
    head, tail = b"OURS\n" + b"h" * 5000 + b"\n", b"t" * 5000 + b"\n"  # longer than the head and tail compared first
    for name, middle in (("a.out", b"1"), ("b.out", b"2"), ("c.out", b"1"), ("d.out", b"22")):
        (tmp_path / name).write_bytes(head + middle + tail)
    texts, _ = read_texts([tmp_path], _is_ours, "OURS")
    assert [(t.label, t.digest) for t in texts] == [("a.out", "a.out"), ("b.out", ""), ("c.out", "a.out"), ("d.out", "")]
