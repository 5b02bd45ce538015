"""examples/notebook.ipynb runs top to bottom against the demo server, and renders well,
whether its kernel runs in the repository root or in examples/ (where JupyterLab starts it)."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="module", params=["root", "examples"])
def executed(request):
    notebook = nbformat.read(EXAMPLES / "notebook.ipynb", as_version=4)
    where = ROOT if request.param == "root" else EXAMPLES
    nbclient.NotebookClient(notebook, timeout=60, kernel_name="python3",
                            resources={"metadata": {"path": str(where)}}).execute()
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def html_of(cell) -> str:
    return "".join(o.get("data", {}).get("text/html", "") for o in cell.outputs if o.output_type == "execute_result")


def test_every_cell_runs_without_error(executed):
    errors = [o for cell in executed for o in cell.outputs if o.output_type == "error"]
    assert errors == []


def test_the_client_opened_in_the_first_cell_works_in_later_cells(executed):
    assert "<code>add</code>" in html_of(executed[1])  # list_tools, through the extension
    assert ">5</pre>" in html_of(executed[2])


def test_server_text_is_escaped(executed):
    html = html_of(executed[4])
    assert "&lt;hello&gt;" in html and "<hello>" not in html


def test_images_render_as_data_uris_and_errors_in_red(executed):
    assert '<img src="data:image/png;base64,' in html_of(executed[5])
    error = html_of(executed[6])
    assert "#b00020" in error and "&lt;script&gt;" in error and "<script>" not in error


def test_the_cells_blocking_calls_get_no_event_loop_warning(executed):
    # A cell runs on the kernel's event loop thread, and blocking there is what cells do.
    stderr = "".join(o.get("text", "") for cell in executed for o in cell.outputs
                     if o.output_type == "stream" and o.get("name") == "stderr")
    assert "RuntimeWarning" not in stderr and "blocking" not in stderr, stderr
