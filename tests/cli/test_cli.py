"""The command group (:mod:`benchdb.cli`): light to import, `python -m benchdb`, and one line per
error unless --debug. Each command module's tests are tests/cli/test_<module>.py."""

import subprocess
import sys

from conftest import benchdb_cmd


def test_help_and_import_never_load_heavy_backends():
    code = (
        "import sys, benchdb, benchdb.cli\n"
        "from click.testing import CliRunner\n"
        "r = CliRunner().invoke(benchdb.cli.main, ['--help'])\n"
        "assert r.exit_code == 0 and 'ingest' in r.output, r.output\n"
        "heavy = [m for m in ('torch', 'onnxruntime', 'openvino', 'transformers') if m in sys.modules]\n"
        "print(','.join(heavy) or 'none')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "none"


def test_python_dash_m_and_version():
    proc = benchdb_cmd("--version", check=True)
    assert proc.stdout.strip() == "benchdb, version 0.2.0"


def test_debug_shows_traceback(tmp_path):
    proc = benchdb_cmd("--debug", "query", "select 1", "--db", str(tmp_path / "none.duckdb"))
    assert proc.returncode != 0 and "Traceback" in proc.stderr
    proc = benchdb_cmd("query", "select 1", "--db", str(tmp_path / "none.duckdb"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
