"""Writes and reads stay inside the workspace whatever symlinks are planted there: a `.NAME.tmp`
link next to the target, a symlinked folder leading out, links to truth/ and state.sqlite, a
link out and back in, and a symlink loop. For each writing tool of each server that writes
workspace files, nothing outside changes and the answer is an error or a correct write inside."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from openpyxl import Workbook, load_workbook

from generators.pdf import write_pdf
from loca.core.world import write_bytes_atomic
from mock_servers.core.errors import ToolFailure
from mock_servers.core.files import resolve
from mock_servers.core.toolkit import Toolbox
from mock_servers.email import domain
from mock_servers.email import toolbox as email_tools
from mock_servers.email.domain import Attachment
from mock_servers.excel import toolbox as excel_tools
from mock_servers.filesystem import toolbox as fs_tools
from mock_servers.pdf_tools import toolbox as pdf_tools
from mock_servers.terminal import toolbox as terminal_tools
from tests.harness import ServerHarness, table_rows
from tests.sandboxing import new_world, open_folder

pytestmark = pytest.mark.sandbox  # runs code in the sandbox

Args = Callable[[str], dict[str, Any]]
# (server, tool, file suffix, arguments for a target path, check of a correct write)
WRITERS: list[tuple[Toolbox, str, str, Args]] = [
    (fs_tools, "write_file", ".txt", lambda p: {"path": p, "content": "new text"}),
    (fs_tools, "edit_file", ".txt",
     lambda p: {"path": p, "edits": [{"oldText": "old", "newText": "new"}]}),
    (fs_tools, "move_file", ".txt", lambda p: {"source": "source.txt", "destination": p}),
    (fs_tools, "create_directory", "", lambda p: {"path": p}),
    (excel_tools, "create_workbook", ".xlsx", lambda p: {"filepath": p}),
    (excel_tools, "write_data_to_excel", ".xlsx",
     lambda p: {"filepath": p, "sheet_name": "Sheet1", "data": [["new"]]}),
    (email_tools, "export_emails", ".json", lambda p: {"export_path": p}),
    (email_tools, "download_attachment", ".pdf",
     lambda p: {"email_id": "1", "attachment_filename": "plan.pdf", "save_path": p}),
    (pdf_tools, "merge_pdfs", ".pdf",
     lambda p: {"pdf_paths": ["a.pdf", "a.pdf"], "output_path": p}),
    (pdf_tools, "extract_pdf_pages", ".pdf",
     lambda p: {"source_path": "a.pdf", "page_numbers": [1], "output_path": p}),
]
IDS = [tool for _, tool, _, _ in WRITERS]
EXISTING = {"edit_file", "write_data_to_excel"}  # tools that change a file already there


class Setup:
    """A world every writing server can work in, with a folder outside its workspace."""

    def __init__(self, make_world: Any) -> None:
        self.world, db = make_world(["filesystem", "excel", "email", "pdf_tools"])
        self.ws = self.world.workspace
        self.outside = self.world.root / "outside"
        self.outside.mkdir()
        (self.outside / "victim").write_text("original")
        (self.world.truth_dir / "truth.json").write_text('{"secret": 1}')
        (self.ws / "source.txt").write_text("old text")
        write_pdf(self.ws / "a.pdf", [["page one"]], title="A", author="B",
                  moment=datetime(2025, 1, 1, tzinfo=UTC))
        with db.write() as s:
            me = domain.add_account(s, address="me@uni.edu", name="Me", password="pw",
                                    salt="salt", created_at="2024-09-01T08:00:00Z")
            domain.log_in(s, me.id)
            domain.deliver(s, sender="bob@uni.edu", sender_name="Bob", to="me@uni.edu",
                           subject="Plan", body="attached", date="2025-01-10T09:00:00Z",
                           attachments=[Attachment("plan.pdf", "application/pdf", b"%PDF-1.4")])

    def call(self, server: Toolbox, tool: str, args: dict[str, Any]) -> tuple[str, bool]:
        return ServerHarness(server, self.world).call(tool, **args)

    def prepare(self, tool: str, name: str) -> None:
        """The file a tool that edits needs, inside."""
        if tool == "edit_file":
            (self.ws / name).write_text("old text")
        elif tool == "write_data_to_excel":
            wb = Workbook()
            wb.active.title = "Sheet1"
            wb.save(self.ws / name)

    def outside_state(self) -> dict[str, Any]:
        """What lies outside the workspace: files by content, and the state's rows."""
        files = {str(p.relative_to(self.world.root)): hashlib.sha256(p.read_bytes()).hexdigest()
                 for folder in (self.outside, self.world.truth_dir) for p in folder.rglob("*")
                 if p.is_file() and not p.is_symlink()}
        return {"files": files, "rows": table_rows(self.world.state_path)}


