"""examples/python/new_norm.py and its notebook run (short) and do what they say."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "python" / "new_norm.py"
NOTEBOOK = ROOT / "examples" / "python" / "new_norm.ipynb"


def test_the_new_norm_example_runs(tmp_path):
    out = subprocess.run([sys.executable, str(EXAMPLE), "--steps", "24", "--out", str(tmp_path / "runs")],
                         capture_output=True, text=True, env=dict(os.environ), timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    checks = [l for l in lines if l.startswith("gradcheck")]
    assert [l.split()[1] for l in checks] == ["x", "alpha", "weight", "bias"]
    arms = [l for l in lines if "final validation loss" in l]
    assert len(arms) == 4 and all("completed" in l for l in arms), out.stdout
    try:
        import matplotlib  # noqa: F401
        assert (tmp_path / "runs" / "my_dyt_layers.png").stat().st_size > 1000
    except ImportError:
        assert "matplotlib is not installed" in out.stdout


def test_the_notebook_holds_the_example_and_its_cells_run(tmp_path, monkeypatch):
    nb = json.loads(NOTEBOOK.read_text())
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    assert any("register_norm" in c for c in code) and any("gradcheck_op" in c for c in code)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NORMLAB_ROOT", str(ROOT))
    namespace = {"STEPS_OVERRIDE": 16}
    for cell in code:
        exec(compile(cell, str(NOTEBOOK), "exec"), namespace)
    assert len(namespace["runs"]) == 4
    assert all(r.status == "completed" for r in namespace["runs"].values())
