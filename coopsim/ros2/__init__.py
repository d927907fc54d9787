"""ROS 2 without ROS: a run's robots as DDS topics a ROS 2 graph sees (``coopsim run --ros2``)
and recordings as rosbag2 folders (``coopsim export FILE --ros2 OUT``); docs/ros2.md.

The messages are encoded here (:mod:`.cdr`, :mod:`.messages`) from the same snapshots every
other reader gets (:mod:`.scene`); only :mod:`.dds` and :mod:`.bridge` need the optional
``cyclonedds`` package, imported when asked for. The bag export needs nothing beyond the core.
"""
