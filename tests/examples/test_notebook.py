"""examples/notebook.ipynb runs top to bottom against the demo server, and renders well."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def executed():
    notebook = nbformat.read(EXAMPLES / "notebook.ipynb", as_version=4)
    nbclient.NotebookClient(notebook, timeout=60, kernel_name="python3",
                            resources={"metadata": {"path": str(EXAMPLES)}}).execute()
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
