"""What a headless run shows: the endpoint, a progress bar (or status line) and a summary."""

from __future__ import annotations

import click

from .runner import Run, format_summary, watch


def run_headless(live: Run) -> None:
    """Start ``live`` and follow it to its end on the terminal."""
    if live.network is not None:
        click.echo(f"name server: {live.network.endpoint}   (Ctrl-C stops)", err=True)
    duration = live.settings.duration
    live.start()
    if duration:
        steps = max(1, round(duration / live.settings.dt))
        with click.progressbar(length=steps, label="simulating", file=click.get_text_stream(
                "stderr"), show_eta=False, show_percent=True) as bar:
            done = [0]

            def report(stats):
                bar.update(stats.steps - done[0])
                done[0] = stats.steps
            stats = watch(live.stepper, report)
    else:
        stats = watch(live.stepper, _status_line)
        click.echo("", err=True)
    click.echo(format_summary(stats, live.scenario, len(live.stepper.snapshot.robots)))


def _status_line(stats) -> None:
    click.echo(f"\rt = {stats.time:8.2f} s  steps {stats.steps}  rtf {stats.rtf:5.2f}  "
               f"missed {stats.missed}", nl=False, err=True)