@pytest.fixture
def setup(make_world: Any) -> Setup:
    return Setup(make_world)


def _written_correctly(tool: str, target: Path) -> None:
    if tool == "create_directory":
        assert target.is_dir()
    elif tool in ("write_file", "edit_file"):
        assert target.read_text() == "new text"
    elif tool == "move_file":
        assert target.read_text() == "old text"
    elif tool in ("create_workbook", "write_data_to_excel"):
        load_workbook(target)
    elif tool == "export_emails":
        assert json.loads(target.read_text())
    else:
        assert target.read_bytes().startswith(b"%PDF")


@pytest.mark.parametrize(("server", "tool", "suffix", "args"), WRITERS, ids=IDS)
def test_a_planted_temporary_symlink_is_never_followed(setup: Setup, server: Toolbox, tool: str,
                                                       suffix: str, args: Args) -> None:
    name = f"target{suffix}"
    setup.prepare(tool, name)
    planted = setup.ws / f".{name}.tmp"
    planted.symlink_to(setup.outside / "victim")
    before = setup.outside_state()["files"]
    text, error = setup.call(server, tool, args(name))
    assert not error, text
    assert setup.outside_state()["files"] == before
    assert planted.is_symlink() and (setup.outside / "victim").read_text() == "original"
    _written_correctly(tool, setup.ws / name)
    assert sorted(p.name for p in setup.ws.iterdir() if p.name.startswith(".")) == [planted.name]


def _links(setup: Setup) -> dict[str, str]:
    """Planted links and, for each, the code a path through it gets."""
    ws = setup.ws
    (ws / "linked").symlink_to(setup.outside, target_is_directory=True)
    (ws / "truth").symlink_to(setup.world.truth_dir, target_is_directory=True)
    (ws / "root").symlink_to(setup.world.root, target_is_directory=True)
    (setup.outside / "back").symlink_to(ws, target_is_directory=True)
    (ws / "loop").symlink_to(ws / "loop2")
    (ws / "loop2").symlink_to(ws / "loop")
    return {"linked/{}": "PERMISSION_DENIED", "truth/{}": "PERMISSION_DENIED",
            "root/{}": "PERMISSION_DENIED", "linked/back/{}": "PERMISSION_DENIED",
            "/workspace/linked/back/{}": "PERMISSION_DENIED", "loop/{}": "INVALID_ARGUMENT",
            "loop": "INVALID_ARGUMENT"}


@pytest.mark.parametrize(("server", "tool", "suffix", "args"), WRITERS, ids=IDS)
def test_paths_through_symlinks_leading_out_are_refused(setup: Setup, server: Toolbox,
                                                        tool: str, suffix: str,
                                                        args: Args) -> None:
    name = f"target{suffix}"
    setup.prepare(tool, name)
    if tool in EXISTING:  # the file to change lies outside, reachable through the links
        setup.prepare(tool, f"../outside/{name}")
        setup.prepare(tool, f"../truth/{name}")
    cases = _links(setup)
    state_link = setup.ws / f"state{suffix}"
    state_link.symlink_to(setup.world.state_path)
    cases[f"state{suffix}"] = "PERMISSION_DENIED"
    before = setup.outside_state()  # the state's rows too: the link to it changes nothing
    for pattern, code in cases.items():
        path = pattern.format(name)
        text, error = setup.call(server, tool, args(path))
        assert error and text.startswith(f"Error [{code}]: {tool}: "), (path, text)
        assert setup.outside_state() == before, path


