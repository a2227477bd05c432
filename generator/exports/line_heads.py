"""What may stand before a line's own text: the heads that tools put in front of a program's output.

A signature anchored at a line's start (``^\\s*Killed\\s*$``, a bare ``'LOCAL_RANK'``, an ``ibstat``
field) means "the line is only this", to tell a shell's report from the same word inside a
sentence. Output rarely arrives bare: torchrun tags each line (``[rank3]:``, ``[default3]:``,
``3: ``), Ray and vLLM name the worker (``(RayWorkerWrapper pid=1054, ip=10.0.0.1)``), Docker
Compose the service (``trainer-1  | ``), ``kubectl logs --prefix`` the pod, the container runtime
writes ``<time> stderr F `` before each line of its log files, journald and syslog their header,
dmesg its uptime, mpirun ``[1,3]<stderr>:``, Slurm and others a bracketed time.

When the rules are compiled, a leading ``^`` becomes ``^`` followed by at most one transport head
and one process tag, so the anchored signature reads the line behind them and still refuses the word inside a
sentence. The heads are written tight (fixed shapes, small bounded repeats) so that they neither
backtrack nor widen what a signature accepts beyond these transports.
"""

from __future__ import annotations

# What a transport writes before the line (at most one), then the process tag the program's
# launcher added (at most one): two optional slots, no repeat, so that nothing backtracks.
_TRANSPORT = (
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{8,18}(?:Z|[+-][0-9]{2}:[0-9]{2}) std(?:out|err) [FP]",  # CRI log files
    r"[A-Z][a-z]{2} {1,2}[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?(?: [A-Za-z0-9_.-]{1,64})?"
    r" [A-Za-z0-9_./@-]{1,64}(?:\[[0-9]{1,10}\])?:(?: \[ {0,6}[0-9]{1,8}\.[0-9]{1,9}\])?",  # syslog / journald (host optional)
    r"\[(?: {0,6}[0-9]{1,8}\.[0-9]{1,9}|[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:.,]{8,18}|pod/[A-Za-z0-9_./-]{1,250}"
    r"|[0-9]{1,6},[0-9]{1,6}\]<std(?:out|err)>:?)\]?",              # dmesg, a bracketed time, kubectl --prefix, mpirun
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:.,]{8,18}(?:Z|[+-][0-9]{2}:?[0-9]{2})?",  # a bare time
    r"[A-Za-z][A-Za-z0-9_.-]{0,63} {1,8}\|",                       # docker compose service
    r" {0,8}[0-9]{1,7} {1,4}\|",                                    # a line-number gutter
)
_TAG = (
    r"\[(?:[Rr]ank ?|default)[0-9]{1,6}\]:",                         # torchrun --tee, [rank3]: prefixes
    r"[0-9]{1,6}:",                                                  # torchrun/srun -l local-rank tag
    r"\([A-Za-z][A-Za-z0-9_]{0,59}(?: [A-Za-z0-9_=]{1,24}){0,2} pid=[0-9]{1,10}(?:, ip=[0-9.]{7,15})?\)",  # Ray, vLLM
)
HEADS = "(?:(?:" + "|".join(_TRANSPORT) + ") {0,4})?(?:(?:" + "|".join(_TAG) + ") {0,4})?"


def behind_line_heads(pattern: str) -> str:
    """``pattern`` with a leading ``^`` allowed to follow the heads above; other patterns as they are."""
    if not pattern.startswith("^"):
        return pattern
    return "^" + HEADS + pattern[1:]
