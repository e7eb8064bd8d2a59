"""What a backend is: its metadata (:class:`BackendInfo`), its options (:class:`Option`) and the
interface its implementation module provides (:class:`Backend`).

A backend is one package, ``<pkg>/{__init__,backend,options}.py``:

- ``__init__.py`` exposes ``BACKEND = BackendInfo(...)``, the object the ``benchdb.backends``
  entry point names. It must stay light: listing backends and ``benchdb run --help`` load it
  without importing the backend's library.
- ``options.py`` declares the backend's run options (:class:`Option`) and its typed option set,
  the dataclass whose canonical form is part of every scenario's identity.
- ``backend.py`` implements :class:`Backend`; it is imported only to plan or measure.

benchdb's own backends register through the same entry-point group as third-party ones
(``pyproject.toml``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from benchdb.schema import identity

if TYPE_CHECKING:
    from benchdb.harness.scenario import Outcome, RunOptions, Scenario

#: How an option's value is written on the command line and in config files:
#: int, float, str, bool (a flag), words (comma-separated or a YAML list), ints (likewise);
#: share (``5%`` or ``0.05``, kept as the fraction), percent (written the same, kept in percent:
#: 30.0) and duration (``500ms``, ``2s``, ``12h`` or bare seconds, kept in seconds): see
#: :mod:`benchdb.parsing`. ``minimum`` and ``maximum`` are in the kept unit.
Kind = Literal["int", "float", "str", "bool", "words", "ints", "share", "percent", "duration"]


@dataclass(frozen=True)
class Option:
    """One run option, declared once.

    From this declaration come its ``benchdb run`` flag, its config-file key, the arguments that
    pass it to an ``--ab`` child and, when ``identity`` is set, its place in the scenario's
    options (hashed into the identity). A core option sets the :class:`RunOptions` field
    ``target`` (``rule.<field>`` for the stopping rule); a backend's option is kept in
    ``RunOptions.backend_options`` under ``name`` and is read with ``core_options.backend_option(opts, name)``.
    """

    name: str
    kind: Kind
    default: Any
    help: str
    #: The command-line flag; default ``--name-with-dashes``.
    flag: str | None = None
    #: The config-file key (a ``settings`` key or a run entry's key); default ``name``.
    key: str | None = None
    #: The RunOptions field a core option sets; default ``name``.
    target: str | None = None
    #: Part of the scenario's options, so another value is another scenario.
    identity: bool = False
    #: Smallest value of an int or float, or of each of ints.
    minimum: float | None = None
    maximum: float | None = None
    #: A bool flag that turns the option off (``--no-isolation`` sets ``isolate`` to False).
    negate: bool = False
    #: The flag may be repeated (each occurrence adds one value) instead of comma-separated.
    repeat: bool = False
    #: Earlier spellings of the flag, still read but not shown (docs/reference/option-rules.md).
    old_flags: tuple[str, ...] = ()
    metavar: str | None = None
    #: Other config keys accepted for it (``model`` for ``models``).
    aliases: tuple[str, ...] = ()
    #: A plan axis: a run entry's list of values expands to their cross product with the others.
    axis: bool = False

    @property
    def cli_flag(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def config_key(self) -> str:
        return self.key or self.name

    @property
    def field(self) -> str:
        return self.target or self.name

    @property
    def param(self) -> str:
        """The click parameter name (``run(**params)``): the option's name, ``no_<name>`` for a flag
        that turns it off."""
        return f"no_{self.name}" if self.negate else self.name


@dataclass(frozen=True)
class BackendOptions:
    """A backend's typed option set: everything besides the key columns that changes a number,
    hashed into the scenario's identity (:func:`benchdb.schema.identity.options_id`).

    What is deliberately *not* an option: the stopping rule, the background-CPU limit, timeouts
    and tags change how long or how carefully a scenario is measured, not what is measured."""

    #: Threads the engine was given (intra-op for ONNX Runtime, inference threads for OpenVINO).
    threads: int
    #: Other measurements running at the same time on this machine, on other cores or devices
    #: (`--parallel N`: N - 1; `--duet`: 1); None when measured alone. Running beside others moved
    #: medians here by about 5 % (benchmarks/parallel.py), so it is another scenario.
    co_runners: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """The canonical form (benchdb.schema.identity): unset values dropped, JSON-plain types."""
        return identity.canonical_options(asdict(self))


@dataclass(frozen=True)
class BackendInfo:
    """A backend's metadata: what it needs, how to install it, where it runs, what it takes."""

    name: str  # benchdb's backend name
    package: str  # the distribution it needs
    module: str  # the module it imports
    hint: str  # how to install it
    #: The module implementing :class:`Backend` (imported only to plan or measure).
    implementation: str = ""
    #: "module:function" checking what a package alone does not tell (a browser, downloaded files):
    #: ``function(install: bool) -> (reason, install command) | None``; light (imports no backend).
    probe: str = ""
    #: Device families it can measure (``benchdb hardware``, help texts).
    devices: tuple[str, ...] = ("cpu",)
    #: Its ``--mode`` values; any other is refused before anything runs (``eager``, the core
    #: default, always means its default mode). Empty: not declared (it checks them when planning).
    modes: tuple[str, ...] = ()
    #: Its own run options, besides the core ones every backend takes.
    options: tuple[Option, ...] = ()
    #: Its typed option set (a dataclass with ``threads`` and ``as_dict()``): what ingest checks a
    #: result's options against. None: any JSON object is accepted.
    option_set: type[BackendOptions] | None = None
    #: One line for `benchdb hardware` and help texts.
    summary: str = ""
    #: "module:function" naming what it measures with, ``function() -> {name: version or None}``, where
    #: that is not just ``package`` (the browser library's version is not onnxruntime-web's); light.
    uses: str = ""


@runtime_checkable
class Backend(Protocol):
    """The interface of a backend's implementation module (checked by mypy on benchdb's own
    backends and by tests on every registered one)."""

    def software(self) -> dict[str, Any]:
        """Versions of what it measures with."""

    def hardware_of(self, device: str) -> dict[str, Any]:
        """The hardware fingerprint of that device."""

    def plan(self, opts: RunOptions) -> list[tuple[str, list[Scenario]]]:
        """Scenarios grouped by model."""

    def run_model(
        self, model: str, scenarios: list[Scenario], opts: RunOptions, on_start: Callable[[int], None] | None = None
    ) -> Iterator[Outcome]:
        """Load the model once, measure each scenario and yield one outcome per scenario, in
        order, calling ``on_start(i)`` before scenario ``i`` (isolation times each from there)."""

    def model_info(self, model: str) -> dict[str, Any]:
        """The contract's model metadata, without loading weights."""


#: The methods :class:`Backend` requires (a runtime check compares signatures too).
METHODS = ("software", "hardware_of", "plan", "run_model", "model_info")
