"""PyProf reader: real Parquet (../shared, skipped when absent), hand-written --csv and -w
fixtures, unreadable files, and property tests on the text reader."""

from __future__ import annotations

import random
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscope.parsers.profilers import pyprof
from gpuscope.parsers.profilers.kernel_table import KERNEL_COLUMNS

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent.parent / "data" / "pyprof"
SHARED_PYPROF = ROOT.parent / "shared" / "data" / "pyprof" / "data" / "pcm" / "pyprof_kernels"
RUN_8 = SHARED_PYPROF / "run_0_config_8_2_ib_nvprof_2_resnet50_dali-gpu_32_fp16_fp32_ret_0_0.gzip"
RUN_1 = SHARED_PYPROF / "run_0_config_1_2_ib_nvprof_2_resnet50_dali-cpu-to-gpu_32_fp32_fp32_ret_0_0.gzip"
needs_shared = pytest.mark.skipif(not RUN_8.is_file() or not RUN_1.is_file(), reason="../shared/data/pyprof is absent")

EXTRAS = ("idx", "tid", "layer", "module", "params", "tc", "grid", "block")


def kinds(read: pyprof.KernelRead) -> list[str]:
    return [f.kind for f in read.findings]


# --- real Parquet ------------------------------------------------------------------------------

@needs_shared
@pytest.mark.parametrize(("path", "rows", "null_ops"), [(RUN_8, 192590, 57449), (RUN_1, 168721, 50221)])
def test_real_parquet(path: Path, rows: int, null_ops: int) -> None:
    read = pyprof.read_kernels(path)
    assert read.meta["format"] == "Parquet"
    assert read.findings == []
    assert read.unavailable == ("start_ns",)
    table = read.table
    assert len(table) == rows
    assert tuple(table.columns[: len(KERNEL_COLUMNS)]) == KERNEL_COLUMNS
    assert tuple(table.columns[len(KERNEL_COLUMNS):]) == EXTRAS
    assert table["start_ns"].isna().all()
    assert int(table["op"].isna().sum()) == null_ops  # PyProf left Op empty for unmarked kernels
    for column in ("kernel", "duration_ns", "flops", "bytes", "direction", "device", "stream"):
        assert table[column].notna().all(), column
    assert (table["duration_ns"] > 0).all()
    assert set(table["direction"].unique()) <= {"fprop", "bprop", "na"}
    assert str(table["duration_ns"].dtype) == "Float64" and str(table["stream"].dtype) == "Int64"
    raw = pd.read_parquet(path)
    assert table["duration_ns"].sum() == raw["Sil(ns)"].sum()
    assert table["flops"].sum() == pytest.approx(raw["FLOPs"].sum(), rel=1e-12)
    assert table["kernel"].tolist()[:5] == raw["Kernel"].tolist()[:5]


@needs_shared
def test_parquet_detected_by_magic_not_extension(tmp_path: Path) -> None:
    renamed = tmp_path / "kernels.csv"
    renamed.write_bytes(RUN_8.read_bytes())
    read = pyprof.read_kernels(renamed)
    assert read.meta["format"] == "Parquet" and len(read.table) == 192590


