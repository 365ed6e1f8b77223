"""The example notebook (python/examples/memscope_tour.ipynb) runs top to bottom with nbclient
on the installed module and produces the plot."""

import base64
import json
import sys

import nbformat
from nbclient import NotebookClient

from conftest import ROOT

NOTEBOOK = ROOT / "python" / "examples" / "memscope_tour.ipynb"


def test_example_notebook_runs_and_plots(tmp_path, monkeypatch):
    plot = tmp_path / "plot.png"
    monkeypatch.setenv("MEMSCOPE_PLOT", str(plot))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    # The kernel is this interpreter (the venv the module is installed in), not whichever
    # python3 the system's kernelspec names.
    spec = tmp_path / "jupyter" / "kernels" / "memscope-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "memscope test", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="memscope-test",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    # The Analysis displays as its summary table and the plot.
    first = nb.cells[1].outputs[-1]["data"]
    assert "<table>" in first["text/html"] and "data:image/png;base64," in first["text/html"]
    # The figure cell shows the plot and writes it.
    png = [o["data"]["image/png"] for o in outputs if "data" in o and "image/png" in o["data"]]
    assert png and base64.b64decode(png[-1]).startswith(b"\x89PNG")
    assert plot.read_bytes().startswith(b"\x89PNG") and plot.stat().st_size > 5000
