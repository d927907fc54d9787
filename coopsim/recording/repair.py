"""Repair a recording whose writer was killed: write the summary and index it lacks.

A recorder killed with SIGKILL (or a machine that lost power) leaves an MCAP file without its
summary section and footer: coopsim's own reader rebuilds the index by scanning
(:mod:`coopsim.recording.index`), but indexed readers (Foxglove, ``mcap``'s SeekingReader) refuse
it. :func:`repair` copies every complete record of the data section -- header, metadata,
attachments and every complete chunk whose CRC checks -- into a new file, writes fresh message
indexes after each chunk, then the data end, the summary (schemas, channels, statistics, chunk,
attachment and metadata indexes), the summary offsets and the footer, as mcap's own writer does.
What the crash cut off (a chunk the disk never got whole) is left out. The new file replaces the
old one only once it is complete.
"""

from __future__ import annotations

import io
import os
import struct
import tempfile
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from mcap.data_stream import ReadDataStream, RecordBuilder
from mcap.opcode import Opcode
from mcap.records import (Attachment, AttachmentIndex, Channel, Chunk, ChunkIndex, DataEnd,
                          Footer, Metadata, MetadataIndex, MessageIndex, Schema, Statistics,
                          SummaryOffset)
from mcap.stream_reader import get_chunk_data_stream

from ..model.errors import RecordingError
from .index import (DECODE_ERRORS, MAGIC, MAX_CHUNK_BYTES, _lz4_error, _zstd_error, inflated,
                    read_index)

_HEAD = 9  # opcode (1) + length (8)
MAX_RECORD_BYTES = 4 * MAX_CHUNK_BYTES  # a longer record is damage, not data
#: Metadata record a repair adds: when, and what it kept and left out.
META_REPAIR = "coopsim.repair"
_SKIPPED = {Opcode.MESSAGE_INDEX, Opcode.CHUNK_INDEX, Opcode.ATTACHMENT_INDEX,
            Opcode.METADATA_INDEX, Opcode.STATISTICS, Opcode.SUMMARY_OFFSET}


@dataclass(frozen=True)
class RepairReport:
    """What :func:`repair` did.

    Attributes:
        source, output: The file read and the file written ("" when nothing was written).
        complete: The source already had its summary: nothing to repair.
        chunks: Complete chunks kept; messages: the messages in them.
        damaged: Complete chunks left out because their data did not check (CRC).
        cut: Bytes at the end of the source that held no complete record, left out.
    """

    source: str
    output: str
    complete: bool
    chunks: int = 0
    messages: int = 0
    damaged: int = 0
    cut: int = 0

    def describe(self) -> str:
        """One line for the terminal."""
        if self.complete:
            return f"{self.source} is complete (it has its summary and index): nothing to repair"
        text = (f"repaired {self.source} -> {self.output}: {self.chunks} chunks, "
                f"{self.messages} messages kept")
        if self.damaged:
            text += f"; {self.damaged} damaged chunks left out"
        if self.cut:
            text += f"; {self.cut} bytes cut off by the crash left out"
        return text


def repair(path: str | os.PathLike, out: str | os.PathLike | None = None) -> RepairReport:
    """Write ``path`` again with its summary and index; into ``out``, or in place.

    Raises:
        RecordingError: not a file, not MCAP, or ``out`` exists (and is not ``path``).
        OSError: reading or writing failed (the source is never changed then).
    """
    source = Path(path)
    if not source.is_file():
        raise RecordingError(f"{source}: no such file")
    target = Path(out) if out is not None else source
    if target.exists() and not target.samefile(source):
        raise RecordingError(f"{target} exists; give a new file to write the repaired "
                             "recording to")
    size = source.stat().st_size
    try:
        return _repair(source, target, size)
    except RecordingError as exc:
        raise RecordingError(f"{source}: {exc}") from None