@needs_shared
def test_truncated_real_parquet_is_one_error(tmp_path: Path) -> None:
    data = RUN_8.read_bytes()
    for name, payload in (("cut.gzip", data[: len(data) // 2]), ("nofooter.gzip", data[:-4]),
                          ("garbled.gzip", data[:4] + bytes(reversed(data[4:-8])) + data[-8:])):
        path = tmp_path / name
        path.write_bytes(payload)
        read = pyprof.read_kernels(path)
        assert len(read.findings) == 1, name
        assert read.findings[0].severity == "error" and read.findings[0].kind == "corrupt"
        assert "Parquet" in read.findings[0].message
        assert read.table.empty


def test_parquet_with_nulls_missing_column_and_keys(tmp_path: Path) -> None:
    frame = pd.DataFrame({
        "Kernel": ["a", None, "c"], "Sil(ns)": [10, None, 0], "FLOPs": [1.0, None, 3.0],
        "Direction": ["fprop", "bprop", None], "Device": [0, 0, 1], "Stream": [7, 7, 8], "extra": [1, 2, 3],
    })
    path = tmp_path / "small.gzip"
    frame.to_parquet(path)
    read = pyprof.read_kernels(path)
    table = read.table
    assert len(table) == 3
    assert table["kernel"].isna().tolist() == [False, True, False]
    assert table["duration_ns"].isna().tolist() == [False, True, False]
    assert table["bytes"].isna().all()
    assert table["device"].tolist() == ["0", "0", "1"]
    assert "extra" in table.columns
    missing = [f for f in read.findings if f.kind == "missing-column"]
    assert len(missing) == 1 and "'Bytes'" in missing[0].message and "Parquet" in missing[0].message
    assert "zero-duration" in kinds(read)


def test_parquet_with_prof_keys_as_names(tmp_path: Path) -> None:
    path = tmp_path / "keys.parquet"
    pd.DataFrame({"kernel": ["k"], "sil": [5], "flops": [2.0], "bytes": [4.0]}).to_parquet(path)
    read = pyprof.read_kernels(path)
    assert read.findings == []
    assert read.table[["kernel", "duration_ns", "flops", "bytes"]].iloc[0].tolist() == ["k", 5, 2, 4]


def test_empty_parquet(tmp_path: Path) -> None:
    path = tmp_path / "empty.parquet"
    pd.DataFrame({"Kernel": pd.Series([], dtype=str), "Sil(ns)": pd.Series([], dtype="int64"),
                  "FLOPs": pd.Series([], dtype=float), "Bytes": pd.Series([], dtype=float)}).to_parquet(path)
    read = pyprof.read_kernels(path)
    assert read.table.empty and kinds(read) == ["no-rows"]


# --- text fixtures -----------------------------------------------------------------------------

def test_csv_fixture() -> None:
    read = pyprof.read_kernels(DATA / "resnet_csv.csv")
    table = read.table
    assert read.meta["format"] == "csv" and read.meta["header_line"] == 3
    assert table["kernel"].tolist() == ["nchwToNhwc3To4Kernel", "elementwise_kernel", "batch_norm_collect_statistics_kernel",
                                       "volta_fp16_s884cudnn_fp16_256x128_ldg8_relu_f2f_exp_small_nhwc2nchw_tn_v1",
                                       "zero_kernel", "cat_kernel"]
    assert table["flops"].tolist()[:4] == [0, 1, 411041792, 1644167168]  # "1.0" and "1644167168.0" read as numbers
    assert table["duration_ns"].tolist()[:4] == [376324, 2816, 929513, 160002]
    assert table["flops"].isna().tolist()[-1] and table["bytes"].isna().tolist()[-1]  # "-" is null, not 0
    assert table["grid"].tolist()[0] == "1568,1,64" and table["tc"].tolist()[3] == "1"
    by_kind = {f.kind: f for f in read.findings}
    assert by_kind["preamble"].count == 2
    assert by_kind["skipped-lines"].count == 1 and by_kind["skipped-lines"].line == 8
    assert by_kind["zero-duration"].count == 1
    assert "bad-number" not in by_kind and "missing-column" not in by_kind


def test_csv_subset_with_params_commas() -> None:
    read = pyprof.read_kernels(DATA / "subset.csv")
    assert read.findings == []
    table = read.table
    assert table["params"].tolist()[0].startswith("N=1,C=1,H=28") and table["params"].tolist()[0].endswith("fp32,")
    assert table["tid"].tolist() == [2089412416, 2089412416]
    assert table["flops"].tolist() == [90816.0, 21632.0] and table["bytes"].tolist() == [389376.0, 173056.0]
    assert table["device"].isna().all()


def test_missing_column_names_column_and_format() -> None:
    read = pyprof.read_kernels(DATA / "no_sil.csv")
    missing = [f for f in read.findings if f.kind == "missing-column"]
    assert len(missing) == 1
    assert "'Sil(ns)'" in missing[0].message and "prof.py --csv" in missing[0].message
    assert read.table["duration_ns"].isna().all() and read.table["flops"].tolist() == [2000]


def test_columnated_fixture() -> None:
    read = pyprof.read_kernels(DATA / "columnated.txt")
    table = read.table
    assert read.meta["format"] == "columnated" and read.meta["kernel_width"] == 19
    assert table["kernel"].tolist()[:3] == ["volta_fp16_s884cudn", "elementwise_kernel", "batch_norm_collect_"]
    assert pd.isna(table["kernel"].tolist()[3])  # an empty kernel name column, read by position
    assert table["duration_ns"].tolist() == [160002, 2816, 929513, 4000]
    assert table["device"].tolist() == ["0"] * 4 and table["stream"].tolist() == [7] * 4  # 'Dev', 'Str'
    assert table["block"].tolist()[0] == "256,1,1"
    assert set(kinds(read)) == {"preamble", "skipped-lines", "truncated-names"}


def test_plain_space_separated(tmp_path: Path) -> None:
    path = tmp_path / "plain.txt"
    path.write_text("Idx Direction Sub Module Op Kernel Params Sil(ns)\n"
                    "1 fprop 0 torch.nn.functional conv2d implicit_convolve_sgemm N=32,C=3,fp32, 6635900\n")
    read = pyprof.read_kernels(path)
    assert read.table["kernel"].tolist() == ["implicit_convolve_sgemm"]
    assert read.table["duration_ns"].tolist() == [6635900]
    assert {f.message.split("'")[1] for f in read.findings if f.kind == "missing-column"} == {"FLOPs", "Bytes"}


def test_bad_numbers_become_null_with_finding(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text('"Kernel","Sil(ns)","FLOPs","Bytes","Stream"\n"a","10","1e3","8","7"\n"b","20","-","-","7.5"\n')
    read = pyprof.read_kernels(path)
    assert read.table["flops"].isna().tolist() == [False, True]
    assert read.table["stream"].isna().tolist() == [False, True]
    assert [f.kind for f in read.findings] == ["bad-number"]


def test_gzipped_csv(tmp_path: Path) -> None:
    import gzip

    path = tmp_path / "k.csv.gz"
    path.write_bytes(gzip.compress((DATA / "subset.csv").read_bytes()))
    assert len(pyprof.read_kernels(path).table) == 2


# --- unreadable files --------------------------------------------------------------------------

@pytest.mark.parametrize(("payload", "kind"), [
    (b"", "empty"), (b"  \n\n", "empty"), (b"\x00\x01\x02binary\xff" * 50, "binary"),
    (b"PAR1 this is not really parquet", "corrupt"), (b"PAR1" + b"\x00" * 100 + b"PAR1", "corrupt"),
    (b"\x1f\x8b\x08\x00broken gzip", "corrupt"), (b"hello\nno header here\n", "no-header"),
])
def test_unreadable_is_one_error(tmp_path: Path, payload: bytes, kind: str) -> None:
    path = tmp_path / "bad.gzip"
    path.write_bytes(payload)
    read = pyprof.read_kernels(path)
    assert len(read.findings) == 1
    assert read.findings[0].severity == "error" and read.findings[0].kind == kind
    assert read.table.empty and tuple(read.table.columns) == KERNEL_COLUMNS


def test_missing_file_and_folder(tmp_path: Path) -> None:
    assert kinds(pyprof.read_kernels(tmp_path / "nope.csv")) == ["unreadable"]
    assert kinds(pyprof.read_kernels(tmp_path)) == ["unreadable"]


# --- properties --------------------------------------------------------------------------------

HEADER = '"Kernel","Op","Sil(ns)","FLOPs","Bytes","Device","Stream"'
GOOD_ROW = '"k{i}","conv2d","{sil}","{flops}.0","{b}","0","7"'


@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=400))
def test_random_text_never_raises(tmp_path: Path, text: str) -> None:
    path = tmp_path / "random.txt"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    read = pyprof.read_kernels(path)
    assert isinstance(read.table, pd.DataFrame)
    assert tuple(read.table.columns[: len(KERNEL_COLUMNS)]) == KERNEL_COLUMNS


@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300))
def test_random_bytes_never_raise(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "random.bin"
    path.write_bytes(data)
    read = pyprof.read_kernels(path)
    assert read.table.empty or read.meta.get("format") in {"csv", "columnated"}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n_good=st.integers(0, 20), noise=st.lists(st.text(max_size=60).filter(lambda s: len(s.splitlines()) <= 1 and "\x00" not in s), max_size=10),
       seed=st.integers(0, 10**6), mangle=st.lists(st.integers(0, 19), max_size=5))
