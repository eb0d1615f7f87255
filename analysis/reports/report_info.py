"""Where a report was recorded, as the report itself says: GPU, compute capability, driver,
CUDA and Nsight Compute versions.

``ncu_report`` gives every launch's device attributes (``device__attribute_display_name``,
``device__attribute_compute_capability_major``/``_minor``), but none of the versions: they
are in the report's session details (what ncu-ui shows on its Session page), which the
Python module does not expose. This module reads them from the file itself. A report is
``NVR\\0``, a uint32 size and a ``FileHeader`` message, then blocks of (uint32 size,
``BlockHeader`` message, ``BlockHeader.PayloadSize`` bytes of payload): sizes little-endian,
messages protobuf as Nsight Compute's ``ProfilerReport.proto`` defines them. A block header's
``SessionDetails`` (field 3, ``ReportSessionDetails``) holds ``DeviceAttributes`` (field 6:
``ID``, ``Name`` and ``Attributes``, each a name and a value) and ``VersionInfo`` (field 8:
``Provider`` and ``Version``), e.g. ``("Nsight Compute Target", "2025.3.1.0 (build 36398880)
(public-release)")``, ``("CUDA Version", "13.0")``, ``("Display Driver Version",
"550.90.07")``. Only block headers are decoded; payloads (the launches) are skipped.

What the 56 reports of other people hold (../shared/foreign-reports, Nsight Compute 2020.2.1
to 2026.2.1): every one names its GPU, compute capability and CUDA version; all but one its
Nsight Compute version (a V100 report of ``PerfWorks`` 0.108.5 has no Nsight Compute entry);
42 the driver version (not those of Nsight Compute 2020.2.1, 2025.2.1 and 2026.2.1, four of
the five of 2025.1.0, nor the V100 one). This project's H200 reports (2025.3.1) hold none.
"""

from __future__ import annotations

import lzma
import os
import re
import struct
from pathlib import Path
from typing import BinaryIO

from analysis.errors import ReportError

#: Keys of :func:`report_metadata`'s dict, named as the set columns of
#: :data:`analysis.reports.tables.SET_COLUMNS` and the fields of a set's metadata.json.
METADATA_KEYS = ("gpu", "cc", "driver", "cuda_version", "ncu_version")

#: VersionInfo providers, by the key they fill. For ``ncu_version``, the Nsight Compute
#: that profiled ("Target") before the one that wrote the file from a remote host ("Host").
_PROVIDERS = {
    "driver": ("Display Driver Version",),
    "cuda_version": ("CUDA Version",),
    "ncu_version": ("Nsight Compute Target", "Nsight Compute Host"),
}

_MAGIC = b"NVR\0"
#: The six bytes every xz file starts with (xz's file format 2.1.1.1), for the readers and the
#: import alike.
_XZ_MAGIC = b"\xfd7zXZ\x00"
#: What :func:`packed_with` says of a legacy .lzma file.
_LZMA_ALONE = "lzma-compressed (legacy .lzma)"
_DAMAGED = "profile the kernel again, or remove the file from its set"


