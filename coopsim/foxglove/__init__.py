"""Runs and recordings in Foxglove (docs/foxglove.md): the live WebSocket bridge
(:mod:`.bridge`, the SDK's server), the Foxglove-ready MCAP export (:mod:`.export`) and the
messages both send (:mod:`.scene`, encoded by :mod:`.proto`).

The SDK is the optional extra ``coopsim[foxglove]``; only the bridge imports it (the export
reads its schemas), and only when asked for.
"""

from __future__ import annotations

import importlib

from ..model.bundled import install_hint
from ..model.errors import CoopsimError

INSTALL = install_hint("foxglove") + "  (or: pip install foxglove-sdk)"


def require_sdk(what: str):
    """The ``foxglove`` SDK module, or a CoopsimError naming the pip command to run."""
    try:
        sdk = importlib.import_module("foxglove")
        importlib.import_module("foxglove.messages")
        importlib.import_module("foxglove.websocket")
    except ImportError:
        raise CoopsimError(f"{what} needs the Foxglove SDK, which is not installed: "
                           f"{INSTALL}") from None
    return sdk


def make_channel(sdk, context, topic):
    """An SDK channel for a :class:`~coopsim.foxglove.topics.Topic` in ``context``: protobuf
    with the SDK's own ``foxglove.*`` schema, or JSON with the topic's JSON schema."""
    from .topics import json_schema

    if topic.schema:
        schema = getattr(sdk.messages, topic.schema).get_schema()
        return sdk.Channel(topic.name, schema=schema, message_encoding="protobuf",
                           context=context)
    import json

    schema = sdk.Schema(name=topic.name.strip("/").replace("/", "."), encoding="jsonschema",
                        data=json.dumps(json_schema(topic)).encode())
    return sdk.Channel(topic.name, schema=schema, message_encoding="json", context=context)
