"""`benchdb bisect`: the commit that made a benchmark slower, found with an interleaved A/B at every step.

Between a good and a bad commit (first-parent history), the first step measures bad against good;
no regression there ends the bisect. Each later step checks the middle of the remaining range out
in a ``git worktree``, builds or reuses its environment (cached per commit and setup command), and
measures it against the current good commit in one interleaved A/B run (:mod:`benchdb.ab.interleaved`),
judged by the regression gate (:mod:`benchdb.analysis.gate`):

- regressed: the culprit is this commit or an older one (the range keeps its older half);
- unchanged (or improved): the culprit is newer (the range keeps its newer half);
- inconclusive after the trial cap: the bisect stops and names the range it could not narrow,
  never a guess.

A commit whose setup fails, or whose bench fails, is skipped as ``git bisect skip`` does: the
nearest untried commit of the range is measured instead, and when only skipped commits are left
the answer is the range they span.

The commits and a step's verdict are in :mod:`benchdb.bisect.steps`, a commit's environment
setup in :mod:`benchdb.bisect.setup`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from benchdb.backends.core_options import recorded_config
from benchdb.bisect.setup import SetupFailed, default_setup, run_setup
from benchdb.bisect.steps import Commit, Step, Verdict, verdict
from benchdb.errors import BenchdbError
from benchdb.harness.scenario import RunOptions

#: The outcome of a bisect -> its exit code (2 is bad input, raised as an error).
EXIT = {"culprit": 0, "no_regression": 1, "stopped": 3}


@dataclass
class Bisection:
    bisect_id: str
    repo: str
    good: Commit
    bad: Commit
    status: str = "stopped"  # culprit | no_regression | stopped
    culprit: Commit | None = None
    #: When stopped: the last commit known good and the commits that may hold the change.
    last_good: Commit | None = None
    suspects: list[Commit] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    skipped: list[tuple[Commit, str]] = field(default_factory=list)
    message: str = ""
    reproduce: str = ""
    out: str = ""

    @property
    def exit_code(self) -> int:
        return EXIT[self.status]

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["skipped"] = [{"commit": asdict(c), "reason": why} for c, why in self.skipped]
        d["exit_code"] = self.exit_code
        return d


# --- git -------------------------------------------------------------------------------------


def _git(repo: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise BenchdbError(f"git {' '.join(args)} in {repo}: {(proc.stderr or proc.stdout).strip()[:300]}")
    return proc.stdout


def resolve(repo: Path, rev: str, what: str) -> Commit:
    """The commit ``rev`` names in ``repo`` (one line naming ``what`` when it names none)."""
    if subprocess.run(["git", "-C", str(repo), "rev-parse", "--git-dir"], capture_output=True).returncode != 0:
        raise BenchdbError(f"--repo {repo} is not a git repository; give the repository to bisect")
    sha = _git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False).strip()
    if not sha:
        raise BenchdbError(f"{what} {rev!r} is not a commit of {repo}; give a sha, tag or branch")
    return _info(repo, sha)


def _info(repo: Path, sha: str) -> Commit:
    out = _git(repo, "log", "-1", "--format=%H%x00%s%x00%aI", sha)
    h, subject, date = out.rstrip("\n").split("\x00")
    return Commit(h, subject, date)


def between(repo: Path, good: Commit, bad: Commit) -> list[Commit]:
    """good, then every first-parent commit after it up to bad (oldest first)."""
    if good.sha == bad.sha:
        raise BenchdbError(f"--good and --bad are the same commit {good.short}; give an older good commit")
    if (
        subprocess.run(
            ["git", "-C", str(repo), "merge-base", "--is-ancestor", good.sha, bad.sha], capture_output=True
        ).returncode
        != 0
    ):
        raise BenchdbError(
            f"--good {good.short} is not an ancestor of --bad {bad.short}; give a good commit "
            "older than the bad one, on its history"
        )
    out = _git(
        repo,
        "log",
        "--reverse",
        "--first-parent",
        "--ancestry-path",
        "--format=%H%x00%s%x00%aI",
        f"{good.sha}..{bad.sha}",
    )
    later = [Commit(*line.split("\x00")) for line in out.splitlines() if line]
    if not later or later[-1].sha != bad.sha:
        raise BenchdbError(f"--bad {bad.short} is not on the first-parent history after --good {good.short}")
    return [good, *later]


# --- environments ----------------------------------------------------------------------------


class Checkouts:
    """Each commit's worktree (removed at the end) and environment (kept in the cache, keyed by
    commit and setup command, reused by later bisects).

    The default setup makes a venv that sees this interpreter's packages (benchdb and its
    dependencies, through a ``.pth`` file) and installs the project at the commit into it without
    its dependencies (the wheel its build backend makes, else ``pip install --no-deps .``), which
    its own site-packages put first. ``--setup CMD`` replaces
    it: CMD runs in the commit's worktree with ``$BENCHDB_ENV`` (also ``{env}`` in CMD) naming the
    folder to make, and must leave a Python with benchdb at ``$BENCHDB_ENV/bin/python``.

    Until :meth:`close`, SIGTERM ends the process as an exception does (``SystemExit(143)``), so
    the caller's ``finally`` removes the worktrees: git would otherwise keep them registered."""

    def __init__(self, repo: Path, setup: str | None, work: Path, log: Callable[[str], None]):
        from benchdb.paths import cache_root

        self.repo, self.setup, self.work, self.log = repo, setup, work, log
        key = hashlib.sha256(json.dumps([str(repo.resolve()), setup, sys.executable]).encode()).hexdigest()[:12]
        self.cache = cache_root() / "bisect" / key
        self.roots: dict[str, Path] = {}
        self.failed: dict[str, str] = {}
        self._sigterm = None
        if threading.current_thread() is threading.main_thread():  # (only the main thread may)
            self._sigterm = signal.signal(signal.SIGTERM, _exit_on_sigterm)

    def root(self, c: Commit) -> Path:
        if c.sha not in self.roots:
            path = self.work / c.short
            self.roots[c.sha] = path  # before adding: a SIGTERM during the add still removes it
            _git(self.repo, "worktree", "add", "--detach", "--force", str(path), c.sha)
        return self.roots[c.sha]

    def python(self, c: Commit) -> str:
        """The commit's interpreter, built once; SetupFailed with the reason otherwise."""
        if c.sha in self.failed:
            raise SetupFailed(self.failed[c.sha])
        env = self.cache / c.sha
        python = env / "bin" / "python"
        if (env / ".ready").is_file() and python.exists():
            return str(python)
        shutil.rmtree(env, ignore_errors=True)
        env.parent.mkdir(parents=True, exist_ok=True)
        root = self.root(c)
        self.log(f"setting up {c.short} ({'default setup' if self.setup is None else 'setup command'})")
        try:
            if self.setup is None:
                default_setup(root, env)
            else:
                run_setup(self.setup, root, env)
            if not python.exists():
                raise SetupFailed(f"the setup made no {python}")
        except SetupFailed as exc:
            shutil.rmtree(env, ignore_errors=True)
            self.failed[c.sha] = str(exc)
            raise
        (env / ".ready").write_text(c.sha)
        return str(python)

    def close(self) -> None:
        for path in self.roots.values():  # --force twice: also a locked one (an add killed midway)
            _git(self.repo, "worktree", "remove", "--force", "--force", str(path), check=False)
        _git(self.repo, "worktree", "prune", check=False)
        if self._sigterm is not None:
            signal.signal(signal.SIGTERM, self._sigterm)
            self._sigterm = None


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the clean-up short
    raise SystemExit(128 + signum)


