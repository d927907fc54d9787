"""A Foxglove layout for coopsim's topics, built with the SDK's ``foxglove.layouts`` types.

Left, the 3D panel in the ``world`` frame showing ``/scene/world`` and ``/scene/bodies``
(follow a robot by choosing its frame as the display frame); right, a Plot of every metric (or
of the step when there is none), the Log panel on ``/events`` and the raw ``/sim/state``.
Foxglove imports it from *Layouts > Import from file*.
"""

from __future__ import annotations

import importlib

from .proto import WORLD
from .topics import EVENTS, SCENE_BODIES, SCENE_WORLD, STATE, metric_topic


def layout_json(metrics: list[str]) -> str:
    """The layout as JSON text (``metrics``: names such as ``monitors.gap``); needs the SDK."""
    fl = importlib.import_module("foxglove.layouts")
    topics = {t.name: fl.BaseRendererSceneUpdateTopicSettings(visible=True)
              for t in (SCENE_WORLD, SCENE_BODIES)}
    three = fl.ThreeDeePanel(title="world", config=fl.ThreeDeeConfig(
        follow_tf=WORLD, fixed_frame=WORLD, follow_mode="follow-none", topics=topics,
        transforms={}))
    series = [fl.PlotSeries(value=f"{metric_topic(m).name}.value", label=m) for m in metrics]
    plot = fl.PlotPanel(title="metrics" if metrics else "step", config=fl.PlotConfig(
        paths=series or [fl.PlotSeries(value=f"{STATE.name}.step", label="step")],
        show_legend=True))
    logs = fl.LogPanel(title="events", config=fl.LogConfig(topic_to_render=EVENTS.name))
    raw = fl.RawMessagesPanel(title="sim state",
                              config=fl.RawMessagesConfig(topic_path=STATE.name))
    right = fl.SplitContainer(direction="column", items=[
        fl.SplitItem(proportion=2, content=plot), fl.SplitItem(proportion=1, content=logs),
        fl.SplitItem(proportion=1, content=raw)])
    return fl.Layout(content=fl.SplitContainer(direction="row", items=[
        fl.SplitItem(proportion=3, content=three),
        fl.SplitItem(proportion=2, content=right)])).to_json()

