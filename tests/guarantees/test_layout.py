"""The seams the code keeps: no module uses another module's private name, nothing below
`benchdb/cli/` imports the command line, imports go down the documented order; and the tests'
own: no test module imports another, a missing optional module goes through one helper, no
comment or docstring cites an issue number. Read from the source with `ast`, so a new breach
fails here before it spreads."""

from __future__ import annotations

import ast
import functools
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "benchdb"

pytestmark = pytest.mark.core


@functools.cache
def _modules() -> tuple[tuple[Path, ast.Module], ...]:
    """Every module of the package, parsed once for all the checks here."""
    return tuple(
        (path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        for path in sorted(PACKAGE.rglob("*.py"))
    )


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_module_uses_another_modules_private_names():
    found = []
    for path, tree in _modules():
        imported: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("benchdb"):
                for alias in node.names:
                    if _private(alias.name):
                        found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} imports {alias.name}")
                    imported.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                imported.update((a.asname or a.name).split(".")[0] for a in node.names if a.name.startswith("benchdb"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and _private(node.attr)
                and isinstance(node.value, ast.Name)
                and node.value.id in imported
            ):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} uses {node.value.id}.{node.attr}")
    assert found == []


def test_nothing_below_the_command_line_imports_it():
    found = []
    for path, tree in _modules():
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "cli" or rel.name == "__main__.py":
            continue
        for node in ast.walk(tree):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            found += [
                f"{rel}:{node.lineno} imports {n}" for n in names if n == "benchdb.cli" or n.startswith("benchdb.cli.")
            ]
    assert found == []


def _imports_of(package: str) -> list[tuple[str, int, str]]:
    """Every benchdb import (deferred and type-only included) of the modules under one package."""
    out = []
    for path, tree in _modules():
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] != package:
            continue
        for node in ast.walk(tree):
            names = (
                [_module_of(node.module or "", a.name) for a in node.names]
                if isinstance(node, ast.ImportFrom) and not node.level
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            out += [(str(rel), node.lineno, n) for n in names if n.startswith("benchdb.")]
    return out


def _module_of(module: str, name: str) -> str:
    """``from benchdb.backends import core_options`` imports the module benchdb.backends.core_options."""
    sub = PACKAGE.parent.joinpath(*f"{module}.{name}".split("."))
    return f"{module}.{name}" if sub.with_suffix(".py").is_file() or sub.is_dir() else module


def test_the_harness_knows_no_backend():
    """The harness times and isolates whatever it is given: backends import it, never the reverse."""
    assert [f"{p}:{n} imports {m}" for p, n, m in _imports_of("harness") if m.startswith("benchdb.backends")] == []


#: What the contract may import: benchdb's leaf modules and the SQL files' loader (itself a leaf: it
#: imports errors and startup only), nothing that stores, reads a warehouse or runs anything.
SCHEMA_MAY_IMPORT = (
    "benchdb.schema",
    "benchdb.errors",
    "benchdb.paths",
    "benchdb.formatting",
    "benchdb.parsing",
    "benchdb.text",
    "benchdb.sql",
)


def test_schema_imports_nothing_above_it():
    """Runners and ingest share the contract; it reaches the backends' option sets through the
    entry-point registry it owns, not by importing them."""
    assert [
        f"{p}:{n} imports {m}"
        for p, n, m in _imports_of("schema")
        if not any(m == ok or m.startswith(ok + ".") for ok in SCHEMA_MAY_IMPORT)
    ] == []


def test_no_cycle_among_packages_or_modules():
    """tools/import_graph.py: no two packages, and no two modules, import each other, however
    indirectly (deferred and type-only imports included)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("import_graph", PACKAGE.parent / "tools" / "import_graph.py")
    assert spec is not None and spec.loader is not None
    graph_tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(graph_tool)
    graph = graph_tool.imports(graph_tool.modules())
    assert graph_tool.cycles(graph_tool.package_graph(graph)) == []
    assert graph_tool.cycles(graph) == []


#: What of the backends a package that reads results (rather than running them) may import: their
#: public face, never one backend's own package.
BACKENDS_PUBLIC = (
    "benchdb.backends.registry",
    "benchdb.backends.protocol",
    "benchdb.backends.core_options",
    "benchdb.backends.core_declared",
    "benchdb.backends.run_command",
)
READERS = ("warehouse.py", "reports", "analysis", "ingest", "store", "interop", "web", "hub", "spark", "perfmodel")


def test_packages_that_read_results_know_no_backend_by_its_modules():
    """Importers reach a backend's knowledge through the contract (the option sets' registry) or the
    backends' registry, the performance model drives a device through the registry, and the report
    rebuilds a run's command line through the layer that declares run options."""
    found = [
        f"{p}:{n} imports {m}"
        for pkg in READERS
        for p, n, m in _imports_of(pkg)
        if m.startswith("benchdb.backends.") and not any(m == ok or m.startswith(ok + ".") for ok in BACKENDS_PUBLIC)
    ]
    assert found == []


