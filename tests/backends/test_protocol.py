"""benchdb.backends.protocol: what one Option declaration gives (its flag, config key, field and
click parameter), a typed option set's canonical form, and the Backend interface a module meets
or does not."""

from __future__ import annotations

import types
from dataclasses import dataclass

import pytest

from benchdb.backends.numpy import backend as numpy_backend
from benchdb.backends.protocol import METHODS, Backend, BackendOptions, Option

pytestmark = pytest.mark.core


def test_an_options_flag_key_field_and_parameter_follow_its_name_unless_declared():
    plain = Option("max_background_cpu", "percent", 30.0, "help")
    assert (plain.cli_flag, plain.config_key, plain.field, plain.param) == (
        "--max-background-cpu",
        "max_background_cpu",
        "max_background_cpu",
        "max_background_cpu",
    )
    declared = Option("isolate", "bool", True, "help", flag="--no-isolation", key="isolation", target="rule.x")
    assert (declared.cli_flag, declared.config_key, declared.field) == ("--no-isolation", "isolation", "rule.x")
    assert Option("isolate", "bool", True, "help", negate=True).param == "no_isolate"


@dataclass(frozen=True)
class _Options(BackendOptions):
    providers: tuple[str, ...] = ("CPU",)
    quantization: str | None = None


def test_an_option_sets_canonical_form_drops_unset_values_and_is_json_plain():
    assert _Options(threads=2).as_dict() == {"threads": 2, "providers": ["CPU"]}
    assert _Options(threads=1, co_runners=3, quantization="dynamic").as_dict() == {
        "threads": 1,
        "co_runners": 3,
        "providers": ["CPU"],
        "quantization": "dynamic",
    }


def test_a_backend_module_meets_the_interface_only_with_every_method():
    assert isinstance(numpy_backend, Backend)
    assert all(callable(getattr(numpy_backend, name)) for name in METHODS)
    partial = types.ModuleType("partial")
    partial.software = lambda: {}
    assert not isinstance(partial, Backend)
    assert set(METHODS) == {name for name in dir(Backend) if not name.startswith("_")}
