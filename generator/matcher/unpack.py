"""Read through compressed logs and archives, fed piece by piece: `.gz`, `.zip`, `.tar`, `.tar.gz`.

Push-based (``feed`` bytes, get events back) so the command line and the browser, which
streams a dropped file to its worker in pieces, share one reader; standard library only
(zlib), so it runs in Pyodide as it does here. The kind is told by the first bytes, not the
name: gzip (1f 8b), zip (a local file header, PK 03 04), tar (ustar at offset 257); anything
else passes through as one plain log.

Events are ``("begin", member)``, ``("data", bytes)`` and ``("end", member)``; a plain or
gzip input is one member named ``""``. A member of an archive that is itself gzip is
unpacked too (``kern.log.2.gz`` inside a tarball), one level deep and no further.

Limits against decompression bombs: at most ``max_unpacked`` bytes out of one input
(default 16 GiB), at most ``max_members`` members (10,000). Past either, ``UnpackError``
says where and how to go on. Zip members must be stored or deflated (what every zip tool
writes); encrypted members are refused with a message. Damage is said, not swallowed: a gzip
cut before its end mark, bytes after the last gzip member that are neither another member nor
NUL padding, a tar member running past the end of the file (each ``UnpackError`` at close, after
what came before was read).
"""

from __future__ import annotations

import struct
import zlib
from typing import Iterator

from .errors import InputError

MAX_UNPACKED = 16 << 30
MAX_MEMBERS = 10_000
GZIP_MAGIC = b"\x1f\x8b"
ZIP_LOCAL = b"PK\x03\x04"
ZIP_OTHER = (b"PK\x01\x02", b"PK\x05\x06", b"PK\x06\x06", b"PK\x06\x07", b"PK\x07\x08")
SNIFF = 262  # bytes needed to tell tar from plain text (ustar sits at offset 257)


class UnpackError(InputError):
    """An archive that cannot be read through, or one that unpacks past the limits."""


def _size_text(n: int) -> str:
    return f"{n / (1 << 30):.0f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.0f} MiB"


class _Gunzip:
    """gzip, including files of several concatenated gzip members (as `cat a.gz b.gz` makes).

    Output comes in pieces of at most 1 MiB, so a small input that inflates hugely is never
    held whole in memory: the caller counts (and stops) piece by piece."""

    def __init__(self) -> None:
        self.inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self.midway = False  # inside a member whose end has not come yet
        self.held = b""  # the first byte of what may be the next member's magic, at a piece's end
        self.ended = False  # a member ended and what followed was not another member
        self.trailing = 0  # bytes after the last member other than NUL padding (not read; said at close)

    def pieces(self, data: bytes) -> Iterator[bytes]:
        if self.ended:
            self.trailing += len(data) - data.count(0)
            return
        data, self.held = self.held + data, b""
        while data:
            if not self.midway and len(data) < len(GZIP_MAGIC) and GZIP_MAGIC.startswith(data):
                self.held = data  # the next piece says whether a member starts here
                return
            self.midway = True
            try:
                out = self.inflater.decompress(data, 1 << 20)
            except zlib.error as exc:
                raise UnpackError(f"not valid gzip data ({exc})") from None
            if out:
                yield out
            data = self.inflater.unconsumed_tail
            if self.inflater.eof:
                self.midway = False
                rest = self.inflater.unused_data
                self.inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
                if data:
                    rest = data + rest
                if rest and rest[:2] != GZIP_MAGIC[:len(rest[:2])]:
                    # not another member: NUL padding (tape blocks) is ignored; anything else is counted
                    self.ended = True
                    self.trailing += len(rest) - rest.count(0)
                    rest = b""
                data = rest


Event = tuple[str, object]


