"""benchdb.hub.client: the Hub's address and repository ids, the token required before anything is
sent, and every Hub failure turned into one line that says what to do, against a local fake Hub
(tests/fakehub.py: ``hf_write`` may write, ``hf_read`` only read, any other token is refused)."""

from __future__ import annotations

import pytest
from conftest import free_port

from benchdb.hub import client
from benchdb.hub.client import HubError

WRITE, READ = "hf_write", "hf_read"


@pytest.fixture
def at_hub(hub, monkeypatch):
    """The fake Hub as $HF_ENDPOINT, with a write token."""
    monkeypatch.setenv("HF_ENDPOINT", hub.url + "/")
    monkeypatch.setenv("HF_TOKEN", WRITE)
    return hub


def _failure(repo_id: str, call) -> str:
    with pytest.raises(HubError) as err, client.hub_errors(repo_id, "dataset", "publishing to"):
        call()
    return str(err.value)


def test_repository_ids_and_the_hubs_address(monkeypatch):
    assert client.check_repo_id("org/bench.v2_x-y") == "org/bench.v2_x-y"
    for bad in ("bench", "org/", "/bench", "org/be nch", "-org/bench", "a/b/c", ""):
        with pytest.raises(HubError, match=r"is not a Hub repository id; give it as ORG/NAME$"):
            client.check_repo_id(bad, "--space")
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    assert client.endpoint() == "https://huggingface.co"
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9/")
    assert client.endpoint() == "http://127.0.0.1:9"


def test_a_write_needs_a_token(at_hub, monkeypatch):
    assert client.api().endpoint == at_hub.url
    monkeypatch.setenv("HF_TOKEN", "")
    from huggingface_hub import get_token

    if get_token():
        pytest.skip("this user has a Hugging Face login (hf auth login): its token stands in for HF_TOKEN")
    with pytest.raises(HubError, match=r"^no Hugging Face token: set HF_TOKEN to a token with write access"):
        client.api()


def test_hub_failures_are_one_line_naming_the_repository_never_the_token(at_hub, monkeypatch):
    at_hub.add_repo("dataset", "org/bench")
    missing = _failure("org/none", lambda: client.api().dataset_info("org/none"))
    assert missing == (
        f"dataset repo org/none not found on {at_hub.url} (or not visible with this token): "
        "check the name, or create it first"
    )
    monkeypatch.setenv("HF_TOKEN", READ)
    denied = _failure("org/bench", lambda: client.api().create_repo("org/bench", repo_type="dataset"))
    assert denied == "no write access to dataset repo org/bench (403): use a token with write permission on org"
    secret = "hf_SECRETtoken123"
    monkeypatch.setenv("HF_TOKEN", secret)
    refused = _failure("org/bench", lambda: client.api().create_repo("org/bench", repo_type="dataset"))
    assert refused.startswith("the Hub refused the token while publishing to (401)") and secret not in refused
    at_hub.fail_commits = 1
    monkeypatch.setenv("HF_TOKEN", WRITE)
    from huggingface_hub import CommitOperationAdd

    failed = _failure(
        "org/bench",
        lambda: client.api().create_commit(
            "org/bench", [CommitOperationAdd("a.txt", b"a")], repo_type="dataset", commit_message="m"
        ),
    )
    assert failed == (
        "the Hub failed while publishing to org/bench (HTTP 500); nothing was changed there: run the command again"
    )
    assert at_hub.repos[("dataset", "org/bench")].commits == []


def test_an_unreachable_hub_is_one_line_and_other_errors_pass_through(monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("HF_TOKEN", WRITE)
    line = _failure("org/bench", lambda: client.api().dataset_info("org/bench"))
    assert line.startswith(f"cannot reach the Hub at {client.endpoint()} while publishing to org/bench (")
    assert line.endswith("nothing was changed there: check the network and run the command again")
    with pytest.raises(KeyError), client.hub_errors("org/bench", "dataset", "publishing to"):
        raise KeyError("a bug of benchdb's own is not a Hub failure")
