"""The viewer's managers check names and numbers by the model's rule and table, in the server's
words, so a reserved name or a physics-breaking size never leaves the window."""

from __future__ import annotations

import pytest

from coopsim.viewer.forms import FormError, object_request, robot_request, target_request

OBJECT = {"name": "crate", "length": "1", "width": "1", "height": "0.5", "x": "0", "y": "0",
          "z": "0", "yaw": "0", "mass": "1"}
ROBOT = {"name": "r9", "x": "0", "y": "0", "z": "0", "yaw": "0"}
RGB = (0.5, 0.5, 0.5)


@pytest.mark.parametrize("name, message", [
    ("sim", "robot name must not be 'sim': the simulator serves /sim itself"),
    ("Playback", "robot name must not be 'Playback': the simulator serves /playback itself"),
    ("r1/motors", "robot name must be letters, digits, '_' or '-', starting with a letter, "
                  "got 'r1/motors'"),
])
def test_the_robot_manager_refuses_names_the_server_refuses(name, message):
    with pytest.raises(FormError) as info:
        robot_request("insert", {**ROBOT, "name": name}, "single", RGB)
    assert (info.value.field, str(info.value)) == ("name", message)


@pytest.mark.parametrize("key, value, message", [
    ("length", "1e-300", "size length must be between 0.001 and 1000 m, got 1e-300 m"),
    ("mass", "5e-324", "mass must be 0 (static) or between 0.001 and 10000 kg, got "
                       "4.94066e-324 kg"),
    ("mass", "1e300", "mass must be 0 (static) or between 0.001 and 10000 kg, got 1e+300 kg"),
    ("yaw", "400", "yaw must be between -6.28319 and 6.28319 rad (-360 to 360 degrees), got "
                   "6.98132 rad (400 degrees)"),
    ("z", "-2e4", "position z must be between -10000 and 10000 m, got -20000 m"),
])
def test_the_object_manager_uses_the_models_ranges(key, value, message):
    with pytest.raises(FormError) as info:
        object_request("insert", {**OBJECT, key: value}, "box", RGB)
    assert (info.value.field, str(info.value)) == (key, message)


def test_values_at_the_edges_are_sent():
    edge = {**OBJECT, "length": "1000", "width": "0.001", "mass": "0", "yaw": "-360"}
    request = object_request("insert", edge, "box", RGB)
    assert request.data[:3] == (1000.0, 0.001, 0.5) and request.data[-1] == 0.0
    assert robot_request("update", {**ROBOT, "name": "simulator"}, "single", RGB).text == \
        "simulator single"
    with pytest.raises(FormError, match="position x must be between"):
        target_request("insert", {"x": "1e5", "y": "0", "z": "0"}, "red")