def test_reports_do_not_reach_past_the_backends_into_the_harness():
    assert [f"{p}:{n} imports {m}" for p, n, m in _imports_of("reports") if m.startswith("benchdb.harness")] == []


def test_the_hub_publishes_without_importing_the_dashboard():
    """A Space's files are the static site `benchdb site` wrote; the hub reads its file list
    (benchdb.file_lists), not the site builder."""
    assert [f"{p}:{n} imports {m}" for p, n, m in _imports_of("hub") if m.startswith("benchdb.web")] == []


def test_the_library_never_imports_its_test_servers():
    """benchdb.testing (the stub server, the tiny LLM) is for tests, benchmarks and the README."""
    found = [
        f"{p}:{n} imports {m}"
        for pkg in {p.relative_to(PACKAGE).parts[0] for p, _ in _modules()}
        if pkg != "testing"
        for p, n, m in _imports_of(pkg)
        if m.startswith("benchdb.testing")
    ]
    assert found == []


#: What the command line may import besides the facade and the plan, report, import and publish
#: functions: the declared run options (its flags are built from them) and the run's own types.
CLI_MAY_NOT_IMPORT = (
    "benchdb.sql",
    "benchdb.store",
    "benchdb.schema",
    "benchdb.analysis",
    "benchdb.ingest",
    "benchdb.harness",
    "benchdb.backends",
)
CLI_MAY_IMPORT = ("benchdb.backends.core_options", "benchdb.backends.registry", "benchdb.harness.machine_report")


def test_the_command_line_is_thin():
    """Every command calls the library (the Warehouse facade or a plan/report function) and formats:
    no SQL of its own, no reaching into storage, the contract or the harness."""
    found = [
        f"{p}:{n} imports {m}"
        for p, n, m in _imports_of("cli")
        if any(m == bad or m.startswith(bad + ".") for bad in CLI_MAY_NOT_IMPORT)
        and not any(m == ok or m.startswith(ok + ".") for ok in CLI_MAY_IMPORT)
    ]
    for path, tree in _modules():
        if path.relative_to(PACKAGE).parts[0] == "cli":
            found += [
                f"{path.name}:{node.lineno} imports benchdb.{a.name}"
                for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module == "benchdb"
                for a in node.names
                if a.name in ("sql", "memo")
            ]
            found += [
                f"{path.name}:{node.lineno} runs SQL"
                for node in ast.walk(tree)
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "execute"
            ]
    assert found == []


#: The longest function the command line may hold: a command parses, calls one library function
#: and prints what it returns; past this, a function in cli/ does the library's work.
CLI_FUNCTION_LINES = 85
#: The longest function anywhere in the package: past this, one function does two jobs.
FUNCTION_LINES = 100


