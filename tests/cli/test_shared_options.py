"""The option rules (docs/reference/option-rules.md), checked on every option of every command:
one spelling per kind of value, whichever command it is on.

The walk starts at the root group and goes down every group, so a new command or option is checked
the day it is added. Kinds are told from the option's name and metavar; each quantity option is
also fed real text through its own type (what a user types), not only looked at."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from benchdb import parsing as quantity
from benchdb.backends import core_options as run_options
from benchdb.cli import main
from benchdb.cli.shared_options import FORMATS, Quantity, csv_ints, csv_words
from benchdb.errors import BenchdbError
from benchdb.interop import formats

#: --format values beyond FORMATS: names of other tools' formats, kept as those tools spell them
#: (export), and a hardware file's own form (hardware --format yaml).
FOREIGN_FORMATS = {"export": set(formats.export_names()), "hardware": {"yaml"}}
#: Commands that read the warehouse and narrow what they read by these options: filters.
FILTERING = {"report", "export", "publish"}
#: A word at the end of a name that is a unit: the value carries its unit instead.
UNIT_SUFFIX = re.compile(r"-(ms|s|sec|secs|seconds|mb|mib|gb|gib|kb|bytes|pct|percent)$")


def _walk(command: click.Command, path: tuple[str, ...] = ()):
    ctx = click.Context(command, info_name=" ".join(path) or "benchdb")
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            yield from _walk(command.get_command(ctx, name), (*path, name))
    else:
        yield " ".join(path), command


COMMANDS = dict(_walk(main))
OPTIONS = [
    (name, p) for name, cmd in COMMANDS.items() for p in cmd.params if isinstance(p, click.Option) and not p.hidden
]


def _words(option: click.Option) -> list[str]:
    return option.opts[0].lstrip("-").split("-")


def _kind(option: click.Option) -> str | None:
    """The quantity an option's name says it takes: DURATION, SIZE, PCT or None."""
    words = _words(option)
    if option.is_flag:
        return None
    if set(words) & {"time", "timeout", "wait", "latency", "fresh"}:
        return "DURATION"
    if "memory" in words or (words[-1] == "size" and "batch" not in words):
        return "SIZE"
    if set(words) & {"threshold", "ci", "drop", "cpu"}:
        return "PCT"
    return None


def _id(item) -> str:
    name, option = item
    return f"{name} {option.opts[0]}"


def test_the_walk_finds_every_command():
    assert {
        "run",
        "ingest",
        "query",
        "report",
        "check",
        "db status",
        "db upgrade",
        "hardware",
        "import",
        "export",
        "calibrate",
        "predict",
        "bisect",
        "dashboard",
        "serve",
        "site",
        "publish",
        "sql",
        "ack",
        "quickstart",
    } <= set(COMMANDS)
    assert len(OPTIONS) > 150


@pytest.mark.parametrize("item", OPTIONS, ids=_id)
def test_an_option_name_carries_no_unit(item):
    name, option = item
    assert not UNIT_SUFFIX.search(option.opts[0]), (
        f"{name} {option.opts[0]}: the value carries its unit (--max-memory 512MiB), not the name"
    )


@pytest.mark.parametrize("item", [i for i in OPTIONS if _kind(i[1])], ids=_id)
def test_a_quantity_reads_one_form(item):
    name, option = item
    kind = _kind(option)
    assert isinstance(option.type, Quantity), f"{name} {option.opts[0]}: a {kind} option takes a Quantity type"
    assert option.metavar == kind or option.type.get_metavar(option) == kind
    convert = option.type.convert
    good, bad = {"DURATION": ("2m", "1 parsec"), "SIZE": ("512MiB", "512"), "PCT": ("5%", "5")}[kind]
    convert(good, option, None)
    with pytest.raises(BenchdbError) as err:  # one line naming the option, what to write
        convert(bad, option, None)
    assert str(err.value).startswith(option.opts[0]) and "\n" not in str(err.value)
    if kind == "DURATION":  # a bare number is seconds (quantity.py)
        bare, unit = convert("120", option, None), convert("120s", option, None)
        assert bare == unit or quantity.duration(bare) == quantity.duration(unit)  # --skip-fresh keeps its text


