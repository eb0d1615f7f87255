"""Report files as ``ncu_report`` can open them: plain ``.ncu-rep``, or ``.ncu-rep.xz`` decompressed whole,
its CRC checked and nothing after its stream."""

from __future__ import annotations

import contextlib
import lzma
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from analysis.errors import ReportError
from analysis.names import is_text
from analysis.reports.report_info import _XZ_MAGIC, check_report_file, not_padding


#: The next step for a damaged report, wherever it came from.
REPROFILE = "profile the kernel again, or remove the file from its set"


#: Name prefixes of the folders :func:`private_tmpdir` makes (a decompressed report; the
#: answers of the units' reader).
PRIVATE_PREFIXES = ("ncu-rep-", "ncu-attributes-")


def _tmp_base() -> Path:
    """Memory-backed ``/dev/shm`` where it exists and is writable, else the system's temporary folder."""
    shm = Path("/dev/shm")
    return shm if shm.is_dir() and os.access(shm, os.W_OK) else Path(tempfile.gettempdir())


def private_tmpdir(prefix: str) -> Path:
    """A new folder only this process knows (``tempfile.mkdtemp``, mode 0700) in
    :func:`_tmp_base`, named ``{prefix}{pid}-...`` so that :func:`remove_orphans` can tell
    whose it is. The caller removes it."""
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=_tmp_base()))


def orphan_tmpdirs() -> list[Path]:
    """The folders of :func:`private_tmpdir` whose process no longer runs: a reader killed by
    a signal (a crash of the native reader, a hung pool worker stopped, a timed-out child)
    never removes its own."""
    out = []
    for prefix in PRIVATE_PREFIXES:
        for p in _tmp_base().glob(f"{prefix}*-*"):
            pid = p.name[len(prefix):].split("-", 1)[0]
            if not pid.isdigit():
                continue
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                out.append(p)
            except OSError:  # alive, another user's
                continue
    return sorted(out)


def remove_orphans() -> int:
    """Remove :func:`orphan_tmpdirs` (what a killed reader left, e.g. a decompressed report
    in memory-backed ``/dev/shm``); the number removed. Errors are ignored: a folder another
    user owns stays."""
    gone = orphan_tmpdirs()
    for p in gone:
        shutil.rmtree(p, ignore_errors=True)
    return len(gone)


@contextlib.contextmanager
def _plain_report(path: Path) -> Iterator[Path]:
    """Yield a path ``ncu_report`` can open: the file itself, or an xz-decompressed copy. A
    path that is not UTF-8 text (``ncu_report`` takes only text) is opened through a link of
    another name, and an xz copy gets a name that is text."""
    check_report_file(path)
    textual = is_text(os.fspath(path))
    if path.suffix != ".xz" and textual:
        yield path
        return
    # decompressed into memory-backed /dev/shm where there is one: the copy is read once
    tmpdir = private_tmpdir("ncu-rep-")
    try:
        plain = tmpdir / (path.name[: -len(".xz")] if textual else "report.ncu-rep")
        if path.suffix != ".xz":
            plain.symlink_to(path.resolve())
            yield plain
            return
        _xz_decompress_strict(path, plain)
        if plain.stat().st_size == 0:
            raise ReportError(path, "decompresses to an empty file")
        yield plain
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def _xz_decompress_strict(src: Path, dst: Path) -> None:
    """Decompress one .xz stream (its CRC64 checked by liblzma) from ``src`` to ``dst``.

    Unlike ``lzma.open``, which ignores bytes after the last stream, anything after the
    stream other than xz's zero padding is refused: it is not part of a report.
    """
    with open(src, "rb") as fh:
        if fh.read(len(_XZ_MAGIC)) != _XZ_MAGIC:
            raise ReportError(src, "is not an xz file (no xz header)",
                              "compress reports with xz, or drop the .xz suffix of a plain .ncu-rep")
    dec = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
    try:
        with open(src, "rb") as fin, open(dst, "wb") as fout:
            while not dec.eof:
                chunk = fin.read(1 << 20)
                if not chunk:
                    raise ReportError(src, "not a complete xz stream (it ends early)",
                                      REPROFILE)
                fout.write(dec.decompress(chunk))
            rest = dec.unused_data + fin.read()
    except lzma.LZMAError as exc:
        raise ReportError(src, f"not a complete xz stream ({exc})",
                          REPROFILE) from None
    if not_padding(rest):
        raise ReportError(src, f"{len(rest)} bytes after the end of the xz stream",
                          REPROFILE)
