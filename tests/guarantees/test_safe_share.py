"""Sharing a warehouse touches only what it owns: names from the data never
become paths outside the output (ingest refuses unsafe run ids; `site`, `export` and the remote mirror
check every path they write), `site --out` replaces only an earlier site, and `publish --space`
uploads only what `site` wrote and deletes only what an earlier publish wrote. Real contract files,
real DuckDB warehouses, the real command line, and the local fake Hub (tests/support/fakehub.py) that the real
huggingface_hub client talks to."""

from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest
from conftest import benchdb_cmd, cli, make_meta, make_run, need_module, write_file

from benchdb.schema import contract, identity
from benchdb.store import database
from benchdb.warehouse import Warehouse


def _one_line(proc) -> str:
    assert proc.returncode not in (0, 70), proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("benchdb: error: "), proc.stderr
    return lines[0]


def _runs(folder: Path, n: int = 2) -> list[str]:
    """n runs of one scenario, a day apart; their run ids."""
    ids = []
    for day in range(1, n + 1):
        run = make_run(started_at=f"2026-11-0{day}T10:00:00+00:00")
        write_file(folder / f"run{day}", make_meta(run), np.random.default_rng(day).normal(1e-3, 1e-5, 30))
        ids.append(run["run_id"])
    return ids


def _file_with_run_id(folder: Path, run_id: str) -> Path:
    """A contract file whose run id is ``run_id`` and whose scenario id matches it, so the run id is
    the only thing wrong with it."""
    meta = copy.deepcopy(make_meta(make_run()))
    meta["run"]["run_id"] = run_id
    meta["scenario"]["scenario_id"] = identity.scenario_id(run_id, meta["scenario"])
    rows = [("latency_s", "s", i, i * 1e-3, 1e-3) for i in range(20)]
    name = hashlib.sha256(run_id.encode()).hexdigest()[:12]
    return contract.write_scenario(folder / f"{name}.parquet", meta, contract.samples_table(meta, rows))


def _rename_runs(db: Path, names: dict[str, str]) -> None:
    """Give runs of ``db`` other ids, as a warehouse written by an older benchdb may hold."""
    con, _ = database.open_writable(db)
    try:
        for old, new in names.items():
            con.execute("UPDATE runs SET run_id = ? WHERE run_id = ?", [new, old])
            con.execute("UPDATE results SET run_id = ? WHERE run_id = ?", [new, old])
    finally:
        con.close()


@pytest.fixture
def warehouse(tmp_path) -> Path:
    folder = tmp_path / "wh"
    folder.mkdir()
    _runs(tmp_path / "results")
    db = folder / "bench.duckdb"
    Warehouse(db).ingest([tmp_path / "results"])
    return db


# ------------------------------------------------------------------------------ names from data
@pytest.mark.core
@pytest.mark.parametrize("run_id", ["../../../../tmp/x/PWNED", "a/b", ".hidden", "x" * 129, "a\\b", "a b"])
def test_ingest_rejects_a_run_id_that_cannot_name_a_file(tmp_path, run_id):
    bad = _file_with_run_id(tmp_path / "in", run_id)
    db = tmp_path / "bench.duckdb"
    r = cli("ingest", bad.parent, "--db", db)
    assert r.exit_code == 1, r.output
    assert "metadata.run.run_id" in r.output and "not a safe identifier" in r.output
    with Warehouse(db).reading() as con:
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 0


@pytest.mark.core
def test_site_leaves_out_pages_of_unsafe_names_and_writes_only_inside(tmp_path):
    """A warehouse holding a `../` run id and one with a `/` (as one filled by an older benchdb may):
    the site builds, leaves those pages out, and writes nothing outside its folder."""
    escape = tmp_path / "x"
    escape.mkdir()
    evil = os.path.relpath(escape / "PWNED", tmp_path / ".site.staging" / "data" / "compare")
    _runs(tmp_path / "more", 3)
    warehouse = tmp_path / "three.duckdb"
    Warehouse(warehouse).ingest([tmp_path / "more"])
    with Warehouse(warehouse).reading() as con:
        first, _, third = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY started_at").fetchall()]
    _rename_runs(warehouse, {first: evil, third: "a/b"})
    r = cli("site", "--db", warehouse, "--out", tmp_path / "site")
    assert r.exit_code == 0, r.output
    assert "compare 0" in r.output and "left out (unsafe names) 2" in r.output
    assert list(escape.iterdir()) == []
    assert json.loads((tmp_path / "site" / "data" / "runs.json").read_text())["rows"]  # the runs still listed


