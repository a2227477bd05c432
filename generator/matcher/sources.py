"""Which host and rank a log file speaks for, told by its path (or its path inside an archive).

A line that names its own rank or host (``[rank3]:``, a syslog host, an NCCL prefix) always
wins; the path fills in what the line does not say. Recognised, in this order, on the path's
parts from the file name up (documented on docs/diagnose.md, "Many files at once"):

- Slurm output files ``slurm-<job>-<task>.out`` (``--output=slurm-%j-%t.out``): rank = task;
  ``slurm-<job>_<array>.out`` names no rank;
- rank files and folders: ``rank-3``, ``rank3``, ``rank_3``, ``rank.3``; torchrun's log folder
  ``.../attempt_0/3/stderr.log`` (the folder is the local rank);
- Kubernetes pods of a training job: ``<job>-master-0``, ``<job>-worker-2``, ``<job>-launcher``
  (host = the pod name);
- node and host names: a part like ``node-12``, ``gpu-node-3``, ``compute-0-7``, ``dgx04``,
  ``worker-1``, ``ip-10-0-1-23``, ``host=h100-17``, also as a file name (``gpu17-kern.log``).
  Other names that merely contain a digit (``case-013.log``) say nothing about a host.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SLURM_TASK = re.compile(r"^slurm-\d+-(\d{1,6})\.(?:out|err|log)$")
_RANK = re.compile(r"(?:^|[^a-z])(?:global_)?rank[-_.]?(\d{1,6})(?:$|[^0-9])", re.IGNORECASE)
_TORCHRUN_DIR = re.compile(r"^attempt_\d+$")
_POD = re.compile(r"^([a-z0-9][a-z0-9.-]{0,200}-(?:master|worker|launcher|head)(?:-\d{1,5})?)(?:-[a-z0-9]{5})?$")
_HOST_WORDS = re.compile(r"^(?:[a-z][a-z0-9]*-)*(?:node|host|gpu|compute|worker|dgx|hgx|ip|nid|cn|gn|trn|p4d|p5)[-_]?[a-z0-9-]*\d[a-z0-9-]*$",
                         re.IGNORECASE)
_HOST_FIELD = re.compile(r"^(?:host|node|hostname)=(.+)$", re.IGNORECASE)
_LOG_SUFFIX = re.compile(r"(?:[-_.](?:kern|kernel|dmesg|syslog|messages|journal|stdout|stderr|out|err|train|job|pyspy|py-spy|"
                         r"stacks|trace|watchdog))*"
                         r"(?:\.(?:log|txt|out|err|json|gz))*(?:\.\d+)?(?:\.gz)?$", re.IGNORECASE)
# words that look like host names in a path but name something else
_NOT_HOSTS = {"v1", "v2", "v3", "py3", "x86", "x86_64", "log4j", "utf8", "s3", "ec2", "h100", "a100", "b200", "h200", "l40s"}


@dataclass
class SourceInfo:
    """One input: its name as shown in reports, and the host and rank its path gives, if any."""

    name: str
    host: str | None = None
    rank: int | None = None


def _parts(path: str) -> list[str]:
    return [p for p in re.split(r"[/\\!]+", path) if p and p not in (".", "..")]


def _host_from(part: str) -> str | None:
    field = _HOST_FIELD.match(part)
    if field:
        return field.group(1)
    if part.lower() in _NOT_HOSTS or len(part) > 63:
        return None
    if _HOST_WORDS.match(part):
        return part
    return None


def describe(path: str) -> SourceInfo:
    """What a file's path says about where its lines came from."""
    parts = _parts(path)
    info = SourceInfo(path)
    if not parts:
        return info
    name = parts[-1]
    m = _SLURM_TASK.match(name)
    if m:
        info.rank = int(m.group(1))
    # rank: the file name first, then the folders above it, nearest first
    for i, part in enumerate(reversed(parts)):
        if info.rank is not None:
            break
        m = _RANK.search(part)
        if m:
            info.rank = int(m.group(1))
            break
        if i == 1 and part.isdigit() and len(parts) >= 3 and _TORCHRUN_DIR.match(parts[-3]):
            info.rank = int(part)  # torchrun --log-dir: <dir>/<run>/attempt_0/<local_rank>/stderr.log
            break
    # host: folders from the nearest up, then the file name without its log suffixes
    stem = _LOG_SUFFIX.sub("", name)
    for part in [*reversed(parts[:-1]), stem]:
        pod = _POD.match(part)
        if pod:
            info.host = pod.group(1)
            break
        host = _host_from(part)
        if host:
            info.host = host
            break
    return info
