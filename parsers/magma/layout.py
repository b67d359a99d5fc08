"""Provides the MAGMA format knowledge: what a column header line means, and what the lines
that name the tester, its options, banner and device say. A data row is read through the header
above it, never by fixed positions; adding a tester means, at most, a word in the tables below
and a fixture test (shared/research/formats-scaling.md §1 has the testers' printf formats).

    % BatchCount     M     N     K   MAGMA Gflop/s (ms)   CPU Gflop/s (ms)   MAGMA error
             300    64    64    63     94.60 (   0.26)     ---   (  ---  )     ---
    sizes: batch_count m n k;  pairs: magma (ms), cpu (ms);  errors: magma_error;  status word optional
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

MARKERS = (b"MAGMA ", b"Gflop/s", b"GFlop/s", b"START OF JOBSPEC", b"Assert failed")
"""A file met in a folder is read when it holds one of these (a banner, a table header, a Flux
trailer, the assertions of a run that printed nothing else). Recognition among all kinds asks
for more (`kind.match`): a README that mentions MAGMA stays a README. Declared with the
layouts, not in the line parser: recognising a file must not import the MAGMA reader."""


def mentions_magma(data: bytes) -> bool:
    return any(m in data for m in MARKERS)


SIZE_WORDS = {"batchcount": "batch_count", "m": "m", "n": "n", "k": "k", "nrhs": "nrhs"}
"""Header words of the leading integer columns (the problem size is M x N x K; NRHS, the
right-hand sides of testing_?gesv, is a column of its own)."""
IMPLS = {"magma": "magma", "gpu": "magma",  # LAPACK-style testers call MAGMA's own result "GPU"
         "cublas": "cublas", "hipblas": "hipblas", "rocblas": "rocblas", "cpu": "cpu", "lapack": "cpu", "atomics": "atomics"}
"""The word before `Gflop/s` (lower case) -> implementation name in the tidy table's `impl`."""
VENDOR_BLAS = ("cublas", "hipblas", "rocblas")
GFLOPS = re.compile(r"(\S+)\s+G[Ff]lop/s(?:\s*\(\s*(ms|sec|s)\s*\))?")
"""One implementation's column(s): `MAGMA Gflop/s (ms)` (a pair), `CPU GFlop/s (sec)`, or a
lone `Atomics Gflop/s` (testing_dsymv: Gflop/s only, no time)."""
TIME = re.compile(r"(\S+)\s+[Tt]ime\s*\(\s*(ms|sec|s)\s*\)")
"""One implementation's time column of a time-only tester (eigen and singular value solvers
print no Gflop/s): `CPU Time (sec)   GPU Time (sec)`."""
STATUS_WORDS = ("ok", "failed")
"""The status word at the end of a row (MAGMA prints nothing else: `okay ? "ok" : "failed"`)."""
USAGE = re.compile(r"Usage:\s+(\S+)")
COMMAND = re.compile(r"(?:^|[\s/])testing_(\w+)(?=\s|$)")
"""The tester's name: `% Usage: .../testing_dgemm_vbatched [options]`, or an echoed command
line (`numactl ... ./testing_dgetrf_gpu -n 1024`, run_tests.py's lines)."""
BANNER = re.compile(r"^%?\s*MAGMA (\d+\.\d+\.\d+)")
"""A process's first line: `% MAGMA 2.8.0 ...`; MAGMA 1.x prints `MAGMA 1.5.0 compiled for ...`."""
DEVICE = re.compile(r"^%?\s*device (\d+): (.+?), ([\d.]+) MHz clock")
OPTION = re.compile(r"(\w+)\s*=\s*([^,=]+?)\s*(?:,|$)")
"""Options printed before the header: `% transA = No transpose, transB = Transpose`, `% uplo = Lower`."""
OPTION_NUMBER = re.compile(r"\b(ngpu|version)\s+(\d+)")
"""`% ngpu 1, version 2` (testing_dgetrf), `% version 1`, MAGMA 1.x's `ngpu 1`."""


@dataclass(frozen=True)
class Layout:
    """What each token of a data row under one header means."""

    header: str
    sizes: tuple[str, ...]
    """The leading integer columns: ('batch_count', 'm', 'n', 'k'), ('m', 'n'), ('n',)."""
    impls: tuple[tuple[str, bool, float], ...]
    """Per implementation in row order: (impl, has a time column, time unit in ms)."""
    errors: tuple[str, ...]
    """Error column names in row order: 'magma_error', 'cublas_error', or 'check_error' for a
    formula such as `|PA-LU|/(N*|A|)` (LAPACK-style testers check MAGMA's result with it)."""
    time_only: bool = False
    """Each implementation prints a time and no Gflop/s (testing_dsyevd, testing_dgeev)."""

    @property
    def width(self) -> int:
        """Fields in a row without its status word (`(` and `)` are separators)."""
        return len(self.sizes) + (len(self.impls) if self.time_only else sum(2 if timed else 1 for _, timed, _ in self.impls)) + len(self.errors)

    @property
    def places(self) -> list[tuple[int | None, int | None]]:
        """The field of each implementation's Gflop/s and time in a row (None: not printed)."""
        out, at = [], len(self.sizes)
        for _, timed, _ in self.impls:
            out.append((None, at) if self.time_only else (at, at + 1 if timed else None))
            at += 1 if self.time_only or not timed else 2
        return out