@pytest.mark.core
def test_export_refuses_a_path_that_a_link_leads_outside(warehouse, tmp_path):
    """An optimum-benchmark export folder whose per-result folder is a link to elsewhere: the write
    that would follow it is refused with one line, and nothing is written outside."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    out = tmp_path / "export"
    assert cli("export", "--format", "optimum-benchmark", "--out", out, "--db", warehouse).exit_code == 0
    folder = next(out.iterdir())
    for f in folder.iterdir():
        f.unlink()
    folder.rmdir()
    folder.symlink_to(outside)
    r = benchdb_cmd("export", "--format", "optimum-benchmark", "--out", str(out), "--db", str(warehouse))
    assert "lies outside" in _one_line(r)
    assert list(outside.iterdir()) == []


@pytest.mark.core
def test_mirror_refuses_a_link_leading_out_of_it(tmp_path):
    """A remote results folder mirrored into benchdb's cache: a link planted in the mirror cannot
    carry a download to where it points."""
    need_module("fsspec", "benchdb[spark]")  # the mirror reads remote folders through fsspec
    remote = tmp_path / "remote"
    write_file(remote / "sub", make_meta(make_run()))
    cache, outside = tmp_path / "cache", tmp_path / "outside"
    outside.mkdir()
    url = f"file://{remote}"
    mirror = cache / "remote" / hashlib.sha256(url.encode()).hexdigest()[:16]
    mirror.mkdir(parents=True)
    (mirror / "sub").symlink_to(outside)
    r = benchdb_cmd("ingest", url, "--db", str(tmp_path / "bench.duckdb"), env={"BENCHDB_CACHE": str(cache)})
    assert list(outside.iterdir()) == []
    assert "lies outside" in _one_line(r)


# ------------------------------------------------------------------------------ site --out
@pytest.mark.core
def test_site_out_replaces_only_an_earlier_site(warehouse, tmp_path):
    db, home = str(warehouse), warehouse.parent
    (home / "notes.txt").write_text("mine")
    before = sorted(p.name for p in home.iterdir())
    r = benchdb_cmd("site", "--db", db, "--out", str(home))  # the warehouse's own folder
    assert "holds the warehouse" in _one_line(r)
    assert sorted(p.name for p in home.iterdir()) == before and (home / "notes.txt").read_text() == "mine"
    assert "holds the warehouse" in _one_line(benchdb_cmd("site", "--db", db, "--out", str(tmp_path)))

    other = tmp_path / "docs"
    other.mkdir()
    (other / "index.md").write_text("keep")
    assert "not empty and not a site" in _one_line(benchdb_cmd("site", "--db", db, "--out", str(other)))
    assert (other / "index.md").read_text() == "keep"
    r = benchdb_cmd("site", "--db", db, "--out", ".", cwd=other)  # "." names the same folder: one line too
    assert "not empty and not a site" in _one_line(r)

    site = tmp_path / "site"
    site.mkdir()  # empty: fine
    assert cli("site", "--db", db, "--out", site).exit_code == 0
    listed = json.loads((site / ".benchdb-site.json").read_text())["files"]
    assert "index.html" in listed and "data/runs.json" in listed
    assert cli("site", "--db", db, "--out", site).exit_code == 0  # an earlier site: replaced
    (site / "data" / "my-notes.md").write_text("mine")
    assert "did not write (data/my-notes.md)" in _one_line(benchdb_cmd("site", "--db", db, "--out", str(site)))
    (site / "data" / "my-notes.md").unlink()
    (site / "data" / "copy.bin").write_bytes(warehouse.read_bytes())  # a warehouse put inside a site
    assert "holds a warehouse (data/copy.bin)" in _one_line(benchdb_cmd("site", "--db", db, "--out", str(site)))
    (site / "data" / "copy.bin").unlink()
    r = benchdb_cmd("site", "--db", db, "--out", ".", cwd=site)  # `--out .` inside an earlier site
    assert r.returncode == 0, r.stderr
    assert (site / "index.html").is_file() and not list(tmp_path.glob(".site.*"))
    (tmp_path / "file").write_text("x")
    assert "not a folder" in _one_line(benchdb_cmd("site", "--db", db, "--out", str(tmp_path / "file")))


@pytest.mark.core
def test_site_never_takes_a_users_folder_beside_out_for_its_own(warehouse, tmp_path):
    """The staging and replaced folders used to be `.site.staging` and `.site.old` beside --out,
    removed whatever they held; and an --out that cannot be made was an internal error."""
    db = str(warehouse)
    for name in (".site.staging", ".site.old"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "mine.txt").write_text("keep")
    site = tmp_path / "site"
    for _ in range(2):  # a new site, then a replaced one
        assert cli("site", "--db", db, "--out", site).exit_code == 0
    for name in (".site.staging", ".site.old"):
        assert (tmp_path / name / "mine.txt").read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".site")) == [".site.old", ".site.staging"]
    r = benchdb_cmd("site", "--db", db, "--out", "/proc/nope/site")
    assert "cannot write there" in _one_line(r) and r.returncode != 0


# ------------------------------------------------------------------------------ publish --space
@pytest.fixture
def env(hub_env):
    return hub_env


FOREIGN = {
    "app.py": b"import gradio\n",
    "requirements.txt": b"gradio\n",
    "models/weights.bin": b"\0" * 64,
    ".gitattributes": b"*.bin filter=lfs\n",
}


@pytest.mark.slow
def test_publish_space_deletes_only_what_an_earlier_publish_wrote(hub, env, warehouse, tmp_path):
    """A Space with its own app.py, requirements.txt and model weights: publish adds the dashboard
    and keeps them (none is counted stale); --dry-run lists every upload and deletion and changes
    nothing; a later publish removes only a file the earlier one wrote."""
    repo = hub.add_repo("space", "user/dash", FOREIGN)
    site = tmp_path / "site"
    assert cli("site", "--db", warehouse, "--out", site).exit_code == 0
    r = benchdb_cmd("publish", "--space", "user/dash", "--site", str(site), "--dry-run", env=env)
    assert r.returncode == 0, r.stderr
    dry = r.stdout.splitlines()
    assert len(repo.commits) == 1

    r = benchdb_cmd("publish", "--space", "user/dash", "--site", str(site), env=env)
    assert r.returncode == 0 and "stale removed" not in r.stdout, r.stdout + r.stderr
    assert all(repo.files[p] == data for p, data in FOREIGN.items())
    listed = json.loads((site / ".benchdb-site.json").read_text())["files"]
    for rel in [*listed, "README.md", ".benchdb-publish.json"]:
        assert any(line.startswith(f"  + {rel} (") for line in dry), rel
    assert not any(line.startswith("  - ") for line in dry) and "stale" not in "\n".join(dry)
    assert "index.html" in repo.files and "data/runs.json" in repo.files
    manifest = json.loads(repo.files[".benchdb-publish.json"])["files"]
    assert "data/runs.json" in manifest and "app.py" not in manifest

    assert cli("site", "--db", warehouse, "--out", site).exit_code == 0
    (site / "data" / "runs.json").unlink()  # a page the site no longer has
    r = benchdb_cmd("publish", "--space", "user/dash", "--site", str(site), "--dry-run", env=env)
    assert "  - data/runs.json (" in r.stdout and len(repo.commits) == 2
    r = benchdb_cmd("publish", "--space", "user/dash", "--site", str(site), env=env)
    assert r.returncode == 0 and "1 stale removed" in r.stdout, r.stdout + r.stderr
    assert "data/runs.json" not in repo.files
    assert all(repo.files[p] == data for p, data in FOREIGN.items())


@pytest.mark.slow
def test_publish_site_uploads_only_what_site_wrote(hub, env, warehouse, tmp_path):
    """--site DIR: a dotfile (.env), a file `site` did not write, a link to a secret outside DIR and
    a page replaced by such a link are not uploaded; a folder that is
    not a site is refused."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=hf_secret")
    site = tmp_path / "site"
    assert cli("site", "--db", warehouse, "--out", site).exit_code == 0
    (site / ".env").write_text("HF_TOKEN=hf_secret")
    (site / "data" / "extra.json").write_text("{}")
    (site / "static" / "leak.txt").symlink_to(secret)
    (site / "data" / "runs.json").unlink()
    (site / "data" / "runs.json").symlink_to(secret)
    r = benchdb_cmd("publish", "--space", "user/dash", "--site", str(site), env=env)
    assert r.returncode == 0, r.stderr
    files = hub.repos[("space", "user/dash")].files
    assert "index.html" in files and "data/results.json" in files
    for rel in (".env", "data/extra.json", "static/leak.txt", "data/runs.json", ".benchdb-site.json"):
        assert rel not in files, rel
    assert not any(b"hf_secret" in data for data in files.values())
    assert "not uploaded (4 file(s)" in r.stdout

    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "index.html").write_text("<p>hi</p>")
    r = benchdb_cmd("publish", "--space", "user/dash", "--site", str(plain), env=env)
    assert "is not a site `benchdb site` wrote" in _one_line(r)


