"""The conformance suite: transcripts of requests and the replies the protocol promises.

The transcripts (``transcripts/*.jsonl``, docs/protocol.md section 10) are data, so every client
in every language can run them: :mod:`.transcript` loads them and matches replies against their
patterns (no I/O), :mod:`.runner` sends them to a running server through the Python client or
the JSON gateway. ``coopsim conformance [NAMESERVER]`` is the command line.
"""
