"""External robots' poses from a ROS 2 graph (docs/in-the-loop.md): each robot marked
``external`` takes ``/R/external/pose`` (``geometry_msgs/PoseStamped``) and
``/R/external/odom`` (``nav_msgs/Odometry``, its pose), both in the world (``map``) frame, into
the same checks and store as the protocol's ``external_pose`` (:mod:`coopsim.sim.external`).
Samples arrive on Cyclone's listener thread; a refused one is counted there (14, 15) and in the
bridge's ``external`` figures, and the stream goes on."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model.errors import ProtocolError
from . import messages as m
from .dds import on_samples

#: The topic suffixes an external robot listens on, and their types.
TOPICS = (("external/pose", "geometry_msgs/PoseStamped"), ("external/odom", m.ODOMETRY))


@dataclass
class ExternalCounts:
    """Poses taken from ROS 2, refused (by error code), and malformed samples."""

    received: int = 0
    refused: dict = field(default_factory=dict)
    malformed: int = 0
    last_refusal: str = ""


class ExternalTopics:
    """The readers of every external robot's pose topics.

    Args:
        stepper: The run's Stepper (its simulation's ``external`` takes the poses).
        dds: The bridge's :class:`~coopsim.ros2.dds.Dds`.
    """

    def __init__(self, stepper, dds) -> None:
        self.stepper, self.dds = stepper, dds
        self.readers: dict[str, list] = {}
        self.counts = ExternalCounts()

    def follow(self, robots) -> None:
        """Read the pose topics of every external robot among ``robots`` (RosScene robots,
        with ``name`` and ``ns``) not read yet."""
        external = self.stepper.sim.external.tracks
        for r in robots:
            if r.name in external and r.name not in self.readers:
                self.readers[r.name] = [self.dds.reader(f"/{r.ns}/{suffix}", short,
                                                        self._on_pose(r.name))
                                        for suffix, short in TOPICS]

    def _on_pose(self, robot: str):
        return on_samples(lambda sample: self.take(robot, sample), self._malformed)

    def _malformed(self) -> None:
        self.counts.malformed += 1

    def take(self, robot: str, sample) -> None:
        """One PoseStamped or Odometry sample into the robot's pose stream."""
        # an Odometry (it has a child frame) holds its pose with a covariance, one level down
        pose = sample.pose.pose if hasattr(sample, "child_frame_id") else sample.pose
        try:
            p, q = pose.position, pose.orientation
            self.stepper.sim.external.receive(robot, (p.x, p.y, p.z, q.w, q.x, q.y, q.z))
        except ProtocolError as exc:
            self.counts.refused[exc.code] = self.counts.refused.get(exc.code, 0) + 1
            self.counts.last_refusal = str(exc)
            return
        except (AttributeError, TypeError):
            self.counts.malformed += 1
            return
        self.counts.received += 1

    def state(self) -> dict:
        """The ``ros2.external`` figures of ``/sim state``."""
        c = self.counts
        return {"received": c.received, "malformed": c.malformed, "last_refusal": c.last_refusal,
                "refused": {str(k): v for k, v in sorted(c.refused.items())}}
