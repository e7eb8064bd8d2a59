"""Publishing to the Hugging Face Hub, against a local fake Hub (tests/support/fakehub.py) that the
real huggingface_hub client talks to through HF_ENDPOINT: the real command line in subprocesses,
real contract files, real DuckDB warehouses, and `benchdb ingest hf://...` through HfFileSystem."""

from __future__ import annotations

import io
import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import benchdb_cmd, make_meta, make_run, need_chromium, write_file
from support.fakehub import READ, WRITE

from benchdb.hub.card import END, START
from benchdb.warehouse import Warehouse

REPO_ID = "org/bench"
MODEL = "org/bert"  # a Hub id, so --push has a model repo to open the pull request on
MS1 = r"(?:1\.0\d\d ms|9\d\d\.\d µs|10\d\d\.\d µs)"  # about 1 ms, as the fixtures' ONNX Runtime batch-1 results

#: The shields.io endpoint badge schema (https://shields.io/badges/endpoint-badge).
SHIELDS_SCHEMA = {
    "type": "object",
    "required": ["schemaVersion", "label", "message"],
    "additionalProperties": False,
    "properties": {
        "schemaVersion": {"const": 1},
        "label": {"type": "string"},
        "message": {"type": "string", "minLength": 1},
        "color": {"type": "string"},
        "labelColor": {"type": "string"},
        "isError": {"type": "boolean"},
        "namedLogo": {"type": "string"},
        "logoSvg": {"type": "string"},
        "logoColor": {"type": "string"},
        "logoWidth": {"type": "number"},
        "style": {"enum": ["flat", "flat-square", "plastic", "for-the-badge", "social"]},
        "cacheSeconds": {"type": "integer", "minimum": 300},
    },
}


def _write_run(folder: Path, started_at: str, scale: float = 1.0, models=(MODEL,)) -> list[Path]:
    """One run: per model, PyTorch eager (2 ms per item) and ONNX Runtime (1 ms) at batch 1 and 4."""
    run = make_run(started_at=started_at)
    files = []
    for model in models:
        for backend, per_item in (("pytorch", 2e-3), ("onnxruntime", 1e-3)):
            for bs in (1, 4):
                rng = np.random.default_rng(bs + len(files))
                meta = make_meta(run, model_id=model, backend=backend, batch_size=bs, input_shape="seq_len=128")
                files.append(write_file(folder, meta, rng.normal(per_item * bs * scale, 1e-5, 40)))
    return files


@pytest.fixture
def env(hub_env, tmp_path):
    """conftest's hub_env, with benchdb's cache of its own too."""
    return {**hub_env, "BENCHDB_CACHE": str(tmp_path / "cache")}


@pytest.fixture
def source(tmp_path):
    """A warehouse with one run of 4 results (2 backends x 2 batch sizes) of MODEL."""
    folder = tmp_path / "results"
    folder.mkdir()
    _write_run(folder / "run1", "2026-11-01T10:00:00+00:00")
    db = tmp_path / "source.duckdb"
    Warehouse(db).ingest([folder])
    return db, folder


def _publish(db: Path, env: dict, *extra: str) -> subprocess.CompletedProcess:
    return benchdb_cmd("publish", "--repo", REPO_ID, "--db", str(db), *extra, env=env)


def _stats(db: Path) -> list[tuple]:
    with Warehouse(db).reading() as con:
        return con.execute("SELECT result_id, status, n, median, p90, throughput FROM results ORDER BY 1").fetchall()


