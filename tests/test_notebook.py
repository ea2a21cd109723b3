"""The notebook runs top to bottom and shows its plots."""

from __future__ import annotations

import nbformat
from conftest import ROOT
from nbclient import NotebookClient


def test_explore_graph_notebook_runs_and_draws(tmp_path):
    notebook = nbformat.read(ROOT / "notebooks" / "explore_graph.ipynb", as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 4  # degree histogram, neighbourhood, multi-hop, rule application
    text = "".join(o.get("text", "") for o in outputs)
    assert "multihop/3-hop" in text and "rule_application/" in text and "rule:" in text
