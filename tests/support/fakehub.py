"""A small local stand-in for the Hugging Face Hub, for tests (``HF_ENDPOINT=http://127.0.0.1:PORT``).

It implements what ``huggingface_hub`` calls to create a repo, pre-upload and commit (every file
"regular", inlined in the commit), read repo info, list trees and paths, and download files
(``/resolve/``), so ``HfApi.create_commit`` / ``upload_folder`` and ``hf://`` reads through
``HfFileSystem`` work against it. A commit is applied whole or not at all.

Tokens: ``hf_write`` may write; ``hf_read`` may only read (writes answer 403); anything else is
401. ``hub.fail_commits = n`` makes the next n commits fail after the payload was read (500).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

WRITE, READ = "hf_write", "hf_read"


def blob_oid(data: bytes) -> str:
    """The git blob id of ``data`` (what the Hub reports as a regular file's oid)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Repo:
    private: bool = False
    commits: list[dict] = field(default_factory=list)  # {"oid", "title", "files"} on main
    prs: list[dict] = field(default_factory=list)  # {"num", "oid", "title", "files"}

    @property
    def files(self) -> dict[str, bytes]:
        return self.commits[-1]["files"] if self.commits else {}

    @property
    def sha(self) -> str:
        return self.commits[-1]["oid"] if self.commits else "0" * 40


class FakeHub:
    def __init__(self) -> None:
        self.repos: dict[tuple[str, str], Repo] = {}
        self.fail_commits = 0
        self.requests: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def add_repo(self, repo_type: str, repo_id: str, files: dict[str, bytes] | None = None) -> Repo:
        repo = self.repos.setdefault((repo_type, repo_id), Repo())
        if files:
            _commit(repo, "initial", dict(files))
        return repo


def _commit(repo: Repo, title: str, files: dict[str, bytes], pr: bool = False) -> dict:
    oid = hashlib.sha1(
        json.dumps([repo.sha, title, sorted((p, blob_oid(d)) for p, d in files.items())]).encode()
    ).hexdigest()
    commit = {"oid": oid, "title": title, "files": files}
    if pr:
        commit["num"] = len(repo.prs) + 1
        repo.prs.append(commit)
    else:
        repo.commits.append(commit)
    return commit


_API = re.compile(
    r"^/api/(models|datasets|spaces)/([^/]+/[^/]+)(?:/(revision|preupload|commit|tree|paths-info)"
    r"(?:/([^/]+))?(/.*)?)?$"
)
_RESOLVE = re.compile(r"^/(?:(datasets|spaces)/)?([^/]+/[^/]+)/resolve/([^/]+)/(.+)$")


class _Handler(BaseHTTPRequestHandler):
    hub: FakeHub  # set per server by _handler
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    # ---------------------------------------------------------------- plumbing
    def _send(self, status: int, body=b"", headers: dict | None = None, head: bool = False):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        if not isinstance(body, bytes):
            self.send_header("Content-Type", "application/json")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if not head:
            self.wfile.write(data)

    def _error(self, status: int, message: str, code: str | None = None):
        headers = {"X-Error-Message": message}
        if code:
            headers["X-Error-Code"] = code
        self._send(status, {"error": message}, headers)

    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _token(self) -> str | None:
        auth = self.headers.get("Authorization") or ""
        return auth[7:] if auth.startswith("Bearer ") else None

    def _repo(self, kind: str, repo_id: str, write: bool = False) -> Repo | None:
        token = self._token()
        if token not in (None, WRITE, READ):
            self._error(401, "Invalid credentials in Authorization header")
            return None
        repo = self.hub.repos.get((kind, repo_id))
        if repo is None or (repo.private and token is None):
            self._error(404, "Repository not found", "RepoNotFound")
            return None
        if write and token != WRITE:
            if token is None:
                self._error(401, "You must be authenticated to write")
            else:
                self._error(403, "You don't have the rights to write to this repository")
            return None
        return repo

    def _files_at(self, repo: Repo, rev: str) -> dict[str, bytes] | None:
        rev = unquote(rev)
        if rev in ("main", repo.sha):
            return repo.files
        m = re.fullmatch(r"refs/pr/(\d+)", rev)
        if m and int(m.group(1)) <= len(repo.prs):
            return repo.prs[int(m.group(1)) - 1]["files"]
        for c in repo.commits:
            if c["oid"] == rev:
                return c["files"]
        self._error(404, "Revision not found", "RevisionNotFound")
        return None

    # ---------------------------------------------------------------- routes
    def do_HEAD(self):
        self.do_GET(head=True)

    def do_GET(self, head: bool = False):
        url = urlsplit(self.path)
        self.hub.requests.append(("HEAD" if head else "GET", url.path))
        with self.hub.lock:
            m = _RESOLVE.match(url.path)
            if m:
                return self._resolve(m, head)
            m = _API.match(url.path)
            if not m:
                return self._error(404, f"no route {url.path}")
            kind, repo_id, action, rev, rest = m.groups()
            repo = self._repo(kind[:-1], repo_id)
            if repo is None:
                return
            if action in (None, "revision"):
                files = self._files_at(repo, rev or "main")
                if files is None:
                    return
                return self._send(
                    200,
                    {
                        "id": repo_id,
                        "sha": repo.sha,
                        "private": repo.private,
                        "siblings": [{"rfilename": p} for p in sorted(files)],
                    },
                )
            if action == "tree":
                files = self._files_at(repo, rev)
                if files is None:
                    return
                recursive = parse_qs(url.query).get("recursive", ["false"])[0].lower() in ("1", "true")
                return self._send(200, _tree(files, unquote(rest or "/").strip("/"), recursive))
            return self._error(404, f"no route {url.path}")

    def _resolve(self, m, head: bool):
        kind, repo_id, rev, path = m.groups()
        repo = self._repo((kind or "models")[:-1], repo_id)
        if repo is None:
            return
        files = self._files_at(repo, rev)
        if files is None:
            return
        path = unquote(path)
        if path not in files:
            return self._error(404, "Entry not found", "EntryNotFound")
        data = files[path]
        headers = {"ETag": f'"{blob_oid(data)}"', "X-Repo-Commit": repo.sha, "Accept-Ranges": "bytes"}
        rng = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range") or "")
        if rng:
            start, end = int(rng.group(1)), int(rng.group(2) or len(data) - 1)
            headers["Content-Range"] = f"bytes {start}-{min(end, len(data) - 1)}/{len(data)}"
            return self._send(206, data[start : end + 1], headers, head)
        return self._send(200, data, headers, head)

    def do_POST(self):
        url = urlsplit(self.path)
        self.hub.requests.append(("POST", url.path))
        body = self._body()
        with self.hub.lock:
            if url.path == "/api/repos/create":
                return self._create(json.loads(body))
            if url.path == "/api/validate-yaml":
                return self._send(200, {"errors": [], "warnings": []})
            m = _API.match(url.path)
            if not m or m.group(3) not in ("preupload", "commit", "paths-info"):
                return self._error(404, f"no route {url.path}")
            kind, repo_id, action, rev, _ = m.groups()
            repo = self._repo(kind[:-1], repo_id, write=action != "paths-info")
            if repo is None:
                return
            if action == "paths-info":
                files = self._files_at(repo, rev)
                if files is None:
                    return
                form = parse_qs(body.decode()) if body and not body.startswith(b"{") else None
                paths = form.get("paths", []) if form is not None else json.loads(body or b"{}").get("paths", [])
                return self._send(200, [e for p in paths for e in _tree(files, "", True) if e["path"] == p])
            if action == "preupload":
                files = repo.files
                return self._send(
                    200,
                    {
                        "files": [
                            {
                                "path": f["path"],
                                "uploadMode": "regular",
                                "shouldIgnore": False,
                                "oid": blob_oid(files[f["path"]]) if f["path"] in files else None,
                            }
                            for f in json.loads(body)["files"]
                        ]
                    },
                )
            return self._commit(repo, kind, repo_id, body, parse_qs(url.query).get("create_pr") == ["1"])

    def _create(self, payload: dict):
        token = self._token()
        if token != WRITE:
            return self._error(403 if token == READ else 401, "You don't have the rights to create a repo")
        kind = payload.get("type") or "model"
        repo_id = f"{payload.get('organization') or 'user'}/{payload['name']}"
        url = f"{self.hub.url}/{'' if kind == 'model' else kind + 's/'}{repo_id}"
        if (kind, repo_id) in self.hub.repos:
            return self._send(409, {"error": "You already created this repo", "url": url})
        self.hub.repos[(kind, repo_id)] = Repo(private=bool(payload.get("private")))
        return self._send(200, {"url": url, "name": repo_id})

    def _commit(self, repo: Repo, kind: str, repo_id: str, body: bytes, create_pr: bool):
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        if self.hub.fail_commits:
            self.hub.fail_commits -= 1
            return self._error(500, "Internal Error: the storage backend went away")
        header = next(x["value"] for x in lines if x["key"] == "header")
        files = dict(repo.files)
        for item in lines:
            value = item["value"]
            if item["key"] == "file":
                files[value["path"]] = base64.b64decode(value["content"])
            elif item["key"] == "deletedFile":
                files.pop(value["path"], None)
            elif item["key"] != "header":
                return self._error(400, f"unsupported commit operation {item['key']}")
        commit = _commit(repo, header["summary"], files, pr=create_pr)
        prefix = f"{self.hub.url}/{'' if kind == 'models' else kind + '/'}{repo_id}"
        return self._send(
            200,
            {
                "commitUrl": f"{prefix}/commit/{commit['oid']}",
                "commitOid": commit["oid"],
                "pullRequestUrl": f"{prefix}/discussions/{commit['num']}" if create_pr else None,
            },
        )


def _handler(hub: FakeHub) -> type[_Handler]:
    """The request handler class of one fake hub (the server makes an instance per request)."""
    return type("Handler", (_Handler,), {"hub": hub})


def _tree(files: dict[str, bytes], folder: str, recursive: bool) -> list[dict]:
    """Tree entries under ``folder`` ('' = root): files and folders, like /api/.../tree."""
    prefix = f"{folder}/" if folder else ""
    out: dict[str, dict] = {}
    for path, data in sorted(files.items()):
        if not path.startswith(prefix):
            continue
        parts = path[len(prefix) :].split("/")
        for depth in range(1, len(parts)):
            sub = prefix + "/".join(parts[:depth])
            if recursive or depth == 1:
                out.setdefault(
                    sub, {"type": "directory", "oid": hashlib.sha1(sub.encode()).hexdigest(), "size": 0, "path": sub}
                )
        if recursive or len(parts) == 1:
            out[path] = {"type": "file", "oid": blob_oid(data), "size": len(data), "path": path}
    return list(out.values())
