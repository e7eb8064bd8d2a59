"""The README's first screen is for a newcomer, and its commands are the ones CI runs."""

import re

from conftest import REPO
from support.doc_commands import benchdb_commands, check_commands

README = REPO / "README.md"


def _block(section: str) -> list[str]:
    """The lines of the first code block under a README heading."""
    body = README.read_text().split(f"## {section}", 1)[1]
    return [line for line in body.split("```")[1].splitlines()[1:] if line.strip()]


def test_ci_runs_the_readme_test_command():
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    command = [line for line in ci if "python3 -m venv" in line and not line.startswith("#")]
    assert len(command) == 1
    assert _block("Set up and run the tests") == [command[0]]


def test_ci_sets_ci_true_itself():
    """Under CI=true a missing Chromium or Java fails the tests that need it (conftest.need_browser,
    need_java): .ci/run sets it before anything else runs, whoever starts it."""
    lines = [ln.strip() for ln in (REPO / ".ci" / "run").read_text().splitlines()]
    first_command = next(i for i, ln in enumerate(lines) if ln.startswith(("python3", ".venv/")))
    assert "export CI=true" in lines[:first_command]


def test_the_set_up_line_is_where_the_test_command_starts():
    """CI runs the test command verbatim, so the set-up line a user copies runs verbatim too."""
    clone, setup, main_job = _block("Set up and run the main job")
    assert clone.startswith("git clone ") and clone.split("#")[0].rstrip().endswith("&& cd benchdb")
    assert setup.startswith("python3 -m venv .venv && .venv/bin/pip install ")
    assert main_job == ".venv/bin/benchdb quickstart"
    (test,) = _block("Set up and run the tests")
    assert test.startswith(setup + " && ")
    assert test.endswith("&& .venv/bin/python -m pytest")
    # a fresh machine with only Python runs it: no system package manager, no Java, no sudo
    assert not re.search(r"apt-get|\bjava\b|sudo|brew ", test)


def test_first_60_lines_say_what_why_set_up_main_job_and_tests():
    head = "\n".join(README.read_text().splitlines()[:60])
    assert "benchdb measures ML inference" in head and "It is for " in head  # what, for whom
    peers = head.split("## Why benchdb", 1)[1].split("## ", 1)[0]  # why: vs peers
    for tool in ("optimum-benchmark", "vllm bench serve", "GuideLLM", "AIPerf", "pyperf", "asv", "MLPerf LoadGen"):
        assert tool in peers, tool
    assert "| you use | benchdb adds | keep using it for |" in peers
    assert "git clone " in head and "python3 -m venv .venv" in head  # set-up
    assert ".venv/bin/benchdb quickstart" in head  # main job
    assert ".venv/bin/python -m pytest" in head  # tests
    assert "What set-up downloads" in head


def test_the_readme_documents_every_verdict_the_quickstart_prints():
    from benchdb.reports.optimal_rows import VERDICT_LABELS

    head = "\n".join(README.read_text().splitlines()[:60])
    for label in set(VERDICT_LABELS.values()):
        assert f"`{label}`" in head, label


def test_no_internal_words_for_users():
    text = README.read_text()
    for phrase in (
        "/tmp/bis",
        "this project's",
        "on this VM",
        "schema 7",
        "contract v2",
        "apt-get",
        "--batch-sizes",
        "--seq-lens",
    ):
        assert phrase not in text, phrase


def test_every_readme_command_names_a_real_command_and_real_options():
    """A reader copies these: an option renamed since (--batch-sizes) or a command gone fails here."""
    commands = benchdb_commands(README.read_text())
    assert len(commands) >= 20
    check_commands(commands)
