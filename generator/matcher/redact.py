"""Redaction for sharing: a log or a report with host names, addresses, users, e-mails and secrets
replaced by stable placeholders, so it can be pasted into a public issue.

The same value always gets the same placeholder within one ``Redactor`` (``host-1`` stays
``host-1`` in every line), and placeholders keep the shape of what they replace, so the
atlas's signatures still match a redacted log and its diagnosis does not change:

- IPv4 addresses -> ``192.0.2.N`` (the documentation range, RFC 5737); IPv6 -> ``2001:db8::N``;
- MAC addresses -> ``02:00:00:00:00:NN`` (locally administered);
- host names -> ``host-N``: names the log itself gives as hosts (a syslog host, an NCCL
  ``host:pid:tid`` prefix, ``srun: error: host:``, ``host=``/``hostname=``, journald
  ``_HOSTNAME``, the host of a report's places), and fully qualified names;
- user names in home paths (``/home/alice``, ``/Users/alice``, ``C:\\Users\\alice``) -> ``user-N``;
- e-mail addresses -> ``person-N@example.com``;
- secrets -> ``REDACTED-N``: tokens with a known prefix (``hf_``, ``ghp_``, ``github_pat_``,
  ``glpat-``, ``sk-``, ``xox?-``, AWS ``AKIA``), ``Bearer`` tokens, and the values of
  ``token=``, ``password=``, ``secret=``, ``api_key=`` and the like.

What it cannot know it leaves: a host name the log never marks as one (a bare word in a
sentence), project names, file contents quoted in the log. Check before you paste.
"""

from __future__ import annotations

import re

# an address between letters or digits is part of a longer word; next to '_', '-' or a file
# extension ('node_10.1.2.3_rank0', '10.1.2.3.log') it is still an address; a fifth number after
# a dot makes it a version (1.2.3.4.5)
_IPV4 = re.compile(r"(?<![A-Za-z0-9.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)"
                   r"(?![A-Za-z0-9])(?!\.[0-9])")
# full (seven colons) or compressed (with ::); PCI addresses (0000:3b:00.0) and times are neither
_IPV6 = re.compile(r"(?<![\w:])(?:(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}|(?:[0-9a-fA-F]{1,4}:){1,6}:[0-9a-fA-F:]{0,30}[0-9a-fA-F])"
                   r"(?![\w:])")
_MAC = re.compile(r"(?<![\w:])(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}(?![\w:])")
_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})+")
_HOME = re.compile(r"(/home/|/Users/|/export/home/|[A-Za-z]:\\Users\\)([A-Za-z0-9._-]{1,64})")
_TOKEN = re.compile(r"\b(?:hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{16,}"
                    r"|sk-[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})\b")
_BEARER = re.compile(r"(?i)(\bbearer\s+)([A-Za-z0-9._~+/=-]{16,})")
_ASSIGNED = re.compile(r"(?i)\b((?:[A-Za-z_]*_)?(?:token|password|passwd|secret|api_?key|access_key|private_key))"
                       r"(\s*[=:]\s*['\"]?)([^\s'\",;]{4,})")
# where logs say "this is a host"
_HOST_MARKS = (
    re.compile(r"^(?:[A-Z][a-z]{2} [ \d]\d [\d:]{8}(?:\.\d+)?|\d{4}-\d\d-\d\dT[\d:.]+(?:[+-]\d\d:?\d\d|Z)?) ([A-Za-z0-9][\w.-]{0,252}) "),
    re.compile(r"(?:^|[\s>:\]])([A-Za-z][\w.-]{0,252}):\d+:\d+ \[\d+\]"),
    re.compile(r"srun: error: ([A-Za-z0-9][\w.-]{0,252}): task"),
    re.compile(r"\b(?:host(?:name)?|node)\s*[=:]\s*['\"]?([A-Za-z0-9][\w.-]{0,252})"),
    re.compile(r'"_HOSTNAME"\s*:\s*"([\w.-]{1,253})"'),
    re.compile(r"\*\*\* (?:JOB|STEP) [\d.]+ ON ([A-Za-z0-9][\w.-]{0,252}) "),
    re.compile(r"\bslurmstepd-([A-Za-z0-9][\w.-]{0,252}): "),
)
_FQDN = re.compile(r"(?<![\w.@/-])(?:[A-Za-z0-9-]{1,63}\.){2,}(?:com|net|org|io|ai|internal|local|lan|corp|cloud|edu|gov)(?![\w.])")
# words the host marks catch that are not hosts
_NOT_HOSTS = {"localhost", "kernel", "python", "python3", "systemd", "true", "false", "none", "null", "unknown"}


