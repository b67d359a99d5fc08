"""Builds a large MAGMA result tree from the 15 real study files, for benchmarking.

The tree looks like the real study (`<cloud>/<env>/gpu/size<N>/results/magma/<name>.out`)
so path-derived context (environment, nodes) is exercised. Two kinds of file:

* replicas: a real file with every Gflop/s and ms value on data rows scaled by a small
  random factor, printed back with the tester's own `%7.2f (%7.2f)` layout. Everything else
  (banners, Flux JSON trailers, `Start time:`/`End time:`, `failed` rows, the
  Assert-only file, the cancelled runs) is kept byte for byte, because those are the lines
  a parser must step over and they cost time too.
* merged: 8-32 copies of one process's block, written the way Slurm+mpirun on CycleCloud
  writes them: banner lines of different ranks interleaved in short bursts, then the rows,
  with the rows of one problem size from all ranks adjacent.

Everything random comes from one `random.Random(seed)`, so a seed gives the same bytes.
Run directly to build a tree: `python bench/make_magma_tree.py DEST [--files N] [--seed S]`.
"""

from __future__ import annotations

import argparse
import random
import re
from collections import defaultdict
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
# Real data lives beside the repository (`../shared`), never at an absolute path.
REAL_ROOT = REPO_ROOT.parent / "shared" / "data" / "magma" / "experiments"

ENVIRONMENTS = ("aws/eks", "azure/aks", "azure/cyclecloud", "google/gke", "google/compute-engine")
SIZES = (4, 8, 16, 32)
MERGED_ENV = "azure/cyclecloud"  # only the Slurm+mpirun environment interleaves rank output

# One "perf (time)" pair as printf wrote it: `   %7.2f (%7.2f)`. Group 1 holds the separator
# plus the field's left padding; the padding is recomputed so the layout stays exact.
PAIR = re.compile(r"( *)(\d+\.\d\d) \( *(\d+\.\d\d)\)")
DEVICE0 = re.compile(r"^% device 0: ")
DATE = re.compile(r"^% (?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ")
BANNER_PREFIXES = ("% MAGMA", "% Compiled", "% CUDA runtime", "% device 0: ")


def real_files(root: Path = REAL_ROOT) -> dict[str, list[tuple[str, list[str]]]]:
    """Real `.out` files per environment, as (file name, lines with their newlines)."""
    found: dict[str, list[tuple[str, list[str]]]] = defaultdict(list)
    for path in sorted(root.rglob("*.out")):
        env = "/".join(path.relative_to(root).parts[:2])
        found[env].append((path.name, path.read_text().splitlines(keepends=True)))
    missing = [e for e in ENVIRONMENTS if e not in found]
    if missing:
        raise FileNotFoundError(f"no real MAGMA files for {', '.join(missing)} under {root}")
    return found


def is_data_row(line: str) -> bool:
    """Rows start with an integer; `8.411s: job.exception` lines have no `x (y)` pair."""
    return line[:1] != "%" and line.lstrip()[:1].isdigit() and " (" in line


def perturb_row(line: str, rng: random.Random) -> str:
    """Scale each Gflop/s by f and its time by 1/f (Gflop/s = flops / time stays true)."""

    def scaled(match: re.Match[str]) -> str:
        pad, gflops, ms = match.groups()
        # printf pads to 7 characters and overflows silently beyond; keep the separator.
        separator = len(pad) + len(gflops) - max(7, len(gflops))
        f = rng.uniform(0.92, 1.08)
        return " " * separator + f"{float(gflops) * f:7.2f} ({float(ms) / f:7.2f})"

    return PAIR.sub(scaled, line)


def replica(lines: list[str], rng: random.Random) -> str:
    return "".join(perturb_row(x, rng) if is_data_row(x) else x for x in lines)


def banner_key(line: str) -> str | None:
    """Which banner line this is (the lines that differ between clusters), else None."""
    if DATE.match(line):
        return "date"
    return next((p for p in BANNER_PREFIXES if line.startswith(p)), None)


def process_block(lines: list[str], banner_source: list[str]) -> list[str]:
    """Banner + preamble of one process: taken from the first process of a Flux file
    (contiguous there), with the banner lines swapped for the CycleCloud file's own (its
    CUDA runtime, date) and `% device 0` expanded to the 8 devices each CycleCloud rank saw."""
    start = next(i for i, x in enumerate(lines) if x.startswith("% MAGMA"))
    end = next(i for i, x in enumerate(lines) if x.startswith("%===") and i > start)
    own: dict[str, str] = {}
    for line in banner_source:
        key = banner_key(line)
        if key:
            own.setdefault(key, line)
    block: list[str] = []
    for line in lines[start : end + 1]:
        line = own.get(banner_key(line) or "", line)
        if DEVICE0.match(line):
            block += [DEVICE0.sub(f"% device {d}: ", line) for d in range(8)]
        else:
            block.append(line)
    return block


