"""The performance model: `benchdb calibrate` (measured peaks) and `benchdb predict`.

Commands import their library modules inside the command body: `benchdb --help` stays light.
"""

from __future__ import annotations

import json

import click

from benchdb.cli.help import command
from benchdb.cli.shared_options import csv_words, db_option, duration_type, old_name, size_type


def _si(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


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
    from benchdb.warehouse import Warehouse

    wh = Warehouse(db)
    if list_only:
        from benchdb.perfmodel.calibrate import calibrations

        rows = calibrations(wh)
        if fmt == "json":
            click.echo(json.dumps(rows, indent=1, default=str))
            return
        if not rows:
            click.echo(f"no calibrations in {wh.path}; run `benchdb calibrate`")
            return
        for r in rows:
            click.echo(
                f"{str(r['calibrated_at'])[:19]}  {r['hardware_name']} ({r['hardware_id']}) "
                f"threads={r['threads']}  {r['backend']:<8} {r['kind']:<6} {r['precision']:<5} "
                f"{_si(r['value'], r['unit'])}"
            )
        return
    from benchdb.perfmodel import calibrate as cal

    device, threads = cal.target(device, threads)
    settings = cal.Settings(
        trials=trials, trial_time=trial_time, matmul_n=matmul_n, stream_bytes=int(stream_mb * 2**20), threads=threads
    )
    peaks = cal.measure(device, tuple(backends), settings, progress=lambda m: click.echo(m, err=True))
    stored = cal.store(wh, peaks, device, settings)
    if fmt == "json":
        click.echo(json.dumps({**stored, "peaks": cal.as_dicts(peaks)}, indent=1, default=str))
        return
    click.echo(f"{'backend':<9}{'kind':<8}{'precision':<11}{'median':>14}  95% CI")
    for p in peaks:
        ci = f"[{_si(p.ci_low, p.unit)}, {_si(p.ci_high, p.unit)}]" if p.ci_low is not None else "- (too few trials)"
        click.echo(f"{p.backend:<9}{p.kind:<8}{p.precision:<11}{_si(p.value, p.unit):>14}  {ci}")
    click.echo(
        f"calibration {stored['calibration_id']} added to hardware {stored['hardware_name']} "
        f"({stored['hardware_id']}, threads={stored['threads']}) in {wh.path}"
    )


def _ms(v: float | None) -> str:
    return "-" if v is None else (f"{v * 1e3:.3g} ms" if v < 1 else f"{v:.3g} s")


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
    import sys

    from benchdb.perfmodel import evaluate as ev
    from benchdb.perfmodel import predict as pr
    from benchdb.warehouse import Warehouse

    with Warehouse(db).reading() as con:
        rows, peaks = pr.load(con)
    if evaluate:
        usable = [r for r in rows if r["latency_s"]]
        if len({r["model_id"] for r in usable}) < 3:
            click.echo(
                f"insufficient data: --evaluate needs results of at least 3 models; the warehouse has "
                f"{len({r['model_id'] for r in usable})}"
            )
            sys.exit(2)
        table = ev.evaluate(usable)
        click.echo(json.dumps(table, indent=1) if fmt == "json" else ev.format_evaluation(table, usable))
        return
    if not model or not hardware:
        raise click.UsageError("give --model and --hardware (or --evaluate)")
    targets, reason = pr.targets(
        rows,
        peaks,
        model,
        hardware,
        threads=threads,
        batch_size=batch_size,
        shape=shape,
        backend=backend,
        precision=precision,
        mode=mode,
    )
    if not targets:
        click.echo(reason)
        sys.exit(2)
    learned = pr.Learned(rows)
    answers = [(t, pr.answer(rows, t, learned)) for t in targets]
    if fmt == "json":
        click.echo(
            json.dumps(
                [
                    {
                        "target": {k: v for k, v in t.items()},
                        "method": a.method,
                        "latency_s": a.value,
                        "low_s": a.low,
                        "high_s": a.high,
                        "throughput_items_s": t["batch_size"] / a.value if a.value else None,
                        "detail": a.detail,
                        "reason": a.reason,
                        "data": a.data,
                    }
                    for t, a in answers
                ],
                indent=1,
                default=str,
            )
        )
    else:
        for t, a in answers:
            head = (
                f"{t['model_id']} on {t['hardware_config']}, {t['backend']} {t['mode']} {t['precision']}, "
                f"batch {t['batch_size']}, {t['input_shape']}:"
            )
            if a.value is None:
                click.echo(f"{head} {a.reason}")
                continue
            interval = (
                f" [{_ms(a.low)}, {_ms(a.high)}] (80 % interval)"
                if a.low is not None
                else " (no interval: fewer than 5 cross-validated errors)"
            )
            tput = t["batch_size"] / a.value
            tput_iv = f" [{t['batch_size'] / a.high:.4g}, {t['batch_size'] / a.low:.4g}]" if a.low is not None else ""
            measured = f"; measured {_ms(t['measured'])}" if t.get("measured") else ""
            click.echo(f"{head} latency {_ms(a.value)}{interval}, throughput {tput:.4g}{tput_iv} items/s{measured}")
            click.echo(f"  method: {a.detail}")
    if all(a.value is None for _, a in answers):
        sys.exit(2)


COMMANDS: list = [calibrate, predict]