def _repair(source: Path, target: Path, size: int) -> RepairReport:
    with open(source, "rb") as src:
        if read_index(src, size).complete:
            return RepairReport(str(source), "", True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".repair",
                                   dir=target.parent or ".")
        try:
            with os.fdopen(fd, "wb") as dst:
                rewriter = _Rewriter(dst)
                kept = rewriter.copy(src, size)
                rewriter.finish(size, kept)
            os.replace(tmp, target)
        except BaseException:
            os.unlink(tmp)
            raise
    return RepairReport(str(source), str(target), False, rewriter.chunks,
                        rewriter.stats.message_count, rewriter.damaged, size - kept)


@dataclass
class _Rewriter:
    """Copies the records and gathers what the summary needs."""

    dst: IO[bytes]
    schemas: dict[int, Schema] = field(default_factory=dict)
    channels: dict[int, Channel] = field(default_factory=dict)
    chunk_indexes: list[ChunkIndex] = field(default_factory=list)
    attachment_indexes: list[AttachmentIndex] = field(default_factory=list)
    metadata_indexes: list[MetadataIndex] = field(default_factory=list)
    chunks: int = 0
    damaged: int = 0
    stats: Statistics = field(default_factory=lambda: Statistics(
        attachment_count=0, channel_count=0, channel_message_counts=defaultdict(int),
        chunk_count=0, message_count=0, message_end_time=0, message_start_time=0,
        metadata_count=0, schema_count=0))

    def copy(self, src: IO[bytes], size: int) -> int:
        """Copy every complete record of the data section; the offset where they end."""
        self.dst.write(MAGIC)
        pos = len(MAGIC)
        while pos + _HEAD <= size:
            src.seek(pos)
            opcode, length = struct.unpack("<BQ", src.read(_HEAD))
            if pos + _HEAD + length > size or length > MAX_RECORD_BYTES \
                    or opcode in (Opcode.DATA_END, Opcode.FOOTER):
                break  # cut off by the crash (or damage): everything before it is kept
            body = src.read(length)
            if len(body) != length:
                break
            try:
                self._record(opcode, body)
            except DECODE_ERRORS as exc:  # complete but unreadable: damage, not a crash's cut
                raise RecordingError(f"the record at byte {pos} (opcode {opcode:#04x}) is "
                                     f"damaged ({type(exc).__name__}); nothing was "
                                     "written") from None
            pos += _HEAD + length
        return pos

    def _record(self, opcode: int, body: bytes) -> None:
        if opcode in _SKIPPED:
            return  # written afresh
        if opcode == Opcode.CHUNK:
            self._chunk(body)
            return
        offset = self.dst.tell()
        self.dst.write(struct.pack("<BQ", opcode, len(body)) + body)
        stream = ReadDataStream(io.BytesIO(body))
        if opcode == Opcode.ATTACHMENT:
            a = Attachment.read(stream)
            self.attachment_indexes.append(AttachmentIndex(
                offset, _HEAD + len(body), a.log_time, a.create_time, len(a.data), a.name,
                a.media_type))
            self.stats.attachment_count += 1
        elif opcode == Opcode.METADATA:
            self.metadata_indexes.append(MetadataIndex(offset, _HEAD + len(body),
                                                       Metadata.read(stream).name))
            self.stats.metadata_count += 1
        elif opcode in (Opcode.SCHEMA, Opcode.CHANNEL):
            self._declare(opcode, stream)

    def _declare(self, opcode: int, stream: ReadDataStream) -> None:
        if opcode == Opcode.SCHEMA:
            schema = Schema.read(stream)
            self.schemas.setdefault(schema.id, schema)
        else:
            channel = Channel.read(stream)
            self.channels.setdefault(channel.id, channel)

    def _chunk(self, body: bytes) -> None:
        """Keep a chunk whose data checks; index its messages by channel."""
        try:
            chunk = Chunk.read(ReadDataStream(io.BytesIO(body)))
            data, end = get_chunk_data_stream(inflated(chunk), validate_crc=True)
            entries = self._scan_chunk(data, end)
        except (*DECODE_ERRORS, MemoryError, _zstd_error(), _lz4_error()):
            self.damaged += 1
            return
        start = self.dst.tell()
        self.dst.write(struct.pack("<BQ", Opcode.CHUNK, len(body)) + body)
        builder, offsets = RecordBuilder(), {}
        index_start = self.dst.tell()
        for channel in sorted(entries):
            offsets[channel] = index_start + builder.count
            MessageIndex(channel, entries[channel]).write(builder)
        indexes = builder.end()
        self.dst.write(indexes)
        self.chunk_indexes.append(ChunkIndex(
            chunk_length=_HEAD + len(body), chunk_start_offset=start,
            compression=chunk.compression, compressed_size=len(chunk.data),
            message_end_time=chunk.message_end_time, message_index_length=len(indexes),
            message_index_offsets=offsets, message_start_time=chunk.message_start_time,
            uncompressed_size=chunk.uncompressed_size))
        self.chunks += 1
        self.stats.chunk_count += 1

    def _scan_chunk(self, data: ReadDataStream, end: int) -> dict[int, list[tuple[int, int]]]:
        """(log time, offset) of each message in the chunk's records, by channel."""
        entries: dict[int, list[tuple[int, int]]] = defaultdict(list)
        declared = []
        while data.count < end:
            offset = data.count
            opcode, length = data.read1(), data.read8()
            body = data.read(length)
            if opcode == Opcode.MESSAGE:
                channel, _, log_time = struct.unpack_from("<HIQ", body)
                entries[channel].append((log_time, offset))
            elif opcode in (Opcode.SCHEMA, Opcode.CHANNEL):
                declared.append((opcode, body))
        for opcode, body in declared:  # only once the whole chunk has checked
            self._declare(opcode, ReadDataStream(io.BytesIO(body)))
        for channel, found in entries.items():
            self._count(channel, found)
        return entries

    def _count(self, channel: int, found: list[tuple[int, int]]) -> None:
        stats = self.stats
        times = [t for t, _ in found]
        first = stats.message_count == 0
        stats.message_start_time = min(times) if first else min(stats.message_start_time,
                                                                 min(times))
        stats.message_end_time = max(stats.message_end_time, max(times))
        stats.message_count += len(found)
        stats.channel_message_counts[channel] += len(found)

    def finish(self, size: int, kept: int) -> None:
        """The repair's own metadata, the data end, the summary, its offsets and the footer."""
        import datetime

        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        self._record(Opcode.METADATA, _body(Metadata(META_REPAIR, {
            "repaired": now, "source_bytes": str(size), "kept_bytes": str(kept),
            "chunks": str(self.chunks), "damaged_chunks": str(self.damaged)})))
        builder = RecordBuilder()
        DataEnd(0).write(builder)
        self.dst.write(builder.end())
        self.stats.schema_count, self.stats.channel_count = len(self.schemas), len(self.channels)
        start = self.dst.tell()
        summary, groups = RecordBuilder(), []
        for opcode, records in ((Opcode.SCHEMA, self.schemas.values()),
                                (Opcode.CHANNEL, self.channels.values()),
                                (Opcode.STATISTICS, [self.stats]),
                                (Opcode.CHUNK_INDEX, self.chunk_indexes),
                                (Opcode.ATTACHMENT_INDEX, self.attachment_indexes),
                                (Opcode.METADATA_INDEX, self.metadata_indexes)):
            first = summary.count
            for record in records:
                record.write(summary)
            groups.append(SummaryOffset(opcode, start + first, summary.count - first))
        offsets_start = start + summary.count
        for group in groups:
            group.write(summary)
        data = summary.end()
        crc = zlib.crc32(struct.pack("<BQQQ", Opcode.FOOTER, 20, start, offsets_start),
                         zlib.crc32(data))
        Footer(start, offsets_start, crc).write(builder)
        self.dst.write(data + builder.end() + MAGIC)


def _body(record) -> bytes:
    """A record's body (without its opcode and length)."""
    builder = RecordBuilder()
    record.write(builder)
    return builder.end()[_HEAD:]
