"""Provides `read_rapl`: the node's RAPL energy counters from /sys/class/powercap.

Each zone is a directory `intel-rapl:N` (a CPU package, or `psys` on some machines) or
`intel-rapl:N:M` (a part of package N: `core`, `uncore`, `dram`), with `name`, `energy_uj`
(microjoules, wrapping at `max_energy_range_uj`) and other files. AMD Zen CPUs use the same
names. The `intel-rapl-mmio:N` zones repeat the package through another interface and are left
out so nothing is counted twice.

What the node cannot give is said in `RaplSample.reason`, never raised: no powercap at all
(most VMs), no RAPL zone, or `energy_uj` readable by root only (the kernel's default since the
2020 PLATYPUS side channel). RAPL counts the whole node: its figure is never one job's.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path

from gpuscope.metrics.energy import RaplSample, RaplZone
from gpuscope.metrics.safe_text import clean

POWERCAP = "/sys/class/powercap"
_ZONE = re.compile(r"intel-rapl(:\d{1,4}){1,2}")
_MAX_ZONES = 64
"""Far above any real node (two zones per socket and a few sub-zones): a bound on a strange tree."""


def read_rapl(root: str | os.PathLike[str] = POWERCAP, clock: Callable[[], float] = time.time) -> RaplSample:
    """One reading of every RAPL zone under `root` (tests pass a fake tree)."""
    now = clock()
    base = Path(root)
    try:
        names = sorted((n for n in os.listdir(base) if _ZONE.fullmatch(n)), key=_order)[:_MAX_ZONES]
    except FileNotFoundError:
        return RaplSample(now, reason=f"no RAPL: {base} is absent (usual in a VM, or a kernel without powercap)")
    except OSError as err:
        return RaplSample(now, reason=f"no RAPL: {base} cannot be listed ({err.strerror or err})")
    if not names:
        return RaplSample(now, reason=f"no RAPL zone in {base} (usual in a VM; needs the intel_rapl driver on an Intel or AMD Zen CPU)")
    zones, denied = [], 0
    for name in names:
        energy, problem = _number(base / name / "energy_uj")
        denied += problem == "denied"
        zones.append(RaplZone(zone=name, name=clean(_text(base / name / "name") or name),
                              energy_uj=energy, max_energy_range_uj=_number(base / name / "max_energy_range_uj")[0]))
    reason = ""
    if all(z.energy_uj is None for z in zones):
        reason = (f"RAPL energy is readable by root only on this node ({base}/*/energy_uj): run as root or ask the admins for read access"
                  if denied else f"RAPL zones in {base} have no readable energy_uj")
    return RaplSample(now, tuple(zones), reason)


def _order(name: str) -> tuple[int, ...]:
    """'intel-rapl:1:0' -> (1, 0), so zone 10 sorts after zone 9."""
    return tuple(int(n) for n in name.split(":")[1:])


def _text(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read(256).decode("utf-8", "replace").strip()
    except OSError:
        return None


def _number(path: Path) -> tuple[int | None, str]:
    """A counter file's value, or (None, 'denied' / 'unreadable'). Garbage is unreadable, not 0."""
    try:
        with open(path, "rb") as f:
            text = f.read(64).decode("ascii", "replace").strip()
    except PermissionError:
        return None, "denied"
    except OSError:
        return None, "unreadable"
    return (int(text), "") if text.isascii() and text.isdigit() and len(text) < 20 else (None, "unreadable")
