"""Zstandard framing for an append-only log whose every flush must be readable after a crash.

The writer keeps one streaming frame open per writing session and ends each flush with a block
flush, so the bytes on disk are always a run of complete blocks plus, after a crash, a torn tail.
Compression history spans flushes, which is what makes repeated request-header snapshots cheap.
The reader walks frames and block headers itself: complete frames must hold whole lines; in a final
frame left open by a crash it keeps content up to the last block boundary that ends a line, and
reports the rest as torn.  Reopening cuts the torn bytes and ends the open frame with an empty last
block (appended, never rewritten) before a new frame starts.
"""

from __future__ import annotations

from dataclasses import dataclass

import zstandard

from seqlog.errors import Code, SeqlogError

MAGIC = b"\x28\xb5\x2f\xfd"
END_BLOCK = b"\x01\x00\x00"
"""An empty raw block flagged last: it ends a frame that a crash left open."""
_SKIPPABLE_LOW, _SKIPPABLE_HIGH = 0x184D2A50, 0x184D2A5F
_CHECKSUM_FLAG = 0x04
_RESERVED_BLOCK = 3
_RLE_BLOCK = 1


@dataclass(frozen=True, slots=True)
class ZstdContent:
    """What a compressed log holds: whole lines, where they end, and whether the last frame is open."""

    text: bytes
    committed_length: int
    """Bytes of the file that hold complete content; anything after is a torn tail."""
    open_frame: bool
    """The final frame has no last block (the writer crashed or is still writing)."""
    open_frame_has_checksum: bool
    torn: bool


def _corrupt(offset: int, what: str) -> SeqlogError:
    return SeqlogError(Code.JSONL_MALFORMED_LINE, f"zstd data at byte {offset}: {what}")


def read_frames(data: bytes) -> ZstdContent:
    """Decode every complete frame and the complete lines of a final open frame."""
    dctx = zstandard.ZstdDecompressor()
    out: list[bytes] = []
    offset, size = 0, len(data)
    view = memoryview(data)
    while offset < size:
        if size - offset < 4:
            if MAGIC.startswith(data[offset:]):
                return ZstdContent(b"".join(out), offset, False, False, True)
            raise _corrupt(offset, "trailing bytes are not a frame")
        magic = int.from_bytes(data[offset : offset + 4], "little")
        if _SKIPPABLE_LOW <= magic <= _SKIPPABLE_HIGH:
            if size - offset < 8:
                return ZstdContent(b"".join(out), offset, False, False, True)
            skip = 8 + int.from_bytes(data[offset + 4 : offset + 8], "little")
            if offset + skip > size:
                return ZstdContent(b"".join(out), offset, False, False, True)
            offset += skip
            continue
        if data[offset : offset + 4] != MAGIC:
            raise _corrupt(offset, "not a zstd frame")
        try:
            header_size = zstandard.frame_header_size(data[offset : offset + 18])
        except zstandard.ZstdError:
            return ZstdContent(b"".join(out), offset, False, False, True)
        if offset + header_size > size:
            return ZstdContent(b"".join(out), offset, False, False, True)
        has_checksum = bool(data[offset + 4] & _CHECKSUM_FLAG)
        frame = _read_frame(dctx, view, offset, header_size, has_checksum)
        out.append(frame.text)
        if frame.open_frame:
            return ZstdContent(b"".join(out), frame.committed_length, True, has_checksum, frame.torn)
        offset = frame.committed_length
    return ZstdContent(b"".join(out), offset, False, False, False)


def _read_frame(
    dctx: zstandard.ZstdDecompressor, view: memoryview, start: int, header_size: int, has_checksum: bool
) -> ZstdContent:
    """One frame from ``start``: its text and end, or, when it never ends, its last whole-line boundary."""
    size = len(view)
    dobj = dctx.decompressobj()
    try:
        pieces = [dobj.decompress(view[start : start + header_size])]
    except zstandard.ZstdError as error:
        raise _corrupt(start, f"bad frame header ({error})") from None
    position = start + header_size
    decoded = 0
    line_end_bytes, line_end_decoded = position, 0
    while True:
        if position + 3 > size:
            break
        block_header = int.from_bytes(view[position : position + 3], "little")
        last, kind, length = block_header & 1, (block_header >> 1) & 3, block_header >> 3
        if kind == _RESERVED_BLOCK:
            raise _corrupt(position, "reserved block type")
        stored = 1 if kind == _RLE_BLOCK else length
        block_end = position + 3 + stored
        if block_end > size:
            break
        try:
            chunk = dobj.decompress(view[position:block_end])
        except zstandard.ZstdError as error:
            raise _corrupt(position, f"undecodable block ({error})") from None
        pieces.append(chunk)
        decoded += len(chunk)
        position = block_end
        if chunk.endswith(b"\n") or (not chunk and line_end_decoded == decoded):
            line_end_bytes, line_end_decoded = position, decoded
        if last:
            end = position + (4 if has_checksum else 0)
            if end > size:
                break
            if has_checksum:
                try:
                    dobj.decompress(view[position:end])
                except zstandard.ZstdError as error:
                    raise _corrupt(position, f"checksum mismatch ({error})") from None
            text = b"".join(pieces)
            if text and not text.endswith(b"\n"):
                raise _corrupt(start, "a complete frame ends inside a line")
            return ZstdContent(text, end, False, False, False)
    # The frame never ended: keep what a finished flush wrote, call everything after it torn.
    text = b"".join(pieces)[:line_end_decoded]
    return ZstdContent(text, line_end_bytes, True, has_checksum, line_end_bytes < size)


class FrameWriter:
    """Compresses flushes into one streaming frame; each flush is a run of complete blocks."""

    def __init__(self, level: int = 3) -> None:
        self._compressor = zstandard.ZstdCompressor(level=level, write_checksum=False, write_content_size=False)
        self._stream: zstandard.ZstdCompressionObj | None = None

    def encode(self, payload: bytes) -> bytes:
        """The bytes that make ``payload`` durable-ready: complete blocks of the open frame."""
        if self._stream is None:
            self._stream = self._compressor.compressobj()
        return self._stream.compress(payload) + self._stream.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)

    def finish(self) -> bytes:
        """The bytes that end the open frame (nothing when none is open)."""
        if self._stream is None:
            return b""
        stream, self._stream = self._stream, None
        return stream.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH)


def single_frame(payload: bytes, level: int = 3) -> bytes:
    """``payload`` as one complete frame."""
    return zstandard.ZstdCompressor(level=level, write_checksum=True).compress(payload)
