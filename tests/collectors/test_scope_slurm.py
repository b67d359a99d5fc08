"""`scontrol show job -d` of several Slurm versions (tests/data/slurm/SOURCES.md says where each
comes from), listpids, and the failures a watch view must survive: no scontrol, a hanging
scontrol, a job id that does not exist."""

from __future__ import annotations

import os
import stat
import subprocess
import time
from pathlib import Path
from typing import Sequence

import pytest

from gpuscope.collectors import cgroups, scope, slurm
from fake_scope import Fake, proc, v2_job, write

DATA = Path(__file__).parent.parent / "data" / "slurm"
GiB, MiB = 1 << 30, 1 << 20

VERSIONS = {
    # file: (job id, host, user, uid, state, NumCPUs, this node's CPU_IDs, node Mem, GPU IDX, memory limit from the job record)
    "show_job_d_18.08.txt": ("555", "node1", "carol", 1003, "RUNNING", 4, (0, 1, 2, 3), 12 * GiB, (1,), 12 * GiB),
    "show_job_d_22.05_debian12.txt": ("1", "vm", "root", 0, "RUNNING", 2, (0, 1), 500 * MiB, (), 500 * MiB),
    "show_job_d_23.02.txt": ("4242", "gpu02", "alice", 1000, "RUNNING", 16, (4, 5, 6, 7, 36, 37, 38, 39), 32 * GiB, (2, 3), 32 * GiB),
    "show_job_d_24.11.txt": ("13", "server2", "qwx", 1001, "RUNNING", 8, tuple(range(8)), 10 * GiB, (0,), 10 * GiB),
    "show_job_d_26.05.txt": ("77", "h100n07", "bob", 1002, "RUNNING", 4, (12, 13, 14, 15), 32 * GiB, (3, 4), 32 * GiB),
}


@pytest.mark.parametrize("name", VERSIONS)
def test_show_job_versions(name: str) -> None:
    job, host, user, uid, state, ncpu, cpu_ids, mem, idx, _limit = VERSIONS[name]
    info = slurm.parse_show_job((DATA / name).read_text(), job)
    assert (info.job_id, info.user, info.uid, info.state, info.num_cpus) == (job, user, uid, state, ncpu)
    alloc = slurm.node_alloc(info, host)
    assert alloc is not None and (alloc.cpu_ids, alloc.mem_bytes, alloc.gpu_indices) == (cpu_ids, mem, idx)


def test_version_specific_fields() -> None:
    old = slurm.parse_show_job((DATA / "show_job_d_18.08.txt").read_text())
    assert old.mem_per_cpu == 3 * GiB and old.tres_mem == 12 * GiB  # TRES= form
    new = slurm.parse_show_job((DATA / "show_job_d_23.02.txt").read_text())
    assert new.mem_per_cpu == 4 * GiB and new.tres_mem == 64 * GiB and new.num_nodes == 2  # AllocTRES=
    assert slurm.node_alloc(new, "gpu03") is None  # a node that is not in the job
    assert slurm.parse_show_job((DATA / "show_job_d_26.05.txt").read_text()).sluid == "sEKNKTV3WPV500"
    assert slurm.parse_show_job((DATA / "show_job_d_24.11.txt").read_text()).sluid is None


def test_listpids_real_output() -> None:
    out = (DATA / "listpids_22.05_debian12.txt").read_text()
    pids, problem = slurm.list_pids(lambda argv: slurm.CommandResult(0, out, ""), "1")
    assert (pids, problem) == ({18115, 18117}, None)


