"""``coopsim conformance``: run the conformance transcripts against a running server.

It starts nothing: point it at the name server of a ``coopsim run`` of the conformance scenario
(``coopsim conformance --scenario`` prints its path) or of a ``coopsim replay``, directly
(through coopsim's Python client), through a JSON gateway (``--gateway HOST:PORT``) or through
another client's transcript runner (``--client CMD``, the line protocol of
:mod:`coopsim.conformance.runner`). Exit 0 when every step passed, 1 when some failed (each
listed), 2 when the server cannot be reached.
"""

from __future__ import annotations

import os
import shlex
import sys

import click

from ..conformance import runner
from ..conformance.transcript import FLIGHT_SCENARIO, SCENARIO, TRANSCRIPTS, load_all
from ..net.protocol import DEFAULT_NAMESERVER
from .options import EXIT_BAD_INPUT, client_keys

EXIT_FAILED = 1


def conformance_command(nameserver: str | None, gateway: str | None, client: str | None,
                        only: tuple[str, ...], keys, verbose: bool, scenario: bool | str,
                        timeout: float = runner.WAIT, folder=None,
                        offer: tuple[str, ...] = ()) -> None:
    """Run the transcripts (or print the scenario's path); exits 0, 1 or 2 as the module says."""
    if scenario:  # "3d": the flight transcript's scenario
        click.echo(str(FLIGHT_SCENARIO if scenario == "3d" else SCENARIO))
        return
    nameserver = nameserver or os.environ.get("COOPSIM_NAMESERVER", DEFAULT_NAMESERVER)
    transcripts = load_all(folder or TRANSCRIPTS)
    unknown = set(only) - set(transcripts)
    if unknown:
        raise click.BadParameter(f"no transcript {', '.join(sorted(unknown))} "
                                 f"(there are: {', '.join(transcripts)})", param_hint="--only")
    transport = _transport(nameserver, gateway, client, keys, timeout)
    try:
        report = runner.run(transport, transcripts, only, offer)
    except runner.Unreachable as exc:
        where = f"the JSON gateway at {gateway}" if gateway else nameserver
        click.echo(f"coopsim: {where}: {exc.text}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    finally:
        transport.close()
    for line in report.lines(verbose):
        click.echo(line)
    sys.exit(EXIT_FAILED if report.failed else 0)


def _transport(nameserver: str, gateway: str | None, client: str | None, keys,
               timeout: float):
    if gateway:
        try:
            return runner.GatewayTransport(gateway, timeout)
        except ValueError:
            raise click.BadParameter(f"{gateway!r} is not HOST:PORT",
                                     param_hint="--gateway") from None
    if client:
        env = dict(os.environ, COOPSIM_NAMESERVER=nameserver)
        return runner.ProcessTransport(shlex.split(client), env=env, timeout=timeout)
    return runner.PythonTransport(nameserver, client_keys(keys), timeout)
