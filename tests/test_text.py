"""The wording helpers and how a possibly secret value is recorded (benchdb.text): plurals, recorded
reasons in words, and command lines, URLs and configs with every secret replaced by its hash and the
rest as written."""

from __future__ import annotations

import pytest

from benchdb import text

pytestmark = pytest.mark.core

H = text.hashed


def test_plurals_and_recorded_reasons_in_words():
    assert [text.plural(n, "scenario") for n in (0, 1, 2)] == ["0 scenarios", "1 scenario", "2 scenarios"]
    assert text.plural(2, "process", "processes") == "2 processes"
    assert text.prose("CI of the median +-0.0%; CI of the median; a +-b") == (
        "95 % interval of the median ±0.0%; 95 % interval of the median; a ±b"
    )


def test_a_private_value_is_recorded_as_a_short_hash_that_tells_values_apart():
    assert H("hf_secret") == H("hf_secret") != H("hf_secreT")
    assert H("x").startswith("sha256:") and len(H("x")) == len("sha256:") + 16


def test_secrets_on_a_command_line_are_hashed_and_the_rest_kept():
    cmd = "HF_TOKEN=abc vllm serve m --api-key 'k 1' --token=t2 --max-num-batched-tokens 8192 --tokenizer tok"
    assert text.redact_secrets(cmd) == (
        f"HF_TOKEN={H('abc')} vllm serve m --api-key {H('k 1')} --token={H('t2')} "
        "--max-num-batched-tokens 8192 --tokenizer tok"
    )
    assert text.redact_secrets("x --password-file /p --hf-token --other") == "x --password-file /p --hf-token --other"
    assert text.redact_secrets("plain command --n 3") == "plain command --n 3"


def test_a_url_keeps_its_host_and_path_and_hides_its_userinfo_and_query_values():
    url = "https://user:pw@h.example:8443/v1?api_key=K&x=&flag#frag"
    assert (
        text.recorded_url(url)
        == f"https://{H('user:pw')}@h.example:8443/v1?api_key={H('K')}&x=&{H('flag')}#{H('frag')}"
    )
    assert text.recorded_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert text.redact_secrets("curl http://a:b@h/x") == f"curl http://{H('a:b')}@h/x"


def test_a_config_records_url_keys_whole_and_other_strings_redacted():
    config = {"url": "http://h/?k=1 2", "ab_url": ["http://u:p@h"], "cmd": "run --api-key s", "n": 3}
    assert text.redact_config(config) == {
        "url": f"http://h/?k={H('1 2')}",
        "ab_url": [f"http://{H('u:p')}@h"],
        "cmd": f"run --api-key {H('s')}",
        "n": 3,
    }
