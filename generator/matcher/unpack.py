"""Read through compressed logs and archives, fed piece by piece: `.gz`, `.zip`, `.tar`, `.tar.gz`,
and archives inside archives.

Push-based (``feed`` bytes, get events back) so the command line and the browser, which
streams a dropped file to its worker in pieces, share one reader; standard library only
(zlib), so it runs in Pyodide as it does here. Nothing is written to disk and memory stays
bounded whatever the input unpacks to. The kind is told by the first bytes, not the name:
gzip (1f 8b), zip (a local file header, PK 03 04), tar (ustar at offset 257); anything else
is a plain log.

Events are ``("begin", member)``, ``("data", bytes)``, ``("end", member)`` and
``("note", text)``. A plain or gzip input is one member named ``""``. Every layer is read the
same way: a member (or a gzip's payload) that is itself gzip, zip or tar is unpacked in turn,
up to ``MAX_DEPTH`` archives deep (a ``.tar.gz`` counts one), and a member inside a member is
named by both, ``node-3.tar.gz!var/log/kern.log.2.gz``. An archive deeper than that is not
read as text: a note names it and says how to go on.

Limits against decompression bombs, counted over all the layers of one input together: at
most ``max_unpacked`` bytes (default 16 GiB) of text read and of bytes passed over unread (an
archive nested too deep, what follows an archive's end), at most ``max_members`` files (10,000)
in its archives at every depth. Past either, ``UnpackError`` says where and how to go on. Zip
members must be stored or deflated (what every zip tool writes); encrypted members are refused
with a message. Damage is said, not swallowed: a gzip cut before its end mark, bytes after the
last gzip member that are neither another member nor NUL padding, a tar member running past
the end of the file, a zip that ends before its central directory. A zip's folder entries are
not files: they are neither read nor counted; a zip member that cannot be read (encrypted, or
compressed another way) is passed over by its size with a note, and the other members are read.
xz, bzip2, zstd and 7-Zip data are recognised by their first bytes and refused with the command
that unpacks them (the browser's Python carries no lzma or bz2 module). In the outermost layer
each is an ``UnpackError`` (at close, after what came before was read); inside a member of an
archive it is a note, the rest of that member is passed over and the archive's other members
are still read.
"""

from __future__ import annotations

import struct
import zlib
from typing import Iterator

from .errors import InputError

MAX_UNPACKED = 16 << 30
MAX_MEMBERS = 10_000
MAX_DEPTH = 6  # archives read one inside another (a .gz, .zip, .tar each count one; a .tar.gz counts one)
GZIP_MAGIC = b"\x1f\x8b"
ZIP_LOCAL = b"PK\x03\x04"
ZIP_OTHER = (b"PK\x01\x02", b"PK\x05\x06", b"PK\x06\x06", b"PK\x06\x07", b"PK\x07\x08")
SNIFF = 262  # bytes needed to tell tar from plain text (ustar sits at offset 257)
LABEL = {"gzip": "gzip data", "zip": "a zip file", "tar": "a tar file"}


class UnpackError(InputError):
    """An archive that cannot be read through, or one that unpacks past the limits."""


class _LimitError(UnpackError):
    """Past ``max_unpacked`` or ``max_members``: the whole input stops, at whatever depth it came."""


def _size_text(n: int) -> str:
    if n >= 1 << 30:
        return f"{n / (1 << 30):.0f} GiB"
    return f"{n / (1 << 20):.0f} MiB" if n >= 1 << 20 else f"{n:,} byte{'' if n == 1 else 's'}"


# Compressions read by tools this reader does not carry (the browser's Python has no lzma or bz2
# module loaded): said, with the command that unpacks them, instead of read as bytes
OTHER_COMPRESSION = ((b"\xfd7zXZ\x00", "xz", "xz -dc"), (b"BZh", "bzip2", "bzip2 -dc"),
                     (b"\x28\xb5\x2f\xfd", "zstd", "zstd -dc"), (b"7z\xbc\xaf\x27\x1c", "7-Zip", "7z x -so"))


