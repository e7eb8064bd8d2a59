"""The Hugging Face Hub: `benchdb publish` (a dataset, its card and badges), and the options
`benchdb report --model-card MODEL [--dataset ORG/NAME] [--push]` adds to `report`.

Commands import their library modules inside the command body: `benchdb --help` stays light.
"""

from __future__ import annotations

import functools
from pathlib import Path

import click

from benchdb.cli.help import command
from benchdb.cli.shared_options import db_option, write_atomic
from benchdb.errors import BenchdbError


@command(
    "publish",
    examples=(
        (
            "list what would be uploaded to the dataset, changing nothing",
            "benchdb publish --repo my-org/benchmarks --dry-run",
        ),
        ("upload (the token comes from HF_TOKEN or `hf auth login`)", "benchdb publish --repo my-org/benchmarks"),
        ("the dashboard as a static Space", "benchdb publish --space my-org/benchdb-dashboard"),
    ),
    exit_codes={
        1: "nothing to publish: no ingested contract file (matching --model/--hardware)",
        2: "bad input, or the Hub refused a request (one line says why)",
    },
)
@click.option("--repo", "repo_id", default=None, metavar="ORG/NAME", help="The dataset repository on the Hub.")
@click.option(
    "--space",
    "space_id",
    default=None,
    metavar="ORG/NAME",
    help="Instead: publish the dashboard (`benchdb site`) as a static Hugging Face Space.",
)
@click.option(
    "--site",
    "site_dir",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    help="With --space: a site `benchdb site --out DIR` already built (default: build one from --db); "
    "only the files `benchdb site` wrote are uploaded.",
)
@click.option(
    "--replace-existing",
    is_flag=True,
    help="With --space: replace files of the Space that no benchdb publish wrote (the README.md and "
    "index.html the Hub puts in a new Space); without it such a publish is refused.",
)
@click.option("--private", is_flag=True, help="Create the repository private (when it does not exist yet).")
@click.option("--model", "models", multiple=True, help="Only these models (repeatable).")
@click.option("--hardware", "hardware_names", multiple=True, help="Only this hardware, by name or id (repeatable).")
@click.option(
    "--dry-run",
    is_flag=True,
    help="List every file that would be uploaded (and, with --space, deleted); change nothing.",
)
@db_option()
def publish(repo_id, space_id, site_dir, replace_existing, private, models, hardware_names, dry_run, db):
    """Publish the results as a Hugging Face Hub dataset.

    In one commit (or, with --space, the dashboard as a static Space). Uploads each ingested
    contract file not on the Hub yet (samples/, what `benchdb ingest hf://datasets/ORG/NAME`
    reads back), one results file per hardware for them (.results/, the viewer's `results`
    config), the dataset card (README.md) and a badge per model (badges/). The token comes from
    HF_TOKEN or `hf auth login`; it is never printed or stored.
    """
    if (repo_id is None) == (space_id is None):
        raise BenchdbError("give --repo ORG/NAME (a dataset of the results) or --space ORG/NAME (the dashboard)")
    if space_id is not None:
        return _space(space_id, site_dir, private, db, bool(models or hardware_names), dry_run, replace_existing)
    if site_dir is not None or replace_existing:
        raise BenchdbError(f"{'--site' if site_dir is not None else '--replace-existing'} goes with --space ORG/NAME")
    from benchdb.hub import publish as hub

    p = hub.plan(db, repo_id, models=list(models), hardware=list(hardware_names), need_token=not dry_run)
    for u in p.uploads:
        click.echo(f"  + {u.path_in_repo} ({u.size:,} bytes)")
    if dry_run:
        click.echo(
            f"dry run: would upload {p.line()} to dataset {repo_id} in one commit"
            + ("" if p.exists else " (creating it)")
        )
        return
    if not p.uploads:
        click.echo(f"nothing new to publish: dataset {repo_id} is up to date ({p.already} contract file(s))")
        return
    url = hub.push(p, private=private)
    click.echo(f"published {p.line()} to dataset {repo_id} in one commit: {url}")


def _space(space_id, site_dir, private, db, filtered, dry_run, replace_existing) -> None:
    import tempfile

    from benchdb.hub import space
    from benchdb.hub.client import check_repo_id

    check_repo_id(space_id, "--space")
    if filtered:
        raise BenchdbError("--model and --hardware filter a dataset; a Space shows the whole dashboard")
    with tempfile.TemporaryDirectory(prefix="benchdb-space-") as tmp:
        if site_dir is None:
            from benchdb.web import site

            site_dir = Path(tmp) / "site"
            site.build(db, site_dir)
        p = space.plan(site_dir, space_id, need_token=not dry_run)
        for line in p.lines():
            click.echo(line)
        what = (
            f"{len(p.uploads)} file(s)"
            + (f", {len(p.deletions)} stale removed" if p.deletions else "")
            + (f", {len(p.replaced)} replaced that no publish wrote" if p.replaced else "")
        )
        if dry_run:
            needs = (
                f"; replacing {p.replaced_text()} needs --replace-existing"
                if p.replaced and not replace_existing
                else ""
            )
            click.echo(
                f"dry run: would publish the dashboard to Space {space_id} in one commit: {what}"
                + ("" if p.exists else " (creating it)")
                + needs
            )
            return
        url = space.push(p, private=private, replace_existing=replace_existing)
    click.echo(f"published the dashboard to Space {space_id} in one commit: {what}: {url}")


def model_card_options(command):
    """Adds `--model-card MODEL`, `--dataset ORG/NAME` and `--push` to the `report` command: with
    --model-card, the command writes the model-card section instead of a report."""

    @click.option(
        "--push",
        is_flag=True,
        help="With --model-card: open a pull request on the model's Hub repo updating that section.",
    )
    @click.option(
        "--dataset",
        default=None,
        metavar="ORG/NAME",
        help="With --model-card: the published dataset to link (and whose badge to show).",
    )
    @click.option(
        "--model-card",
        "model_card",
        default=None,
        metavar="MODEL",
        help="Write the Markdown section for MODEL's Hub model card (between benchdb markers).",
    )
    @functools.wraps(command)
    def wrapper(*args, model_card, dataset, push, **kwargs):
        if model_card is None:
            if push or dataset:
                raise BenchdbError("--push and --dataset go with --model-card MODEL")
            return command(*args, **kwargs)
        return _model_card(model_card, dataset, push, kwargs.get("db"), kwargs.get("out"))

    return wrapper


def _model_card(model_id: str, dataset: str | None, push: bool, db, out) -> None:
    from benchdb.hub import publish as hub
    from benchdb.hub.client import check_repo_id

    if push:
        check_repo_id(model_id, "--push needs a Hub model repo: model")
    section = hub.model_card(db, model_id, dataset)
    if out is None:
        click.echo(section, nl=False)
    else:
        write_atomic(out, section)
        click.echo(f"wrote {out} (model-card section for {model_id})", err=True)
    if push:
        url = hub.push_model_card(model_id, section)
        click.echo(
            f"opened a pull request on {model_id}: {url}"
            if url
            else f"the model card of {model_id} already has this section: no pull request",
            err=True,
        )


COMMANDS = [publish]