# --- the search ------------------------------------------------------------------------------


def search(
    commits: list[Commit],
    judge: Callable[[Commit, Commit], Verdict],
    bisection: Bisection,
    on_step: Callable[[Step], None] | None = None,
) -> Bisection:
    """Bisect ``commits`` (good first, bad last) with ``judge(base, tested)``; fills ``bisection``."""

    def record(base: Commit, tested: Commit, v: Verdict) -> Step:
        step = Step(number=len(bisection.steps) + 1, base=base, tested=tested, **vars(v))
        bisection.steps.append(step)
        if on_step:
            on_step(step)
        return step

    good, bad = 0, len(commits) - 1
    first = record(commits[good], commits[bad], judge(commits[good], commits[bad]))
    if first.verdict == "unchanged":
        bisection.status = "no_regression"
        bisection.message = (
            f"no regression between {commits[good].short} and {commits[bad].short}: the bad "
            "commit measured unchanged against the good one"
        )
        return bisection
    if first.verdict != "regressed":
        bisection.last_good, bisection.suspects = commits[good], commits[good + 1 :]
        why = first.note or (
            "the noise here kept the verdict inconclusive"
            if first.verdict == "inconclusive"
            else "the bad commit could not be measured"
        )
        bisection.message = f"cannot tell whether {commits[bad].short} is slower than {commits[good].short}: {why}"
        return bisection
    skipped: set[int] = set()
    while bad - good > 1:
        untried = [i for i in range(good + 1, bad) if i not in skipped]
        if not untried:
            break
        mid = (good + bad) // 2
        i = min(untried, key=lambda k: (abs(k - mid), k))  # git bisect skip: the nearest untried commit
        step = record(commits[good], commits[i], judge(commits[good], commits[i]))
        if step.verdict == "regressed":
            bad = i
        elif step.verdict == "unchanged":
            good = i
        elif step.verdict == "skipped":
            skipped.add(i)
            bisection.skipped.append((commits[i], step.note))
        else:
            bisection.last_good, bisection.suspects = commits[good], commits[good + 1 : bad + 1]
            bisection.message = (
                f"the change is between {commits[good].short} (good) and {commits[bad].short} "
                f"(bad), {len(bisection.suspects)} commits; the noise here prevented narrowing "
                f"further ({commits[i].short} stayed inconclusive)"
            )
            return bisection
    if bad - good == 1:
        bisection.status, bisection.culprit = "culprit", commits[bad]
        bisection.message = f"first slow commit: {commits[bad].line()}"
    else:
        bisection.last_good, bisection.suspects = commits[good], commits[good + 1 : bad + 1]
        bisection.message = (
            f"only skipped commits are left: the first slow commit is one of "
            f"{', '.join(c.short for c in bisection.suspects)} (after {commits[good].short})"
        )
    return bisection


