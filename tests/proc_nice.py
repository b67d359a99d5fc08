"""A process's nice value as the kernel reports it: how renice tests read the result (on the
`child` fixture's process, tests/conftest.py)."""

from __future__ import annotations


def nice_in_stat(pid: int) -> int:
    """Field 19 of /proc/PID/stat (fields counted from the last ')', as the kernel's comm may hold one)."""
    with open(f"/proc/{pid}/stat", "rb") as handle:
        data = handle.read()
    return int(data[data.rindex(b")") + 2 :].split()[16])
