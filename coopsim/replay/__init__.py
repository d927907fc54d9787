"""replay layer: a recording played back as a run on the network.

``player.py``: :class:`~coopsim.replay.player.Player`, a playback position over a recording
(:mod:`coopsim.recording`) that shows each recorded step as the snapshot a live run would have
had; :func:`~coopsim.replay.player.recorded_steps` for exports and plots. ``servers.py``:
:class:`~coopsim.replay.servers.Replay`, the name server, a read-only ``/sim``, ``/playback`` and
the state stream of ``coopsim replay``, built on :mod:`coopsim.net`'s servers.
"""