def test_mangled_csv_accounts_for_every_line(tmp_path: Path, n_good: int, noise: list[str], seed: int, mangle: list[int]) -> None:
    rng = random.Random(seed)
    good = [GOOD_ROW.format(i=i, sil=rng.randint(1, 10**6), flops=rng.randint(0, 10**9), b=rng.randint(0, 10**6)) for i in range(n_good)]
    broken = set()
    for m in mangle:  # drop a field from some rows: they must be skipped, never misread
        if m < len(good) and m not in broken:
            good[m] = good[m].rsplit(",", 1)[0]
            broken.add(m)
    body = good + [line for line in noise]
    rng.shuffle(body)
    path = tmp_path / "mangled.csv"
    path.write_text("\n".join(["NVTX noise before the header", HEADER, *body]) + "\n", encoding="utf-8", errors="surrogatepass")
    read = pyprof.read_kernels(path)
    assert read.meta["format"] == "csv"
    skipped = sum(f.count for f in read.findings if f.kind in {"skipped-lines", "repeated-header"})
    nonblank = [line for line in body if line.strip()]
    assert len(read.table) + skipped == len(nonblank)
    assert len(read.table) >= n_good - len(broken)  # every intact row is kept
    names = set(read.table["kernel"].dropna())
    assert {f"k{i}" for i in range(n_good) if i not in broken} <= names
    assert not (read.table["duration_ns"].dropna() < 0).any()
