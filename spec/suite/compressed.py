"""Compressed logs as ``check-log`` reads them: zstd and gzip, known by their magic numbers, decompressed as they stream.

seqlog's store writes ``events.jsonl.zst`` as appended zstd frames: a complete frame for the header
line and the seed, then one streaming frame per writing session, each flush a run of complete
blocks; a crash can leave the last frame open (no last block) or cut inside a block.  A gzip log is
one or more appended members.  The text of every complete frame or member is read in order, as one
log.  How the compressed data ends is said in :attr:`Decompressed.cut`:

* at a frame's end, or (zstd) at a block boundary of an open frame, which is how a writer leaves its
  file after a flush: nothing is lost, and nothing is said;
* inside a zstd block, or inside a gzip member: what the rest would have held is lost, so the log
  ends in a torn line, as a plain log cut inside a line does.

Data that cannot be decoded (a bad frame, a failed checksum, bytes after the last frame that start
none) raises :class:`DamagedCompression`, naming the compressed byte where it was found.

Memory is bounded as for a plain log: zstd is decompressed :data:`ZSTD_SLICE` compressed bytes at a
time (a 4-byte RLE block can stand for 128 KiB, so one call yields at most 8 MiB), gzip at most
``chunk_bytes`` of output per call, and the text is handed on in pieces of at most ``chunk_bytes``,
so a decompression bomb meets the same line limit as a huge plain line.  A zstd frame may ask for a
window of up to libzstd's default limit (128 MiB); one asking for more cannot be decoded.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from enum import StrEnum
from typing import Final

import zstandard

ZSTD_MAGIC: Final = b"\x28\xb5\x2f\xfd"
GZIP_MAGIC: Final = b"\x1f\x8b"
_SKIPPABLE_LOW, _SKIPPABLE_HIGH = 0x184D2A50, 0x184D2A5F
"""The magic numbers of zstd's skippable frames (they hold no text)."""
ZSTD_SLICE: Final = 256
"""Compressed zstd bytes decompressed per call (at most 64 RLE blocks: 8 MiB of output)."""
_GZIP_WINDOW: Final = 16 + zlib.MAX_WBITS
"""zlib's window bits for the gzip container."""


class Compression(StrEnum):
    """The compressed formats ``check-log`` reads."""

    ZSTD = "zstd"
    GZIP = "gzip"


class DamagedCompression(Exception):
    """Compressed data that cannot be decoded, found in the ``size`` compressed bytes from :attr:`offset`."""

    def __init__(self, compression: Compression, offset: int, size: int, problem: str) -> None:
        where = f"byte {offset:,}" if size <= 1 else f"bytes {offset:,} to {offset + size - 1:,}"
        super().__init__(f"{compression.value} data cannot be decoded ({where} of the file): {problem}")
        self.offset = offset


def compression_of(head: bytes) -> Compression | None:
    """The compression whose magic number ``head`` (the first 4 bytes, or all there are) starts with, or ``None``."""
    if head.startswith(ZSTD_MAGIC) or (
        len(head) >= 4 and _SKIPPABLE_LOW <= int.from_bytes(head[:4], "little") <= _SKIPPABLE_HIGH
    ):
        return Compression.ZSTD
    if head.startswith(GZIP_MAGIC):
        return Compression.GZIP
    return None


class _ZstdFrames:
    """Where zstd data fed so far ends: at a frame's end, at a block boundary of an open frame, or inside
    a header or a block.  It walks frame and block headers only; the decompressor reads the blocks."""

    _MAGIC, _SKIP_SIZE, _SKIP, _DESCRIPTOR, _FRAME_HEADER, _BLOCK_HEADER, _BLOCK, _CHECKSUM = range(8)

    def __init__(self) -> None:
        self._state = self._MAGIC
        self._need = 4
        self._held = b""
        self._last = False
        self._checksum = False

    def feed(self, data: bytes) -> None:
        """Follow ``data``, the next compressed bytes."""
        at = 0
        while at < len(data):
            if self._state in (self._SKIP, self._BLOCK, self._FRAME_HEADER, self._CHECKSUM):
                taken = min(self._need, len(data) - at)
                self._need -= taken
                at += taken
                if self._need == 0:
                    self._next(b"")
                continue
            taken = min(self._need - len(self._held), len(data) - at)
            self._held += data[at : at + taken]
            at += taken
            if len(self._held) == self._need:
                held, self._held = self._held, b""
                self._next(held)

    def _next(self, held: bytes) -> None:
        """The state after a complete piece: ``held`` is its bytes when it is a header."""
        if self._state == self._MAGIC:
            magic = int.from_bytes(held, "little")
            if _SKIPPABLE_LOW <= magic <= _SKIPPABLE_HIGH:
                self._state, self._need = self._SKIP_SIZE, 4
            else:  # a bad magic number is the decompressor's to refuse
                self._state, self._need = self._DESCRIPTOR, 1
        elif self._state == self._SKIP_SIZE:
            self._state, self._need = self._SKIP, int.from_bytes(held, "little")
            if self._need == 0:
                self._state, self._need = self._MAGIC, 4
        elif self._state == self._SKIP:
            self._state, self._need = self._MAGIC, 4
        elif self._state == self._DESCRIPTOR:
            descriptor = held[0]
            single_segment = descriptor >> 5 & 1
            content_size = (1 if single_segment else 0, 2, 4, 8)[descriptor >> 6]
            self._checksum = bool(descriptor >> 2 & 1)
            rest = (0 if single_segment else 1) + (0, 1, 2, 4)[descriptor & 3] + content_size
            self._state, self._need = self._FRAME_HEADER, rest
            if rest == 0:
                self._state, self._need = self._BLOCK_HEADER, 3
        elif self._state == self._FRAME_HEADER:
            self._state, self._need = self._BLOCK_HEADER, 3
        elif self._state == self._BLOCK_HEADER:
            header = int.from_bytes(held, "little")
            self._last = bool(header & 1)
            size = 1 if header >> 1 & 3 == 1 else header >> 3  # an RLE block stores one byte
            self._state, self._need = self._BLOCK, size
            if size == 0:
                self._after_block()
        elif self._state == self._BLOCK:
            self._after_block()
        else:  # the checksum
            self._state, self._need = self._MAGIC, 4

    def _after_block(self) -> None:
        if not self._last:
            self._state, self._need = self._BLOCK_HEADER, 3
        elif self._checksum:
            self._state, self._need = self._CHECKSUM, 4
        else:
            self._state, self._need = self._MAGIC, 4

    def inside_a_block(self) -> bool:
        """Whether the data ends inside a block or its header (an open frame at a block boundary does not)."""
        return self._state == self._BLOCK or (self._state == self._BLOCK_HEADER and self._held != b"")


