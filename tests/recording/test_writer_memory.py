"""The recorder keeps no per-chunk objects for the summary (mcap's Writer would keep one
ChunkIndex of about 680 bytes per chunk, some 7 bytes per recorded step for ever): its chunk
indexes are held serialized, and the finished file's summary still indexes every chunk."""

from __future__ import annotations

import os

from mcap.reader import make_reader

from coopsim.recording.index import read_index
from coopsim.recording.reader import Recording

from rechelpers import record


def test_chunk_indexes_are_kept_packed_and_the_summary_indexes_every_chunk(tmp_path):
    path = tmp_path / "packed.mcap"
    rec, truth = record(path, 600, keyframe_every=10)
    held = rec._state.writer._Writer__chunk_indices  # after 60 chunks: the packed ones, and
    assert len(held) <= 2 and held[0] is rec._state.chunk_indexes  # the last one finish added
    with open(path, "rb") as f:
        summary = read_index(f, os.path.getsize(path))
        f.seek(0)
        indexed = make_reader(f, validate_crcs=True).get_summary().chunk_indexes
    with open(path, "rb") as f:  # the same chunks as a scan of the records finds
        data = f.read()
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(data[:summary.chunks[-1].offset + summary.chunks[-1].length + 9])
    with open(cut, "rb") as f:
        scanned = read_index(f, os.path.getsize(cut))
    assert summary.complete and not scanned.complete
    assert len(indexed) == len(summary.chunks) == len(scanned.chunks) >= 60
    assert [(c.offset, c.start) for c in summary.chunks] == \
        [(c.offset, c.start) for c in scanned.chunks]
    with Recording(path) as reading:
        assert reading.info().frames == len(truth)
        assert reading.frame(len(truth) - 1).step == truth[-1].step
