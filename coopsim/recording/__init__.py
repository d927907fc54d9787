"""recording layer: the MCAP recording format, on its own (as python-mcap: format, reader, writer).

``format.py`` (channels, schemas, the codec), ``writer.py`` (a run's snapshots into a file, on
its own thread), ``index.py`` (chunk index and attachments), ``reader.py`` (a recording opened,
steps decoded), ``repair.py`` (a recording cut short made readable), ``metrics.py`` (a
recording's rule and monitor figures). It imports only :mod:`coopsim.model`; playing a
recording back over the network is :mod:`coopsim.replay`'s.
"""
