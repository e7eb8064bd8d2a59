"""Help that helps: every command's help, walked from the root group, has a summary that
`benchdb --help` shows whole, examples that parse as written and the exit codes the command uses;
click's usage errors are benchdb's one line; a mistyped name or value is answered with the closest."""

from __future__ import annotations

import importlib
import re
import shlex
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from conftest import benchdb_cmd

from benchdb import cli
from benchdb.cli import help as clihelp

pytestmark = pytest.mark.core

#: click's default help width (a terminal of 80 columns, as CliRunner's)
WIDTH = 80


def _walk(command: click.Command, ctx: click.Context):
    yield ctx.command_path, command, ctx
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, name
            yield from _walk(sub, click.Context(sub, info_name=name, parent=ctx, terminal_width=WIDTH))


def every_command():
    return list(_walk(cli.main, click.Context(cli.main, info_name="benchdb", terminal_width=WIDTH)))


def help_of(*path: str) -> str:
    r = CliRunner().invoke(cli.main, [*path, "--help"], terminal_width=WIDTH)
    assert r.exit_code == 0, r.output
    return r.output


def first_sentence(text: str) -> str:
    words = " ".join(text.partition("\n\n")[0].split()).split()
    for i, word in enumerate(words):
        if word.endswith(".") and (i == len(words) - 1 or not words[i + 1][0].islower()):
            return " ".join(words[: i + 1])
    return " ".join(words)


def test_walk_reaches_every_command_and_subcommand():
    paths = {p for p, _, _ in every_command()}
    assert {
        "benchdb",
        "benchdb run",
        "benchdb bisect",
        "benchdb report",
        "benchdb db",
        "benchdb db status",
        "benchdb db upgrade",
        "benchdb db compact",
        "benchdb ingest",
    } <= paths
    assert len(paths) >= 23