class Redactor:
    """Replaces what identifies people and machines; the same value gets the same placeholder."""

    def __init__(self, hosts: set[str] | None = None):
        self.maps: dict[str, dict[str, str]] = {k: {} for k in ("ip", "ip6", "mac", "host", "user", "email", "secret")}
        self.hosts: set[str] = set()
        for h in hosts or ():
            self.add_host(h)

    def _placeholder(self, kind: str, value: str) -> str:
        table = self.maps[kind]
        got = table.get(value)
        if got is None:
            n = len(table) + 1
            got = {"ip": f"192.0.2.{n % 254 + 1}" if n < 254 else f"198.51.100.{n % 254 + 1}",
                   "ip6": f"2001:db8::{n:x}", "mac": f"02:00:00:00:{n // 256 % 256:02x}:{n % 256:02x}",
                   "host": f"host-{n}", "user": f"user-{n}", "email": f"person-{n}@example.com",
                   "secret": f"REDACTED-{n}"}[kind]
            table[value] = got
        return got

    def add_host(self, host: str) -> None:
        host = host.strip().rstrip(".")
        if len(host) >= 2 and host.lower() not in _NOT_HOSTS and not host.startswith(("host-", "192.0.2.")) \
                and not _IPV4.fullmatch(host) and not host.isdigit():
            self.hosts.add(host)

    def learn(self, text: str) -> None:
        """Note the host names ``text`` marks as such (call on the whole log first for one mapping)."""
        for line in text.splitlines():
            for rx in _HOST_MARKS:
                for m in rx.finditer(line):
                    self.add_host(m.group(1))

    def redact_text(self, text: str) -> str:
        """``text`` with every known or recognisable identifying value replaced."""
        self.learn(text)
        text = _TOKEN.sub(lambda m: self._placeholder("secret", m.group(0)), text)
        text = _BEARER.sub(lambda m: m.group(1) + self._placeholder("secret", m.group(2)), text)
        text = _ASSIGNED.sub(lambda m: m.group(1) + m.group(2) + self._placeholder("secret", m.group(3)), text)
        text = _EMAIL.sub(lambda m: self._placeholder("email", m.group(0)), text)
        text = _HOME.sub(lambda m: m.group(1) + self._placeholder("user", m.group(2)), text)
        text = _MAC.sub(lambda m: self._placeholder("mac", m.group(0).lower()), text)
        text = _IPV4.sub(lambda m: m.group(0) if m.group(0).startswith(("192.0.2.", "198.51.100.", "127.", "0.0.0.0"))
                         else self._placeholder("ip", m.group(0)), text)
        text = _IPV6.sub(lambda m: self._placeholder("ip6", m.group(0).lower()), text)
        # a fully qualified name of a known host is that host (the domain goes too)
        text = _FQDN.sub(lambda m: self._placeholder("host", m.group(0).split(".")[0] if m.group(0).split(".")[0] in self.hosts
                                                     else m.group(0).lower()), text)
        if self.hosts:
            names = sorted(self.hosts, key=len, reverse=True)
            # a host may be glued to a program name (slurmstepd-gpu20-15:) or carry a suffix (ng30903-ib)
            rx = re.compile(r"(?<![\w.])(" + "|".join(re.escape(h) for h in names) + r")(?!\w)")
            text = rx.sub(lambda m: self._placeholder("host", m.group(1)), text)
        return text

    def redact_report(self, report: dict) -> dict:
        """A copy of a diagnosis report with every string redacted (hosts it names included)."""
        for f in report.get("findings", []):
            for p in f.get("places", []):
                if p.get("host"):
                    self.add_host(str(p["host"]))
            if f.get("where", {}).get("host"):
                self.add_host(str(f["where"]["host"]))
        for s in report.get("sources", []):
            if s.get("host"):
                self.add_host(str(s["host"]))
        for n in report.get("nodes", []) or []:
            self.add_host(str(n.get("host", "")))
        return self._walk(report)

    def _walk(self, value):  # noqa: ANN001, ANN202
        if isinstance(value, str):
            return self.redact_text(value)
        if isinstance(value, list):
            return [self._walk(v) for v in value]
        if isinstance(value, dict):
            return {k: (v if k in ("url", "id", "entry", "finding", "schema", "category", "owner", "severity", "role", "heading")
                        else self._walk(v)) for k, v in value.items()}
        return value
