"""Hostile MCAP files cost what they declare, and are refused with a sentence (exit 2):

- a chunk whose lz4 or zstd data inflates far beyond the uncompressed size it declares (a
  decompression bomb) is read by a bounded decompressor that stops one byte past that size, on
  every path (``read_chunk`` under info, export, replay and the reader; ``repair``);
- a Schema record whose string length says 0xFFFFFFFF: ``coopsim repair`` says which record;
- the MCAP magic followed by megabytes of zeros is refused after reading its first record head.
"""

from __future__ import annotations

import io
import os
import struct
import tracemalloc

import lz4.frame
import pytest
import zstandard
from click.testing import CliRunner
from mcap.data_stream import RecordBuilder
from mcap.records import Chunk, DataEnd, Footer, Header
from mcap.writer import CompressionType, Writer

from coopsim.app.cli import main
from coopsim.model.errors import RecordingError
from coopsim.recording.index import MAGIC, ChunkRef, read_chunk, read_index

INFLATED = 64 << 20  # 64 MiB of zeros: a few hundred KB compressed
DECLARED = 1024
COMPRESS = {"lz4": lz4.frame.compress, "zstd": zstandard.compress}


def _mcap(*records: bytes) -> bytes:
    """A file: magic, header, the given raw records, data end, footer, magic."""
    b = RecordBuilder()
    Header(profile="coopsim", library="test").write(b)
    head = b.end()
    b = RecordBuilder()
    DataEnd(0).write(b)
    Footer(0, 0, 0).write(b)
    return MAGIC + head + b"".join(records) + b.end() + MAGIC


def _chunk(compression: str, raw: bytes, declared: int) -> bytes:
    b = RecordBuilder()
    Chunk(message_start_time=0, message_end_time=0, uncompressed_size=declared,
          uncompressed_crc=0, compression=compression,
          data=COMPRESS[compression](raw)).write(b)
    return b.end()


def _refs(path):
    with open(path, "rb") as f:
        return read_index(f, os.path.getsize(path))


def _first_chunk(data: bytes) -> ChunkRef:
    """Where the chunk after the header is (read by hand: indexing would read the chunk)."""
    (head,) = struct.unpack_from("<Q", data, len(MAGIC) + 1)
    offset = len(MAGIC) + 9 + head
    opcode, length = struct.unpack_from("<BQ", data, offset)
    assert opcode == 0x06
    return ChunkRef(offset, length, 0, 0)


@pytest.fixture(params=["lz4", "zstd"])
def bomb(request, tmp_path):
    path = tmp_path / f"bomb-{request.param}.mcap"
    path.write_bytes(_mcap(_chunk(request.param, bytes(INFLATED), DECLARED)))
    assert path.stat().st_size < INFLATED // 100
    return path


def test_a_decompression_bomb_allocates_no_more_than_it_declares(bomb):
    ref = _first_chunk(bomb.read_bytes())
    with open(bomb, "rb") as f:
        tracemalloc.start()
        try:
            with pytest.raises(RecordingError) as err:
                read_chunk(f, ref)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert f"inflates beyond the {DECLARED} bytes it declares" in str(err.value)
    assert peak < 4 << 20, f"{peak} bytes allocated for a chunk declaring {DECLARED}"


@pytest.mark.parametrize("command", [["info"], ["export", "--csv", "out.csv"],
                                     ["repair", "-o", "fixed.mcap"]])
def test_every_command_refuses_a_bomb_with_a_sentence(bomb, command, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, [command[0], str(bomb), *command[1:]])
    assert result.exit_code == 2, result.output
    assert f"inflates beyond the {DECLARED} bytes it declares" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "fixed.mcap").exists()


@pytest.mark.parametrize("compression", ["lz4", "zstd"])
def test_the_cap_is_the_declared_size_to_the_byte(compression, tmp_path):
    for extra, ok in ((0, True), (1, False)):
        path = tmp_path / f"{compression}{extra}.mcap"
        path.write_bytes(_mcap(_chunk(compression, bytes(DECLARED + extra), DECLARED)))
        ref = _first_chunk(path.read_bytes())
        with open(path, "rb") as f:
            if ok:  # the size is right: past the cap, the zeros are not records
                with pytest.raises(RecordingError, match="damaged"):
                    read_chunk(f, ref)
            else:
                with pytest.raises(RecordingError, match="inflates beyond"):
                    read_chunk(f, ref)


@pytest.mark.parametrize("compression", [CompressionType.LZ4, CompressionType.ZSTD])
def test_honest_compressed_chunks_still_read(compression, tmp_path):
    path = tmp_path / "honest.mcap"
    with open(path, "wb") as f:
        w = Writer(f, compression=compression)
        w.start("coopsim", "test")
        schema = w.register_schema("s", "msgpack", b"")
        channel = w.register_channel("/t", "msgpack", schema)
        for n in range(500):
            w.add_message(channel, n, b"x" * 100, n)
        w.finish()
    idx = _refs(path)
    with open(path, "rb") as f:
        records = [r for ref in idx.chunks for r in read_chunk(f, ref)]
    assert sum(type(r).__name__ == "Message" for r in records) == 500


def test_repair_of_a_schema_with_a_huge_string_length_is_a_sentence(tmp_path):
    body = struct.pack("<HI", 1, 0xFFFFFFFF) + b"abc"
    path = tmp_path / "schema.mcap"
    record = struct.pack("<BQ", 0x03, len(body)) + body
    path.write_bytes(_mcap(record))
    at = path.read_bytes().index(record)
    result = CliRunner().invoke(main, ["repair", str(path), "-o", str(tmp_path / "out.mcap")])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (f"coopsim: {path}: the record at byte {at} "
                                     "(opcode 0x03) is damaged (EndOfFile); nothing was written")
    assert not (tmp_path / "out.mcap").exists()


class _Counting(io.FileIO):
    """A file that counts the calls made on it (reads and seeks) and the bytes read."""

    calls = read_bytes = 0

    def read(self, size=-1):
        data = super().read(size)
        self.calls += 1
        self.read_bytes += len(data)
        return data

    def readinto(self, buffer):
        n = super().readinto(buffer)
        self.calls += 1
        self.read_bytes += n or 0
        return n

    def seek(self, *args):
        self.calls += 1
        return super().seek(*args)


def test_the_magic_and_megabytes_of_zeros_are_refused_after_one_record_head(tmp_path):
    path = tmp_path / "zeros.mcap"
    path.write_bytes(MAGIC + bytes(20 << 20))
    with _Counting(path, "rb") as f:
        with pytest.raises(RecordingError, match="no header record after the magic"):
            read_index(f, os.path.getsize(path))
        assert f.read_bytes <= 64 and f.calls <= 8, (f.read_bytes, f.calls)
    for command in (["info"], ["repair"]):
        result = CliRunner().invoke(main, [*command, str(path)])
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        assert "not an MCAP file (no header record after the magic)" in result.output