def _one_line_error(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("benchdb: error: "), proc.stderr
    return lines[0]


# ---------------------------------------------------------------------------------------- round trip
@pytest.mark.slow
def test_publish_round_trip_incremental(hub, env, source, tmp_path):
    db, folder = source
    dry = _publish(db, env, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert (REPO_ID not in {r for _, r in hub.repos}) and "(creating it)" in dry.stdout  # nothing created
    listed = re.findall(r"^  \+ (\S+)", dry.stdout, re.M)

    first = _publish(db, env)
    assert first.returncode == 0, first.stderr
    repo = hub.repos[("dataset", REPO_ID)]
    assert len(repo.commits) == 1
    files = sorted(repo.files)
    assert sorted(listed) == files  # the dry run listed exactly this
    samples = [f for f in files if f.startswith("samples/")]
    assert len(samples) == 4 and all(
        re.fullmatch(
            r"samples/hardware=[0-9a-f]{16}/run=[0-9a-f-]{36}/[0-9a-f]{16}"
            r"\.parquet",
            f,
        )
        for f in samples
    )
    assert [f for f in files if not f.startswith("samples/")] == [
        next(f for f in files if f.startswith(".results/hardware=")),
        "README.md",
        "badges/org--bert.json",
        "badges/org--bert.svg",
    ]
    originals = {p.read_bytes() for p in folder.rglob("*.parquet")}
    assert {repo.files[f] for f in samples} == originals  # the contract files, byte for byte

    # read back into another warehouse: same results, same medians and counts; no duplicates on repeat
    other = tmp_path / "other.duckdb"
    back = benchdb_cmd("ingest", f"hf://datasets/{REPO_ID}", "--db", str(other), env=env)
    assert back.returncode == 0, back.stderr
    assert "ingested 4 new file(s)" in back.stdout and "rejected 0" in back.stdout
    assert _stats(other) == _stats(db) and len(_stats(db)) == 4
    again = benchdb_cmd("ingest", f"hf://datasets/{REPO_ID}", "--db", str(other), env=env)
    assert again.returncode == 0 and "ingested 0 new file(s), skipped 4" in again.stdout, again.stdout
    assert _stats(other) == _stats(db)

    # the viewer's results file: one row per result, the warehouse's statistics
    import pyarrow.parquet as pq

    viewer = pq.read_table(io.BytesIO(repo.files[files[0]])).to_pylist()
    assert sorted((r["result_id"], r["n"], r["median"]) for r in viewer) == [(s[0], s[2], s[3]) for s in _stats(db)]

    # a second run: only its files (and the card, results file and badges that changed) go up, in one commit
    _write_run(folder / "run2", "2026-11-02T10:00:00+00:00", scale=0.9)
    Warehouse(db).ingest([folder])
    dry2 = _publish(db, env, "--dry-run")
    new = re.findall(r"^  \+ (\S+)", dry2.stdout, re.M)
    assert sum(p.startswith("samples/") for p in new) == 4 and sum(p.startswith(".results/") for p in new) == 1
    assert not set(new) & set(samples)
    assert "4 contract file(s) already there" in dry2.stdout
    commits_before = sum(1 for m, p in hub.requests if m == "POST" and p.endswith("/commit/main"))
    second = _publish(db, env)
    assert second.returncode == 0, second.stderr
    assert sum(1 for m, p in hub.requests if m == "POST" and p.endswith("/commit/main")) == commits_before + 1
    assert len(repo.commits) == 2
    assert set(repo.commits[-1]["files"]) - set(repo.commits[0]["files"]) == {p for p in new if p not in files}
    assert all(repo.files[f] == repo.commits[0]["files"][f] for f in samples)  # history kept as it was
    third = _publish(db, env)
    assert third.returncode == 0 and "nothing new to publish" in third.stdout and len(repo.commits) == 2

    back2 = benchdb_cmd("ingest", f"hf://datasets/{REPO_ID}", "--db", str(other), env=env)
    assert "ingested 4 new file(s), skipped 4" in back2.stdout, back2.stdout
    assert _stats(other) == _stats(db) and len(_stats(db)) == 8


@pytest.mark.slow
def test_failed_commit_leaves_the_repo_unchanged(hub, env, source, tmp_path):
    db, folder = source
    assert _publish(db, env).returncode == 0
    repo = hub.repos[("dataset", REPO_ID)]
    before = (len(repo.commits), dict(repo.files))
    _write_run(folder / "run2", "2026-11-02T10:00:00+00:00", scale=0.9)
    Warehouse(db).ingest([folder])
    hub.fail_commits = 1  # the server fails after reading the commit
    failed = _publish(db, env)
    line = _one_line_error(failed)
    assert "HTTP 500" in line and "nothing was changed" in line and "run the command again" in line
    assert (len(repo.commits), dict(repo.files)) == before
    retry = _publish(db, env)  # the next attempt publishes everything, once
    assert retry.returncode == 0, retry.stderr
    assert len(repo.commits) == 2 and sum(f.startswith("samples/") for f in repo.files) == 8


# ---------------------------------------------------------------------------------------- credentials
@pytest.mark.slow
def test_credentials_and_access_errors(hub, env, source, tmp_path):
    db, _ = source
    no_token = {k: v for k, v in env.items() if k != "HF_TOKEN"}
    line = _one_line_error(benchdb_cmd("publish", "--repo", REPO_ID, "--db", str(db), env={**no_token, "HF_TOKEN": ""}))
    assert "no Hugging Face token" in line and "HF_TOKEN" in line and "hf auth login" in line
    secret = "hf_SECRETtoken123"
    line = _one_line_error(_publish(db, {**env, "HF_TOKEN": secret}))
    assert "refused the token" in line and "(401)" in line
    line = _one_line_error(_publish(db, {**env, "HF_TOKEN": READ}))
    assert "no write access" in line and "(403)" in line and "org" in line
    hub.add_repo("dataset", REPO_ID)
    line = _one_line_error(_publish(db, {**env, "HF_TOKEN": READ}))
    assert "no write access to dataset repo org/bench" in line
    assert not hub.repos[("dataset", REPO_ID)].commits
    line = _one_line_error(benchdb_cmd("publish", "--repo", "not-a-repo", "--db", str(db), env=env))
    assert "ORG/NAME" in line
    # the token is never printed nor stored in the warehouse
    proc = _publish(db, {**env, "HF_TOKEN": secret})
    assert secret not in proc.stdout + proc.stderr
    assert secret.encode() not in db.read_bytes()
    # a model card pushed to a model repo that does not exist
    line = _one_line_error(benchdb_cmd("report", "--model-card", MODEL, "--push", "--db", str(db), env=env))
    assert "model repo org/bert not found" in line


# ---------------------------------------------------------------------------------------- card and badges
def test_dataset_card_yaml_and_badges(hub, env, source):
    db, _ = source
    assert _publish(db, env).returncode == 0
    repo = hub.repos[("dataset", REPO_ID)]
    text = repo.files["README.md"].decode()
    assert text.startswith("---\n")
    meta = yaml.safe_load(text.split("---\n")[1])
    configs = {c["config_name"]: c for c in meta["configs"]}
    assert set(configs) == {"results", "samples"} and configs["results"]["default"] is True
    from huggingface_hub import HfFileSystem

    fs = HfFileSystem(endpoint=hub.url, token=WRITE)
    for name, folder in (("results", ".results/"), ("samples", "samples/")):
        [spec] = configs[name]["data_files"]
        matched = {p.split(f"datasets/{REPO_ID}/", 1)[1] for p in fs.glob(f"datasets/{REPO_ID}/{spec['path']}")}
        assert matched == {f for f in repo.files if f.startswith(folder)} and matched, name
    assert "| org/bert | 1 | seq_len=128 | 2 | Test CPU 9000 | onnxruntime eager fp32 |" in text
    assert "`median`" in text and "`p90`" in text  # columns described

    import jsonschema

    badge = json.loads(repo.files["badges/org--bert.json"])
    jsonschema.validate(badge, SHIELDS_SCHEMA)
    assert badge["label"] == MODEL and re.fullmatch(rf"best CPU: onnxruntime {MS1}", badge["message"]), badge
    svg = ET.fromstring(repo.files["badges/org--bert.svg"])
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    assert b"href" not in repo.files["badges/org--bert.svg"] and b"<script" not in repo.files["badges/org--bert.svg"]
    assert f"{MODEL}: {badge['message']}" in "".join(svg.itertext())


def test_svg_badge_renders_in_headless_chromium(source, tmp_path):
    db, _ = source
    from benchdb.hub.badges import badges

    with Warehouse(db).reading() as con:
        [badge] = badges(con, None, None)
    page = tmp_path / "badge.svg"
    page.write_text(badge.svg(), encoding="utf-8")
    browser = need_chromium()
    shot = tmp_path / "badge.png"
    proc = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--screenshot={shot}",
            "--window-size=600,60",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.exists(), proc.stderr[-2000:]
    from matplotlib.image import imread

    pixels = (imread(shot)[..., :3] * 255).round().astype(int)
    colours = {tuple(p) for p in pixels.reshape(-1, 3)}
    assert (0x55, 0x55, 0x55) in colours or (0x5A, 0x5A, 0x5A) in colours  # the grey label side
    assert any(abs(r - 0x00) < 12 and abs(g - 0x7E) < 12 and abs(b - 0xC6) < 12 for r, g, b in colours)  # blue
    white_text = sum(1 for r, g, b in pixels[:20].reshape(-1, 3) if r > 230 and g > 230 and b > 230)
    assert white_text > 0  # text drawn on the badge


# ---------------------------------------------------------------------------------------- model card
def test_model_card_section_and_pull_request(hub, env, source, tmp_path):
    db, _ = source
    out = tmp_path / "section.md"
    proc = benchdb_cmd(
        "report", "--model-card", MODEL, "--dataset", REPO_ID, "--db", str(db), "--out", str(out), env=env
    )
    assert proc.returncode == 0, proc.stderr
    section = out.read_text()
    assert section.startswith(START) and section.rstrip().endswith(END)
    assert "### Test CPU 9000 (cpu)" in section
    assert re.search(
        rf"\| 1 \| seq_len=128 \| onnxruntime \(cpu, eager, fp32\) \| {MS1} \| {MS1} \| "
        r"[\d,]{3,5}\.\d items/s \| — \| 2 \|",
        section,
    ), section
    assert re.search(r"batch 1, seq_len=128: onnxruntime .* \*\*2\.0\dx\*\*", section), section
    assert "img.shields.io/endpoint?url=" in section and "badges%2Forg--bert.json" in section
    assert f"[{REPO_ID}]({hub.url}/datasets/{REPO_ID})" in section

    card = f"---\nlicense: mit\n---\n# BERT\n\nIntro.\n\n{START}\nold numbers\n{END}\n\n## Citation\nbib\n"
    model = hub.add_repo("model", MODEL, {"README.md": card.encode()})
    pushed = benchdb_cmd("report", "--model-card", MODEL, "--dataset", REPO_ID, "--push", "--db", str(db), env=env)
    assert pushed.returncode == 0, pushed.stderr
    assert f"opened a pull request on {MODEL}: {hub.url}/{MODEL}/discussions/1" in pushed.stderr
    assert model.files["README.md"] == card.encode() and len(model.commits) == 1  # main untouched
    [pr] = model.prs
    assert set(pr["files"]) == {"README.md"}
    assert pr["files"]["README.md"].decode() == card.replace(f"{START}\nold numbers\n{END}", section.rstrip("\n"))
    # the same section again on a card that has it: no second pull request
    model.commits.append({**pr, "title": "merged"})
    same = benchdb_cmd("report", "--model-card", MODEL, "--dataset", REPO_ID, "--push", "--db", str(db), env=env)
    assert same.returncode == 0 and "already has this section" in same.stderr and len(model.prs) == 1


def test_model_card_errors(source, env):
    db, _ = source
    line = _one_line_error(benchdb_cmd("report", "--model-card", "tiny:none", "--db", str(db), env=env))
    assert "no valid timing result for model tiny:none" in line
    line = _one_line_error(benchdb_cmd("report", "--push", "--matrix", "--db", str(db), env=env))
    assert "--model-card" in line
    line = _one_line_error(benchdb_cmd("report", "--model-card", MODEL, "--dataset", "nope", "--db", str(db), env=env))
    assert "--dataset 'nope'" in line
    proc = benchdb_cmd("report", "--model-card", "tiny:none", "--push", "--db", str(db), env=env)
    assert "--push needs a Hub model repo" in _one_line_error(proc) and proc.stdout == ""


def test_publish_the_dashboard_as_a_static_space(hub, env, source, tmp_path):
    """`benchdb publish --space`: the site `benchdb site` builds, one commit, a static Space's card;
    a second push removes what the site no longer has and changes nothing else."""
    db, _ = source
    space_env = {k: v for k, v in env.items() if k != "BENCHDB_CACHE"}  # the vendored charts from the usual cache
    r = benchdb_cmd("publish", "--space", "user/bench-dashboard", "--db", str(db), env=space_env)
    assert r.returncode == 0, r.stderr
    repo = hub.repos[("space", "user/bench-dashboard")]
    assert len(repo.commits) == 1 and "published the dashboard to Space user/bench-dashboard" in r.stdout
    files = repo.files
    card = files["README.md"].decode()
    front = yaml.safe_load(card.split("---")[1])
    assert front["sdk"] == "static" and front["app_file"] == "index.html"
    assert b'content="static"' in files["index.html"] and "data/views.json" in files and "static/app.js" in files
    results = json.loads(files["data/results.json"])
    assert len(results["rows"]) == 4  # the warehouse's 4 latest results
    assert any(p.startswith("static/vendor/") for p in files)  # the charting library travels with it
    site = tmp_path / "site"
    assert benchdb_cmd("site", "--db", str(db), "--out", str(site), env=space_env).returncode == 0
    (site / "data" / "runs.json").unlink()  # a site without one file: it goes
    r = benchdb_cmd("publish", "--space", "user/bench-dashboard", "--site", str(site), env=space_env)
    assert r.returncode == 0 and "1 stale removed" in r.stdout, r.stdout + r.stderr
    assert "data/runs.json" not in repo.files and len(repo.commits) == 2
    assert repo.files["data/results.json"] == files["data/results.json"]


def test_publish_space_refusals(env, source):
    db, _ = source
    for args, says in (
        (("--repo", REPO_ID, "--space", "user/x"), "give --repo ORG/NAME"),
        (("--space", "not a repo"), "--space 'not a repo' is not a Hub repository id"),
        (("--repo", REPO_ID, "--site", "."), "--site goes with --space"),
        (("--space", "user/x", "--model", "m"), "a Space shows the whole dashboard"),
    ):
        r = benchdb_cmd("publish", "--db", str(db), *args, env=env)
        assert r.returncode != 0 and says in r.stderr and "Traceback" not in r.stderr, r.stderr