class Decompressed:
    """The bytes of ``chunks``, decompressed when they start with a magic number of :class:`Compression`.

    Iterate once; afterwards :attr:`compression` says what was read and :attr:`cut` why the text
    ends inside a line (``None`` when the compressed data ended where nothing is lost).
    """

    def __init__(self, chunks: Iterable[bytes], chunk_bytes: int) -> None:
        self._chunks = chunks
        self._chunk_bytes = chunk_bytes
        self.compression: Compression | None = None
        self.cut: str | None = None
        self._offset = 0

    def __iter__(self) -> Iterator[bytes]:
        chunks = iter(self._chunks)
        head = b""
        for chunk in chunks:  # enough bytes for the magic number (a pipe may hand over fewer)
            head += chunk
            if len(head) >= 4:
                break
        self.compression = compression_of(head)
        data = _prepend(head, chunks)
        if self.compression is None:
            yield from data
        elif self.compression is Compression.ZSTD:
            yield from self._pieces(self._zstd(data))
        else:
            yield from self._pieces(self._gzip(data))

    def _pieces(self, outputs: Iterator[bytes]) -> Iterator[bytes]:
        """``outputs`` gathered and cut into pieces of at most ``chunk_bytes`` (one split of a piece stays small)."""
        size = self._chunk_bytes
        gathered: list[bytes] = []
        held = 0
        for output in outputs:
            if len(output) > size:
                view = memoryview(output)
                yield from (bytes(view[start : start + size]) for start in range(0, len(output), size))
                continue
            gathered.append(output)
            held += len(output)
            if held >= size:
                yield b"".join(gathered)
                gathered, held = [], 0
        if gathered:
            yield b"".join(gathered)

    def _zstd(self, data: Iterator[bytes]) -> Iterator[bytes]:
        decompressor = zstandard.ZstdDecompressor().decompressobj(read_across_frames=True)
        frames = _ZstdFrames()
        for chunk in data:
            view = memoryview(chunk)
            for start in range(0, len(chunk), ZSTD_SLICE):
                piece = view[start : start + ZSTD_SLICE]
                try:
                    output = decompressor.decompress(piece)
                except zstandard.ZstdError as error:
                    raise DamagedCompression(Compression.ZSTD, self._offset, len(piece), _zstd_problem(error)) from None
                frames.feed(bytes(piece))
                self._offset += len(piece)
                if output:
                    yield output
        if frames.inside_a_block():
            self.cut = f"the zstd data ends inside a block at byte {self._offset:,}: the text of that block is lost"

    def _gzip(self, data: Iterator[bytes]) -> Iterator[bytes]:
        size = self._chunk_bytes
        decompressor = zlib.decompressobj(_GZIP_WINDOW)
        started = False
        for chunk in data:
            pending = chunk
            while pending:  # zlib gives at most ``size`` a call and keeps the input it did not read
                started = True
                try:
                    output = decompressor.decompress(pending, size)
                except zlib.error as error:
                    raise DamagedCompression(Compression.GZIP, self._offset, len(pending), str(error)) from None
                consumed = len(pending) - len(decompressor.unconsumed_tail)
                pending = decompressor.unconsumed_tail
                if decompressor.eof:  # one member ended: the next starts in what it left
                    consumed -= len(decompressor.unused_data)
                    pending = decompressor.unused_data
                    decompressor = zlib.decompressobj(_GZIP_WINDOW)
                    started = False
                self._offset += consumed
                if output:
                    yield output
        if started:
            rest = decompressor.flush()  # what the last complete symbols of a cut member still give
            if rest:
                yield rest
            self.cut = f"the gzip data ends inside a member at byte {self._offset:,}: its end and check value are missing"


def _prepend(head: bytes, chunks: Iterator[bytes]) -> Iterator[bytes]:
    if head:
        yield head
    yield from chunks


def _zstd_problem(error: zstandard.ZstdError) -> str:
    return str(error).removeprefix("zstd decompressor error: ")