def _other_compression(data: bytes) -> tuple[str, str] | None:
    for magic, name, command in OTHER_COMPRESSION:
        if data.startswith(magic) and (name != "bzip2" or data[3:4].isdigit() and data[4:10] == b"1AY&SY"):
            return name, command
    return None


def _sniff(data: bytes) -> str:
    """What the first bytes (up to ``SNIFF``) of a layer say it is."""
    if data[:2] == GZIP_MAGIC:
        return "gzip"
    if data[:4] == ZIP_LOCAL:
        return "zip"
    if len(data) >= SNIFF and data[257:262] == b"ustar":
        return "tar"
    return "plain"


def _join(outer: str, inner: str) -> str:
    """A member's name inside a member: ``node-3.tar.gz!var/log/kern.log``."""
    return f"{outer}!{inner}" if outer else inner


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
        self.passed = 0  # all bytes after the last member, padding too (counted against the limit)

    def pieces(self, data: bytes) -> Iterator[bytes]:
        if self.ended:
            self.passed += len(data)
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
                # everything after the member's end is in unused_data; unconsumed_tail may hold the
                # same bytes again (when the call that met the end resumed from an output bound):
                # it is not added, or each member's end would double what follows (red team s25)
                rest = self.inflater.unused_data
                self.inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
                if rest and rest[:2] != GZIP_MAGIC[:len(rest[:2])]:
                    # not another member: NUL padding (tape blocks) is ignored; anything else is counted
                    self.ended = True
                    self.passed += len(rest)
                    self.trailing += len(rest) - rest.count(0)
                    rest = b""
                data = rest


Event = tuple[str, object]


class Unpacker:
    """One input file (or stream) read through whatever containers it is in, one inside another.

    ``feed`` and ``close`` return iterators: consume each event before asking for the next,
    and memory stays bounded whatever the input inflates to."""

    def __init__(self, name: str, max_unpacked: int = MAX_UNPACKED, max_members: int = MAX_MEMBERS):
        self.name = name
        self.max_unpacked = max_unpacked
        self.max_members = max_members
        self.unpacked = 0  # bytes read as text or passed over, all layers together
        self.members = 0  # files in the input's archives, all layers together
        self.open_member: str | None = None
        self.root = _Layer(self, "", 0)

    @property
    def kind(self) -> str | None:
        """What the input is on the outside: plain, gzip, tar, tar.gz or zip (None before its first bytes)."""
        root = self.root
        if root.kind == "gzip" and root.inner is not None and root.inner.kind == "tar":
            return "tar.gz"
        return root.kind

    def feed(self, data: bytes) -> Iterator[Event]:
        return self.root.feed(data)

    def close(self) -> Iterator[Event]:
        return self.root.close()

    def where(self, path: str) -> str:
        """The input's name, then the member's: ``job.zip!node-3.tar.gz!kern.log``."""
        return _join(self.name, path) if path else self.name

    def _count_member(self) -> None:
        self.members += 1
        if self.members > self.max_members:
            raise _LimitError(f"{self.name}: holds more than {self.max_members:,} files (the files of archives inside "
                              "it counted in); read it in parts (unpack it and pass the folders you need)")

    def _count(self, n: int) -> None:
        self.unpacked += n
        if self.unpacked > self.max_unpacked:
            if self.root.kind == "plain":  # nothing was unpacked: an endless stream (/dev/zero) or a huge log
                raise _LimitError(f"{self.name}: more than {_size_text(self.max_unpacked)} read (an endless stream, or "
                                  "a very large log); stopped there. Pass --max-unpacked SIZE to read further")
            raise _LimitError(f"{self.name}: unpacks to more than {_size_text(self.max_unpacked)} (a decompression "
                              "bomb, or a very large archive); stopped there. Pass --max-unpacked SIZE to read further")

    def _begin(self, member: str) -> Iterator[Event]:
        self.open_member = member
        yield ("begin", member)

    def _emit(self, data: bytes) -> Iterator[Event]:
        if not data:
            return
        self._count(len(data))
        yield ("data", data)

    def _end(self) -> Iterator[Event]:
        if self.open_member is not None:
            member, self.open_member = self.open_member, None
            yield ("end", member)


