"""The Hub client: the token (``HF_TOKEN`` or the ``huggingface_hub`` login, never printed or
stored), the API object, and Hub failures turned into one line that says what to do."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from benchdb.errors import BenchdbError

if TYPE_CHECKING:
    from huggingface_hub import HfApi

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class HubError(BenchdbError):
    """The Hub refused or failed a request (one line, with what to do)."""


def endpoint() -> str:
    """The Hub's address: ``$HF_ENDPOINT`` or huggingface.co."""
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def check_repo_id(repo_id: str, what: str = "--repo") -> str:
    if not _REPO_ID.match(repo_id or ""):
        raise HubError(f"{what} {repo_id!r} is not a Hub repository id; give it as ORG/NAME")
    return repo_id


def api(*, need_token: bool = True) -> HfApi:
    """An :class:`HfApi` for ``$HF_ENDPOINT``; with ``need_token``, refuse to go on without one."""
    try:
        from huggingface_hub import HfApi, get_token
    except ImportError:
        raise HubError("publishing needs huggingface_hub: pip install 'benchdb[hub]'") from None
    if need_token and not get_token():
        raise HubError("no Hugging Face token: set HF_TOKEN to a token with write access, or run `hf auth login`")
    return HfApi(endpoint=endpoint())


@contextmanager
def hub_errors(repo_id: str, repo_type: str, doing: str) -> Iterator[None]:
    """Turn ``huggingface_hub`` and network errors raised inside the block into one HubError line.
    The messages name the repository and the HTTP status, never the token."""
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

    kind = repo_type if repo_type in ("dataset", "space") else "model"
    try:
        yield
    except RepositoryNotFoundError:
        raise HubError(
            f"{kind} repo {repo_id} not found on {endpoint()} (or not visible with this token): "
            f"check the name, or create it first"
        ) from None
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else None
        if status == 401:
            raise HubError(
                f"the Hub refused the token while {doing} (401): set HF_TOKEN to a valid token or run `hf auth login`"
            ) from None
        if status == 403:
            raise HubError(
                f"no write access to {kind} repo {repo_id} (403): use a token with write "
                f"permission on {repo_id.split('/')[0]}"
            ) from None
        raise HubError(
            f"the Hub failed while {doing} {repo_id} (HTTP {status}); nothing was changed there: run the command again"
        ) from None
    except Exception as exc:
        if not (isinstance(exc, OSError) or type(exc).__module__.split(".")[0] in ("httpx", "httpx2")):
            raise
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise HubError(
            f"cannot reach the Hub at {endpoint()} while {doing} {repo_id} ({first[:200]}); "
            "nothing was changed there: check the network and run the command again"
        ) from None