READERS: list[tuple[Toolbox, str, Callable[[str], dict[str, Any]]]] = [
    (fs_tools, "read_text_file", lambda p: {"path": p}),
    (fs_tools, "get_file_info", lambda p: {"path": p}),
    (fs_tools, "list_directory", lambda p: {"path": p.rsplit("/", 1)[0]}),
    (excel_tools, "get_workbook_metadata", lambda p: {"filepath": p}),
    (pdf_tools, "get_pdf_info", lambda p: {"pdf_file_path": p}),
    (email_tools, "import_emails", lambda p: {"import_path": p}),
    (email_tools, "send_email", lambda p: {"to": "bob@uni.edu", "subject": "s", "body": "b",
                                           "attachments": [p]}),
]


@pytest.mark.parametrize(("server", "tool", "args"), READERS, ids=[r[1] for r in READERS])
def test_reads_through_symlinks_leading_out_are_refused(setup: Setup, server: Toolbox,
                                                        tool: str, args: Args) -> None:
    for name in ("secret.txt", "secret.xlsx", "secret.pdf", "secret.json"):
        (setup.outside / name).write_text("{}")
    (setup.ws / "secret.txt").symlink_to(setup.outside / "secret.txt")
    for pattern, code in _links(setup).items():
        for name in ("secret.txt", "secret.xlsx", "secret.pdf", "secret.json", "truth.json"):
            path = pattern.format(name)
            text, error = setup.call(server, tool, args(path))
            assert error and text.startswith(f"Error [{code}]: {tool}: "), (path, text)
    text, error = setup.call(server, tool, args("secret.txt"))
    assert error and "Error [PERMISSION_DENIED]" in text, text


def test_symlinks_that_stay_inside_are_followed(setup: Setup) -> None:
    (setup.ws / "docs").mkdir()
    (setup.ws / "docs" / "note.txt").write_text("inside")
    (setup.ws / "alias").symlink_to(setup.ws / "docs", target_is_directory=True)
    (setup.ws / "dangling.txt").symlink_to(setup.ws / "docs" / "later.txt")
    assert resolve(setup.world, "alias/note.txt") == (setup.ws / "docs" / "note.txt").resolve()
    text, error = setup.call(fs_tools, "write_file", {"path": "dangling.txt", "content": "x"})
    assert not error, text
    assert (setup.ws / "docs" / "later.txt").read_text() == "x"
    assert (setup.ws / "dangling.txt").is_symlink()


def test_a_symlink_loop_is_an_argument_error(setup: Setup) -> None:
    _links(setup)
    for path in ("loop", "loop/x.txt", "/workspace/loop/x.txt"):
        with pytest.raises(ToolFailure) as failure:
            resolve(setup.world, path)
        assert failure.value.code.value == "INVALID_ARGUMENT"
        assert "symlink loop" in failure.value.message


def test_the_atomic_writer_makes_a_new_file_and_cleans_up(tmp_path: Path) -> None:
    target = tmp_path / "data.bin"
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    (tmp_path / ".data.bin.tmp").symlink_to(victim)
    write_bytes_atomic(target, b"one")
    write_bytes_atomic(target, b"two")
    assert target.read_bytes() == b"two" and victim.read_bytes() == b"keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".data.bin.tmp", "data.bin", "victim"]
    with pytest.raises(TypeError):
        write_bytes_atomic(target, None)  # type: ignore[arg-type]
    assert target.read_bytes() == b"two"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".data.bin.tmp", "data.bin", "victim"]


def test_terminal_redirections_through_symlinks_leading_out_are_refused() -> None:
    for folder in open_folder():
        world = new_world(folder)
        outside = world.root / "outside"
        outside.mkdir()
        (outside / "secret.txt").write_text("secret")
        ws = world.workspace
        (ws / "linked").symlink_to(outside, target_is_directory=True)
        (ws / "loop").symlink_to(ws / "loop2")
        (ws / "loop2").symlink_to(ws / "loop")
        shell = ServerHarness(terminal_tools, world)
        shell.fails("run_command", "PERMISSION_DENIED", command="echo hi > linked/new.txt")
        shell.fails("run_command", "PERMISSION_DENIED", command="echo hi >> linked/secret.txt")
        shell.fails("run_command", "PERMISSION_DENIED", command="cat < linked/secret.txt")
        shell.fails("run_command", "INVALID_ARGUMENT", command="echo hi > loop/x.txt")
        assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
        assert (outside / "secret.txt").read_text() == "secret"
