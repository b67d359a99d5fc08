"""Fake /proc and cgroup trees, and a fake Slurm, for the scope tests."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from gpuscope.collectors import slurm


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def proc(root: Path, pid: int, cgroup: str = "0::/\n", ppid: int = 1, uid: int = 1000, env: dict[str, str] | None = None, comm: str = "python") -> None:
    write(root, f"proc/{pid}/cgroup", cgroup)
    write(root, f"proc/{pid}/stat", f"{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194304 100 0 0 0 5 1 0 0 20 0 1 0 100 1000 50\n")
    write(root, f"proc/{pid}/status", f"Name:\t{comm}\nPid:\t{pid}\nPPid:\t{ppid}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n")
    (root / f"proc/{pid}/environ").write_bytes(b"".join(f"{k}={v}\0".encode() for k, v in (env or {}).items()))


def v2_job(root: Path, jobdir: str, *, peak: bool = True, cpus: str = "2-3", limit: str = "1073741824", leaves: dict[str, str] | None = None) -> Path:
    """A v2 job directory below `jobdir` (relative to /sys/fs/cgroup) with the files Slurm's job cgroup has."""
    d = root / "sys/fs/cgroup" / jobdir
    write(root, f"sys/fs/cgroup/{jobdir}/cpuset.cpus.effective", cpus + "\n")
    write(root, f"sys/fs/cgroup/{jobdir}/memory.max", limit + "\n")
    write(root, f"sys/fs/cgroup/{jobdir}/memory.current", "314572800\n")
    write(root, f"sys/fs/cgroup/{jobdir}/memory.stat", "anon 209715200\nfile 104857600\nkernel 1048576\nshmem 4096\n")
    write(root, f"sys/fs/cgroup/{jobdir}/cgroup.procs", "")  # v2: no processes in inner nodes
    if peak:
        write(root, f"sys/fs/cgroup/{jobdir}/memory.peak", "419430400\n")
    for leaf, procs in (leaves or {"step_0/user/task_0": "200\n201\n", "step_batch/user/task_0": "199\n", "step_0/slurm": "150\n"}).items():
        write(root, f"sys/fs/cgroup/{jobdir}/{leaf}/cgroup.procs", procs)
    return d


class Fake:
    """Answers scontrol/sacct calls from a table; records what was asked."""

    def __init__(self, show: str = "", listpids: str = "", show_rc: int = 0, show_err: str = "") -> None:
        self.show, self.listpids, self.show_rc, self.show_err = show, listpids, show_rc, show_err
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str]) -> slurm.CommandResult:
        self.calls.append(list(argv))
        if argv[:3] == ["scontrol", "show", "job"]:
            return slurm.CommandResult(self.show_rc, self.show, self.show_err)
        if argv[:2] == ["scontrol", "listpids"]:
            return slurm.CommandResult(0, self.listpids, "")
        return slurm.CommandResult(1, "", f"{argv[0]}: unknown")