class _Layer:
    """One layer of an input: the input itself, a member of an archive, or a gzip's payload.

    Its first bytes tell what it is. Then it is read as text (one member of the report), or
    passed through gzip, tar or zip into layers of its own, or (an archive nested deeper than
    ``MAX_DEPTH``) passed over with a note."""

    def __init__(self, owner: Unpacker, path: str, depth: int, in_gzip: bool = False):
        self.owner = owner
        self.path = path  # the member's name, composed with the members around it ("" for the input)
        self.depth = depth  # archives this layer is inside (a gzip and the tar it holds count one)
        self.in_gzip = in_gzip  # a gzip's payload: a tar here is one .tar.gz with that gzip
        self.kind: str | None = None  # plain, gzip, tar, zip; deep (not read); failed (damaged: the rest passed over)
        self.head = b""
        self.gunzip: _Gunzip | None = None
        self.inner: _Layer | None = None  # a gzip's payload
        self.container: _Tar | _Zip | None = None

    @property
    def where(self) -> str:
        return self.owner.where(self.path)

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
        if self.kind == "plain":
            yield from self.owner._end()
        elif self.kind == "gzip":
            assert self.gunzip is not None and self.inner is not None
            if self.gunzip.midway:  # a download or a copy cut short: what came out of it is read, then the cut said
                cut = UnpackError(f"{self.where}: the gzip data ends before its end mark (the file is cut short or "
                                  "still being written); what came before it was read")
                # the payload's first bytes wait in its layer until their kind is known (SNIFF): a gzip
                # cut that early still gives them, as a member under this layer's own name (the input's
                # name for a .gz alone), and a member of a payload that is an archive is closed
                try:
                    yield from self.inner.close()
                except _LimitError:
                    raise
                except UnpackError:
                    pass  # the payload ends early too (a tar member, a zip's directory): the cut is the reason
                raise cut
            yield from self.inner.close()
            if self.gunzip.trailing:
                raise UnpackError(f"{self.where}: {self.gunzip.trailing:,} bytes after the end of the gzip data are "
                                  "not gzip and were not read (data appended to a compressed file); what came before "
                                  "was read")
        elif self.container is not None:
            yield from self.container.close()

    def write(self, data: bytes) -> Iterator[Event]:
        """A member's bytes, from its archive: damage inside the member is a note, the rest of the
        member is passed over, and the archive goes on with its next member."""
        try:
            yield from self.feed(data)
        except _LimitError:
            raise
        except UnpackError as exc:
            yield from self._failed(exc)

    def finish(self) -> Iterator[Event]:
        """The member's end, from its archive (damage found only now is a note too)."""
        try:
            yield from self.close()
        except _LimitError:
            raise
        except UnpackError as exc:
            yield from self._failed(exc)

    def _failed(self, exc: UnpackError) -> Iterator[Event]:
        self.kind, self.gunzip, self.inner, self.container = "failed", None, None, None
        yield from self.owner._end()  # the member being read keeps what it had
        yield ("note", str(exc))

    def _decide(self, data: bytes) -> Iterator[Event]:
        kind = _sniff(data)
        other = _other_compression(data) if kind == "plain" else None
        if other:  # read as text it would be bytes: 'No known failure found' on a log never read
            raise UnpackError(f"{self.where}: {other[0]}-compressed data, which this reader does not unpack; unpack it "
                              f"first ({other[1]} FILE > FILE.log, or {other[1]} FILE | kb diagnose -) and pass the log")
        layer = self.depth + (0 if kind == "tar" and self.in_gzip else 1)
        if kind != "plain" and layer > MAX_DEPTH:
            self.kind = "deep"
            yield ("note", f"{self.where}: not read: {LABEL[kind]} nested deeper than {MAX_DEPTH} layers (layer "
                           f"{layer} of archives inside archives); unpack it (gunzip, unzip or tar -x) and pass the "
                           "files inside it")
            return
        self.kind = kind
        if kind == "plain":
            yield from self.owner._begin(self.path)
        elif kind == "gzip":
            self.gunzip = _Gunzip()
            self.inner = _Layer(self.owner, self.path, layer, in_gzip=True)
        elif kind == "tar":
            self.container = _Tar(self, layer)
        else:
            self.container = _Zip(self, layer)

    def _push(self, data: bytes) -> Iterator[Event]:
        if not data:
            return
        if self.kind == "plain":
            yield from self.owner._emit(data)
        elif self.kind == "gzip":
            assert self.gunzip is not None and self.inner is not None
            passed = self.gunzip.passed
            for piece in self._gunzipped(data):
                yield from self.inner.feed(piece)
            self.owner._count(self.gunzip.passed - passed)
        elif self.container is not None:
            yield from self.container.feed(data)
        else:  # deep or failed: passed over, and counted
            self.owner._count(len(data))

    def _gunzipped(self, data: bytes) -> Iterator[bytes]:
        assert self.gunzip is not None
        try:
            yield from self.gunzip.pieces(data)
        except UnpackError as exc:
            raise UnpackError(f"{self.where}: {exc}") from None


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
    """A tar stream parsed header by header (ustar, GNU long names, pax path records); each
    file in it is a layer of its own."""

    def __init__(self, layer: _Layer, depth: int):
        self.layer = layer
        self.owner = layer.owner
        self.depth = depth  # of the members: archives around them, this one included
        self.buffer = b""
        self.remaining = 0  # data bytes of the current member still to come
        self.padding = 0
        self.member: _Layer | None = None
        self.name: str | None = None  # the current member's name in this tar
        self.meta: bytes | None = None  # collecting a long-name or pax record
        self.meta_kind = b""
        self.long_name: str | None = None
        self.done = False

    def feed(self, data: bytes) -> Iterator[Event]:
        if self.done:  # past the end of the archive: padding, or whatever follows (passed over, counted)
            self.owner._count(len(data))
            return
        self.buffer += data
        while True:
            if self.remaining:
                take = self.buffer[:self.remaining]
                self.buffer = self.buffer[len(take):]
                self.remaining -= len(take)
                if self.meta is not None:
                    if len(self.meta) + len(take) > 1 << 20:
                        raise UnpackError(f"{self.layer.where}: not a readable tar file (a name record over 1 MiB)")
                    self.meta += take
                elif self.member is not None:
                    yield from self.member.write(take)
                else:  # a folder, link or device with data: passed over
                    self.owner._count(len(take))
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
                self.owner._count(len(self.buffer))
                self.buffer = b""
                return
            yield from self._header(header)

    def _header(self, header: bytes) -> Iterator[Event]:
        name = _tar_field(header[0:100])
        prefix = _tar_field(header[345:500]) if header[257:262] == b"ustar" else ""
        if prefix:
            name = f"{prefix}/{name}"
        try:
            size = _tar_number(header[124:136])
        except UnpackError as exc:
            raise UnpackError(f"{self.layer.where}: {exc}") from None
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
            self.owner._count_member()
            self.name = name
            self.member = _Layer(self.owner, _join(self.layer.path, name), self.depth)
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
            member, self.member, self.name = self.member, None, None
            yield from member.finish()

    def close(self) -> Iterator[Event]:
        name, cut = self.name, self.member is not None and self.remaining
        if self.member is not None:  # a cut tarball: what was read of the last member is kept
            member, self.member, self.name = self.member, None, None
            yield from member.finish()
        if cut:  # and said: a header's size can also lie
            raise UnpackError(f"{self.layer.where}: the tar file ends {self.remaining:,} bytes before the end of "
                              f"member {name} (the file is cut short, or its header is damaged); what came before was read")


