"""The dashboard: `benchdb dashboard` (a read-only local web app) and `benchdb site` (static files).

`benchdb serve`, the dashboard's first name, still starts it, with a note: "serving" elsewhere in
benchdb means benchmarking LLM endpoints (`run --server`, `report --serving`).

Commands import their library modules inside the command body: `benchdb --help` stays light.
"""

from __future__ import annotations

import click

from benchdb.cli.help import command
from benchdb.cli.shared_options import db_option

DASHBOARD_EXIT_CODES = {
    0: "stopped with Ctrl-C",
    2: "bad input: no warehouse there, or the address cannot be listened on",
}


@command(
    "dashboard",
    examples=(
        ("the dashboard of the default warehouse at http://127.0.0.1:8000/", "benchdb dashboard"),
        ("another warehouse, on any free port", "benchdb dashboard --db team.duckdb --port 0"),
    ),
    exit_codes=DASHBOARD_EXIT_CODES,
)
@db_option()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; anything but this machine's loopback is warned about.",
)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port (0: any free one).")
def dashboard_cmd(db, host, port):
    """A read-only dashboard over the warehouse, in a browser.

    Latest runs, results, the history of any series with its change points, raw samples, serving
    load points. Filters live in the URL; data ingested while it runs appears on the next load.
    Stop it with Ctrl-C."""
    from benchdb.errors import BenchdbError
    from benchdb.warehouse import Warehouse
    from benchdb.web import assets
    from benchdb.web.server import is_loopback, make_server

    with Warehouse(db).reading():  # a missing or foreign file is refused before listening
        pass
    assets.ensure(log=lambda text: click.echo(text, err=True))  # the charting library, once
    if not is_loopback(host):
        click.echo(
            f"benchdb: warning: serving on {host}: anyone who can reach it can read the warehouse "
            "(the dashboard is read-only)",
            err=True,
        )
    try:
        server = make_server(db, host, port)
    except OSError as exc:
        raise BenchdbError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"benchdb dashboard on http://{shown}:{server.server_address[1]}/ (Ctrl-C stops it)", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


@command(
    "site",
    examples=(
        ("write the dashboard to the folder site (then: python -m http.server -d site)", "benchdb site --out site"),
    ),
)
@db_option()
@click.option(
    "--out",
    "out",
    required=True,
    help="Folder for the static site: new, empty, or an earlier site (replaced whole); never a "
    "folder holding other files or a warehouse.",
)
def site_cmd(db, out):
    """Write the dashboard as static files.

    The page and its data (JSON; the raw samples in binary files, 16 bits a value, many results to
    a file), for any static host: GitHub Pages, a Hugging Face static Space, or `python -m
    http.server` in the folder."""
    from benchdb.web.site import build

    counts = build(db, out)
    click.echo(f"wrote the dashboard to {out}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))


@command(
    "serve",
    hidden=True,
    params=dashboard_cmd.params,
    examples=(("the dashboard, under its former name (prefer: benchdb dashboard)", "benchdb serve"),),
    exit_codes=DASHBOARD_EXIT_CODES,
)
@click.pass_context
def serve_cmd(ctx, **kwargs):
    """The dashboard under its former name: see `benchdb dashboard`."""
    click.echo("benchdb: note: `benchdb serve` is now `benchdb dashboard`; the old name keeps working", err=True)
    ctx.invoke(dashboard_cmd, **kwargs)


COMMANDS: list = [dashboard_cmd, serve_cmd, site_cmd]
