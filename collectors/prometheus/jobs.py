"""Provides `NodeJobs`: the Slurm jobs running on this node, for the exporter's per-job series
when it watches the whole node (a systemd service, not `--job`).

Jobs are found by their cgroups (Slurm's cgroup plugins, the usual setup): v2
`<slice>/[<node>_]slurmstepd.scope/job_<id>` (or a SLUID directory from 26.05, whose id is read
from a member's SLURM_JOB_ID), v1 `<ctrl>/slurm[_<node>]/uid_U/job_<id>`. A new job is resolved
once (scontrol, as `watch --job`); from then on it is refreshed from its cgroup files only. A
node without job cgroups (proctrack/linuxproc) shows no jobs here: `--job ID` still works.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from gpuscope.collectors import cgroups, slurm
from gpuscope.collectors.scope import refresh, resolve_scope
from gpuscope.metrics.samples import JobScope

MAX_JOBS = 512
"""More job directories than this on one node is not a node we understand: the rest are left out."""


def job_ids(root: str | os.PathLike[str] = "/") -> list[str]:
    """The ids of the Slurm jobs with a cgroup on this node, in numeric order."""
    base = Path(root)
    found: set[str] = set()
    for scope in cgroups.slurm_scopes(base):
        try:
            dirs = sorted(p for p in scope.iterdir() if p.is_dir() and p.name not in cgroups.NOT_A_JOB)
        except OSError:
            continue
        for d in dirs[:MAX_JOBS]:
            if m := re.fullmatch(r"job_(\d+)", d.name):
                found.add(m.group(1))
                continue
            for pid in sorted(cgroups.procs_below(d, 2))[:4]:  # a SLUID directory: its members say the id
                job = cgroups.environ(base, pid).get("SLURM_JOB_ID", "")
                if job.isdigit():
                    found.add(job)
                    break
    for ctrl in cgroups.V1_CONTROLLERS[:1]:  # every v1 controller holds the same job dirs: the first is enough
        for d in sorted((base / cgroups.CGROUP_MOUNT / ctrl).glob("slurm*/uid_*/job_*"))[:MAX_JOBS]:
            if m := re.fullmatch(r"job_(\d+)", d.name):
                found.add(m.group(1))
    return sorted(found, key=int)[:MAX_JOBS]


class NodeJobs:
    """Follows the jobs on the node from one sample to the next (`update` once per sample)."""

    def __init__(self, root: str | os.PathLike[str] = "/", runner: slurm.Runner | None = None) -> None:
        self._root = root
        self._runner = runner
        self._scopes: dict[str, JobScope] = {}

    def update(self) -> tuple[JobScope, ...]:
        ids = job_ids(self._root)
        scopes = {}
        for job_id in ids:
            known = self._scopes.get(job_id)
            scopes[job_id] = refresh(known, self._root) if known else resolve_scope(job=job_id, root=self._root, env={}, runner=self._runner)
        self._scopes = scopes
        return tuple(scopes.values())