@pytest.mark.parametrize(("text", "value"), [("10G", 10 * GiB), ("500M", 500 * MiB), ("3000", 3000 * MiB), ("1.5G", 3 * GiB // 2), ("2T", 2048 * GiB), ("junk", None), (None, None)])
def test_mem_bytes(text: str | None, value: int | None) -> None:
    assert slurm.mem_bytes(text) == value


def test_hostlist() -> None:
    assert slurm.expand_hostlist("cn[001-003,007],gpu1") == ["cn001", "cn002", "cn003", "cn007", "gpu1"]
    assert slurm.expand_hostlist("r[1-2]n[1-2]") == ["r1n1", "r1n2", "r2n1", "r2n2"]




def test_missing_scontrol() -> None:
    def missing(argv: Sequence[str]) -> slurm.CommandResult:
        raise FileNotFoundError(2, "No such file or directory", argv[0])

    info, problem = slurm.show_job(missing, "42")
    assert info is None and problem == "scontrol not found: Slurm client tools are not installed on this node"
    s = scope.resolve_scope(job="42", root="/nonexistent-root", env={}, runner=missing)
    assert s.kind == "job" and "scontrol not found" in s.problems[0]


def test_invalid_job_id() -> None:
    fake = Fake(show_rc=1, show_err="slurm_load_jobs error: Invalid job id specified\n")
    s = scope.resolve_scope(job=999999, root="/nonexistent-root", env={}, runner=fake)
    assert s.problems == ("Slurm job 999999 does not exist (finished jobs are forgotten after MinJobAge, 300 s by default)",)
    assert fake.calls == [["scontrol", "show", "job", "-d", "999999"]]  # nothing else asked


@pytest.mark.parametrize("bad", ["--all", "12;rm", "", "1 2"])
def test_malformed_job_id_never_reaches_a_command(bad: str) -> None:
    fake = Fake()
    s = scope.resolve_scope(job=bad, root="/nonexistent-root", env={}, runner=fake)
    assert fake.calls == [] and "is not a Slurm job id" in s.problems[0]


def fake_command(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def test_hanging_scontrol_times_out_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A child `sleep` holds the pipes open: killing only the shell would leave us waiting 30 s.
    fake_command(tmp_path, "scontrol", f'sleep 30 &\necho $! > "{tmp_path}/child"\nwait\n')
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    info, problem = slurm.show_job(slurm.SubprocessRunner(timeout=0.5), "42")  # the message says the timeout fired
    assert info is None and problem == "`scontrol show job -d 42` did not answer within 0.5 s: slurmctld may be down or overloaded"
    child = int((tmp_path / "child").read_text())
    deadline = time.monotonic() + 30  # a liveness bound for the kill to land, not a timing claim
    while time.monotonic() < deadline and Path(f"/proc/{child}").exists() and "Z" not in Path(f"/proc/{child}/stat").read_text().rpartition(")")[2].split()[0]:
        time.sleep(0.05)
    state = Path(f"/proc/{child}/stat").read_text().rpartition(")")[2].split()[0] if Path(f"/proc/{child}").exists() else "gone"
    assert state in ("gone", "Z")  # the grandchild was killed with the group


def test_hanging_scontrol_in_resolve_scope(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_command(tmp_path, "scontrol", "exec sleep 30\n")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    s = scope.resolve_scope(job="42", root=tmp_path, env={}, runner=slurm.SubprocessRunner(timeout=0.3))
    assert any("did not answer within 0.3 s" in p for p in s.problems)


def test_runner_passes_argv_and_c_locale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_command(tmp_path, "scontrol", 'echo "$LC_ALL|$1|$2"\nexit 3\n')
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    result = slurm.SubprocessRunner()(["scontrol", "a b", "$(x)"])
    assert (result.returncode, result.stdout.strip()) == (3, "C|a b|$(x)")  # no shell between us and it
    _, problem = slurm.run(slurm.SubprocessRunner(), ["scontrol", "x"])
    assert problem == "`scontrol x` failed: C|x|"


def test_job_scope_from_scontrol_cgroup_and_env(tmp_path: Path) -> None:
    """24.x job on server2: CPU count from scontrol, kernel cpu ids and limit from the cgroup,
    GPU index from IDX paired with the UUID the job's own environment carries."""
    write(tmp_path, "proc/sys/kernel/hostname", "server2\n")
    v2_job(tmp_path, "system.slice/slurmstepd.scope/job_13", cpus="16-23", limit="10737418240", leaves={"step_batch/user/task_0": "4000\n"})
    proc(tmp_path, 4000, "0::/system.slice/slurmstepd.scope/job_13/step_batch/user/task_0\n", env={"CUDA_VISIBLE_DEVICES": "GPU-11111111-2222-3333-4444-555555555555", "SLURM_JOB_ID": "13"})
    fake = Fake(show=(DATA / "show_job_d_24.11.txt").read_text(), listpids="PID      JOBID    STEPID   LOCALID GLOBALID\n4000     13       batch    0       0\n")
    s = scope.resolve_scope(job="13", root=tmp_path, env={}, runner=fake)
    assert s.problems == ()
    assert s.label == "job 13 (qwx, RUNNING)" and s.user == "qwx" and s.pids == {4000}
    assert s.cpus_allocated == 8 and s.cpu_ids == tuple(range(16, 24))  # kernel ids, not Slurm's abstract 0-7
    assert s.memory_limit == 10 * GiB
    assert [(g.index, g.uuid) for g in s.gpus] == [(0, "GPU-11111111-2222-3333-4444-555555555555")]
    assert "IDX" in s.gpus[0].evidence or "GRES=" in s.gpus[0].evidence
    assert any(e.startswith("cpus: 8 on this node from scontrol") for e in s.evidence)


def test_linuxproc_job_uses_listpids_and_scontrol(tmp_path: Path) -> None:
    """Like the CI cluster: no job cgroup, processes from listpids, allocation from scontrol."""
    write(tmp_path, "proc/sys/kernel/hostname", "vm\n")
    proc(tmp_path, 18115, ppid=18109)
    proc(tmp_path, 18117, ppid=18115)
    fake = Fake(show=(DATA / "show_job_d_22.05_debian12.txt").read_text(), listpids=(DATA / "listpids_22.05_debian12.txt").read_text())
    s = scope.resolve_scope(job="1", root=tmp_path, env={}, runner=fake)
    assert s.pids == {18115, 18117} and s.cgroup is None
    assert (s.cpus_allocated, s.cpu_ids, s.memory_limit, s.memory_used) == (2, (0, 1), 500 * MiB, None)
    assert any("abstract" in e for e in s.evidence) and any("no job cgroup" in e for e in s.evidence)
    proc(tmp_path, 18200, ppid=18117)  # started after resolve: refresh follows the tree, no scontrol
    n = len(fake.calls)
    assert scope.refresh(s, root=tmp_path).pids == {18115, 18117, 18200} and len(fake.calls) == n


def test_job_on_another_node_and_pending(tmp_path: Path) -> None:
    write(tmp_path, "proc/sys/kernel/hostname", "login01\n")
    text = (DATA / "show_job_d_23.02.txt").read_text()
    s = scope.resolve_scope(job="4242", root=tmp_path, env={}, runner=Fake(show=text))
    assert any("runs on gpu[01-02], not on this node (login01)" in p for p in s.problems)
    assert s.cpus_allocated is None  # two nodes, none of them this one: no per-node figure
    pending = scope.resolve_scope(job="4242", root=tmp_path, env={}, runner=Fake(show=text.replace("JobState=RUNNING", "JobState=PENDING")))
    assert any("PENDING: it has no processes yet" in p for p in pending.problems)


def test_mig_uuids_from_26_05(tmp_path: Path) -> None:
    write(tmp_path, "proc/sys/kernel/hostname", "h100n07\n")
    v2_job(tmp_path, "system.slice/slurmstepd.scope/sEKNKTV3WPV500", cpus="12-15", leaves={"step_0/user/task_0": "700\n"})
    mig = "MIG-4b5e7f2a-1c3d-5e6f-8a9b-0c1d2e3f4a5b,MIG-9f8e7d6c-5b4a-3c2d-1e0f-a1b2c3d4e5f6"
    env = {"SLURM_JOB_ID": "77", "SLURM_JOB_SLUID": "sEKNKTV3WPV500", "CUDA_VISIBLE_DEVICES": mig}
    # scontrol is on PATH but listpids gives nothing: the SLUID from the environment finds the cgroup.
    s = scope.resolve_scope(root=tmp_path, env=env, runner=Fake(show=(DATA / "show_job_d_26.05.txt").read_text()), self_pid=12345)
    assert s.cgroup == "/sys/fs/cgroup/system.slice/slurmstepd.scope/sEKNKTV3WPV500" and s.pids == {700}
    assert [g.uuid for g in s.gpus] == mig.split(",") and all(g.index is None for g in s.gpus)


def test_sacct_sluid_only_when_needed(tmp_path: Path) -> None:
    v2_job(tmp_path, "system.slice/slurmstepd.scope/sEKNKTV3WPV500", leaves={"step_0/user/task_0": "700\n"})
    show = (DATA / "show_job_d_24.11.txt").read_text().replace("JobId=13", "JobId=77")

    class WithSacct(Fake):
        def __call__(self, argv: Sequence[str]) -> slurm.CommandResult:
            if argv[0] == "sacct":
                self.calls.append(list(argv))
                return slurm.CommandResult(0, "sEKNKTV3WPV500\n", "")
            return super().__call__(argv)

    fake = WithSacct(show=show)
    s = scope.resolve_scope(job="77", root=tmp_path, env={}, runner=fake)
    assert s.pids == {700} and ["sacct", "-X", "-n", "-P", "-o", "sluid", "-j", "77"] in fake.calls


def test_real_timeout_exception_text() -> None:
    def slow(argv: Sequence[str]) -> slurm.CommandResult:
        raise subprocess.TimeoutExpired(list(argv), 5)

    assert slurm.list_pids(slow, "7")[1] == "`scontrol listpids 7` did not answer within 5 s: slurmctld may be down or overloaded"


def test_listpids_no_steps_here_is_not_an_error(tmp_path: Path) -> None:
    """22.05 prints this (exit 1) for a job with no step on this node: the scope explains instead."""
    def runner(argv: Sequence[str]) -> slurm.CommandResult:
        if argv[1] == "listpids":
            return slurm.CommandResult(1, "PID      JOBID    STEPID   LOCALID GLOBALID\n", "There are no steps for job 4242 on node (null).\n")
        return slurm.CommandResult(0, (DATA / "show_job_d_23.02.txt").read_text(), "")

    assert slurm.list_pids(runner, "4242") == (frozenset(), None)
    write(tmp_path, "proc/sys/kernel/hostname", "login01\n")
    elsewhere = scope.resolve_scope(job="4242", root=tmp_path, env={}, runner=runner)
    assert len(elsewhere.problems) == 1 and "not on this node (login01)" in elsewhere.problems[0]
    write(tmp_path, "proc/sys/kernel/hostname", "gpu01\n")
    here = scope.resolve_scope(job="4242", root=tmp_path, env={}, runner=runner)
    assert here.problems == ("no process of job 4242 found on this node (no job cgroup, and scontrol listpids lists none)",)
    assert (here.cpus_allocated, here.memory_limit, [g.index for g in here.gpus]) == (8, 32 * GiB, [0, 1])


def test_listpids_keeps_only_the_job_asked() -> None:
    out = "PID      JOBID    STEPID   LOCALID GLOBALID\n10       5        0        0       0\n11       6        0        0       0\n"
    assert slurm.list_pids(lambda argv: slurm.CommandResult(0, out, ""), "5") == (frozenset({10}), None)


def test_ids_never_become_paths(tmp_path: Path) -> None:
    v2_job(tmp_path, "system.slice/slurmstepd.scope/job_43")
    (tmp_path / "sys/fs/cgroup/system.slice/slurmstepd.scope/escape").mkdir()
    assert cgroups.cgroup_of_job(tmp_path, "4*") is None
    assert cgroups.cgroup_of_job(tmp_path, "1", "../slurmstepd.scope/escape") is None
