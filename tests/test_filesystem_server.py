"""The filesystem server: every tool's effects, workspace confinement and the output cap."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from loca.core.world import World
from mock_servers.filesystem import toolbox
from tests.harness import ServerHarness

TOOLS = {
    "read_text_file", "read_media_file", "read_multiple_files", "write_file", "edit_file",
    "create_directory", "list_directory", "list_directory_with_sizes", "directory_tree",
    "move_file", "search_files", "get_file_info", "list_allowed_directories",
}


class Server(ServerHarness):
    """A filesystem runtime over a world; `ok` returns the text result."""

    def __init__(self, world: World, config: dict[str, Any] | None = None) -> None:
        super().__init__(toolbox, world, config)

    ok = ServerHarness.ok_text


@pytest.fixture
def fs(make_world) -> Server:
    world, _ = make_world(["filesystem"])
    return Server(world)


def test_tool_set_and_descriptions(fs: Server) -> None:
    assert set(fs.runtime.tools) == TOOLS
    for tool in fs.runtime.tools.values():
        assert 0 < len(tool.description or "") <= 1024
        assert "filesystem" in tool.tags
        for name, schema in tool.parameters["properties"].items():
            assert schema.get("description"), f"{tool.name}.{name}"


# ---- reading ---------------------------------------------------------------------------------

def test_write_then_read_text(fs: Server) -> None:
    content = "line 1\nline 2\nline 3\nline 4\n"
    assert fs.ok("write_file", path="notes.txt", content=content) == \
        "Successfully wrote to /workspace/notes.txt"
    assert (fs.ws / "notes.txt").read_text() == content
    assert fs.ok("read_text_file", path="notes.txt") == content
    assert fs.ok("read_text_file", path="/workspace/notes.txt", head=2) == "line 1\nline 2\n"
    assert fs.ok("read_text_file", path="notes.txt", tail=1) == "line 4\n"
    fs.fails("read_text_file", "INVALID_ARGUMENT", path="notes.txt", head=1, tail=1)
    fs.fails("read_text_file", "INVALID_ARGUMENT", path="notes.txt", head=0)


def test_read_text_refuses_binary_missing_and_folders(fs: Server) -> None:
    (fs.ws / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (fs.ws / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (fs.ws / "folder").mkdir()
    assert "read_media_file" in fs.fails("read_text_file", "INVALID_ARGUMENT", path="image.png")
    assert "read_media_file" in fs.fails("read_text_file", "INVALID_ARGUMENT", path="latin1.txt")
    fs.fails("read_text_file", "NOT_FOUND", path="nothing.txt")
    fs.fails("read_text_file", "INVALID_ARGUMENT", path="folder")


def test_read_media_file(fs: Server) -> None:
    payload = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    (fs.ws / "pic.PNG").write_bytes(payload)
    result = json.loads(fs.ok("read_media_file", path="pic.PNG"))
    assert list(result) == ["mimeType", "data"]
    assert result["mimeType"] == "image/png"
    assert base64.b64decode(result["data"]) == payload
    (fs.ws / "song.mp3").write_bytes(b"ID3")
    assert json.loads(fs.ok("read_media_file", path="song.mp3"))["mimeType"] == "audio/mpeg"


def test_read_media_file_over_output_cap(make_world) -> None:
    world, _ = make_world(["filesystem"])
    small = Server(world, {"max_output_chars": 500})
    (small.ws / "big.png").write_bytes(bytes(1000))
    small.fails("read_media_file", "RESOURCE_EXHAUSTED", path="big.png")


def test_read_multiple_files(fs: Server) -> None:
    (fs.ws / "a.txt").write_text("alpha")
    (fs.ws / "b.txt").write_text("beta")
    text = fs.ok("read_multiple_files", paths=["a.txt", "missing.txt", "/workspace/b.txt"])
    blocks = text.split("\n---\n")
    assert blocks[0] == "/workspace/a.txt:\nalpha"
    assert blocks[1].startswith("missing.txt: Error [NOT_FOUND]")
    assert blocks[2] == "/workspace/b.txt:\nbeta"
    fs.fails("read_multiple_files", "NOT_FOUND", paths=["x.txt", "y.txt"])
    fs.fails("read_multiple_files", "INVALID_ARGUMENT", paths=[f"{i}.txt" for i in range(51)])


# ---- writing ---------------------------------------------------------------------------------

def test_write_file_needs_parent_and_leaves_no_temp_files(fs: Server) -> None:
    assert "create_directory" in fs.fails("write_file", "NOT_FOUND", path="new/a.txt", content="x")
    fs.ok("write_file", path="a.txt", content="first")
    fs.ok("write_file", path="a.txt", content="second")
    assert [p.name for p in fs.ws.iterdir()] == ["a.txt"]
    assert (fs.ws / "a.txt").read_text() == "second"
    (fs.ws / "dir").mkdir()
    fs.fails("write_file", "INVALID_ARGUMENT", path="dir", content="x")


def test_edit_file_exact_and_dry_run(fs: Server) -> None:
    (fs.ws / "app.py").write_text("x = 1\ny = 2\nz = 3\n")
    preview = fs.ok("edit_file", path="app.py", dryRun=True,
                    edits=[{"oldText": "y = 2", "newText": "y = 20"}])
    assert "-y = 2" in preview and "+y = 20" in preview
    assert (fs.ws / "app.py").read_text() == "x = 1\ny = 2\nz = 3\n"
    diff = fs.ok("edit_file", path="app.py", edits=[{"oldText": "y = 2", "newText": "y = 20"},
                                                    {"oldText": "z = 3\n", "newText": ""}])
    assert diff.startswith("--- /workspace/app.py\n+++ /workspace/app.py\n@@")
    assert "-z = 3" in diff
    assert (fs.ws / "app.py").read_text() == "x = 1\ny = 20\n"


def test_edit_file_whitespace_tolerant_keeps_indentation(fs: Server) -> None:
    (fs.ws / "f.py").write_text("class A:\n    def f(self):\n        return 1\n")
    fs.ok("edit_file", path="f.py", edits=[{
        "oldText": "def f(self):\n    return 1", "newText": "def g(self):\n    return 2"}])
    assert (fs.ws / "f.py").read_text() == "class A:\n    def g(self):\n        return 2\n"


def test_edit_file_all_or_nothing(fs: Server) -> None:
    original = "a\nb\na\n"
    (fs.ws / "t.txt").write_text(original)
    text = fs.fails("edit_file", "INVALID_ARGUMENT", path="t.txt",
                    edits=[{"oldText": "b", "newText": "B"}, {"oldText": "a", "newText": "A"}])
    assert "edit 2" in text and "2 times" in text
    fs.fails("edit_file", "INVALID_ARGUMENT", path="t.txt",
             edits=[{"oldText": "b", "newText": "B"}, {"oldText": "zzz", "newText": "A"}])
    assert (fs.ws / "t.txt").read_text() == original
    fs.fails("edit_file", "INVALID_ARGUMENT", path="t.txt",
             edits=[{"oldText": "b", "newText": "B", "extra": 1}])


def test_edit_file_keeps_crlf(fs: Server) -> None:
    (fs.ws / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    fs.ok("edit_file", path="w.txt", edits=[{"oldText": "two", "newText": "2"}])
    assert (fs.ws / "w.txt").read_bytes() == b"one\r\n2\r\n"


def test_create_directory(fs: Server) -> None:
    assert fs.ok("create_directory", path="a/b/c") == \
        "Successfully created directory /workspace/a/b/c"
    assert (fs.ws / "a/b/c").is_dir()
    fs.ok("create_directory", path="/workspace/a/b")
    (fs.ws / "file").write_text("x")
    fs.fails("create_directory", "ALREADY_EXISTS", path="file")
    fs.fails("create_directory", "INVALID_ARGUMENT", path="file/sub")


def test_move_file(fs: Server) -> None:
    (fs.ws / "in").mkdir()
    (fs.ws / "in/report.pdf").write_bytes(b"%PDF")
    (fs.ws / "out").mkdir()
    assert fs.ok("move_file", source="in/report.pdf", destination="out/final.pdf") == \
        "Successfully moved /workspace/in/report.pdf to /workspace/out/final.pdf"
    assert not (fs.ws / "in/report.pdf").exists()
    assert (fs.ws / "out/final.pdf").read_bytes() == b"%PDF"
    (fs.ws / "other.txt").write_text("x")
    fs.fails("move_file", "ALREADY_EXISTS", source="other.txt", destination="out/final.pdf")
    fs.fails("move_file", "NOT_FOUND", source="gone.txt", destination="x.txt")
    fs.fails("move_file", "INVALID_ARGUMENT", source="out", destination="out/inner")
    fs.fails("move_file", "NOT_FOUND", source="other.txt", destination="nowhere/x.txt")
    fs.ok("move_file", source="out", destination="archive")
    assert (fs.ws / "archive/final.pdf").exists()


# ---- listing ---------------------------------------------------------------------------------

def _tree(fs: Server) -> None:
    for rel, size in [("b.csv", 2048), ("a.txt", 10), ("docs/x.pdf", 5), ("docs/sub/y.csv", 1),
                      ("node_modules/pkg.js", 1)]:
        path = fs.ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * size)


def test_list_directory(fs: Server) -> None:
    _tree(fs)
    assert fs.ok("list_directory", path=".") == \
        "[FILE] a.txt\n[FILE] b.csv\n[DIR] docs\n[DIR] node_modules"
    assert fs.ok("list_directory", path="docs/sub") == "[FILE] y.csv"
    (fs.ws / "empty").mkdir()
    assert fs.ok("list_directory", path="empty") == "/workspace/empty is empty"
    fs.fails("list_directory", "INVALID_ARGUMENT", path="a.txt")


def test_list_directory_limit(fs: Server) -> None:
    for i in range(1005):
        (fs.ws / f"f{i:04d}.txt").touch()
    lines = fs.ok("list_directory", path=".").split("\n")
    assert len(lines) == 1001
    assert lines[999] == "[FILE] f0999.txt"
    assert lines[-1].startswith("[showing first 1000 of 1005 entries")


def test_list_directory_with_sizes(fs: Server) -> None:
    _tree(fs)
    by_size = fs.ok("list_directory_with_sizes", path=".", sortBy="size").split("\n")
    assert by_size[0].startswith("[FILE] b.csv") and by_size[0].endswith("2.00 KB")
    assert by_size[1].startswith("[FILE] a.txt") and by_size[1].endswith("10 B")
    assert by_size[-2:] == ["Total: 2 files, 2 directories", "Combined size: 2.01 KB"]
    by_name = fs.ok("list_directory_with_sizes", path=".").split("\n")
    assert by_name[0].startswith("[FILE] a.txt")
    fs.fails("list_directory_with_sizes", "INVALID_ARGUMENT", path=".", sortBy="date")


def test_directory_tree(fs: Server) -> None:
    _tree(fs)
    tree = json.loads(fs.ok("directory_tree", path=".", excludePatterns=["node_modules"]))
    assert tree == [
        {"name": "a.txt", "type": "file"},
        {"name": "b.csv", "type": "file"},
        {"name": "docs", "type": "directory", "children": [
            {"name": "sub", "type": "directory", "children": [{"name": "y.csv", "type": "file"}]},
            {"name": "x.pdf", "type": "file"},
        ]},
    ]
    only_docs = json.loads(fs.ok("directory_tree", path="docs", excludePatterns=["*.csv"]))
    assert only_docs == [{"name": "sub", "type": "directory", "children": []},
                         {"name": "x.pdf", "type": "file"}]


def test_directory_tree_node_limit(fs: Server) -> None:
    for i in range(2005):
        (fs.ws / f"n{i:04d}").touch()
    first, notice = fs.ok("directory_tree", path=".").split("\n")
    assert len(json.loads(first)) == 2000
    assert notice.startswith("[tree truncated after 2000 nodes")


def test_search_files(fs: Server) -> None:
    _tree(fs)
    assert fs.ok("search_files", path=".", pattern="*.csv") == \
        "/workspace/b.csv\n/workspace/docs/sub/y.csv"
    assert fs.ok("search_files", path="docs", pattern="*.CSV") == "/workspace/docs/sub/y.csv"
    assert fs.ok("search_files", path=".", pattern="docs/**/*.pdf") == "/workspace/docs/x.pdf"
    assert fs.ok("search_files", path=".", pattern="sub") == "/workspace/docs/sub"
    assert fs.ok("search_files", path=".", pattern="*.csv", excludePatterns=["docs"]) == \
        "/workspace/b.csv"
    assert fs.ok("search_files", path=".", pattern="*.docx") == "No matches found"


def test_brace_alternatives_match_and_a_pattern_never_read_is_an_error(fs: Server) -> None:
    _tree(fs)
    assert fs.ok("search_files", path=".", pattern="*.{CSV,pdf}") == \
        "/workspace/b.csv\n/workspace/docs/sub/y.csv\n/workspace/docs/x.pdf"
    assert fs.ok("search_files", path=".", pattern="{a.t,s{x,u}b}") == "/workspace/a.txt\n/workspace/docs/sub"
    assert fs.ok("search_files", path=".", pattern="*.csv", excludePatterns=["{docs,node_modules}"]) == \
        "/workspace/b.csv"
    assert [n["name"] for n in json.loads(fs.ok("directory_tree", path=".", excludePatterns=["{d,n}*"]))] == \
        ["a.txt", "b.csv"]
    (fs.ws / "{x}.txt").touch()  # a group without a comma is literal
    assert fs.ok("search_files", path=".", pattern="{x}.*") == "/workspace/{x}.txt"
    fs.fails("search_files", "INVALID_ARGUMENT", path=".", pattern="report{1..3}.pdf")
    fs.fails("search_files", "INVALID_ARGUMENT", path=".", pattern="{a,b}" * 9)  # 512 alternatives
    (fs.ws / "empty").mkdir()
    fs.fails("directory_tree", "INVALID_ARGUMENT", path="empty", excludePatterns=["{a..c}"])


def test_get_file_info(fs: Server) -> None:
    (fs.ws / "data.bin").write_bytes(b"12345")
    (fs.ws / "data.bin").chmod(0o640)
    info = dict(line.split(": ", 1) for line in fs.ok("get_file_info", path="data.bin").split("\n"))
    assert info == {"size": "5", "created": "2025-01-15T09:00:00Z",
                    "modified": "2025-01-15T09:00:00Z", "accessed": "2025-01-15T09:00:00Z",
                    "isDirectory": "false", "isFile": "true", "permissions": "640"}
    folder = fs.ok("get_file_info", path="/workspace")
    assert "isDirectory: true" in folder and "size: 0" in folder
    fs.fails("get_file_info", "NOT_FOUND", path="nope")


def test_list_allowed_directories(fs: Server) -> None:
    assert fs.ok("list_allowed_directories") == "Allowed directories:\n/workspace"


# ---- confinement and cap ---------------------------------------------------------------------

def _escapes(world: World) -> list[str]:
    (world.truth_dir / "truth.json").write_text('{"secret": 1}')
    (world.workspace / "link").symlink_to(world.truth_dir / "truth.json")
    (world.workspace / "linkdir").symlink_to(world.truth_dir, target_is_directory=True)
    return ["../truth/truth.json", "/workspace/../truth/truth.json", "/etc/passwd",
            str(world.truth_dir / "truth.json"), "link", "linkdir/truth.json", "linkdir"]


@pytest.mark.parametrize("tool, arg", [
    ("read_text_file", "path"), ("read_media_file", "path"), ("get_file_info", "path"),
    ("list_directory", "path"), ("directory_tree", "path"), ("list_directory_with_sizes", "path"),
    ("search_files", "path"), ("create_directory", "path"),
])
def test_paths_outside_the_workspace_are_denied(fs: Server, tool: str, arg: str) -> None:
    extra = {"pattern": "*"} if tool == "search_files" else {}
    for path in _escapes(fs.world):
        fs.fails(tool, "PERMISSION_DENIED", **{arg: path}, **extra)


def test_writes_and_moves_outside_are_denied(fs: Server) -> None:
    escapes = _escapes(fs.world)
    (fs.ws / "ok.txt").write_text("x")
    for path in escapes:
        fs.fails("write_file", "PERMISSION_DENIED", path=path, content="pwned")
        fs.fails("edit_file", "PERMISSION_DENIED", path=path,
                 edits=[{"oldText": "secret", "newText": "x"}])
        fs.fails("move_file", "PERMISSION_DENIED", source="ok.txt", destination=path)
        fs.fails("move_file", "PERMISSION_DENIED", source=path, destination="stolen.json")
    fs.fails("read_multiple_files", "PERMISSION_DENIED", paths=escapes)
    assert (fs.world.truth_dir / "truth.json").read_text() == '{"secret": 1}'


def test_text_output_is_capped_at_a_line_boundary(make_world) -> None:
    world, _ = make_world(["filesystem"])
    small = Server(world, {"max_output_chars": 500})
    lines = [f"row {i:03d} " + "x" * 30 for i in range(200)]
    (small.ws / "big.txt").write_text("\n".join(lines) + "\n")
    text = small.ok("read_text_file", path="big.txt")
    assert len(text) <= 500
    body, notice = text.rsplit("\n", 1)
    assert body.split("\n") == lines[: len(body.split("\n"))]
    assert notice.startswith("[output truncated: showing") and "head=N" in notice
    for i in range(150):
        (small.ws / f"file_{i:03d}.txt").touch()
    tree = small.ok("directory_tree", path=".")
    assert len(tree) <= 500
    json.loads(tree.split("\n")[0])


def test_through_an_mcp_client(fs: Server) -> None:
    async def scenario() -> tuple[set[str], str, bool]:
        async with Client(fs.runtime.app) as client:
            names = {t.name for t in await client.list_tools()}
            await client.call_tool("write_file", {"path": "hello.txt", "content": "hi there"})
            result = await client.call_tool("read_text_file", {"path": "hello.txt"})
            denied = await client.call_tool("read_text_file", {"path": "../truth/x"},
                                            raise_on_error=False)
            return names, result.content[0].text, denied.is_error

    names, text, denied = asyncio.run(scenario())
    assert names == TOOLS
    assert text == "hi there"
    assert denied


def test_paths_accept_host_path_inside_workspace(fs: Server) -> None:
    (fs.ws / "in.txt").write_text("inside")
    assert fs.ok("read_text_file", path=str(Path(fs.ws) / "in.txt")) == "inside"