def test_publish_dataset_refuses_an_unsafe_run_id(hub, env, warehouse):
    """A run id that would name a folder outside ``samples/`` in the dataset: refused, nothing sent."""
    with Warehouse(warehouse).reading() as con:
        run = con.execute("SELECT min(run_id) FROM runs").fetchone()[0]
    _rename_runs(warehouse, {run: "../../README.md"})
    r = benchdb_cmd("publish", "--repo", "org/bench", "--db", str(warehouse), env=env)
    assert "cannot name a folder in the dataset" in _one_line(r)
    assert ("dataset", "org/bench") not in hub.repos


@pytest.mark.slow
def test_publish_space_replaces_a_file_it_did_not_write_only_when_told(hub, env, warehouse, tmp_path):
    """A Space with its own README.md and index.html (what the Hub writes into a new static Space): a
    publish is refused in one line and changes nothing, the dry run names both and the flag that
    allows it, and only with --replace-existing are they replaced. Once a
    publish wrote them, a later one needs no flag."""
    own = {"README.md": b"---\nsdk: static\n---\n# my space\n", "index.html": b"<p>mine</p>", "app.py": b"x = 1\n"}
    repo = hub.add_repo("space", "user/dash", own)
    site = tmp_path / "site"
    assert cli("site", "--db", warehouse, "--out", site).exit_code == 0
    publish = ("publish", "--space", "user/dash", "--site", str(site))

    line = _one_line(benchdb_cmd(*publish, env=env))
    assert "README.md, index.html" in line and "--replace-existing" in line, line
    assert len(repo.commits) == 1 and all(repo.files[p] == data for p, data in own.items())

    r = benchdb_cmd(*publish, "--dry-run", env=env)
    assert r.returncode == 0, r.stderr
    for rel in ("README.md", "index.html"):
        assert any(
            ln.startswith(f"  + {rel} (") and "replaces a file no publish wrote" in ln for ln in r.stdout.splitlines()
        )
    last = r.stdout.strip().splitlines()[-1]
    assert "2 replaced that no publish wrote; replacing README.md, index.html needs --replace-existing" in last, last
    assert len(repo.commits) == 1

    r = benchdb_cmd(*publish, "--replace-existing", env=env)
    assert r.returncode == 0, r.stderr
    assert repo.files["README.md"] != own["README.md"] and repo.files["app.py"] == own["app.py"]
    r = benchdb_cmd(*publish, env=env)  # README.md and index.html are now a publish's own
    assert r.returncode == 0 and "no publish wrote" not in r.stdout, r.stdout + r.stderr

    line = _one_line(
        benchdb_cmd("publish", "--repo", "org/bench", "--replace-existing", "--db", str(warehouse), env=env)
    )
    assert "--replace-existing goes with --space" in line