# --- measuring one step ----------------------------------------------------------------------


class Measurer:
    """Measures a tested commit against a base commit: an interleaved A/B of the scenarios, each
    side in its own worktree and environment, judged by the gate on a scratch warehouse."""

    def __init__(
        self,
        checkouts: Checkouts,
        runs_for: Callable[[Path], list[RunOptions]],
        *,
        out: Path,
        tags: list[str],
        max_trials: int,
        threshold: float,
        log: Callable[[str], None],
    ):
        self.checkouts, self.runs_for, self.out, self.tags = checkouts, runs_for, out, tags
        self.max_trials, self.threshold, self.log = max_trials, threshold, log
        self.scratch = Path(tempfile.mkdtemp(prefix="benchdb-bisect-")) / "verdicts.duckdb"
        #: sha -> the commit's side, probed once (the good commit is measured against again and again)
        self.sides: dict[str, Any] = {}

    def close(self) -> None:
        shutil.rmtree(self.scratch.parent, ignore_errors=True)

    def __call__(self, base: Commit, tested: Commit) -> Verdict:
        from benchdb.ab.interleaved import run_ab
        from benchdb.ab.plan import plan_ab
        from benchdb.ab.process import SIDES
        from benchdb.warehouse import Warehouse

        pythons, roots = {}, {}
        for side, c in (("base", base), ("cand", tested)):
            try:
                pythons[side] = self.checkouts.python(c)
            except SetupFailed as exc:
                if side == "base":
                    raise BenchdbError(f"the good commit {c.short} cannot be set up: {exc}") from None
                return Verdict("skipped", note=f"setup failed: {exc}")
            roots[side] = self.checkouts.root(c)
        try:
            sides = {s: self._side(s, c, pythons[s], roots[s]) for s, c in (("base", base), ("cand", tested))}
        except BenchdbError as exc:
            return Verdict("skipped", note=f"its environment cannot run benchdb: {exc}")
        try:
            runs = {s: self.runs_for(roots[s]) for s in SIDES}
            groups = plan_ab(runs, sides)
        except BenchdbError as exc:
            return Verdict("skipped", note=f"its scenarios cannot be planned: {exc}")
        config = {
            "source": "benchdb bisect",
            "runs": [recorded_config(o) for o in runs["base"]],
            "bisect": {"base": base.sha, "tested": tested.sha},
        }
        self.log(f"measuring {tested.short} against {base.short}")
        report = run_ab(
            groups,
            sides,
            config=config,
            out=self.out,
            tags=self.tags,
            max_trials=self.max_trials,
            threshold=self.threshold,
        )
        wh = Warehouse(self.scratch)
        wh.ingest([report.reports[s].out_dir for s in SIDES])
        try:
            gate = wh.check(f"tag:{report.tags['base']}", f"tag:{report.tags['cand']}", threshold=self.threshold)
        except BenchdbError as exc:
            return Verdict("skipped", ab_id=report.ab_id, note=f"nothing to compare: {exc}")
        return verdict(gate, report.ab_id)

    def _side(self, name: str, c: Commit, python: str, root: Path):
        """The commit as A/B side ``name``: its interpreter checked, its checkout, its own import
        folders (probed once per commit)."""
        from benchdb.ab.process import own_import_path, probe

        if c.sha not in self.sides:
            self.sides[c.sha] = replace(
                probe(name, python, {}), cwd=str(root), import_path=own_import_path(python, str(root))
            )
        return replace(self.sides[c.sha], name=name)


def new_id() -> str:
    import secrets

    return secrets.token_hex(4)