def test_functions_are_short():
    """No function of the package is over FUNCTION_LINES, and no command over CLI_FUNCTION_LINES."""
    long = [
        f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name}: {n} lines"
        for path, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (n := (node.end_lineno or node.lineno) - node.lineno + 1) > FUNCTION_LINES
    ]
    long += [
        f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name}: {n} lines"
        for path, tree in _modules()
        if path.relative_to(PACKAGE).parts[0] == "cli"
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (n := (node.end_lineno or node.lineno) - node.lineno + 1) > CLI_FUNCTION_LINES
    ]
    assert long == []


LAYOUT = PACKAGE.parent / "docs" / "reference" / "layout.md"


def _documented_order() -> dict[str, int]:
    """Each package's rank in layout.md's import order (``a`` → ``b``, ``c`` → ...): 0 at the top."""
    import re

    text = LAYOUT.read_text(encoding="utf-8")
    line = " ".join(
        text.split("Imports go one way, from the top of this list down:", 1)[1].lstrip().split("\n\n", 1)[0].split()
    )
    return {name: rank for rank, level in enumerate(line.split("→")) for name in re.findall(r"`([a-z_]+)`", level)}


def test_imports_go_down_the_documented_order():
    import importlib.util

    spec = importlib.util.spec_from_file_location("import_graph", PACKAGE.parent / "tools" / "import_graph.py")
    assert spec is not None and spec.loader is not None
    graph_tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(graph_tool)
    order = _documented_order()
    graph = graph_tool.package_graph(graph_tool.imports(graph_tool.modules()))
    packages = {src.split(".")[1] for src in graph if "." in src} - {"__main__", "testing"}
    assert sorted(packages - set(order)) == []  # every package has its place
    upward = [
        f"{src} -> {dst}"
        for src, dsts in graph.items()
        if src.count(".") == 1 and not src.endswith("__main__")
        for dst in dsts
        if order.get(src.split(".")[1], 99) > order.get(dst.split(".")[1], 99)
    ]
    assert upward == []


def test_the_layout_document_names_what_exists():
    """Every package is described in layout.md, and every benchdb/ path it names exists."""
    import re

    text = LAYOUT.read_text(encoding="utf-8")
    named = set(re.findall(r"^benchdb/([a-z_]+(?:\.py)?)/?", text, flags=re.M))
    real = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert sorted(real - named) == []
    assert sorted(n for n in named if not (PACKAGE / n).exists()) == []


def test_every_package_says_its_one_job_in_the_layout_document():
    """The layout document's table gives each package (and each top-level module of the import
    order that does a package's work) one line: its job. A new package comes with its line."""
    import re

    text = LAYOUT.read_text(encoding="utf-8")
    table = text.split("## Packages, one job each", 1)[1].split("```", 1)[0]
    jobs = dict(re.findall(r"^\| `([a-z_]+)` \| (.+?) \|$", table, flags=re.M))
    real = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert sorted(real - set(jobs)) == []
    assert sorted(set(jobs) - set(_documented_order()) - {"testing"}) == []
    assert all(len(job) <= 100 and ";" not in job for job in jobs.values()), "one job, in one short line"


#: Modules no test file imports by name, and where each is exercised instead (the test file named
#: must exist). A module matched by no entry here must be imported by some test.
EXERCISED_THROUGH = {
    "benchdb.backends.conformance": ("tests/guarantees/test_layout.py", "for mypy alone: nothing imports it"),
    "benchdb.cli.spark": ("tests/spark/test_translate.py", "benchdb sql: one call of spark.translate.script"),
}


def test_every_module_is_imported_by_a_test_or_says_where_it_is_exercised():
    import re

    tests = PACKAGE.parent / "tests"
    named: set[str] = set()
    for path in tests.rglob("*.py"):
        if "fixtures" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                named |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
            elif isinstance(node, ast.Import):
                named |= {a.name for a in node.names}
        named |= set(re.findall(r"benchdb(?:\.[a-z_0-9]+)+", text))
    unexplained = []
    for path, _ in _modules():
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if name in named or name.endswith("__main__"):
            continue
        reason = next((v for k, v in EXERCISED_THROUGH.items() if name == k or name.startswith(k)), None)
        if reason is None or not (PACKAGE.parent / reason[0]).is_file():
            unexplained.append(name)
    assert unexplained == []