def fit_layout(layout: Layout, row: str) -> Layout:
    """The layout as a tester's rows really print it, from a typical row: some headers name
    fewer columns than the rows hold (testing_dsymv's says `Atomics Gflop/s` over `Gflop/s (ms)`,
    and three errors under two names). Times are the parenthesised numbers; errors are what is
    left before the status word, named as the header names them, except where a header is known
    to name them in another order (testing_?symv: `MAGMA error  Atomics  CUBLAS`)."""
    tokens = row.replace("(", " ").replace(")", " ").split()
    if not tokens:
        return layout
    impls = layout.impls
    if not layout.time_only and row.count("(") == len(impls) and not all(timed for _, timed, _ in impls):
        impls = tuple((impl, True, to_ms if timed else 1.0) for impl, timed, to_ms in impls)
    fitted = replace(layout, impls=impls, errors=())
    n_errors = len(tokens) - (tokens[-1] in STATUS_WORDS) - fitted.width
    errors = layout.errors
    names = [impl for impl, _, _ in impls]
    if "atomics" in names and n_errors == 3:  # testing_?symv / ?hemv print MAGMA's, the vendor BLAS's, then the atomics error
        vendor = next((impl for impl in names if impl in VENDOR_BLAS), "cublas")
        errors = ("magma_error", f"{vendor}_error", "atomics_error")
    elif n_errors >= 0 and n_errors != len(errors):
        errors = errors[:n_errors] + tuple(f"error_{i + 1}" for i in range(len(errors), n_errors))
    return replace(fitted, errors=errors)


def _error_name(label: str) -> str:
    words = label.lower().replace("error", " ").split()
    impl = IMPLS.get(words[0]) if len(words) == 1 else None
    return f"{impl}_error" if impl else "check_error"


@lru_cache(maxsize=256)
def parse_header(line: str) -> Layout | None:
    """The layout of a column header line (with or without its `%`), or None if it is not one."""
    body = line.strip().lstrip("%#").strip()
    found = list(GFLOPS.finditer(body))
    time_only = not found  # an eigen or singular value tester: times only
    found = found or list(TIME.finditer(body))
    words = body[: found[0].start()].split() if found else []
    if not words or any(w.lower() not in SIZE_WORDS for w in words):
        return None
    if any(body[a.end() : b.start()].strip() for a, b in zip(found, found[1:])):  # only spaces between two implementations
        return None
    impls = tuple((IMPLS.get(m.group(1).lower(), m.group(1).lower()), time_only or m.group(2) is not None, 1.0 if m.group(2) == "ms" else 1000.0)
                  for m in found)
    labels = [p for p in re.split(r"\s{2,}", body[found[-1].end() :].strip()) if p]  # two spaces part errors; a formula has single ones
    errors: list[str] = []
    for name in map(_error_name, labels):
        errors.append(f"{name}_{len(errors)}" if name in errors else name)
    return Layout(line.strip(), tuple(SIZE_WORDS[w.lower()] for w in words), impls, tuple(errors), time_only)


SIZE_OPTION = re.compile(r"(?:^|\s)(?:-N\s*|--range[\s=]+)(\S+)")


def asked_sizes(line: str) -> tuple[int, ...]:
    """The sizes a tester's command line asks for, in the order MAGMA runs them (repeats included):
    the first number of each `-N m[,n[,k]]`, every size of each `--range start:stop:step`."""
    sizes: list[int] = []
    for found in SIZE_OPTION.finditer(line):
        text = found.group(1)
        try:
            if ":" in text:
                start, stop, step = (int(x) for x in text.split(":")[:3])
                if step <= 0 or (stop - start) // step > 100_000:  # not a sweep MAGMA would run
                    return ()
                sizes.extend(range(start, stop + 1, step))
            else:
                sizes.append(int(text.split(",")[0]))
        except ValueError:
            return ()
    return tuple(sizes)


def tester_from(line: str) -> str | None:
    """The tester named by a usage or command line, without `testing_` (`dgemm_vbatched`)."""
    usage = USAGE.search(line)
    text = usage.group(1) if usage else line
    found = COMMAND.search(text if usage is None else "/" + text.rsplit("/", 1)[-1])
    return found.group(1) if found else None


def options_from(line: str) -> dict[str, str]:
    """Options a line before the header shows (`uplo = Lower` -> {'uplo': 'Lower'}; MAGMA 1.x
    eigensolvers print `using: jobz = No vectors, uplo = Lower`)."""
    body = line.strip().lstrip("%").strip()
    body = body[len("using:"):] if body.startswith("using:") else body
    pairs = OPTION.findall(body) + OPTION_NUMBER.findall(body)
    return {name: value.strip() for name, value in pairs if name != "check"}  # whether results were checked: not what ran
