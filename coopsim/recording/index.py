"""The index of an MCAP file: its chunks, channels, metadata and attachments, without its data.

A finished file has a summary section (chunk indexes, channels, metadata and attachment indexes);
it is read with the ``mcap`` package's own reader. A file whose writer was killed has none: then
the index is rebuilt by walking the record headers from the start (chunk bodies are skipped,
not read), stopping at the first record the file does not hold completely. Either way nothing
loads the whole file.

Per-chunk message counts come from the message index records the writer puts after each chunk
(``15 + 16 n`` bytes for ``n`` messages of a channel); a chunk without them has unknown counts.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass, field, replace
from typing import IO

from mcap.data_stream import ReadDataStream
from mcap.exceptions import McapError
from mcap.opcode import Opcode
from mcap.reader import SeekingReader
from mcap.records import Attachment, Channel, Chunk, Header, Metadata
from mcap.stream_reader import MAGIC_SIZE, StreamReader, breakup_chunk

from ..model.errors import RecordingError

MAGIC = bytes((137, 77, 67, 65, 80, 48, 13, 10))
_RECORD_HEAD = 9  # opcode (1) + length (8)
_INDEX_ENTRY = 16  # a message index entry: log time (8) + offset (8)
_INDEX_HEAD = _RECORD_HEAD + 2 + 4  # + channel id (2) + byte length of the entries (4)
MAX_CHUNK_BYTES = 64 << 20  # largest uncompressed chunk read (coopsim writes about 8 MB at most)
#: What the mcap package raises on malformed input, besides its own McapError.
DECODE_ERRORS = (McapError, struct.error, ValueError, UnicodeDecodeError, KeyError, IndexError,
                 OverflowError)


@dataclass(frozen=True)
class ChunkRef:
    """Where one chunk is and what it holds.

    Attributes:
        offset: File offset of the chunk record (its opcode byte).
        length: Length of the chunk record's body, bytes.
        start, end: Earliest and latest message log time in it, ns.
        counts: Channel id -> number of messages; None when unknown (no message index).
    """

    offset: int
    length: int
    start: int
    end: int
    counts: dict[int, int] | None = None


@dataclass
class McapIndex:
    """What :func:`read_index` found.

    Attributes:
        header: The file's header record (profile, library).
        channels: Channel id -> channel (empty when no chunk declared one yet).
        chunks: Complete chunks in file order.
        metadata: Metadata record name -> its string map.
        attachments: Attachment name -> file offset of the record.
        complete: True when the file has its summary (the writer finished).
    """

    header: Header
    channels: dict[int, Channel] = field(default_factory=dict)
    chunks: list[ChunkRef] = field(default_factory=list)
    metadata: dict[str, dict[str, str]] = field(default_factory=dict)
    attachments: dict[str, int] = field(default_factory=dict)
    complete: bool = False


def read_index(stream: IO[bytes], size: int) -> McapIndex:
    """Index an MCAP file from its summary, or by scanning it when the summary is missing.

    Raises:
        RecordingError: not an MCAP file, or no readable header.
    """
    stream.seek(0)
    if stream.read(MAGIC_SIZE) != MAGIC:
        raise RecordingError("not an MCAP file (its first bytes are not the MCAP magic)")
    # the first record must be a header of a plausible length: look at its 9 bytes before any
    # parser walks on (the magic and megabytes of zeros would be millions of empty records)
    head = stream.read(_RECORD_HEAD)
    opcode, length = struct.unpack("<BQ", head) if len(head) == _RECORD_HEAD else (0, 0)
    if opcode != Opcode.HEADER or MAGIC_SIZE + _RECORD_HEAD + length > size:
        raise RecordingError("not an MCAP file (no header record after the magic)")
    header = _read_record_at(stream, MAGIC_SIZE, MAGIC_SIZE + _RECORD_HEAD + length)
    if not isinstance(header, Header):
        raise RecordingError("not an MCAP file (no header record after the magic)")
    if size >= 2 * MAGIC_SIZE + _RECORD_HEAD and _ends_with_magic(stream, size):
        try:
            return _from_summary(stream, header, size)
        except (*DECODE_ERRORS, OSError):
            pass  # a damaged summary: fall back to the scan, which does not need it
    return _by_scan(stream, size, header)


def read_chunk(stream: IO[bytes], ref: ChunkRef) -> list:
    """The records (schemas, channels, messages) inside one chunk, decompressed.

    The record is read whole after checking its length against the file, so a damaged length
    field cannot make a huge read; the chunk's CRC is checked.
    """
    try:
        stream.seek(ref.offset)
        opcode, length = struct.unpack("<BQ", stream.read(_RECORD_HEAD))
        body = stream.read(length) if opcode == Opcode.CHUNK and length <= ref.length else b""
        if len(body) != length or not body:
            raise ValueError("bad chunk record")
        chunk = Chunk.read(ReadDataStream(io.BytesIO(body)))
        return breakup_chunk(inflated(chunk), validate_crc=True)
    except ChunkSizeError as exc:
        raise RecordingError(f"the chunk at byte {ref.offset} {exc}") from None
    # MemoryError too: a damaged zstd frame header can claim a content size of terabytes,
    # which the decompressor tries to allocate before it reads any data
    except (*DECODE_ERRORS, OSError, MemoryError, _zstd_error(), _lz4_error()) as exc:
        raise RecordingError(f"the chunk at byte {ref.offset} is damaged "
                             f"({type(exc).__name__})") from None


class ChunkSizeError(ValueError):
    """A chunk declares an implausible uncompressed size, or its data inflates beyond it."""


def inflated(chunk: Chunk) -> Chunk:
    """The chunk with its data decompressed, never more than the size it declares.

    Every chunk read goes through here (info, export, replay, repair): lz4 and zstd frames are
    inflated by bounded decompressors that stop one byte past ``uncompressed_size``, so a small
    chunk of gigabytes of zeros declaring a kilobyte (a decompression bomb) costs a kilobyte.

    Raises:
        ChunkSizeError: the declared size is over :data:`MAX_CHUNK_BYTES`, or the data inflates
            to more (or less) than it.
    """
    size = chunk.uncompressed_size
    if size > MAX_CHUNK_BYTES:  # the decompressor would allocate it
        raise ChunkSizeError(f"declares {size} bytes uncompressed, over the "
                             f"{MAX_CHUNK_BYTES}-byte limit")
    if chunk.compression == "lz4":
        data = _bounded_lz4(chunk.data, size + 1)
    elif chunk.compression == "zstd":
        data = _bounded_zstd(chunk.data, size + 1)
    else:
        return chunk  # uncompressed (or unknown: breakup_chunk refuses it)
    if len(data) != size:
        more = "beyond" if len(data) > size else "to less than"
        raise ChunkSizeError(f"inflates {more} the {size} bytes it declares (a damaged or "
                             "hostile file); nothing past them is read")
    return replace(chunk, compression="", data=data)


def _bounded_lz4(data: bytes, cap: int) -> bytes:
    import lz4.frame

    return lz4.frame.LZ4FrameDecompressor().decompress(data, max_length=cap)


def _bounded_zstd(data: bytes, cap: int) -> bytes:
    import zstandard

    out = bytearray()
    with zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True) as reader:
        while len(out) < cap:
            piece = reader.read(cap - len(out))
            if not piece:
                break
            out += piece
    return bytes(out)


def _lz4_error() -> type:
    return RuntimeError  # what lz4.frame raises on a bad frame


def read_attachment(stream: IO[bytes], offset: int, size: int) -> Attachment:
    """The attachment record at ``offset`` of a file of ``size`` bytes."""
    record = _read_record_at(stream, offset, size)
    if not isinstance(record, Attachment):
        raise RecordingError(f"no attachment at byte {offset}")
    return record


def _zstd_error() -> type:
    import zstandard

    return zstandard.ZstdError


def _ends_with_magic(stream: IO[bytes], size: int) -> bool:
    stream.seek(size - MAGIC_SIZE)
    return stream.read(MAGIC_SIZE) == MAGIC


def _read_record_at(stream: IO[bytes], offset: int, size: int | None = None):
    """The record at ``offset``, or None when there is none (records over ``size`` bytes,
    the file's, are refused before they are read)."""
    try:
        stream.seek(offset)
        return next(StreamReader(stream, skip_magic=True, emit_chunks=True,
                                 record_size_limit=size).records)
    except (*DECODE_ERRORS, OSError, StopIteration):
        return None


def _from_summary(stream: IO[bytes], header: Header, size: int) -> McapIndex:
    stream.seek(0)
    summary = SeekingReader(stream, record_size_limit=size).get_summary()
    if summary is None or not summary.chunk_indexes:
        raise ValueError("no summary")
    index = McapIndex(header, dict(summary.channels), complete=True)
    for ci in summary.chunk_indexes:
        if not MAGIC_SIZE <= ci.chunk_start_offset < ci.chunk_start_offset + ci.chunk_length \
                <= size:
            raise ValueError("a chunk index points outside the file")
        index.chunks.append(ChunkRef(ci.chunk_start_offset, ci.chunk_length - _RECORD_HEAD,
                                     ci.message_start_time, ci.message_end_time,
                                     _counts_from_offsets(ci)))
    for mi in summary.metadata_indexes:
        record = _read_record_at(stream, mi.offset, size)
        if isinstance(record, Metadata):
            index.metadata[record.name] = dict(record.metadata)
    index.attachments = {ai.name: ai.offset for ai in summary.attachment_indexes}
    return index


def _counts_from_offsets(ci) -> dict[int, int] | None:
    """Message counts per channel from the positions of the chunk's message index records.

    The records follow the chunk back to back, so each one's length is the distance to the next
    (the last one ends where the chunk's message index section ends).
    """
    if not ci.message_index_offsets:
        return None
    end = ci.chunk_start_offset + ci.chunk_length + ci.message_index_length
    order = sorted(ci.message_index_offsets.items(), key=lambda kv: kv[1])
    counts = {}
    for (channel, start), (_, stop) in zip(order, order[1:] + [(None, end)]):
        entries, rest = divmod(stop - start - _INDEX_HEAD, _INDEX_ENTRY)
        if rest or entries < 0:
            return None
        counts[channel] = entries
    return counts


def _by_scan(stream: IO[bytes], size: int, header: Header) -> McapIndex:
    """Walk record headers from the start; keep every record the file holds completely."""
    index = McapIndex(header)
    pos = MAGIC_SIZE
    while pos + _RECORD_HEAD <= size:
        stream.seek(pos)
        opcode, length = struct.unpack("<BQ", stream.read(_RECORD_HEAD))
        if pos + _RECORD_HEAD + length > size:
            break  # cut off by the crash: everything before it is good
        if opcode in (Opcode.DATA_END, Opcode.FOOTER):
            break
        _scan_record(stream, index, opcode, length, pos)
        pos += _RECORD_HEAD + length
    if index.chunks and not index.channels:
        _learn_channels(stream, index)
    return index


def _scan_record(stream: IO[bytes], index: McapIndex, opcode: int, length: int,
                 pos: int) -> None:
    if opcode == Opcode.CHUNK:
        start, end = struct.unpack("<QQ", stream.read(16))
        index.chunks.append(ChunkRef(pos, length, start, end))
    elif opcode == Opcode.MESSAGE_INDEX and index.chunks:
        channel, nbytes = struct.unpack("<HI", stream.read(6))
        chunk = index.chunks[-1]
        index.chunks[-1] = replace(chunk, counts={**(chunk.counts or {}),
                                                  channel: nbytes // _INDEX_ENTRY})
    elif opcode == Opcode.CHANNEL:
        record = _read_record_at(stream, pos, length + _RECORD_HEAD)
        if isinstance(record, Channel):
            index.channels[record.id] = record
    elif opcode == Opcode.METADATA:
        record = _read_record_at(stream, pos, length + _RECORD_HEAD)
        if isinstance(record, Metadata):
            index.metadata[record.name] = dict(record.metadata)
    elif opcode == Opcode.ATTACHMENT:
        record = _read_record_at(stream, pos, length + _RECORD_HEAD)
        if isinstance(record, Attachment):
            index.attachments[record.name] = pos


def _learn_channels(stream: IO[bytes], index: McapIndex) -> None:
    """Channels live inside chunks (each where it was first used): collect them from the
    first chunks until every channel a message index names is known."""
    wanted = {c for ref in index.chunks if ref.counts for c in ref.counts}
    for ref in index.chunks:
        for record in read_chunk(stream, ref):
            if isinstance(record, Channel):
                index.channels[record.id] = record
        if wanted <= index.channels.keys():
            break