def test_modules_are_at_most_400_lines():
    """As `ruff format` leaves them (CI checks the tree is formatted): a module past this does two jobs."""
    long = [
        f"{p.relative_to(PACKAGE.parent)}: {n}"
        for p, _ in _modules()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400
    ]
    assert long == []


def test_every_child_a_test_leaves_running_is_started_through_one_helper():
    """A test that starts a process and signals it, or leaves it running while it checks something,
    starts it with ``conftest.child``: signals at their defaults however pytest was started (a
    background job ignores SIGINT, and so would the child), and the whole process group ended
    whatever the test's outcome. Direct ``Popen`` calls elsewhere in the tests are refused here."""
    found = []
    for path, tree in _test_tree():
        if path == TESTS / "conftest.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
                if name == "Popen":
                    found.append(f"{path.relative_to(TESTS)}:{node.lineno}")
    assert found == [], f"start these through conftest.child: {found}"


TESTS = PACKAGE.parent / "tests"


@functools.cache
def _test_tree() -> tuple[tuple[Path, ast.Module], ...]:
    """Every Python file of the test suite, parsed once, the recorded tools' files under
    tests/fixtures/ aside."""
    return tuple(
        (path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        for path in sorted(TESTS.rglob("*.py"))
        if "fixtures" not in path.relative_to(TESTS).parts
    )


def test_no_test_module_imports_another_and_helpers_live_in_support():
    """A test module is collected, and runs its module fixtures, wherever it is imported: what two
    test modules share lives in tests/support/ or tests/conftest.py, and no file imports a test_*
    module. Outside tests/support/ every file is a test module (or the conftest)."""
    found = []
    for path, tree in _test_tree():
        rel = path.relative_to(TESTS)
        in_support = rel.parts[0] == "support"
        if in_support == path.name.startswith("test_") and path.name != "conftest.py":
            found.append(f"{rel}: {'a test module in support/' if in_support else 'a helper outside support/'}")
        for node in ast.walk(tree):
            names = (
                [node.module or "", *(a.name for a in node.names)]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            found += [
                f"{rel}:{node.lineno} imports {n}"
                for n in names
                if any(part.startswith("test_") for part in n.split("."))
            ]
    assert found == []


def test_a_missing_optional_module_goes_through_one_helper():
    """Under CI=true every extra is installed, so a test that finds its module missing fails rather
    than skips: the tests ask for an optional module through ``conftest.need_module`` (and
    ``have_module``), never ``pytest.importorskip`` or a ``find_spec`` of their own, which would
    skip quietly in CI."""
    found = [
        f"{path.relative_to(TESTS)}:{node.lineno} calls {name}"
        for path, tree in _test_tree()
        if path != TESTS / "conftest.py"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (name := getattr(node.func, "attr", getattr(node.func, "id", None))) in ("importorskip", "find_spec")
    ]
    assert found == []


#: "issue" or "issues" and a number, or "#" and a number after a space or "(": a number in this
#: project's tracker. Another project's ("sglang#" and its number) names a bug a reader can look up.
ISSUE_NUMBER = re.compile(r"\bissues? #?\d+|(?:^|[\s(])#\d{1,4}\b", re.I)


def _comments_and_docstrings(path: Path, tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                yield (node.body[0].lineno, doc)
    with tokenize.open(path) as f:
        for tok in tokenize.generate_tokens(f.readline):
            if tok.type == tokenize.COMMENT:
                yield (tok.start[0], tok.string)


def test_no_comment_or_docstring_cites_an_issue_number():
    """A comment or docstring says what the code does or what a test protects, in words a reader
    needs no tracker for; the issue that asked for it is the commit's business."""
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {match.group().strip()}"
        for path, tree in (*_modules(), *_test_tree())
        if ISSUE_NUMBER.search(path.read_text(encoding="utf-8"))  # most files: no such text at all
        for line, text in _comments_and_docstrings(path, tree)
        for match in ISSUE_NUMBER.finditer(text)
    ]
    assert found == []


def test_test_modules_have_unique_names():
    """pytest imports test modules by their file name (no __init__.py in tests/): two of one name fail the
    whole run at collection, which a run of one folder never shows."""
    names: dict[str, list[str]] = {}
    for path in TESTS.rglob("test_*.py"):
        names.setdefault(path.name, []).append(str(path.relative_to(TESTS)))
    assert {n: p for n, p in names.items() if len(p) > 1} == {}


#: Modules without a test module of their own, each with why: declarations with no logic to test.
MIRROR_EXEMPT = {
    "benchdb.backends.conformance": "read by mypy alone (under TYPE_CHECKING): no code of it runs",
    "benchdb.backends.numpy.options": "an empty option set of the shared fields",
    "benchdb.backends.openvino.options": "option fields; tests/schema/test_optionsets.py checks them by entry point",
    "benchdb.backends.ortweb.options": "option fields; tests/schema/test_optionsets.py checks them by entry point",
    "benchdb.backends.userbench.options": "option fields; tests/schema/test_optionsets.py checks them by entry point",
    "benchdb.backends.pytorch.options": (
        "option fields and flag declarations; tests/schema/test_optionsets.py and tests/cli/test_help.py check them"
    ),
    "benchdb.backends.openai.options": (
        "option fields and flag declarations; tests/schema/test_optionsets.py and tests/cli/test_help.py check them"
    ),
    "benchdb.schema.serving": "the serving metrics' names and units (constants); tests/schema/test_serving_metrics.py",
    "benchdb.cli.spark": "`benchdb sql`: prints spark.translate.script; tests/spark/test_translate.py runs it",
}


def _mirrors(parts: tuple[str, ...]) -> list[str]:
    """The test modules that mirror benchdb/<parts>.py: tests/P/test_M.py for benchdb/P/M.py,
    tests/P/test_S_M.py for benchdb/P/S/M.py (tests/P/test_S.py for a subpackage's backend.py),
    tests/test_M.py for a top-level module. Test module names are unique (pytest imports them by
    name), so where another package's mirror has the name, tests/P/test_P_M.py."""
    if len(parts) == 1:
        return [f"test_{parts[0]}.py"]
    top, rest = parts[0], parts[1:]
    found = [f"{top}/test_{'_'.join(rest)}.py", f"{top}/test_{top}_{'_'.join(rest)}.py"]
    if len(rest) > 1 and rest[-1] == "backend":
        found.append(f"{top}/test_{'_'.join(rest[:-1])}.py")
    return found


def test_every_module_with_logic_has_the_test_module_that_mirrors_it():
    """A module's tests are where its path says (tests/<package>/test_<module>.py), so a change to
    a module shows which tests to read and run; the modules left out are named in MIRROR_EXEMPT, each
    with its reason, and every name there is a module that exists and still has no mirror."""
    tests = PACKAGE.parent / "tests"
    missing, stale = [], []
    for path, _ in _modules():
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] in ("__init__", "__main__"):
            continue
        name = ".".join(("benchdb", *parts))
        mirrored = any((tests / m).is_file() for m in _mirrors(parts))
        if name in MIRROR_EXEMPT:
            stale += [name] if mirrored else []
        elif not mirrored:
            missing.append(f"{name}: tests/{_mirrors(parts)[0]}")
    known = {".".join(("benchdb", *p.relative_to(PACKAGE).with_suffix("").parts)) for p, _ in _modules()}
    stale += sorted(set(MIRROR_EXEMPT) - known)
    assert missing == [] and stale == []
