"""Bodies of the ``coopsim`` commands on recording files: info, repair, export and plot
(``cli`` holds only their options)."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import click

from ..model.errors import CoopsimError
from ..recording.damage import EXIT_DAMAGED


def info_command(file, as_json: bool) -> None:
    """``coopsim info``: describe FILE; say on stderr when it lacks its summary and index."""
    from ..recording.reader import Recording, format_info, info_json

    with Recording(file) as rec:
        facts = rec.info()
    click.echo(info_json(facts) if as_json else format_info(facts))
    if not facts.complete:
        click.echo(f"incomplete: the recorder did not finish (killed?), so indexed MCAP readers "
                   f"refuse it; 'coopsim repair {file}' writes its summary and index", err=True)
    if facts.damaged:  # the facts are printed, and the status says the file is not sound
        click.echo(f"coopsim: {file}: {len(facts.damaged)} damaged chunk(s): export refuses it, "
                   f"replay plays the steps before {facts.damaged[0]['start']:.3f} s", err=True)
        sys.exit(EXIT_DAMAGED)


def repair_command(file, output) -> None:
    """``coopsim repair``: write FILE's summary and index (into ``output`` when given)."""
    from ..recording.repair import repair as repair_recording

    click.echo(repair_recording(file, output).describe())


def _not_the_input(file, *outputs) -> None:
    """Refuse an output that is the recording being read: opening it for writing would empty
    the recording before a byte of it is read."""
    source = os.path.realpath(file)
    for out in outputs:
        if out and out != "-" and os.path.exists(out) and os.path.realpath(out) == source:
            raise CoopsimError(f"{out}: the export would overwrite the recording it reads")


def export_command(file, out, metrics_out, fox_out, ros2_out=None,
                   feedback_out=None) -> None:
    """``coopsim export``: FILE as CSV (``out``, its metrics and its shared-control feedback),
    a Foxglove MCAP and/or a ROS 2 bag folder."""
    from ..recording.reader import Recording

    if out is None and fox_out is None and ros2_out is None:
        raise CoopsimError("export needs --csv OUT, --foxglove OUT.mcap or --ros2 OUT")
    _not_the_input(file, out, metrics_out, fox_out, ros2_out, feedback_out)
    if ros2_out is not None and os.path.exists(ros2_out):
        raise CoopsimError(f"{ros2_out}: already exists (a bag folder is never overwritten)")
    if fox_out is not None:
        from ..foxglove import require_sdk
        require_sdk("--foxglove")
    with Recording(file) as rec:
        rec.require_sound()  # a damaged file: nothing is written (docs/recording-format.md)
        if out is not None:
            _export_csv(rec, out, metrics_out)
            _export_feedback(rec, out, feedback_out)
        if fox_out is not None:
            from ..foxglove.export import export_foxglove, layout_path
            from ..ros2.bag import recorded_params  # the scans' beam layouts and rates

            steps, messages = export_foxglove(rec, fox_out, recorded_params(rec))
            click.echo(f"{steps} steps, {messages} messages written to {fox_out} (open it in "
                       f"Foxglove; its layout: {layout_path(fox_out)})", err=True)
        if ros2_out is not None:
            from ..ros2.bag import export_ros2

            steps, messages = export_ros2(rec, ros2_out)
            click.echo(f"{steps} steps, {messages} messages written to the ROS 2 bag "
                       f"{ros2_out}/ (ros2 bag info {ros2_out})", err=True)


def _export_csv(rec, out: str, metrics_out: str | None) -> None:
    """The CSV export of an open recording (and its metrics beside it)."""
    from ..recording.metrics import export_metrics_csv, metric_names
    from ..recording.csvexport import export_csv

    with _whole_file(out) as stream:
        try:
            rows = export_csv(rec, stream)
        except BrokenPipeError:  # `coopsim export F --csv - | head`: the reader has enough
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return
    click.echo(f"{rows} rows written to {'stdout' if out == '-' else out}", err=True)
    _beside(rec, out, metrics_out, "metric", metric_names, export_metrics_csv)


def _export_feedback(rec, out: str, feedback_out: str | None) -> None:
    """Shared control's feedback beside the CSV (NAME.feedback.csv, when the recording holds
    some; recording format 7) or where ``feedback_out`` says."""
    from ..recording.feedbackcsv import export_feedback_csv, feedback_squads

    _beside(rec, out, feedback_out, "feedback", feedback_squads, export_feedback_csv)


def _beside(rec, out: str, path: str | None, kind: str, has, export) -> None:
    """A second CSV of ``rec`` written by ``export`` to ``path``, or, when None, beside the
    CSV ``out`` as NAME.<kind>.csv when ``has(rec)`` finds something to write (metrics, shared
    control's feedback); its row count said on stderr."""
    if path is None and out != "-" and has(rec):
        path = f"{os.path.splitext(out)[0]}.{'metrics' if kind == 'metric' else kind}.csv"
    if path is not None:
        with _whole_file(path) as stream:
            rows = export(rec, stream)
        click.echo(f"{rows} {kind} rows written to {'stdout' if path == '-' else path}",
                   err=True)


@contextlib.contextmanager
def _whole_file(out: str):
    """A text stream for ``out`` ('-': stdout) that appears at ``out`` only once written whole:
    it is written to ``OUT.part`` and renamed at the end; an error or Ctrl-C midway removes
    the part, so no half-written export is ever left (docs/recording-format.md)."""
    if out == "-":
        yield click.get_text_stream("stdout")
        return
    part = f"{out}.part"
    try:
        with open(part, "w", encoding="utf-8", newline="") as stream:
            yield stream
        os.replace(part, out)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(part)
        raise


def plots_folder(file) -> Path:
    """``coopsim plot``'s default folder for recording ``file``: its name with -plots, beside
    it."""
    return Path(file).with_name(Path(file).stem + "-plots")


def plot_command(file, out, robots) -> None:
    """``coopsim plot``: PNGs of FILE into ``out`` (default :func:`plots_folder`), one path
    printed per image."""
    from ..recording.reader import Recording
    from .analyze import pyplot
    from .plot import plot_recording

    pyplot()  # a missing matplotlib is said before the recording is read
    folder = Path(out) if out else plots_folder(file)
    with Recording(file) as rec:
        rec.require_sound()
        for path in plot_recording(rec, folder, tuple(robots)):
            click.echo(str(path))