class Unpacker:
    """One input file (or stream) read through whatever container it is in.

    ``feed`` and ``close`` return iterators: consume each event before asking for the next,
    and memory stays bounded whatever the input inflates to."""

    def __init__(self, name: str, max_unpacked: int = MAX_UNPACKED, max_members: int = MAX_MEMBERS):
        self.name = name
        self.max_unpacked = max_unpacked
        self.max_members = max_members
        self.unpacked = 0
        self.members = 0
        self.kind: str | None = None  # plain, gzip, tar, tar.gz, zip (decided on the first bytes)
        self.head = b""
        self.gunzip: _Gunzip | None = None
        self.container: _Tar | _Zip | None = None
        self.open_member: str | None = None

    def feed(self, data: bytes) -> Iterator[Event]:
        if self.kind is None:
            self.head += data
            if len(self.head) < SNIFF:
                return
            data, self.head = self.head, b""
            yield from self._decide(data)
        yield from self._push(data)

    def close(self) -> Iterator[Event]:
        if self.kind is None:
            data, self.head = self.head, b""
            yield from self._decide(data)
            yield from self._push(data)
        if self.gunzip is not None and self.gunzip.midway:  # a download or a copy cut short: say so
            raise UnpackError(f"{self.name}: the gzip data ends before its end mark (the file is cut short or still "
                              "being written); what came before it was read")
        if self.gunzip is not None and self.gunzip.trailing:
            raise UnpackError(f"{self.name}: {self.gunzip.trailing:,} bytes after the end of the gzip data are not gzip "
                              "and were not read (data appended to a compressed file); what came before was read")
        if self.container is not None:
            yield from self.container.close()
        elif self.open_member is not None:
            yield from self._end()

    def _decide(self, data: bytes) -> Iterator[Event]:
        if data[:2] == GZIP_MAGIC:
            probe = _Gunzip()
            inner = b""
            try:
                for piece in probe.pieces(data[:8192]):
                    inner += piece
                    if len(inner) >= 262:
                        break
            except UnpackError:
                pass  # reported with its place when the data is read for real
            self.gunzip = _Gunzip()
            if len(inner) >= 262 and inner[257:262] == b"ustar":
                self.kind = "tar.gz"
                self.container = _Tar(self)
            else:
                self.kind = "gzip"
                yield from self._begin("")
        elif data[:4] == ZIP_LOCAL:
            self.kind = "zip"
            self.container = _Zip(self)
        elif len(data) >= 262 and data[257:262] == b"ustar":
            self.kind = "tar"
            self.container = _Tar(self)
        else:
            self.kind = "plain"
            yield from self._begin("")

    def _push(self, data: bytes) -> Iterator[Event]:
        if not data:
            return
        if self.kind == "plain":
            yield from self._emit(data)
        elif self.kind == "gzip":
            assert self.gunzip is not None
            for piece in self._gunzipped(data):
                yield from self._emit(piece)
        elif self.kind == "tar.gz":
            assert self.gunzip is not None and self.container is not None
            for piece in self._gunzipped(data):
                yield from self.container.feed(piece)
        else:
            assert self.container is not None
            yield from self.container.feed(data)

    def _gunzipped(self, data: bytes) -> Iterator[bytes]:
        try:
            yield from self.gunzip.pieces(data)
        except UnpackError as exc:
            raise UnpackError(f"{self.name}: {exc}") from None

    def _begin(self, member: str) -> Iterator[Event]:
        self.members += 1
        if self.members > self.max_members:
            raise UnpackError(f"{self.name}: holds more than {self.max_members:,} files; read it in parts "
                              "(unpack it and pass the folders you need)")
        self.open_member = member
        yield ("begin", member)

    def _emit(self, data: bytes) -> Iterator[Event]:
        if not data:
            return
        self.unpacked += len(data)
        if self.unpacked > self.max_unpacked:
            if self.kind == "plain":  # nothing was unpacked: an endless stream (/dev/zero) or a huge log
                raise UnpackError(f"{self.name}: more than {_size_text(self.max_unpacked)} read (an endless stream, or "
                                  "a very large log); stopped there. Pass --max-unpacked SIZE to read further")
            raise UnpackError(f"{self.name}: unpacks to more than {_size_text(self.max_unpacked)} (a decompression "
                              "bomb, or a very large archive); stopped there. Pass --max-unpacked SIZE to read further")
        yield ("data", data)

    def _end(self) -> Iterator[Event]:
        if self.open_member is not None:
            member, self.open_member = self.open_member, None
            yield ("end", member)