class _Malformed(ValueError):
    """A protobuf message that does not decode."""


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if i >= len(buf):
            raise _Malformed("varint runs past the end")
        byte = buf[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i
        if shift > 63:
            raise _Malformed("varint longer than 10 bytes")


def _fields(buf: bytes) -> list[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of each field of one protobuf message: an int for
    varints, the raw bytes for length-delimited, 32- and 64-bit fields."""
    out: list[tuple[int, int, int | bytes]] = []
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire in (1, 2, 5):
            if wire == 2:
                size, i = _varint(buf, i)
            else:
                size = 8 if wire == 1 else 4
            if i + size > len(buf):
                raise _Malformed(f"field {number} runs past the end of its message")
            value, i = buf[i:i + size], i + size
        else:
            raise _Malformed(f"wire type {wire} (field {number})")
        out.append((number, wire, value))
    return out


def _text(raw: int | bytes) -> str | None:
    return raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else None


def _metric_value(raw: bytes) -> str | int | float | None:
    """A ``ProfileMetricValue``: StringValue (1), FloatValue (2), DoubleValue (3),
    Uint32Value (4) or Uint64Value (5)."""
    for number, wire, value in _fields(raw):
        if number == 1 and wire == 2:
            return _text(value)
        if number == 2 and wire == 5:
            return struct.unpack("<f", value)[0]
        if number == 3 and wire == 1:
            return struct.unpack("<d", value)[0]
        if number in (4, 5) and wire == 0:
            return value
    return None


def _read_exact(fh: BinaryIO, size: int, path: Path, what: str) -> bytes:
    data = fh.read(size)
    if len(data) != size:
        raise ReportError(path, f"ends inside {what} (truncated)", _DAMAGED)
    return data


def _session_details(path: Path, fh: BinaryIO, size: int | None) -> tuple[list[bytes], int]:
    """The raw ``SessionDetails`` messages of every block header, in file order, and the
    sum of the headers' fields 2 and 7: the results (profiled kernel launches, and ranges
    of range replay) the file holds, as many as ``ncu_report`` gives actions in all 56
    reports of other people and this project's test reports (tests/test_report_info.py)."""
    if fh.read(len(_MAGIC)) != _MAGIC:
        raise ReportError(path, "is not an Nsight Compute report (no NVR header)",
                          "pass an Nsight Compute report, as written by ncu --export")
    (hsize,) = struct.unpack("<I", _read_exact(fh, 4, path, "the file header"))
    _read_exact(fh, hsize, path, "the file header")
    sessions: list[bytes] = []
    results = 0
    while True:
        head = fh.read(4)
        if not head:
            return sessions, results
        if len(head) < 4:
            raise ReportError(path, "ends inside a block's size (truncated)", _DAMAGED)
        (bsize,) = struct.unpack("<I", head)
        header = _fields(_read_exact(fh, bsize, path, "a block header"))
        sessions += [v for n, w, v in header if n == 3 and w == 2]
        results += sum(v for n, w, v in header if n in (2, 7) and w == 0)
        payload = next((v for n, w, v in header if n == 5 and w == 0), 0)
        end = fh.tell() + payload
        fh.seek(payload, os.SEEK_CUR)
        if fh.tell() != end or (size is not None and end > size):
            raise ReportError(path, "ends inside a block's payload (truncated)", _DAMAGED)


def _distinct(values: list[str]) -> str | None:
    """One value, several distinct values joined by ", " in the order first met, or None."""
    seen = list(dict.fromkeys(v for v in values if v))
    return ", ".join(seen) if seen else None


#: File signatures of compressors and archives a report may have been packed with, as
#: (offset, magic, what the file is): each format's magic number (gzip RFC 1952 with its only
#: method, deflate; zip APPNOTE 4.3.7, local file or empty archive; Zstandard RFC 8878; 7-Zip;
#: xz's file format 2.1.1.1; the LZ4 frame format's 0x184D2204 and its legacy frame's
#: 0x184C2102, little-endian; POSIX tar's "ustar" at byte 257), so that such a file is named for
#: what it is, not as a damaged report. bzip2, tar without "ustar" (V7), legacy .lzma and the
#: skippable frames of zstd and lz4 are recognised by :func:`_packed_head` from their structure.
_PACKED = ((0, b"\x1f\x8b\x08", "gzip-compressed"), (0, b"PK\x03\x04", "a zip archive"),
           (0, b"PK\x05\x06", "a zip archive"), (0, b"\x28\xb5\x2f\xfd", "zstd-compressed"),
           (0, b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"), (0, _XZ_MAGIC, "xz-compressed"),
           (0, b"\x04\x22\x4d\x18", "lz4-compressed"), (0, b"\x02\x21\x4c\x18", "lz4-compressed (legacy frame)"),
           (257, b"ustar", "a tar archive"))
#: What :func:`packed_with` says of an xz file.
XZ = "xz-compressed"
#: Bytes of a file's start that :func:`packed_with` looks at.
HEAD_BYTES = 4096
#: bzip2's stream header "BZh" and a block size digit, then a block's magic (pi) or the end of
#: stream's (sqrt pi), as bzip2 1.0's format writes them.
_BZIP2 = re.compile(rb"BZh[1-9](?:1AY&SY|\x17rE8P\x90)")
_SKIPPABLE = "zstd- or lz4-compressed (starts with a skippable frame)"


def _is_tar(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) opens a tar archive: its first header block is
    not all zero (:mod:`tarfile` reads a zero block as the end of an empty archive) and
    :mod:`tarfile` reads it (its checksum; the V7 format has no magic)."""
    import io
    import tarfile

    return len(head) >= 512 and head[:512].count(0) < 512 and tarfile.is_tarfile(io.BytesIO(head))


def _is_lzma_alone(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) starts a legacy .lzma stream of any settings:
    its 13-byte header as xz and LZMA SDK write it (properties lc + 9 (lp + 5 pb) below 225, a
    dictionary size of 2^n or 2^n + 2^(n-1) bytes, n >= 12, an uncompressed size of -1 or below
    2^38) and :mod:`lzma` (``FORMAT_ALONE``) decodes its start into bytes without error."""
    if len(head) < 14 or head[0] >= 225:
        return False
    dict_size = int.from_bytes(head[1:5], "little")
    size = int.from_bytes(head[5:13], "little")
    n = dict_size.bit_length() - 1
    if n < 12 or dict_size not in (1 << n, (1 << n) + (1 << (n - 1))) or not (size == 2**64 - 1 or size < 2**38):
        return False
    try:
        out = lzma.LZMADecompressor(format=lzma.FORMAT_ALONE).decompress(head, max_length=64)
    except lzma.LZMAError:
        return False
    return len(out) > 0


def _packed_head(head: bytes, depth: int = 0) -> str | None:
    """What a file that starts with ``head`` is, where it is packed (:data:`_PACKED`, bzip2,
    tar, legacy .lzma, or zstd/lz4 behind skippable frames); None for a report's start or a
    file of no known kind."""
    if head.startswith(_MAGIC):
        return None
    # zstd (RFC 8878 3.1.2) and lz4 skippable frames: magic 0x184D2A50-5F and a 4-byte size,
    # as pzstd writes before its frames
    if len(head) >= 8 and head[1:4] == b"\x2a\x4d\x18" and 0x50 <= head[0] <= 0x5F:
        rest = head[8 + int.from_bytes(head[4:8], "little"):]
        inner = _packed_head(rest, depth + 1) if rest and depth < 4 else None
        return inner if inner not in (None, _SKIPPABLE) else _SKIPPABLE
    found = next((what for at, magic, what in _PACKED if head[at:at + len(magic)] == magic), None)
    if found is not None:
        return found
    if _BZIP2.match(head):
        return "bzip2-compressed"
    if _is_tar(head):
        return "a tar archive"
    return _LZMA_ALONE if _is_lzma_alone(head) else None


def packed_with(path: Path) -> str | None:
    """What ``path`` is where its first :data:`HEAD_BYTES` bytes are those of a compressed file
    or an archive (``gzip-compressed``, ``a zip archive``, ``xz-compressed``, ``a tar archive``,
    ``lz4-compressed``, ``lzma-compressed (legacy .lzma)``...: :func:`_packed_head`); else None
    (a report, or a file of no known kind).

    Raises:
        OSError: the file cannot be read.
    """
    with open(path, "rb") as fh:
        return _packed_head(fh.read(HEAD_BYTES))


def check_stream_head(path: Path, head: bytes) -> None:
    """Check the first bytes of the report that the xz file ``path`` holds (``head``, its
    decompressed first :data:`HEAD_BYTES`): a report's magic, else the packing named.

    Raises:
        ReportError: the stream holds a compressed file or an archive (naming which), or no
            report (no NVR header), or ends inside the magic (truncated).
    """
    what = _packed_head(head)
    if what is not None:
        raise ReportError(path, f"its xz stream holds a file that is {what}, not a report",
                          "unpack it to a .ncu-rep file, or recompress that with xz")
    if len(head) < len(_MAGIC) and _MAGIC.startswith(head):
        raise ReportError(path, "its xz stream ends inside the file header (truncated)", _DAMAGED)
    if not head.startswith(_MAGIC):
        raise ReportError(path, "its xz stream holds no Nsight Compute report (no NVR header)",
                          "pass an Nsight Compute report, as written by ncu --export")


def check_report_file(path: Path) -> None:
    """What every reader checks before opening ``path``: it exists, is named ``.ncu-rep`` or
    ``.ncu-rep.xz``, is a regular file (not a folder, a pipe or a device), is not empty, and
    is packed as its name says (a ``.ncu-rep`` that is gzip, zip, bzip2, zstd, 7-Zip, lz4, tar,
    legacy lzma or xz, or a ``.ncu-rep.xz`` without an xz header, is refused:
    :func:`packed_with`); a plain ``.ncu-rep`` must start with a report's magic (``NVR``).

    Raises:
        ReportError: the first of these that fails, naming the file.
    """
    if not path.exists():
        raise ReportError(path, "file does not exist")
    if not path.name.endswith((".ncu-rep", ".ncu-rep.xz")):
        try:  # said only as a hint: a file that cannot be read is refused for its name alone
            packed = packed_with(path) if path.is_file() else None
        except OSError:
            packed = None
        raise ReportError(path, "is not a .ncu-rep or .ncu-rep.xz file" + (f" (it is {packed})" if packed else ""),
                          "unpack it to a .ncu-rep file" if packed and packed != XZ else
                          "pass an Nsight Compute report, as written by ncu --export")
    if not path.is_file():
        raise ReportError(path, "is not a regular file (a folder, a pipe or a device)",
                          "pass an Nsight Compute report, as written by ncu --export")
    size = path.stat().st_size
    if size == 0:
        raise ReportError(path, "file is empty", _DAMAGED)
    with open(path, "rb") as fh:
        head = fh.read(HEAD_BYTES)
    packed = _packed_head(head)
    xz = path.name.endswith(".xz")
    if packed == XZ and not xz:
        raise ReportError(path, "is xz-compressed, though named .ncu-rep", "name it .ncu-rep.xz")
    if packed not in (None, XZ):
        raise ReportError(path, f"is {packed}, not {'xz' if xz else 'a plain report'}",
                          f"unpack it to a .ncu-rep file{', or recompress that with xz' if xz else ''}")
    if xz and packed is None:
        raise ReportError(path, "is not an xz file (no xz header)",
                          "compress reports with xz, or drop the .xz suffix of a plain .ncu-rep")
    if not xz and size < len(_MAGIC) and _MAGIC.startswith(head):
        raise ReportError(path, "ends inside the file header (truncated)", _DAMAGED)
    if not xz and not head.startswith(_MAGIC):
        raise ReportError(path, "is not an Nsight Compute report (no NVR header)",
                          "pass an Nsight Compute report, as written by ncu --export")


def not_padding(rest: bytes) -> int:
    """How many bytes of ``rest``, what follows an xz stream in its file, are not xz's stream
    padding (a whole number of 4-byte words of zeros, xz file format 2.2): ``len(rest)``, or 0
    where it is padding or empty."""
    return len(rest) if rest.strip(b"\0") or len(rest) % 4 else 0


class _OneXzStream:
    """The decompressed bytes of an xz file's first stream, for :func:`_session_details`
    (``read``, ``tell`` and forward ``seek`` only). ``lzma.open`` would read on into a second
    stream appended to the file, and fails on xz's stream padding (xz file format 2.2);
    :meth:`bytes_after` says what follows the stream instead."""

    def __init__(self, fh: BinaryIO) -> None:
        self._fh = fh
        self._dec = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
        self._buf = b""
        self._off = 0  # read position in _buf (slicing _buf itself would copy it on every read)
        self._pos = 0

    def _more(self) -> bytes:
        if self._dec.eof:
            return b""
        if self._dec.needs_input:
            chunk = self._fh.read(1 << 16)
            if not chunk:
                raise EOFError("Compressed file ended before the end-of-stream marker was reached")
            return self._dec.decompress(chunk, max_length=1 << 24)
        return self._dec.decompress(b"", max_length=1 << 24)

    def _filled(self) -> bool:
        """Whether bytes are left to read, after decompressing more where the buffer is spent."""
        while self._off == len(self._buf):
            self._buf, self._off = self._more(), 0
            if not self._buf and self._dec.eof:
                return False
        return True

    def read(self, size: int) -> bytes:
        parts = []
        while size > 0 and self._filled():
            part = self._buf[self._off:self._off + size]
            self._off += len(part)
            parts.append(part)
            size -= len(part)
        data = b"".join(parts)
        self._pos += len(data)
        return data

    def peek(self, size: int) -> bytes:
        """The next ``size`` bytes (fewer at the stream's end), without reading past them."""
        while len(self._buf) - self._off < size and not self._dec.eof:
            if more := self._more():
                self._buf, self._off = self._buf[self._off:] + more, 0
        return self._buf[self._off:self._off + size]

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = os.SEEK_CUR) -> int:
        if whence != os.SEEK_CUR or offset < 0:
            raise ValueError("only forward seeks from the current position")
        while offset > 0 and self._filled():
            step = min(offset, len(self._buf) - self._off)  # skipped without copying
            self._off += step
            self._pos += step
            offset -= step
        return self._pos

    def bytes_after(self) -> int:
        """Bytes after the stream's end other than xz's zero padding (a whole number of 4-byte
        words of zeros), 0 where there are none; reads the stream to its end."""
        while self._more() or not self._dec.eof:
            pass
        return not_padding(self._dec.unused_data + self._fh.read())


def _headers(path: Path) -> tuple[list[bytes], int]:
    """:func:`_session_details` of a report file, plain or xz (its first stream, then nothing
    but xz's zero padding), after checking that it is one.

    Raises:
        ReportError: as :func:`report_metadata`.
    """
    path = Path(path)
    check_report_file(path)
    xz = path.suffix == ".xz"  # its xz header checked by check_report_file
    try:
        with open(path, "rb") as raw:
            if xz:
                fh = _OneXzStream(raw)
                check_stream_head(path, fh.peek(HEAD_BYTES))
                try:
                    found = _session_details(path, fh, None)
                except (_Malformed, ReportError):
                    if after := fh.bytes_after():  # a second stream appended, say
                        raise ReportError(path, f"{after} bytes after the end of the xz stream", _DAMAGED) from None
                    raise
                if after := fh.bytes_after():
                    raise ReportError(path, f"{after} bytes after the end of the xz stream", _DAMAGED)
            else:
                found = _session_details(path, raw, path.stat().st_size)
    except (EOFError, lzma.LZMAError) as exc:
        raise ReportError(path, f"not a complete xz stream ({exc})", _DAMAGED) from None
    except _Malformed as exc:
        raise ReportError(path, f"a block header does not decode ({exc})", _DAMAGED) from None
    return found


def report_launches(path: str | Path) -> int:
    """The profiled launches (kernel launches, or ranges of range replay) a report holds,
    from its block headers alone (payloads are skipped; about 10 ms a report). ncu writes a block per launch, so a
    plain report cut exactly between two blocks reads as a whole report with fewer launches:
    only an xz file's checksum, or this count against what was profiled, tells them apart.

    Raises:
        ReportError: as :func:`report_metadata`.
    """
    return _headers(Path(path))[1]


def report_metadata(path: str | Path) -> dict[str, str | None]:
    """GPU, compute capability, driver, CUDA and Nsight Compute versions recorded in a report.

    Read from the report's session details (module docstring), not from the file name, the
    folder or any metadata.json beside it. A value the report does not hold is None, never
    filled in from elsewhere. Where the report's sessions disagree (several processes or
    devices), the distinct values are joined by ", " in the order the file gives them.

    Args:
        path: a ``.ncu-rep`` or ``.ncu-rep.xz`` file (xz is read as a stream; nothing is
            written to disk).

    Returns:
        dict with the keys :data:`METADATA_KEYS`, each a str or None:
        ``gpu`` (``device__attribute_display_name``, e.g. ``NVIDIA H200``),
        ``cc`` (compute capability ``"{major}.{minor}"``, e.g. ``9.0``),
        ``driver`` (display driver version, e.g. ``550.90.07``; most reports lack it),
        ``cuda_version`` (the CUDA version of the driver, as nvidia-smi gives it, e.g.
        ``13.0``; not the toolkit's),
        ``ncu_version`` (the Nsight Compute version without its build, four components as
        the report gives it, e.g. ``2025.3.1.0``; ``ncu --version`` and this project's
        metadata.json give three, ``2025.3.1``).

    Raises:
        ReportError: missing, empty or non-report file, not xz though named ``.xz``, a
            truncated file or xz stream, or a block header that does not decode. The
            message names the file and the cause.
    """
    return report_facts(path)[0]


def report_facts(path: str | Path) -> tuple[dict[str, str | None], int]:
    """:func:`report_metadata` and :func:`report_launches` of a report from one read of its
    block headers (an import checks both of every file: 0.57 s for the 56 reports of
    other people as two reads, docs/benchmarks.md).

    Raises:
        ReportError: as :func:`report_metadata`.
    """
    path = Path(path)
    sessions, launches = _headers(path)
    try:
        return _from_sessions(sessions), launches
    except _Malformed as exc:
        raise ReportError(path, f"its session details do not decode ({exc})", _DAMAGED) from None


def _from_sessions(sessions: list[bytes]) -> dict[str, str | None]:
    found: dict[str, list[str]] = {key: [] for key in METADATA_KEYS}
    versions: dict[str, list[str]] = {}
    for session in sessions:
        for number, wire, value in _fields(session):
            if number == 6 and wire == 2:  # DeviceAttributes: ID 1, Name 2, Attributes 3
                attrs: dict[str, object] = {}
                name = None
                for n, w, v in _fields(value):
                    if n == 2 and w == 2:
                        name = _text(v)
                    elif n == 3 and w == 2:
                        kv = {an: av for an, aw, av in _fields(v) if aw == 2}
                        if 1 in kv and 2 in kv:
                            attrs[_text(kv[1]) or ""] = _metric_value(kv[2])
                gpu = attrs.get("device__attribute_display_name") or name
                if isinstance(gpu, str):
                    found["gpu"].append(gpu)
                major = attrs.get("device__attribute_compute_capability_major")
                minor = attrs.get("device__attribute_compute_capability_minor")
                if isinstance(major, int) and isinstance(minor, int):
                    found["cc"].append(f"{major}.{minor}")
            elif number == 8 and wire == 2:  # VersionInfo: Provider 1, Version 2
                kv = {n: _text(v) for n, w, v in _fields(value) if w == 2}
                if kv.get(1) and kv.get(2) is not None:
                    versions.setdefault(kv[1], []).append(kv[2].strip())
    for key, providers in _PROVIDERS.items():
        provider = next((p for p in providers if p in versions), None)
        if provider is None:
            continue
        for v in versions[provider]:
            if key == "ncu_version":  # "2025.3.1.0 (build 36398880) (public-release)"
                m = re.match(r"\d+(?:\.\d+)+", v)
                v = m.group(0) if m else v
            found[key].append(v)
    return {key: _distinct(found[key]) for key in METADATA_KEYS}
