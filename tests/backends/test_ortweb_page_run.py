"""benchdb.backends.ortweb.page_run: the identity an ort-web result records of the browser and its
execution provider (what the page reported, the flags it was started with), and WebGPU on a
software adapter flagged as emulated. Scenarios run in a real Chromium page end to end in
tests/backends/test_ortweb.py."""

from __future__ import annotations

import pytest

from benchdb.backends.ortweb import assets, browser
from benchdb.backends.ortweb.page_run import EMULATED, scenario_identity
from benchdb.harness.scenario import Scenario

pytestmark = pytest.mark.core

PAGE = {
    "browser": "HeadlessChrome/140.0",
    "userAgent": "Mozilla/5.0 HeadlessChrome/140.0",
    "simd": True,
    "crossOriginIsolated": True,
    "sharedArrayBuffer": True,
    "hardwareConcurrency": 2,
    "timerResolution": 5e-6,
}


def _scenario(device: str) -> Scenario:
    return Scenario("tiny:bert", "ort-web", device, "opt-all", "fp32", 1, "seq_len=8", {"threads": 1})


def test_a_result_records_what_the_page_reported_and_how_the_browser_was_started():
    got = scenario_identity(PAGE, _scenario("wasm"))
    assert got == {
        "browser": "HeadlessChrome/140.0",
        "user_agent": "Mozilla/5.0 HeadlessChrome/140.0",
        "onnxruntime_web": assets.VERSION,
        "execution_provider": "wasm",
        "wasm_simd": True,
        "cross_origin_isolated": True,
        "shared_array_buffer": True,
        "hardware_concurrency": 2,
        "timer_resolution_s": 5e-6,
        "browser_flags": browser.flags("wasm"),
    }
    assert "--enable-unsafe-webgpu" not in got["browser_flags"]


def test_webgpu_records_its_adapter_and_a_software_one_is_emulated():
    software = {"architecture": "swiftshader", "vendor": "google", "isFallbackAdapter": True}
    got = scenario_identity({**PAGE, "webgpu": software}, _scenario("webgpu"))
    assert got["adapter"] == software and got["emulated"] is True
    assert "--enable-unsafe-webgpu" in got["browser_flags"]
    hardware = scenario_identity({**PAGE, "webgpu": {**software, "isFallbackAdapter": False}}, _scenario("webgpu"))
    assert hardware["emulated"] is False
    # no adapter (the page's error): nothing claimed about one
    none = scenario_identity({**PAGE, "webgpu": {"error": "no adapter"}}, _scenario("webgpu"))
    assert "adapter" not in none and "emulated" not in none
    assert EMULATED.format(arch="swiftshader").startswith("emulated: software WebGPU adapter (swiftshader, ")
