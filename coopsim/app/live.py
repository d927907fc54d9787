"""Bodies of the ``coopsim`` commands that serve or reach a live run: run, replay, view,
gateway and drive (``cli`` holds only their options)."""

from __future__ import annotations

import os
import sys

import click

from ..model.errors import CoopsimError
from .options import client_keys, has_display, wants_gui


def run_options(no_controllers: bool, controller: tuple[str, ...], controller_logs,
                json_token, json_token_file, **settings):
    """The RunOptions of ``coopsim run``'s flags; ``settings`` are those with a field of the
    same name (mode, dt, port, record, keys, foxglove...)."""
    from ..net.security import load_token
    from .controllers import parse_override
    from .run import RunOptions

    return RunOptions(controllers=not no_controllers, log_dir=controller_logs,
                      json_token=load_token(json_token, json_token_file),
                      controller=tuple(parse_override(c) for c in controller), **settings)


def run_command(file, headless, fps, **flags) -> None:
    """``coopsim run``: load FILE, serve it, watch it headless or with the viewer; exit 1 when a
    rule graded the run FAIL."""
    from ..net.nameserver import check_port
    from .run import Run, load_scenario_or_world
    from .console import run_headless, run_with_viewer

    options = run_options(**flags)
    if options.network:
        check_port(options.bind, options.port)  # a taken port ends the run now, not in minutes
    scenario = load_scenario_or_world(file)
    gui = wants_gui(headless)
    with Run(scenario, options) as live:
        _announce(live)
        if gui and live.network is not None:
            said = run_with_viewer(live, fps)
        else:
            said = run_headless(live)
    if live.recorder is not None:
        click.echo(live.recorder.summary(), err=True)
    if said.failed:
        sys.exit(1)  # a rule graded the run FAIL


def _announce(live) -> None:
    """Say on stderr where the run's recording, gateway and Foxglove bridge are (the name
    server's line and the step's path follow once the run has started: app/console.py)."""
    if live.recorder is not None:
        click.echo(f"recording: {live.recorder.path}", err=True)
    if live.gateway is not None:
        host, gw_port = live.gateway.address
        click.echo(f"json gateway: {host}:{gw_port}", err=True)
    if live.foxglove is not None:
        click.echo(f"foxglove: {live.foxglove.url}", err=True)
    if live.ros2 is not None:
        from ..ros2.graph import startup_line
        click.echo(startup_line(live.ros2.domain, live.ros2.loopback), err=True)
    if live.ros2_control_line:
        click.echo(live.ros2_control_line, err=True)
    if live.crtp is not None:
        click.echo(live.crtp.startup_line(), err=True)


def drive_command(driver, robot, nameserver, params, steps, seed) -> None:
    """``coopsim drive``: run the registered DRIVER as a controller process for ROBOT."""
    from ..client import run_controller

    settings = {}
    for item in params:
        name, eq, value = item.partition("=")
        if not eq or not name:
            raise CoopsimError(f"--param takes NAME=VALUE, not {item!r}")
        settings[name] = value
    done = run_controller(driver, robot, settings, steps=steps, nameserver=nameserver, seed=seed)
    click.echo(f"{done} control steps", err=True)


def view_command(endpoint, fps, keys) -> None:
    """``coopsim view``: the viewer window on ENDPOINT's run; exits with the window's status."""
    from ..viewer import ViewerError, nameserver_endpoint, quit_on_signals

    quit_on_signals()
    endpoint = nameserver_endpoint(endpoint)
    keys = client_keys(keys)
    if not has_display():
        raise ViewerError("no display: DISPLAY is not set (run under X, or under Xvfb)")
    try:
        from ..viewer.app import main as view_main
    except ImportError as exc:
        raise ViewerError(f"the viewer cannot load its window libraries: {exc}") from None
    sys.exit(view_main(endpoint, fps, keys))


def gateway_command(endpoint, json_port, bind, idle_timeout, keys, json_token,
                    json_token_file) -> None:
    """``coopsim gateway``: serve the JSON-lines gateway in front of ENDPOINT until Ctrl-C."""
    import threading

    from ..net.gateway import Gateway
    from ..net.protocol import DEFAULT_NAMESERVER
    from ..net.security import load_token

    endpoint = endpoint or os.environ.get("COOPSIM_NAMESERVER", DEFAULT_NAMESERVER)
    server = Gateway(endpoint, bind, json_port, idle_timeout=idle_timeout,
                     token=load_token(json_token, json_token_file), keys=client_keys(keys))
    _check_version(server, endpoint)
    server.start()
    host, gw_port = server.address
    click.echo(f"json gateway: {host}:{gw_port} -> {endpoint}   (Ctrl-C stops)", err=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


def _check_version(server, endpoint: str) -> None:
    """Refuse (exit 2) to forward to a name server of another protocol version; warn when none
    answers yet (the gateway then forwards to whatever starts there)."""
    from ..model.errors import ProtocolError
    from ..net.protocol import VERSION_MISMATCH

    reply = server.hello()
    if reply is None:
        click.echo(f"warning: no name server answers at {endpoint} yet", err=True)
    elif reply.error == VERSION_MISMATCH:
        server.close()
        raise ProtocolError(VERSION_MISMATCH, f"{endpoint}: {reply.text}")


def replay_command(file, headless, fps, foxglove, foxglove_rate, **settings) -> None:
    """``coopsim replay``: play FILE back on the network; ``settings`` are Replay's keywords
    (bind, port, speed, paused, exit_at_end, start, keys, insecure, advertise)."""
    import contextlib

    from ..foxglove.bridge import ReplaySource
    from ..replay.servers import Replay
    from .console import run_replay
    from .run import start_bridge

    from ..model.bundled import resolve

    from ..net import ports

    gui = wants_gui(headless)
    with ports.confined(settings.pop("ports", None)), Replay(resolve(file), **settings) \
            as playback, contextlib.ExitStack() as stack:
        if foxglove is not None:
            bridge = stack.enter_context(start_bridge(ReplaySource(playback.player),
                                                      settings["bind"], foxglove, foxglove_rate,
                                                      settings["insecure"]))
            click.echo(f"foxglove: {bridge.url} (playback control on its timeline)", err=True)
        status = run_replay(playback, gui, lambda text: click.echo(text, err=True), fps)
    if status:
        sys.exit(status)  # --exit-at-end stopped at a damaged chunk
