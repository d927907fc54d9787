"""A command's ``doc`` reaches clients: robot command 3 ends each line with it (protocol 2),
the Python client keeps it, and a protocol-1 line (no doc) still reads."""

from __future__ import annotations

from coopsim.client import Client
from coopsim.model.commands import Command
from coopsim.model.plugins import MODULES

from helpers import robot, scenario
from nethelpers import live


def test_describe_and_parse_carry_the_doc_and_read_a_version_1_line():
    command = Command(4100, "grab", "hand", (0, 1), (0, 0), "opt", "action",
                      "close the hand on what it touches;\n reply: text the object's name")
    line = command.describe()
    assert line == ("4100 grab hand 0 1 0 0 opt action close the hand on what it touches; "
                    "reply: text the object's name")
    assert Command.parse(line) == Command(4100, "grab", "hand", (0, 1), (0, 0), "opt",
                                          "action", " ".join(command.doc.split()))
    assert Command.parse("2 detach - 0 0 0 0 - -").doc == ""  # protocol 1
    assert Command(2, "detach").describe().endswith(" - - -")  # no doc: '-'


def test_the_listing_carries_each_commands_doc_to_the_python_client():
    with live(scenario(robots=[robot("r1", 0.0, 0.0)]), paused=True) as run:
        with Client(run.network.endpoint, timeout=5.0) as client:
            bot = client.robot("r1")
            lines = bot.call(3, "motors").text.splitlines()
            stop = bot.motors.commands()["stop"]
    declared = {c.name: c.doc for c in MODULES.get("motors").commands}
    assert declared["stop"]  # the built-in declares one
    assert [" ".join(line.split()[9:]) for line in lines] == list(declared.values())
    assert stop.doc == declared["stop"]
    assert bot.motors.stop.__doc__ == declared["stop"]