@pytest.mark.parametrize("item", OPTIONS, ids=_id)
def test_a_list_is_named_in_the_singular_and_says_it_is_a_list(item):
    name, option = item
    metavar = option.metavar or ""
    if "=" in metavar:  # a mapping (K=V,...), not a list of values
        return
    comma = metavar.endswith(",...")
    if option.callback in (csv_ints, csv_words):
        assert comma, f"{name} {option.opts[0]}: a comma-separated list shows NAME,... in the help"
    assert comma == ("comma-separated" in (option.help or "").lower()), (
        f"{name} {option.opts[0]}: a comma-separated list shows NAME,... and says comma-separated"
    )
    if comma or (option.multiple and not option.is_flag):
        last = _words(option)[-1]
        assert not (last.endswith("s") and not last.endswith(("ss", "us"))), (
            f"{name} {option.opts[0]}: an option of several values is named in the singular"
        )


@pytest.mark.parametrize("item", [i for i in OPTIONS if i[1].name == "fmt" or i[1].opts[0] == "--format"], ids=_id)
def test_format_names_one_set_of_forms(item):
    name, option = item
    assert isinstance(option.type, click.Choice)
    extra = set(option.type.choices) - set(FORMATS) - FOREIGN_FORMATS.get(name, set())
    assert not extra, f"{name} --format: {sorted(extra)} are not among {FORMATS} (a terminal's form is table)"


@pytest.mark.parametrize("item", [i for i in OPTIONS if i[1].opts[0] == "--out"], ids=_id)
def test_out_says_what_kind_of_path(item):
    name, option = item
    text = (option.help or "").lower()
    assert "file" in text or "folder" in text, f"{name} --out: say whether it is a file or a folder"
    if isinstance(option.type, click.Path):
        assert ("folder" in text) == (not option.type.file_okay)


@pytest.mark.parametrize("item", OPTIONS, ids=_id)
def test_a_filter_is_named_as_one(item):
    name, option = item
    help_text = option.help or ""
    if help_text.startswith("Only"):
        assert option.multiple, f"{name} {option.opts[0]}: a filter can be given several times"
    if name in FILTERING and option.opts[0] in ("--model", "--hardware"):
        assert help_text.startswith("Only"), f"{name} {option.opts[0]}: a filter's help starts with Only"


def test_every_run_flag_is_also_its_config_key():
    keys = run_options.by_config_key()
    for opt, _ in run_options.every():
        flag = opt.cli_flag.removeprefix("--no-") if opt.negate else opt.cli_flag
        key = opt.name if opt.negate else flag[2:].replace("-", "_")
        assert keys.get(key) is opt, f"{opt.cli_flag}: config key {key!r} should name the same option"


@pytest.mark.parametrize(
    "old,new", [(["--batch-sizes", "1,2", "--seq-lens", "8"], ["--batch-size", "1,2", "--seq-len", "8"])]
)
def test_old_names_still_work_unlisted(old, new):
    def plan(args):
        r = CliRunner().invoke(main, ["run", "--backend", "numpy", "--model", "matmul:8", *args, "--dry-run"])
        assert r.exit_code == 0, r.output
        return r.output

    assert plan(old) == plan(new)
    helps = CliRunner().invoke(main, ["run", "--help"]).output
    assert all(flag not in helps for flag in old if flag.startswith("--"))


def test_old_names_of_quantities_keep_their_unit():
    calibrate = COMMANDS["calibrate"]
    r = CliRunner().invoke(main, ["calibrate", "--stream-size", "64", "--list"])
    assert r.exit_code == 2 and "did you mean 64MiB?" in r.output
    assert "--stream-mb" in {o for p in calibrate.params for o in p.opts}  # still read (bare: MiB)
    r = CliRunner().invoke(main, ["report", "--matrix", "--max-memory", "1GiB", "--max-memory-mb", "1024"])
    assert r.exit_code == 2 and "not both" in r.output
    r = CliRunner().invoke(main, ["hardware", "--format", "text"])  # the old name of table
    assert r.exit_code == 0 and r.output.splitlines()[0].startswith("host")
