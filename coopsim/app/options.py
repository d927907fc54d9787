"""Option groups several ``coopsim`` commands share, and the wrapper that turns known errors
into exit 2; kept apart so ``cli`` stays a thin table of commands."""

from __future__ import annotations

import functools
import os
import sys

import click

from . import interrupt
from ..model.errors import CoopsimError

EXIT_BAD_INPUT = 2


def _refuse(line: str) -> None:
    """Say LINE on stderr and exit 2. After a Ctrl-C the error is what the interrupt cut short: the
    command was interrupted (exit 130)."""
    if interrupt.requested():
        interrupt.exit_interrupted()
    click.echo(f"coopsim: {line}", err=True)
    sys.exit(EXIT_BAD_INPUT)


def friendly(fn):
    """Print a CoopsimError or OSError as one line on stderr and exit 2 (no traceback)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (CoopsimError, OSError) as exc:
            _refuse(str(exc))
        except Exception as exc:  # a plugin from another package raised: name it, in one line
            from ..model.plugins import blame

            line = blame(exc)
            if not line:
                raise  # coopsim's own bug: the traceback is the report
            _refuse(line)

    return wrapper


def keys_options(fn):
    """--keys, --insecure and --advertise: who may reach the servers, and where."""
    fn = click.option("--advertise", metavar="HOST",
                      help="Host the name server writes into the endpoints it hands out "
                           "(default: the bind address; for 0.0.0.0 this machine's "
                           "primary address).")(fn)
    fn = click.option("--insecure", is_flag=True,
                      help="Serve beyond loopback WITHOUT authentication: anyone who reaches "
                           "the machine can drive the run (trusted networks only).")(fn)
    return click.option("--keys", type=click.Path(), metavar="DIR",
                        help="CurveZMQ keys folder (coopsim keys DIR): every server accepts "
                             "only the clients in DIR/authorized. Needed for a --bind beyond "
                             "loopback.")(fn)


def token_options(fn):
    """--json-token and --json-token-file: the JSON gateway's auth line."""
    fn = click.option("--json-token-file", type=click.Path(), metavar="FILE",
                      help="Read the JSON gateway's token from FILE's first line.")(fn)
    return click.option("--json-token", envvar="COOPSIM_JSON_TOKEN", metavar="TOKEN",
                        help="The JSON gateway's token (16+ characters; default "
                             "$COOPSIM_JSON_TOKEN): clients send it first. Needed beyond "
                             "loopback.")(fn)


def foxglove_options(fn):
    """--foxglove [PORT] and --foxglove-rate: the Foxglove WebSocket bridge."""
    fn = click.option("--foxglove-rate", type=float, default=20.0, show_default=True,
                      metavar="HZ", help="Steps the Foxglove bridge publishes per second.")(fn)
    return click.option("--foxglove", type=click.IntRange(0, 65535), is_flag=False,
                        flag_value=8765, default=None, metavar="[PORT]",
                        help="Serve the run to Foxglove over WebSocket on the --bind address "
                             "(default port 8765; 0 = any free port; needs pip install "
                             "'coopsim[foxglove]'; docs/foxglove.md).")(fn)


def ros2_options(fn):
    """--ros2, --ros2-domain, --ros2-rate and --ros2-discovery: the robots as ROS 2 topics
    over DDS."""
    fn = click.option("--ros2-discovery", type=click.Choice(["localhost", "subnet"]),
                      default="localhost", show_default=True,
                      help="localhost: DDS on loopback only (ROS 2 shells export "
                           "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST); subnet: ROS 2's default "
                           "discovery on this machine's interfaces, so nodes with no settings "
                           "(ros2 topic list) find the run, and so can the network: needs "
                           "--insecure (docs/ros2.md).")(fn)
    fn = click.option("--ros2-rate", type=click.FloatRange(min=0.0, min_open=True),
                      default=50.0, show_default=True, metavar="HZ",
                      help="Odometry, /tf and /clock per second of sim time in realtime mode "
                           "(every step when dt is longer; lockstep: after every step).")(fn)
    fn = click.option("--ros2-domain", type=click.IntRange(0, 232), default=0,
                      envvar="ROS_DOMAIN_ID", show_default=True, metavar="N",
                      help="DDS domain id, 0-232 (default $ROS_DOMAIN_ID, else 0), as the "
                           "ROS 2 nodes' ROS_DOMAIN_ID.")(fn)
    return click.option("--ros2", is_flag=True,
                        help="Publish every robot as a ROS 2 robot over DDS (odom, scan, tf, "
                             "map, clock; cmd_vel drives it), on loopback unless --bind or "
                             "--ros2-discovery says otherwise; needs pip install "
                             "'coopsim[ros2]'; docs/ros2.md.")(fn)


def crtp_options(fn):
    """--crtp and --crtp-port: every Crazyflie on its own CRTP/UDP port for cflib."""
    fn = click.option("--crtp-port", type=click.IntRange(1, 65535), default=19850,
                      show_default=True, metavar="PORT",
                      help="UDP port of the first Crazyflie; the others follow in section "
                           "order (cflib's scan_interfaces() probes 19850-19859).")(fn)
    return click.option("--crtp", is_flag=True, default=None,
                        help="Serve every Crazyflie over CRTP/UDP for Bitcraze's cflib "
                             "(udp://127.0.0.1:19850 + i), on loopback unless --bind says "
                             "otherwise, which needs --insecure; [SETTINGS] crtp true does the "
                             "same; docs/crazyflie.md.")(fn)


def client_keys(keys):
    """A client's keys: the folder given, else $COOPSIM_SERVER_KEY/$COOPSIM_CLIENT_KEY."""
    from ..net.security import ClientKeys

    return ClientKeys.resolve(keys)


def has_display() -> bool:
    """Whether a window can open here (X11 or Wayland)."""
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def wants_gui(headless: bool | None) -> bool:
    """--headless/--gui resolved: the GUI by default when there is a display; --gui without
    one is a CoopsimError."""
    gui = (not headless) if headless is not None else has_display()
    if gui and not has_display():
        raise CoopsimError("--gui needs a display (DISPLAY is not set); use --headless, "
                           "or start a viewer elsewhere with 'coopsim view ENDPOINT'")
    return gui


def recording_path(ctx, param, value: str | None) -> str | None:
    """``--record [PATH]``: PATH must end in ``.mcap``. The value is optional, so
    ``coopsim run --record my.scenario`` takes the scenario for PATH; without this check the
    recording would overwrite the scenario file."""
    if value and not value.endswith(".mcap"):
        raise click.BadParameter(
            f"{value!r} does not end in .mcap (to record a scenario, put the file first: "
            f"coopsim run {value} --record)", ctx=ctx, param=param)
    return value


def _use_threads(ctx, param, value):
    """Apply --threads as soon as it is parsed: before numba loads, so that a count above the
    cores can raise numba's pool (coopsim.model.threads.use)."""
    from ..model import threads

    threads.use(value)
    return value


def threads_option(fn):
    """--threads N: the threads the compiled kernels share a step's robots among."""
    return click.option("--threads", type=click.IntRange(1, 1024), metavar="N",
                        callback=_use_threads, expose_value=True,
                        help="Threads for sensing, kinematic physics and actuators (default: "
                             "the scenario's [SETTINGS] threads, else the cores this process "
                             "may use). The results are the same for any N.")(fn)
