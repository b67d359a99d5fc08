"""Job cgroups on fake /proc and /sys/fs/cgroup trees: v1, v2 `job_ID`, v2 SLUID, multiple slurmd,
RHEL 8 (no memory.peak), pam_slurm_adopt's step_extern, hybrid mounts, unreadable files; then the
scopes built from them (job inside an allocation, --pid, --user) and `refresh`."""

from __future__ import annotations

import pathlib
import shutil
from pathlib import Path

import pytest
from fake_scope import proc, v2_job, write

from gpuscope.collectors import cgroups, scope, slurm

GiB = 1 << 30








def layout_v1(root: Path) -> int:
    base = "slurm/uid_1000/job_42"
    proc(root, 100, "12:memory:/slurm/uid_1000/job_42/step_0/task_0\n11:cpuset:/slurm/uid_1000/job_42/step_0\n"
         "10:freezer:/slurm/uid_1000/job_42/step_0\n4:cpu,cpuacct:/slurm/uid_1000/job_42/step_0/task_0\n1:name=systemd:/system.slice/slurmd.service\n")
    write(root, f"sys/fs/cgroup/cpuset/{base}/cpuset.cpus", "0-3,8\n")
    write(root, f"sys/fs/cgroup/memory/{base}/memory.limit_in_bytes", "2147483648\n")
    write(root, f"sys/fs/cgroup/memory/{base}/memory.usage_in_bytes", "314572800\n")
    write(root, f"sys/fs/cgroup/memory/{base}/memory.max_usage_in_bytes", "419430400\n")
    write(root, f"sys/fs/cgroup/memory/{base}/memory.stat", "cache 1\nrss 2\ntotal_cache 104857600\ntotal_rss 209715200\ntotal_shmem 4096\n")
    write(root, f"sys/fs/cgroup/freezer/{base}/cgroup.procs", "")
    write(root, f"sys/fs/cgroup/freezer/{base}/step_0/cgroup.procs", "100\n101\n")
    write(root, f"sys/fs/cgroup/freezer/{base}/step_batch/cgroup.procs", "99\n")
    return 100


def layout_v2_jobid(root: Path) -> int:
    proc(root, 200, "0::/system.slice/slurmstepd.scope/job_43/step_0/user/task_0\n")
    v2_job(root, "system.slice/slurmstepd.scope/job_43")
    return 200


def layout_v2_sluid(root: Path) -> int:
    proc(root, 200, "0::/system.slice/slurmstepd.scope/sEKNKTV3WPV500/step_0/user/task_0\n")
    v2_job(root, "system.slice/slurmstepd.scope/sEKNKTV3WPV500")
    return 200


def layout_v2_multi_slurmd(root: Path) -> int:
    # Debian builds with --enable-multiple-slurmd: <node>_slurmstepd.scope (plazonic/cgroup_exporter#8).
    proc(root, 200, "0::/system.slice/cn001_slurmstepd.scope/job_43/step_0/user/task_0\n")
    v2_job(root, "system.slice/cn001_slurmstepd.scope/job_43")
    v2_job(root, "system.slice/cn002_slurmstepd.scope/job_43", leaves={"step_0/user/task_0": "900\n"})
    return 200


def layout_v2_rhel8(root: Path) -> int:
    proc(root, 200, "0::/system.slice/slurmstepd.scope/job_43/step_0/user/task_0\n")
    v2_job(root, "system.slice/slurmstepd.scope/job_43", peak=False)
    return 200


def layout_pam_adopted(root: Path) -> int:
    # An ssh session adopted by pam_slurm_adopt lands in the extern step.
    proc(root, 300, "0::/system.slice/slurmstepd.scope/job_43/step_extern/user/task_special\n")
    v2_job(root, "system.slice/slurmstepd.scope/job_43", leaves={"step_extern/user/task_special": "300\n", "step_extern/slurm": "151\n", "step_0/user/task_0": "200\n201\n"})
    return 300


def layout_hybrid(root: Path) -> int:
    proc(root, 200, "4:memory:/user.slice\n0::/system.slice/slurmstepd.scope/job_43/step_0/user/task_0\n")
    v2_job(root, "unified/system.slice/slurmstepd.scope/job_43")
    return 200


