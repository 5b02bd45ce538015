"""mcpclient._trust.project: what counts as the project, and whether a path lies in it."""

from __future__ import annotations

from pathlib import Path

from mcpclient._trust.project import current_project


def test_the_project_is_the_outermost_checkout_below_home(tmp_path):
    home = tmp_path / "home"
    clone = home / "src" / "clone"
    (clone / ".git").mkdir(parents=True)
    sub = clone / "vendor" / "lib"
    (sub / ".git").mkdir(parents=True)  # a submodule inside the checkout
    assert current_project(sub, home=home).root == clone.resolve()
    assert current_project(clone, home=home).root == clone.resolve()
    project = current_project(clone, home=home)
    assert project.contains(clone / "x.json") and project.contains(sub / "y.json")
    assert not project.contains(home / ".cursor" / "mcp.json") and not project.contains(home / "src" / "other")


def test_an_unpacked_download_counts_as_the_whole_top_directory_under_home(tmp_path):
    home = tmp_path / "home"
    download = home / "Downloads" / "tool" / "src"
    download.mkdir(parents=True)  # no .git: its parents may be the download's too
    project = current_project(download, home=home)
    assert project.root == (home / "Downloads").resolve()
    assert project.contains(home / "Downloads" / "tool" / ".mcp.json")


def test_at_home_or_at_the_root_there_is_no_project(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    assert current_project(home, home=home).root is None
    assert current_project("/", home=home).root is None
    assert not current_project(home, home=home).contains(home / ".mcp.json")


def test_a_path_counts_as_written_and_with_its_links_followed(tmp_path):
    home = tmp_path / "home"
    clone = home / "clone"
    (clone / ".git").mkdir(parents=True)
    (clone / "sub").mkdir()
    (home / "current").symlink_to(clone)
    (home / "mine.json").symlink_to(clone / ".mcp.json")
    project = current_project(clone, home=home)
    assert project.contains(f"{clone}/sub/../.mcp.json")
    assert project.contains(home / "current" / ".mcp.json")  # through a linked directory
    assert project.contains(home / "mine.json")  # a link into the project
    assert not project.contains(f"{clone}/../other.json")


def test_outside_home_the_project_leaves_your_home_out(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    project = current_project(scratch, home=home)
    top = Path(tmp_path.resolve().parts[0]) / tmp_path.resolve().parts[1]
    assert project.root == top  # no checkout: the top directory, /tmp
    assert project.contains(scratch / "mcp.json") and not project.contains(home / "mine.json")