@pytest.mark.parametrize("group", [(), ("db",)])
def test_summaries_are_whole_first_sentences_on_one_line(group):
    """`benchdb --help` (and `benchdb db --help`) lists each command's first sentence, whole, on one line."""
    out = help_of(*group)
    listing = out.split("\nCommands:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    parent = cli.main
    ctx = click.Context(cli.main, info_name="benchdb")
    for name in group:
        parent = parent.get_command(ctx, name)
    names = [n for n in parent.list_commands(ctx) if not parent.get_command(ctx, n).hidden]
    assert len(listing) == len(names), listing  # one line each: no summary wraps
    for line, name in zip(listing, names, strict=True):
        summary = line.split(None, 1)[1]
        command = parent.get_command(ctx, name)
        assert not summary.endswith("..."), line
        assert summary == first_sentence(command.help), (name, summary)
        assert len(line) <= WIDTH - 2, line


def test_every_help_ends_with_examples_and_exit_codes():
    for path, command, ctx in every_command():
        assert isinstance(command, clihelp.HelpSections), f"{path} is not declared with benchdb.cli.help"
        assert 1 <= len(command.examples) <= 3, path
        assert {0, 2} <= set(command.exit_codes), path
        text = command.get_help(ctx)
        assert "\nExamples:\n" in text and "\nExit codes:\n" in text, path
        body, _, tail = text.partition("\nExamples:\n")
        assert "\nOptions:\n" in body, path  # after the options, as an epilog
        examples, _, codes = tail.partition("\nExit codes:\n")
        for _, line in command.examples:
            assert f"\n  {line}\n" in f"\n{examples}\n", (path, line)  # whole, never rewrapped
        listed = [int(m) for m in re.findall(r"^  (\d+) ", codes, flags=re.M)]
        assert listed == sorted(command.exit_codes), (path, listed)
        assert "Exit codes:" not in (command.help or ""), f"{path}: exit codes written by hand in its docstring"


def test_every_help_fits_80_columns():
    """The CLI reference renders each help at 80 columns in its box: examples and hand-wrapped
    blocks (check's verdicts) included, nothing runs past it."""
    for path, command, ctx in every_command():
        ctx.max_content_width = WIDTH
        wide = [line for line in command.get_help(ctx).splitlines() if len(line) > WIDTH]
        assert not wide, (path, wide)


def test_every_example_parses_with_current_options():
    """Each example is a real invocation: its command exists, every option and value parses and
    converts (a value's own check included), and none is a hidden (old) spelling."""
    seen = 0
    for _path, command, _ in every_command():
        for _, line in command.examples:
            words = shlex.split(line)
            assert words[0] == "benchdb", line
            ctx = click.Context(cli.main, info_name="benchdb")
            target: click.Command = cli.main
            words = words[1:]
            while isinstance(target, click.Group) and words and not words[0].startswith("-"):
                sub = target.get_command(ctx, words[0])
                assert sub is not None, line
                ctx = click.Context(sub, info_name=words[0], parent=ctx)
                target, words = sub, words[1:]
            target.make_context(ctx.info_name, list(words), parent=ctx.parent)
            shown = target.get_help(ctx)
            for flag in (w.split("=", 1)[0] for w in words if w.startswith("--")):
                assert re.search(rf"(^  |, ){re.escape(flag)}[ ,\n]", shown, flags=re.M), (
                    f"{line}: {flag} is not an option its help shows (an old spelling?)"
                )
            seen += 1
    assert seen >= 40


#: The library modules whose exit codes a command module's commands end with (run: plan, run --ab).
CALLED = {"run": ("benchdb.plan.measure", "benchdb.ab.compare")}


def test_exit_codes_the_code_uses_are_documented():
    """A literal exit code in a command module (sys.exit(N), ctx.exit(N), exit_code=N) is listed by
    one of its commands."""
    for module in cli.MODULES:
        mod = importlib.import_module(f"benchdb.cli.{module}")
        source = Path(mod.__file__).read_text(encoding="utf-8")
        used = {int(n) for n in re.findall(r"(?:sys\.exit|ctx\.exit)\((\d+)\)|exit_code=(\d+)", source) for n in n if n}
        documented = {code for command in mod.COMMANDS for code in command.exit_codes}
        for library in CALLED.get(module, ()):  # the library function a command is one call of
            source = Path(importlib.import_module(library).__file__).read_text(encoding="utf-8")
            used |= {int(n) for n in re.findall(r"exit_code=(\d+)", source)}
        assert used <= documented, (module, sorted(used - documented))
    report = importlib.import_module("benchdb.cli.report").report
    assert "nothing to report" in report.exit_codes[1]  # raised below the command (NothingToReport)
    assert 1 in importlib.import_module("benchdb.cli.db").ingest.exit_codes


@pytest.mark.parametrize(
    "args,expected",
    [
        (
            ["report", "--matrix", "--objective", "thruput"],
            "benchdb: error: invalid value for '--objective': 'thruput' is not one of 'throughput', "
            "'latency', 'energy', "
            "'cost' (did you mean 'throughput'?); see `benchdb report --help`",
        ),
        (
            ["run", "--backend", "numpy", "--repeat", "3"],
            "benchdb: error: no such option '--repeat' (did you mean '--repeats'?); see `benchdb run --help`",
        ),
        (
            ["injest", "results"],
            "benchdb: error: no such command 'injest' (did you mean 'ingest'?); see `benchdb --help`",
        ),
        (["db", "statu"], "benchdb: error: no such command 'statu' (did you mean 'status'?); see `benchdb db --help`"),
        (
            ["check", "--baseline", "latest~1"],
            "benchdb: error: missing option '--candidate'; see `benchdb check --help`",
        ),
        (["query"], "benchdb: error: missing argument 'SQL'; see `benchdb query --help`"),
        (["--bogus"], "benchdb: error: no such option '--bogus'; see `benchdb --help`"),
    ],
)
def test_usage_errors_are_one_line(args, expected):
    r = CliRunner().invoke(cli.main, args, prog_name="benchdb")
    assert r.exit_code == 2, r.output
    assert r.output == expected + "\n"


def test_usage_error_one_line_in_a_real_process():
    proc = benchdb_cmd("ingest")
    assert proc.returncode == 2
    assert proc.stderr == "benchdb: error: missing argument 'PATHS...'; see `benchdb ingest --help`\n"
    assert proc.stdout == ""


def test_no_arguments_still_prints_the_help():
    r = CliRunner().invoke(cli.main, [], prog_name="benchdb")
    assert r.output.startswith("Usage: benchdb [OPTIONS] COMMAND [ARGS]...") and "Exit codes:" in r.output


def test_unknown_config_key_names_the_closest(tmp_path):
    config = tmp_path / "bench.yaml"
    config.write_text("settings: {thread: 2}\nruns: [{backends: numpy, models: 'matmul:8'}]\n")
    r = CliRunner().invoke(cli.main, ["run", "--config", str(config), "--dry-run"])
    assert r.exit_code == 2, r.output
    assert r.output.startswith(
        f"benchdb: error: {config}: unknown setting 'thread' (did you mean 'threads'?); allowed: "
    )
    assert len(r.output.splitlines()) == 1
    # nothing close: no guess
    config.write_text("settings: {colour: red}\nruns: [{backends: numpy, models: 'matmul:8'}]\n")
    r = CliRunner().invoke(cli.main, ["run", "--config", str(config), "--dry-run"])
    assert r.exit_code == 2 and "unknown setting 'colour'; allowed: " in r.output


@pytest.mark.parametrize(
    "args,closest",
    [
        (["--backend", "pytroch", "--model", "tiny:bert"], "'pytorch'"),
        (["--backend", "numpy", "--model", "matmul:8", "--precision", "fp23"], "'fp32'"),
        (["--backend", "onnxruntime", "--model", "tiny:bert", "--mode", "opt-al"], "'opt-all'"),
        (["--backend", "numpy", "--model", "matmul:8", "--device", "cdua"], "'cuda'"),
        (["--suite", "smok"], "'smoke'"),
    ],
)
def test_mistyped_values_name_the_closest(args, closest):
    r = CliRunner().invoke(cli.main, ["run", *args, "--dry-run"])
    assert r.exit_code == 2, r.output
    assert f"(did you mean {closest}?)" in r.output and len(r.output.splitlines()) == 1, r.output


def test_bisect_shows_only_the_run_options_that_apply_and_its_real_defaults():
    from benchdb.backends import core_options as options

    serving = [opt.cli_flag for opt, owners in options.backend_owned().values() if owners == ["openai"]]
    assert len(serving) >= 14
    run_help, bisect_help = help_of("run"), help_of("bisect")
    for flag in ["--co-runners", "--verify-only", *serving]:
        assert re.search(rf"^  {re.escape(flag)}\b", run_help, flags=re.M), flag  # run takes it
        assert not re.search(rf"^  {re.escape(flag)}\b", bisect_help, flags=re.M), flag  # bisect does not
    assert "--suite" not in bisect_help
    assert re.search(r"^  --repeats .*?\[default: 5; x>=1\]", bisect_help, flags=re.M | re.S)
    repeats = next(p for p in cli.main.get_command(click.Context(cli.main), "bisect").params if p.name == "repeats")
    assert repeats.default == 5  # what bisect measures with when not given
    for flag in ("--backend", "--model", "--mode", "--threads", "--min-time", "--kernels", "--ep", "--tag"):
        assert re.search(rf"^  {re.escape(flag)}\b", bisect_help, flags=re.M), flag


def test_mode_shows_each_backends_default():
    from benchdb.backends import core_options as options
    from benchdb.backends import registry

    text = " ".join(help_of("run").split("\n  --mode ", 1)[1].split("\n  --", 1)[0].split())
    assert "[default: eager]" not in text
    for name, info in registry.backends().items():
        mode = options.default_mode(info)
        assert re.search(rf"\b{re.escape(mode)} \([^)]*\b{re.escape(name)}\b", text), (name, mode, text)
    assert "opt-all (onnxruntime, ort-web)" in text and "latency (openvino)" in text


def test_a_closed_pipe_ends_quietly():
    """`benchdb run ... --dry-run | head -1`: the reader stopped reading; no "internal error" line,
    exit 141 as a shell reports SIGPIPE (the plan, ~150 kB, is more than a pipe holds)."""
    import subprocess
    import sys

    from conftest import child

    sizes = ",".join(str(i) for i in range(1, 3001))
    argv = [sys.executable, "-m", "benchdb", "run", "--backend", "numpy", "--model", "matmul:8"]
    with child([*argv, "--batch-size", sizes, "--dry-run"], stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline().startswith(b"matmul:8 numpy/cpu eager fp32 bs=1 ")
        proc.stdout.close()
        assert proc.wait(timeout=120) == 141
        assert proc.stderr.read() == b""
