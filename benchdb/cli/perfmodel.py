"""The performance model: `benchdb calibrate` (measured peaks) and `benchdb predict`.

Commands import their library modules inside the command body: `benchdb --help` stays light.
"""

from __future__ import annotations

import json
import sys

import click

from benchdb.cli.help import command
from benchdb.cli.shared_options import csv_words, db_option, duration_type, old_name, size_type


@command(
    "calibrate",
    examples=(
        ("this machine's CPU peaks, with numpy and PyTorch", "benchdb calibrate"),
        ("a GPU's peaks, measured with PyTorch", "benchdb calibrate --device cuda:0 --backend pytorch"),
        ("the calibrations stored so far", "benchdb calibrate --list"),
    ),
)
@click.option("--device", default="cpu", show_default=True, help="Device to calibrate: cpu, cuda:0, mps, xpu:0.")
@click.option(
    "--backend",
    "backends",
    callback=csv_words,
    default="numpy,pytorch",
    show_default=True,
    metavar="BACKEND,...",
    help="Libraries that measure, comma-separated (each installed one that can drive the device).",
)
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    default=None,
    help="CPU threads (default: physical cores, as `benchdb run`). Recorded with the peaks.",
)
@click.option(
    "--trials",
    type=click.IntRange(min=2),
    default=10,
    show_default=True,
    help="Timed trials per figure (8 or more give a 95 % CI of the median).",
)
@click.option(
    "--trial-time",
    type=duration_type(minimum=0.001),
    default="200ms",
    show_default=True,
    help="Time per trial: 200ms, 1s, or bare seconds.",
)
@click.option(
    "--matmul-n",
    type=click.IntRange(min=8),
    default=1024,
    show_default=True,
    help="Starting matrix order N: halved while one product takes over a quarter of a trial, doubled "
    "while it takes under 2 ms (an accelerator finishes a small product faster than it launches).",
)
@click.option(
    "--stream-size",
    "stream_mb",
    type=size_type(unit="MiB", minimum=0.01 * 2**20),
    default="128MiB",
    show_default=True,
    help="Size of each copy/triad array (well beyond the caches): 128MiB, 1GiB.",
)
@old_name("--stream-mb", "--stream-size", "stream_mb", size_type(unit="MiB", bare="MiB", minimum=0.01 * 2**20))
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--list", "list_only", is_flag=True, help="List the stored calibrations instead of measuring.")
@db_option()
def calibrate(device, backends, threads, trials, trial_time, matmul_n, stream_mb, fmt, list_only, db):
    """Measure this device's peak FLOP/s and memory bandwidth.

    Matmul FLOP/s per precision and copy/triad bandwidth, added to the warehouse's hardware
    record (recalibrating adds rows, never overwrites); `benchdb predict` uses them."""
    from benchdb.perfmodel import answers

    if list_only:
        rows, path = answers.calibrations(db)
        click.echo(
            json.dumps(rows, indent=1, default=str)
            if fmt == "json"
            else "\n".join(answers.calibration_lines(rows, path))
        )
        return
    done = answers.calibrate(
        db,
        device,
        tuple(backends),
        threads=threads,
        trials=trials,
        trial_time=trial_time,
        matmul_n=matmul_n,
        stream_bytes=int(stream_mb * 2**20),
        progress=lambda m: click.echo(m, err=True),
    )
    click.echo(done.as_json() if fmt == "json" else "\n".join(done.lines()))


@command(
    "predict",
    examples=(
        (
            "a model's latency on calibrated hardware whose name contains epyc",
            "benchdb predict --model tiny:bert --hardware epyc --batch-size 8",
        ),
        ("how wrong each method has been on this warehouse's data", "benchdb predict --evaluate"),
    ),
    exit_codes={
        2: "bad input, nothing to predict from (no calibrated hardware or result that matches), "
        "or --evaluate with results of fewer than 3 models"
    },
)
@click.option("--model", "model", default=None, help="Model id as stored (e.g. tiny:bert, matmul:256).")
@click.option("--hardware", default=None, help="Calibrated hardware: a hardware id prefix or part of its name.")
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    default=None,
    help="The hardware's thread count (default: each calibrated one).",
)
@click.option("--batch-size", type=click.IntRange(min=1), default=None, help="Default: the model's smallest measured.")
@click.option("--shape", default=None, help="Input shape as stored (seq_len=128, ...). Default: its most measured.")
@click.option("--backend", default=None, help="Default: every backend the model was measured with.")
@click.option("--precision", default=None, help="Default: fp32.")
@click.option("--mode", default=None, help="Default: the mode measured with that backend.")
@click.option("--evaluate", is_flag=True, help="Grouped cross-validation of every method on the warehouse's data.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@db_option()
def predict(model, hardware, threads, batch_size, shape, backend, precision, mode, evaluate, fmt, db):
    """Predict a model's latency on calibrated hardware.

    Latency and throughput with an 80 % interval, and the method and data used; --evaluate
    measures the methods' errors by cross-validation."""
    from benchdb.perfmodel import answers

    data = answers.load(db)
    if evaluate:
        table, usable = answers.evaluation(data)
        if table is None:
            click.echo(
                f"insufficient data: --evaluate needs results of at least 3 models; the warehouse has "
                f"{len({r['model_id'] for r in usable})}"
            )
            sys.exit(2)
        from benchdb.perfmodel.evaluate import format_evaluation

        click.echo(json.dumps(table, indent=1) if fmt == "json" else format_evaluation(table, usable))
        return
    if not model or not hardware:
        raise click.UsageError("give --model and --hardware (or --evaluate)")
    narrow = dict(threads=threads, batch_size=batch_size, shape=shape, backend=backend, precision=precision, mode=mode)
    found = answers.predict(data, model, hardware, **narrow)
    if not found.answers:
        click.echo(found.reason)
        sys.exit(2)
    if fmt == "json":
        click.echo(answers.predictions_json(found))
    else:
        for line in answers.prediction_lines(found):
            click.echo(line)
    if not found.answered():
        sys.exit(2)


COMMANDS: list = [calibrate, predict]