V2_EXPECT = {"cpu_ids": (2, 3), "limit": GiB, "used": 314572800, "peak": 419430400, "pids": {199, 200, 201}}
LAYOUTS = {
    "v1": (layout_v1, 1, "/sys/fs/cgroup/memory/slurm/uid_1000/job_42", {"cpu_ids": (0, 1, 2, 3, 8), "limit": 2 * GiB, "used": 314572800, "peak": 419430400, "pids": {99, 100, 101}}),
    "v2-job_id": (layout_v2_jobid, 2, "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_43", V2_EXPECT),
    "v2-sluid": (layout_v2_sluid, 2, "/sys/fs/cgroup/system.slice/slurmstepd.scope/sEKNKTV3WPV500", V2_EXPECT),
    "v2-multi-slurmd": (layout_v2_multi_slurmd, 2, "/sys/fs/cgroup/system.slice/cn001_slurmstepd.scope/job_43", V2_EXPECT),
    "v2-rhel8-no-peak": (layout_v2_rhel8, 2, "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_43", {**V2_EXPECT, "peak": None}),
    "v2-pam-adopted": (layout_pam_adopted, 2, "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_43", {**V2_EXPECT, "pids": {200, 201, 300}}),
    "v2-hybrid-unified": (layout_hybrid, 2, "/sys/fs/cgroup/unified/system.slice/slurmstepd.scope/job_43", V2_EXPECT),
}


@pytest.mark.parametrize("name", LAYOUTS)
def test_job_cgroup_found_from_proc_and_read(tmp_path: Path, name: str) -> None:
    build, version, shown, want = LAYOUTS[name]
    pid = build(tmp_path)
    cg = cgroups.cgroup_of_pid(tmp_path, pid)
    assert cg is not None and cg.version == version
    assert cg.shown(tmp_path) == shown
    reading = cgroups.read_job_cgroup(tmp_path, cg)
    assert reading.problems == []
    assert reading.cpu_ids == want["cpu_ids"]
    assert reading.memory_limit == want["limit"]
    assert reading.memory_used == want["used"]
    assert reading.memory_peak == want["peak"]
    assert reading.memory_stat == {"anon": 209715200, "file": 104857600, "shmem": 4096}
    assert reading.pids == frozenset(want["pids"])  # slurmstepd's own step_*/slurm dirs left out
    if want["peak"] is None:
        assert any("kernel < 5.19" in e for e in reading.evidence)


def test_cgroup_found_by_job_id_sluid_and_environ(tmp_path: Path) -> None:
    v2_job(tmp_path, "system.slice/slurmstepd.scope/job_43")
    v2_job(tmp_path, "system.slice/slurmstepd.scope/sEKNKTV3WPV500", leaves={"step_0/user/task_0": "500\n"})
    v2_job(tmp_path, "system.slice/slurmstepd.scope/sZZZZZZZZZZZZZ", leaves={"step_0/user/task_0": "600\n"})
    write(tmp_path, "sys/fs/cgroup/system.slice/slurmstepd.scope/system/cgroup.procs", "10\n")
    proc(tmp_path, 500, env={"SLURM_JOB_ID": "77"})
    proc(tmp_path, 600, env={"SLURM_JOB_ID": "78"})
    assert cgroups.cgroup_of_job(tmp_path, "43").found_by == "job_<id> under slurmstepd.scope"
    by_sluid = cgroups.cgroup_of_job(tmp_path, "77", "sEKNKTV3WPV500")
    assert by_sluid.found_by == "SLUID under slurmstepd.scope" and by_sluid.path.endswith("/sEKNKTV3WPV500")
    by_env = cgroups.cgroup_of_job(tmp_path, "78")
    assert by_env.path.endswith("/sZZZZZZZZZZZZZ") and "SLURM_JOB_ID of pid 600" in by_env.found_by
    assert cgroups.cgroup_of_job(tmp_path, "99") is None