class _Member:
    """One member's data on its way out, unpacked once more if it is gzip itself (one level only)."""

    def __init__(self, owner: Unpacker):
        self.owner = owner
        self.gunzip: _Gunzip | None = None
        self.sniffed = False

    def write(self, data: bytes) -> Iterator[Event]:
        if not data:
            return
        if not self.sniffed:
            self.sniffed = True
            if data[:2] == GZIP_MAGIC:
                self.gunzip = _Gunzip()
        if self.gunzip is None:
            yield from self.owner._emit(data)
            return
        try:
            for piece in self.gunzip.pieces(data):
                yield from self.owner._emit(piece)
        except UnpackError as exc:
            if "unpacks to more than" in str(exc):
                raise
            raise UnpackError(f"{self.owner.name}: member {self.owner.open_member}: {exc}") from None


def _tar_field(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", errors="replace")


def _tar_number(raw: bytes) -> int:
    if raw[:1] == b"\x80":  # base-256 for sizes past 8 GiB
        return int.from_bytes(raw[1:], "big")
    text = raw.replace(b"\0", b" ").strip()
    try:
        return int(text, 8) if text else 0
    except ValueError:
        raise UnpackError("not a readable tar file (a header with a size that is not a number)") from None


class _Tar:
    """A tar stream parsed header by header (ustar, GNU long names, pax path records)."""

    def __init__(self, owner: Unpacker):
        self.owner = owner
        self.buffer = b""
        self.remaining = 0  # data bytes of the current member still to come
        self.padding = 0
        self.member: _Member | None = None
        self.meta: bytes | None = None  # collecting a long-name or pax record
        self.meta_kind = b""
        self.long_name: str | None = None
        self.done = False

    def feed(self, data: bytes) -> Iterator[Event]:
        self.buffer += data
        while not self.done:
            if self.remaining:
                take = self.buffer[:self.remaining]
                self.buffer = self.buffer[len(take):]
                self.remaining -= len(take)
                if self.meta is not None:
                    if len(self.meta) + len(take) > 1 << 20:
                        raise UnpackError(f"{self.owner.name}: not a readable tar file (a name record over 1 MiB)")
                    self.meta += take
                elif self.member is not None:
                    yield from self.member.write(take)
                if self.remaining:
                    return
                yield from self._member_done()
                continue
            if self.padding:
                skip = min(self.padding, len(self.buffer))
                self.buffer = self.buffer[skip:]
                self.padding -= skip
                if self.padding:
                    return
            if len(self.buffer) < 512:
                return
            header, self.buffer = self.buffer[:512], self.buffer[512:]
            if header == b"\0" * 512:
                self.done = True  # end of archive (zero blocks; the rest is padding)
                return
            try:
                yield from self._header(header)
            except UnpackError as exc:
                raise UnpackError(f"{self.owner.name}: {exc}") from None

    def _header(self, header: bytes) -> Iterator[Event]:
        name = _tar_field(header[0:100])
        prefix = _tar_field(header[345:500]) if header[257:262] == b"ustar" else ""
        if prefix:
            name = f"{prefix}/{name}"
        size = _tar_number(header[124:136])
        kind = header[156:157]
        self.padding = (-size) % 512
        self.remaining = size
        if kind in (b"L", b"x"):  # GNU long name, pax extended header (both for the next member)
            self.meta, self.meta_kind = b"", kind
            if size == 0:
                yield from self._member_done()
            return
        if self.long_name:
            name, self.long_name = self.long_name, None
        if kind in (b"0", b"\0", b"7"):
            self.member = _Member(self.owner)
            yield from self.owner._begin(name)
            if size == 0:
                yield from self._member_done()
        else:  # folders, links, devices, global pax headers: no log data
            self.member = None

    def _member_done(self) -> Iterator[Event]:
        if self.meta is not None:
            meta, self.meta = self.meta, None
            if self.meta_kind == b"L":
                self.long_name = meta.split(b"\0", 1)[0].decode("utf-8", errors="replace")
            else:
                for record in meta.decode("utf-8", errors="replace").split("\n"):
                    _, _, body = record.partition(" ")
                    key, _, value = body.partition("=")
                    if key == "path":
                        self.long_name = value
            return
        if self.member is not None:
            self.member = None
            yield from self.owner._end()

    def close(self) -> Iterator[Event]:
        member = self.owner.open_member
        if self.member is not None:  # a cut tarball: what was read of the last member is kept
            self.member = None
            yield from self.owner._end()
        if self.remaining and member is not None:  # and said: a header's size can also lie
            raise UnpackError(f"{self.owner.name}: the tar file ends {self.remaining:,} bytes before the end of "
                              f"member {member} (the file is cut short, or its header is damaged); what came before was read")


class _Zip:
    """A zip file read front to back by its local headers (no seeking back to the directory)."""

    def __init__(self, owner: Unpacker):
        self.owner = owner
        self.buffer = b""
        self.member: _Member | None = None
        self.inflater = None
        self.remaining = 0  # member bytes still to come, or -1 when only the deflate stream's end tells
        self.stored = False
        self.descriptor = False
        self.done = False

    def feed(self, data: bytes) -> Iterator[Event]:
        self.buffer += data
        while not self.done:
            if self.member is not None:
                ended = yield from self._member_data()
                if not ended:
                    return
                continue
            if len(self.buffer) < 30:
                return
            sig = self.buffer[:4]
            if sig in ZIP_OTHER:
                self.done = True  # the central directory: every member has been read
                return
            if sig != ZIP_LOCAL:
                raise UnpackError(f"{self.owner.name}: not a readable zip file (unexpected bytes at a member boundary)")
            (_, _, flags, method, _, _, _, csize, _, name_len, extra_len) = struct.unpack("<IHHHHHIIIHH", self.buffer[:30])
            if len(self.buffer) < 30 + name_len + extra_len:
                return
            name = self.buffer[30:30 + name_len].decode("utf-8" if flags & 0x800 else "cp437", errors="replace")
            self.buffer = self.buffer[30 + name_len + extra_len:]
            if flags & 0x1:
                raise UnpackError(f"{self.owner.name}: member {name} is encrypted; unzip it with its password first")
            if method not in (0, 8):
                raise UnpackError(f"{self.owner.name}: member {name} uses compression method {method}; only stored and "
                                  "deflated members are read (unzip it first)")
            self.descriptor = bool(flags & 0x8)
            self.stored = method == 0
            if self.stored and self.descriptor:
                raise UnpackError(f"{self.owner.name}: member {name} is stored with its size after the data, which "
                                  "cannot be read front to back; unzip it first")
            self.remaining = -1 if self.descriptor else csize
            self.inflater = None if self.stored else zlib.decompressobj(-zlib.MAX_WBITS)
            self.member = _Member(self.owner)
            yield from self.owner._begin(name)

    def _member_data(self) -> Iterator[Event]:
        """Move the current member's bytes out; returns True (as the generator's value) when it ended."""
        assert self.member is not None
        if self.stored:
            take = self.buffer[:self.remaining]
            self.buffer = self.buffer[len(take):]
            self.remaining -= len(take)
            yield from self.member.write(take)
            if self.remaining:
                return False
        else:
            chunk = self.buffer if self.remaining < 0 else self.buffer[:self.remaining]
            data = chunk
            try:
                while data:
                    out = self.inflater.decompress(data, 1 << 20)
                    yield from self.member.write(out)
                    data = self.inflater.unconsumed_tail
                    if self.inflater.eof:
                        break
            except zlib.error as exc:
                raise UnpackError(f"{self.owner.name}: member {self.owner.open_member} is damaged ({exc})") from None
            used = len(chunk) - len(self.inflater.unused_data) if self.inflater.eof else len(chunk)
            self.buffer = self.buffer[used:]
            if self.remaining > 0:
                self.remaining -= used
            if not self.inflater.eof:
                return False
        if self.descriptor:  # crc and sizes (12 bytes, 20 for zip64), after an optional signature
            if len(self.buffer) < 28:
                return False
            skip = 4 if self.buffer[:4] == b"PK\x07\x08" else 0
            nxt = self.buffer[skip + 12:skip + 16]
            if nxt != ZIP_LOCAL and nxt not in ZIP_OTHER and self.buffer[skip + 20:skip + 24] in (ZIP_LOCAL, *ZIP_OTHER):
                skip += 8  # zip64 sizes
            self.buffer = self.buffer[skip + 12:]
        self.member = None
        yield from self.owner._end()
        return True

    def close(self) -> Iterator[Event]:
        if self.member is not None:
            self.member = None
            yield from self.owner._end()