def row_pools(files: dict[str, list[tuple[str, list[str]]]]) -> dict[str, dict[str, list[str]]]:
    """Real data rows per tester, per size (the printed integer columns), in sweep order."""
    pools: dict[str, dict[str, list[str]]] = defaultdict(dict)
    for env_files in files.values():
        for _, lines in env_files:
            tester = tester_of(lines)
            for line in lines:
                pair = PAIR.search(line) if tester and is_data_row(line) else None
                if pair:
                    size = " ".join(line[: pair.start()].split())
                    pools[tester].setdefault(size, []).append(line)
    return pools


def tester_of(lines: list[str]) -> str | None:
    for line in lines:
        if line.startswith("% Usage: "):
            return line.split()[2].rsplit("/", 1)[-1]
    return None


def merged(block: list[str], pool: dict[str, list[str]], ranks: int, rng: random.Random) -> str:
    """`ranks` processes' output as mpirun merges it (see module docstring)."""
    streams = [list(block) for _ in range(ranks)]
    out: list[str] = []
    while streams:
        # A rank writes a short burst before another gets in: `% device 7` of one rank can
        # land between another rank's banner lines, whole lines are never torn.
        stream = rng.choice(streams)
        for _ in range(rng.randint(1, 6)):
            if stream:
                out.append(stream.pop(0))
        if not stream:
            streams.remove(stream)
    for size in pool:  # dict order = sweep order of the real files
        out += [perturb_row(rng.choice(pool[size]), rng) for _ in range(ranks)]
    start = rng.randrange(1_725_000_000, 1_726_000_000)
    return f"Start time: {start}\n" + "".join(out) + f"End time: {start + rng.randint(12, 40)}\n"


def file_name(template: str, nodes: int, iteration: int, rng: random.Random) -> str:
    """A name in the template's style with a fresh job id; `iteration` keeps it unique."""
    if re.match(r"magma-\d+n-", template) or template == "merged":  # Slurm: magma-4n-53-iter-1
        return f"magma-{nodes}n-{rng.randrange(100, 1000)}-iter-{iteration}.out"
    stem = re.sub(r"^magma-\d+-", f"magma-{nodes}-", template)  # Flux: ...-iter-1-<jobid>.out
    return re.sub(r"iter-\d+-\d+\.out$", f"iter-{iteration}-{rng.randrange(10**12, 10**13)}.out", stem)


def make_tree(dest: Path | str, n_files: int = 360, seed: int = 0, real_root: Path = REAL_ROOT) -> tuple[int, int]:
    """Write `n_files` result files under `dest`; return (files written, total bytes).

    Environments and sizes are dealt round-robin so every (environment, size) cell gets
    files; each environment's real files are used in turn, so every real quirk (failed
    rows, cancelled runs, the Assert-only file) appears once n_files >= 64. Half of the
    cyclecloud files are merged-rank files, the other half replicas of the real ones.
    """
    dest = Path(dest)
    rng = random.Random(seed)
    files = real_files(real_root)
    pools = row_pools(files)
    cyclecloud = files[MERGED_ENV][0][1]
    blocks = {tester_of(lines): process_block(lines, cyclecloud) for _, lines in files["aws/eks"]}
    testers = sorted(blocks)  # testing_dgemm, testing_dgemm_vbatched
    replicas: dict[str, int] = defaultdict(int)
    per_dir: dict[Path, int] = defaultdict(int)
    total = 0
    for i in range(n_files):
        env, turn = ENVIRONMENTS[i % len(ENVIRONMENTS)], i // len(ENVIRONMENTS)
        nodes = SIZES[turn % len(SIZES)]
        folder = dest / env / "gpu" / f"size{nodes}" / "results" / "magma"
        per_dir[folder] += 1
        # Merged and replica alternate, shifted by one each sweep of sizes, so every size
        # gets both kinds (plain alternation would tie merged files to sizes 4 and 16).
        if env == MERGED_ENV and (turn + turn // len(SIZES)) % 2 == 0:
            # The study ran vbatched on CycleCloud; a quarter are plain dgemm for variety.
            tester = testers[1] if rng.random() < 0.75 else testers[0]
            text = merged(blocks[tester], pools[tester], rng.randint(8, 32), rng)
            name = file_name("merged", nodes, per_dir[folder], rng)
        else:
            # The next real file after each full sweep of sizes: every real file lands in
            # every size folder, instead of one file being tied to one size.
            templates = files[env]
            template, lines = templates[(replicas[env] // len(SIZES)) % len(templates)]
            replicas[env] += 1
            text = replica(lines, rng)
            name = file_name(template, nodes, per_dir[folder], rng)
        folder.mkdir(parents=True, exist_ok=True)
        data = text.encode()
        (folder / name).write_bytes(data)
        total += len(data)
    return n_files, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path)
    parser.add_argument("--files", type=int, default=360)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    count, size = make_tree(args.dest, args.files, args.seed)
    print(f"wrote {count} files, {size / 1e6:.1f} MB under {args.dest}")


if __name__ == "__main__":
    main()