def test_v1_found_by_job_id(tmp_path: Path) -> None:
    layout_v1(tmp_path)
    cg = cgroups.cgroup_of_job(tmp_path, "42")
    assert cg.version == 1 and set(cg.dirs) == {"memory", "cpuset", "freezer"}
    assert cgroups.read_job_cgroup(tmp_path, cg).pids == {99, 100, 101}


def test_not_a_job_and_missing_files(tmp_path: Path) -> None:
    proc(tmp_path, 5, "0::/user.slice/user-1000.slice/session-3.scope\n")
    proc(tmp_path, 6, "0::/system.slice/slurmstepd.scope/system\n")  # slurmstepd itself
    assert cgroups.cgroup_of_pid(tmp_path, 5) is None
    assert cgroups.cgroup_of_pid(tmp_path, 6) is None
    assert cgroups.cgroup_of_pid(tmp_path, 7) is None  # no such process


def test_unreadable_memory_max_is_a_problem_not_an_exception(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pid = layout_v2_jobid(tmp_path)
    real = pathlib.Path.read_text

    def deny(self: Path, *args: object, **kwargs: object) -> str:
        if self.name == "memory.max":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "read_text", deny)
    reading = cgroups.read_job_cgroup(tmp_path, cgroups.cgroup_of_pid(tmp_path, pid))
    assert reading.memory_limit is None
    assert [p for p in reading.problems if "memory.max" in p and "permission denied" in p]
    assert reading.memory_used == 314572800 and reading.pids == {199, 200, 201}  # the rest still read


def test_unreadable_and_garbled_files(tmp_path: Path) -> None:
    pid = layout_v2_jobid(tmp_path)
    job = tmp_path / "sys/fs/cgroup/system.slice/slurmstepd.scope/job_43"
    (job / "memory.current").unlink()
    (job / "memory.current").mkdir()  # EISDIR: the read fails with an OSError that is not EACCES
    (job / "cpuset.cpus.effective").write_text("zero-three\n")
    (job / "memory.max").write_text("max\n")
    reading = cgroups.read_job_cgroup(tmp_path, cgroups.cgroup_of_pid(tmp_path, pid))
    assert reading.memory_used is None and reading.cpu_ids == () and reading.memory_limit is None
    assert any("memory.current" in p for p in reading.problems)
    assert any("cpuset.cpus.effective" in p and "zero-three" in p for p in reading.problems)
    assert any("no memory limit" in e for e in reading.evidence)


def test_v1_unlimited_is_no_limit(tmp_path: Path) -> None:
    layout_v1(tmp_path)
    write(tmp_path, "sys/fs/cgroup/memory/slurm/uid_1000/job_42/memory.limit_in_bytes", "9223372036854771712\n")
    assert cgroups.read_job_cgroup(tmp_path, cgroups.cgroup_of_pid(tmp_path, 100)).memory_limit is None


@pytest.mark.parametrize(("text", "cpus"), [("0-3,8,10-11\n", (0, 1, 2, 3, 8, 10, 11)), ("", ()), ("5", (5,)), ("0-7:2/4", (0, 1, 4, 5))])
def test_parse_cpu_list(text: str, cpus: tuple[int, ...]) -> None:
    assert cgroups.parse_cpu_list(text) == cpus


@pytest.mark.parametrize("text", ["a-b", "3-1", "1,,x"])
def test_parse_cpu_list_rejects_garbage(text: str) -> None:
    with pytest.raises(ValueError):
        cgroups.parse_cpu_list(text)


def no_slurm(argv: object) -> slurm.CommandResult:
    raise FileNotFoundError("scontrol")