class _Zip:
    """A zip file read front to back by its local headers (no seeking back to the directory);
    each file in it is a layer of its own."""

    def __init__(self, layer: _Layer, depth: int):
        self.layer = layer
        self.owner = layer.owner
        self.depth = depth  # of the members: archives around them, this one included
        self.buffer = b""
        self.member: _Layer | None = None
        self.name = ""  # the current member's name in this zip
        self.inflater = None
        self.remaining = 0  # member bytes still to come, or -1 when only the deflate stream's end tells
        self.stored = False
        self.descriptor = False
        self.done = False
        self.passing = 0  # bytes of a member that cannot be read (encrypted, another method) still to pass over

    def feed(self, data: bytes) -> Iterator[Event]:
        if self.done:  # the central directory and what follows it: passed over, counted
            self.owner._count(len(data))
            return
        self.buffer += data
        where = self.layer.where
        while True:
            if self.passing:
                take = min(self.passing, len(self.buffer))
                self.owner._count(take)
                self.buffer, self.passing = self.buffer[take:], self.passing - take
                if self.passing:
                    return
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
                self.owner._count(len(self.buffer))
                self.buffer = b""
                return
            if sig != ZIP_LOCAL:
                raise UnpackError(f"{where}: not a readable zip file (unexpected bytes at a member boundary)")
            (_, _, flags, method, _, _, _, csize, _, name_len, extra_len) = struct.unpack("<IHHHHHIIIHH", self.buffer[:30])
            if len(self.buffer) < 30 + name_len + extra_len:
                return
            name = self.buffer[30:30 + name_len].decode("utf-8" if flags & 0x800 else "cp437", errors="replace")
            self.buffer = self.buffer[30 + name_len + extra_len:]
            unreadable = (f"member {name} is encrypted; unzip it with its password first" if flags & 0x1 else
                          f"member {name} uses compression method {method}; only stored and deflated members are "
                          "read (unzip it first)" if method not in (0, 8) else None)
            if unreadable and flags & 0x8:  # its size comes after its data: its end cannot be found
                raise UnpackError(f"{where}: {unreadable}")
            if unreadable:  # passed over by its size, said, and the zip's other members read
                self.owner._count_member()
                self.passing = csize
                yield ("note", f"{self.owner.where(_join(self.layer.path, name))}: not read: {unreadable}")
                continue
            self.descriptor = bool(flags & 0x8)
            self.stored = method == 0
            if self.stored and self.descriptor:
                raise UnpackError(f"{where}: member {name} is stored with its size after the data, which "
                                  "cannot be read front to back; unzip it first")
            if name.endswith("/") and self.stored and csize == 0:
                continue  # a folder: no data, and not one of the files the report counts
            self.owner._count_member()
            self.remaining = -1 if self.descriptor else csize
            self.inflater = None if self.stored else zlib.decompressobj(-zlib.MAX_WBITS)
            self.name = name
            self.member = _Layer(self.owner, _join(self.layer.path, name), self.depth)

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
        elif not self.inflater.eof:  # (once ended, a piece too short for the descriptor comes back here)
            chunk = self.buffer if self.remaining < 0 else self.buffer[:self.remaining]
            data = chunk
            while data:
                try:
                    out = self.inflater.decompress(data, 1 << 20)
                except zlib.error as exc:
                    raise UnpackError(f"{self.layer.where}: member {self.name} is damaged ({exc})") from None
                yield from self.member.write(out)
                data = self.inflater.unconsumed_tail
                if self.inflater.eof:
                    break
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
        member, self.member = self.member, None
        yield from member.finish()
        return True

    def close(self) -> Iterator[Event]:
        name = self.name if self.member is not None else None
        if self.member is not None:  # a cut zip: what was read of the last member is kept
            member, self.member = self.member, None
            yield from member.finish()
        if not self.done:  # and said, as for a cut gzip or tar: every zip ends with its directory
            inside = f" inside member {name}" if name else ""
            raise UnpackError(f"{self.layer.where}: the zip file ends{inside} before its central directory (the file "
                              "is cut short or still being written); what came before was read")
