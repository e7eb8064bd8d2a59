"""`benchdb run ... --ab BASE CAND` and `--ab-url BASE_URL CAND_URL`: one call of
:func:`benchdb.ab.compare.compare`, then each side's summary and the command that gates them."""

from __future__ import annotations

import click


def cli(ctx: click.Context, params: dict, runs: list, exclude: list, source: str) -> None:
    """`benchdb run ... --ab BASE CAND` (or --ab-url BASE_URL CAND_URL): plan, measure both sides, print
    the check command."""
    from benchdb.ab.compare import compare
    from benchdb.cli.shared_options import given
    from benchdb.reports.tabular import AB_SUMMARY, for_people

    done = compare(
        runs,
        exclude,
        source,
        pythons=params["ab"],
        urls=params.get("ab_url"),
        hardware_files=params.get("ab_hardware_file"),
        env=params["ab_env"],
        env_public=params.get("ab_env_public") or (),
        duet=bool(params.get("duet")),
        repeats_given="repeats" in given(ctx),
        max_trials=params.get("ab_max_trials") or 0,
        threshold=params["ab_threshold"],
        shard=params["shard"],
        skip_fresh=params["skip_fresh"],
        dry_run=params["dry_run"],
        db=params["db"],
        note=lambda text: click.echo(text, err=True),
    )
    if params["dry_run"]:
        for line in done.plan_lines():
            click.echo(line)
        return
    click.echo(for_people(AB_SUMMARY, done.rows))
    for line in done.side_lines():
        click.echo(line)
    done.check_succeeded()
    click.echo(f"check with: {done.check}")