def test_inside_allocation_without_scontrol(tmp_path: Path) -> None:
    """Started by srun inside job 43 on a node without Slurm client tools in PATH."""
    layout_v2_jobid(tmp_path)
    write(tmp_path, "proc/sys/kernel/hostname", "cn001\n")
    env = {"SLURM_JOB_ID": "43", "SLURM_JOB_GPUS": "2,3", "CUDA_VISIBLE_DEVICES": "GPU-aaaa1111-0000-0000-0000-000000000000,GPU-bbbb2222-0000-0000-0000-000000000000", "SLURM_JOB_USER": "alice"}
    s = scope.resolve_scope(root=tmp_path, env=env, runner=no_slurm, self_pid=200)
    assert s.kind == "job" and s.job_id == "43" and s.user == "alice"
    assert s.pids == {199, 200, 201}
    assert s.cpus_allocated == 2 and s.cpu_ids == (2, 3)
    assert (s.memory_limit, s.memory_used, s.memory_peak) == (GiB, 314572800, 419430400)
    assert [(g.index, g.uuid) for g in s.gpus] == [(2, "GPU-aaaa1111-0000-0000-0000-000000000000"), (3, "GPU-bbbb2222-0000-0000-0000-000000000000")]
    assert "SLURM_JOB_GPUS" in s.gpus[0].evidence
    assert s.problems == ("scontrol not found: Slurm client tools are not installed on this node",)
    assert s.cgroup == "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_43"
    assert any("found via /proc/200/cgroup" in e for e in s.evidence)
    assert any("inside the allocation" in e for e in s.evidence)


def test_refresh_rereads_cgroup_without_slurm(tmp_path: Path) -> None:
    layout_v2_jobid(tmp_path)
    calls: list[object] = []

    def counting(argv: object) -> slurm.CommandResult:
        calls.append(argv)
        raise FileNotFoundError("scontrol")

    s = scope.resolve_scope(job=43, root=tmp_path, env={}, runner=counting)
    n = len(calls)
    job = tmp_path / "sys/fs/cgroup/system.slice/slurmstepd.scope/job_43"
    (job / "step_0/user/task_0/cgroup.procs").write_text("200\n201\n202\n")
    (job / "memory.current").write_text("1000\n")
    after = scope.refresh(s, root=tmp_path)
    assert after.pids == {199, 200, 201, 202} and after.memory_used == 1000 and len(calls) == n
    shutil.rmtree(job)
    gone = scope.refresh(after, root=tmp_path)
    assert gone.pids == frozenset() and any("is gone" in p for p in gone.problems)


def test_pid_scope_follows_descendants(tmp_path: Path) -> None:
    proc(tmp_path, 10, ppid=1)
    proc(tmp_path, 11, ppid=10, comm="weird ) name")
    proc(tmp_path, 12, ppid=11)
    proc(tmp_path, 20, ppid=1)
    s = scope.resolve_scope(pid=10, root=tmp_path, env={})
    assert s.kind == "pid" and s.pids == {10, 11, 12}
    proc(tmp_path, 13, ppid=12)  # a child started after the scope was resolved
    shutil.rmtree(tmp_path / "proc/10")  # the root exits; its children stay watched
    assert scope.refresh(s, root=tmp_path).pids == {11, 12, 13}
    missing = scope.resolve_scope(pid=99, root=tmp_path, env={})
    assert missing.problems == ("process 99 does not exist",)


def test_user_scope_by_name_and_uid(tmp_path: Path) -> None:
    write(tmp_path, "etc/passwd", "root:x:0:0::/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\n")
    proc(tmp_path, 10, uid=1000)
    proc(tmp_path, 11, uid=0)
    proc(tmp_path, 12, uid=1000)
    assert scope.resolve_scope(user="alice", root=tmp_path, env={}).pids == {10, 12}
    assert scope.resolve_scope(user="0", root=tmp_path, env={}).pids == {11}
    proc(tmp_path, 13, uid=1000)
    assert scope.refresh(scope.resolve_scope(user="alice", root=tmp_path, env={}), root=tmp_path).pids == {10, 12, 13}
    assert scope.resolve_scope(user="nobody-here", root=tmp_path, env={}).problems == ("no such user: nobody-here",)


def test_node_scope_when_nothing_asked(tmp_path: Path) -> None:
    write(tmp_path, "proc/sys/kernel/hostname", "cn001.cluster\n")
    s = scope.resolve_scope(root=tmp_path, env={"HOME": "/root"})
    assert (s.kind, s.label, s.pids) == ("node", "node cn001", frozenset())
    assert scope.refresh(s, root=tmp_path) is s
