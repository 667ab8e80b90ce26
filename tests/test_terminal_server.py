"""The terminal server: POSIX word splitting, our own pipeline and redirection executor, the
allow-list and rejected forms, globs and paths confined to the workspace, timeouts and the
output format, in both confined sandbox modes; the programs it allows run confined."""

from __future__ import annotations

import asyncio
import shutil

import pytest
from fastmcp import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loca.core.world import World
from mock_servers import SERVERS, load_toolbox
from mock_servers.core.errors import Code, ToolFailure
from mock_servers.terminal import rules, toolbox
from mock_servers.terminal.parse import Op, Word, parse, tokenize
from mock_servers.terminal.rules import validate
from tests.harness import ServerHarness
from tests.sandboxing import MODES, config_for, new_world, open_folder, require
from tests.schemas import violations

pytestmark = pytest.mark.sandbox  # runs code in the sandbox


class Shell(ServerHarness):
    def run(self, command: str) -> str:
        return self.ok_text("run_command", command=command)

    def refused(self, command: str, code: str = "INVALID_ARGUMENT") -> str:
        return self.fails("run_command", code, command=command)


@pytest.fixture(params=MODES)
def mode(request) -> str:
    require(request.param)
    return request.param


@pytest.fixture
def world():
    for folder in open_folder():
        world = new_world(folder)
        (world.workspace / "data").mkdir()
        (world.workspace / "data" / "b.csv").write_text("pear,2\napple,5\npear,1\n")
        (world.workspace / "data" / "a.csv").write_text("fig,3\n")
        (world.workspace / "notes.txt").write_text("alpha\nbeta\ngamma\n")
        yield world


@pytest.fixture
def sh(world: World, mode: str) -> Shell:
    return Shell(toolbox, world, config_for(mode))


def test_registered_with_clean_schemas(world: World) -> None:
    assert SERVERS["terminal"] == "mock_servers.terminal" and load_toolbox("terminal") is toolbox
    tools = Shell(toolbox, world).runtime.tools
    assert set(tools) == {"run_command", "show_security_rules"}
    assert tools["run_command"].tags == {"write", "terminal", "core"}
    assert tools["show_security_rules"].tags == {"read", "terminal"}
    command = tools["run_command"].parameters["properties"]["command"]
    assert command["maxLength"] == 2048 and command["description"]
    for tool in tools.values():
        assert len(tool.description or "") <= 1024 and not violations(tool.parameters)
        assert tool.parameters["additionalProperties"] is False


# ---- word splitting -------------------------------------------------------------------------

@pytest.mark.parametrize(("line", "tokens"), [
    ("ls  -la\tdata", ["ls", "-la", "data"]),
    ("echo 'a  b' \"c  d\" e\\ f", ["echo", "a  b", "c  d", "e f"]),
    ("echo 'it'\\''s' \"say \\\"hi\\\"\"", ["echo", "it's", 'say "hi"']),
    ("echo '$HOME' cost$ \"$\"", ["echo", "$HOME", "cost$", "$"]),
    ("grep x data|wc -l", ["grep", "x", "data", Op("|"), "wc", "-l"]),
    ("cat a 2>err.txt >>out.txt 2>&1 <in", ["cat", "a", Op("2>"), "err.txt", Op(">>"), "out.txt",
                                           Op("2>&1"), Op("<"), "in"]),
    ("echo a2>f '2'>g", ["echo", "a2", Op(">"), "f", "2", Op(">"), "g"]),
    ("ls # a comment", ["ls"]),
    ("ls\npwd", ["ls", Op(";"), "pwd"]),
])
def test_posix_word_splitting(line: str, tokens: list) -> None:
    assert [t.text if isinstance(t, Word) else t for t in tokenize(line)] == tokens


def test_globs_remember_what_was_quoted() -> None:
    words = [t for t in tokenize("ls *.csv '*.csv' \\*.csv d?t[ab]'*'") if isinstance(t, Word)]
    assert [w.pattern for w in words] == [None, "*.csv", None, None, "d?t[ab][*]"]


def test_connectors_group_pipelines() -> None:
    pipelines = parse("a | b && c || d; e")
    assert [(p.connector, [c.words[0].text for c in p.commands]) for p in pipelines] == \
        [(";", ["a", "b"]), ("&&", ["c"]), ("||", ["d"]), (";", ["e"])]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=" \t\n'\"\\$`|&;<>()*?[]{}#=~/.-_2>1abcls", max_size=40))
def test_any_line_parses_or_is_refused_readably(world: World, line: str) -> None:
    try:
        validate(world, parse(line))
    except ToolFailure as failure:
        assert failure.code != Code.INTERNAL and failure.message


# ---- rejected forms -------------------------------------------------------------------------

@pytest.mark.parametrize(("line", "message"), [
    ("echo $HOME", "variable expansion ($HOME)"),
    ('echo "${PATH}"', "variable expansion (${PATH})"),
    ("echo $(whoami)", "command substitution $(...)"),
    ("echo `whoami`", "backticks"),
    ('echo "`whoami`"', "backticks"),
    ("sleep 5 &", "background jobs (&)"),
    ("ls &> out", "redirection '&>'"),
    ("ls >&2", "redirection '>&'"),
    ("cat <<EOF", "here-documents"),
    ("diff <(ls) x", "process substitution"),
    ("(ls)", "subshells"),
    ("echo 'open", "unterminated single quote"),
    ('echo "open', "unterminated double quote"),
    ("ls |", "missing after '|'"),
    ("| ls", "missing before '|'"),
    ("ls &&", "missing after '&&'"),
    ("ls ;; pwd", "missing before ';'"),
    ("cat >", "needs a file name"),
    ("   ", "the command is empty"),
    ("ls\x00", "NUL character"),
])
def test_rejected_syntax(world: World, line: str, message: str) -> None:
    assert message in Shell(toolbox, world).refused(line)


@pytest.mark.parametrize(("line", "named"), [
    ("curl http://example.com", "'curl'"), ("sudo ls", "'sudo'"), ("xargs rm", "'xargs'"),
    ("bash -c ls", "'bash'"), ("sh -c ls", "'sh'"), ("/bin/ls", "'/bin/ls'"),
    ("ls | wget x", "'wget'"), ("ls && apt-get install x", "'apt-get'"), ("X=1 ls", "'X=1'"),
    ("find . -name x -exec rm {} ;", "'find -exec'"), ("find . -execdir ls ;", "'find -execdir'"),
    ("find . -ok rm ;", "'find -ok'"),
])
def test_disallowed_programs_and_flags_are_named(world: World, line: str, named: str) -> None:
    text = Shell(toolbox, world).refused(line, "PERMISSION_DENIED")
    assert named in text


def test_cd_gets_a_hint(world: World) -> None:
    text = Shell(toolbox, world).refused("cd data", "PERMISSION_DENIED")
    assert "Hint: commands run in /workspace" in text


@pytest.mark.parametrize("line", [
    "cat /etc/passwd", "ls /", "cat ../truth/answer.txt", "cat data/../../state.sqlite",
    "ls > /tmp/out.txt", "sort < ../truth/answer.txt", "echo x 2> ../log", "cp notes.txt /root/",
    "tar -C / -cf x.tar .", "grep --file=/etc/passwd x notes.txt",
])
def test_paths_outside_the_workspace_are_refused(world: World, line: str) -> None:
    text = Shell(toolbox, world).refused(line, "PERMISSION_DENIED")
    assert "outside the workspace /workspace" in text


def test_nothing_runs_when_a_later_command_is_refused(sh: Shell, world: World) -> None:
    sh.refused("mkdir made && curl x", "PERMISSION_DENIED")
    assert not (world.workspace / "made").exists()


def test_a_symlink_cannot_carry_a_redirection_out(sh: Shell, world: World) -> None:
    (world.workspace / "out").symlink_to(world.truth_dir)
    sh.refused("echo x > out/planted.txt", "PERMISSION_DENIED")
    assert not (world.truth_dir / "planted.txt").exists()


# ---- running --------------------------------------------------------------------------------

def test_output_format(sh: Shell) -> None:
    assert sh.run("cat notes.txt") == "alpha\nbeta\ngamma\nexit code: 0"
    assert sh.run("printf 'no newline'") == "no newline\nexit code: 0"
    assert sh.run("ls missing") == \
        "--- stderr ---\nls: cannot access 'missing': No such file or directory\nexit code: 2"
    assert sh.run("mkdir -p quiet") == "exit code: 0"


def test_pipelines(sh: Shell) -> None:
    assert sh.run("cut -d, -f1 data/b.csv | sort | uniq -c | sort -rn | head -1") == "      2 pear\nexit code: 0"
    assert sh.run("cat data/b.csv | grep pear | wc -l") == "2\nexit code: 0"
    assert sh.run("grep -c . notes.txt data/a.csv | rev") == "3:txt.seton\n1:vsc.a/atad\nexit code: 0"


def test_connectors_follow_exit_status(sh: Shell) -> None:
    assert sh.run("ls missing 2>/dev/null && echo yes || echo no") == "no\nexit code: 0"
    assert sh.run("ls notes.txt && echo yes || echo no") == "notes.txt\nyes\nexit code: 0"
    assert sh.run("ls missing 2>/dev/null; echo next") == "next\nexit code: 0"
    assert sh.run("echo one; ls missing 2>/dev/null") == "one\nexit code: 2"
    assert sh.run("grep zebra notes.txt | wc -l") == "0\nexit code: 0"  # last stage's status


def test_redirections(sh: Shell, world: World) -> None:
    assert sh.run("sort data/b.csv > sorted.csv") == "exit code: 0"
    assert (world.workspace / "sorted.csv").read_text() == "apple,5\npear,1\npear,2\n"
    sh.run("echo more >> sorted.csv")
    assert (world.workspace / "sorted.csv").read_text().endswith("pear,2\nmore\n")
    assert sh.run("tr a-z A-Z < notes.txt") == "ALPHA\nBETA\nGAMMA\nexit code: 0"
    assert sh.run("ls missing 2> err.txt") == "exit code: 2"
    assert "missing" in (world.workspace / "err.txt").read_text()
    assert sh.run("ls missing notes.txt > both.txt 2>&1") == "exit code: 2"
    assert (world.workspace / "both.txt").read_text().count("\n") == 2
    assert sh.run("ls missing 2>&1 > only-out.txt").startswith("ls: cannot access 'missing'")
    assert sh.run("echo a > nowhere/x.txt") == \
        "--- stderr ---\necho: nowhere/x.txt: No such file or directory\nexit code: 1"
    assert sh.run("cat < absent.txt || echo recovered") == \
        "recovered\n--- stderr ---\ncat: absent.txt: No such file or directory\nexit code: 0"


def test_files_made_by_redirection_stay_writable_by_later_commands(sh: Shell, world: World) -> None:
    sh.run("echo first > log.txt && python -c \"open('log.txt', 'a').write('second\\n')\"")
    assert (world.workspace / "log.txt").read_text() == "first\nsecond\n"


def test_globs(sh: Shell) -> None:
    assert sh.run("ls data/*.csv") == "data/a.csv\ndata/b.csv\nexit code: 0"
    assert sh.run("echo /workspace/data/?.csv") == "/workspace/data/a.csv /workspace/data/b.csv\nexit code: 0"
    assert sh.run("echo *.none '*.csv'") == "*.none *.csv\nexit code: 0"
    assert sh.run("wc -l data/[a]*") == "1 data/a.csv\nexit code: 0"


def test_absolute_workspace_paths(sh: Shell) -> None:
    assert sh.run("cat /workspace/data/a.csv") == "fig,3\nexit code: 0"
    assert sh.run("pwd") == "/workspace\nexit code: 0"
    assert sh.run("ls /workspace") == "data\nnotes.txt\nexit code: 0"


def test_zip_folder_workflow(sh: Shell, world: World) -> None:
    if shutil.which("zip") is None or shutil.which("unzip") is None:
        pytest.skip("zip and unzip are not installed (Debian packages zip, unzip)")
    sh.run("mkdir -p submission/docs && cp notes.txt submission/docs/ && mv submission/docs/notes.txt "
           "submission/docs/cv.txt")
    assert sh.run("zip -r -q submission.zip submission") == "exit code: 0"
    listing = sh.run("unzip -Z1 submission.zip")
    assert listing == "submission/\nsubmission/docs/\nsubmission/docs/cv.txt\nexit code: 0"
    assert (world.workspace / "submission.zip").stat().st_size > 100


def test_python_runs_in_the_workspace(sh: Shell) -> None:
    line = "python3 -c \"import os, sys; print(os.getcwd(), sys.flags.no_user_site, hash('a'))\""
    out = sh.run(line)
    assert out.startswith("/workspace 1 ") and out == sh.run(line)  # a fixed hash seed
    assert sh.run("python -c 'import sys; sys.exit(4)'") == "exit code: 4"


def test_missing_program_is_a_clear_error(world: World, monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(rules, "SYSTEM_PATH", str(tmp_path))
    text = Shell(toolbox, world).refused("zip -r out.zip data", "NOT_FOUND")
    assert "command 'zip' is allowed but not installed" in text


def test_timeout_is_deadline_exceeded_with_partial_output(world: World, mode: str) -> None:
    shell = Shell(toolbox, world, config_for(mode) | {"terminal_timeout_s": 1})
    text = shell.refused("echo first; python -c \"import time; print('started', flush=True); "
                         "time.sleep(30)\"; echo never", "DEADLINE_EXCEEDED")
    assert "did not finish within 1 s" in text and "first\nstarted" in text and "never" not in text


def test_bad_timeout_setting_is_reported(world: World) -> None:
    shell = Shell(toolbox, world, {"terminal_timeout_s": 900})
    assert "terminal_timeout_s must be an integer from 1 to 300" in shell.refused("ls", "FAILED_PRECONDITION")


def test_output_cap_keeps_head_and_tail(sh: Shell) -> None:
    text = sh.run("python -c \"print('x' * 50000)\"")
    assert text.startswith("x" * 10000 + "\n…[30001 characters omitted]…\n")
    assert text.endswith("x\nexit code: 0")


def test_command_length_is_bounded(world: World) -> None:
    text = Shell(toolbox, world).refused("echo " + "a" * 2050)
    assert "2048" in text


def test_allowed_programs_cannot_read_outside_the_workspace(sh: Shell, world: World) -> None:
    """Paths built inside a program's own text are beyond the server's path checks: the
    confinement stops them."""
    (world.truth_dir / "truth.json").write_text('{"secret": "answer-key"}')
    lines = ["awk 'BEGIN{f=\"..\" \"/truth/truth.json\"; while((getline l < f)>0) print l}'",
             f"awk 'BEGIN{{f=\"{world.truth_dir}\" \"/truth.json\"; while((getline l < f)>0) print l}}'",
             "python3 -c \"print(open('..' + '/truth/truth.json').read())\"",
             "awk 'BEGIN{while((getline l < \"/etc/shadow\")>0) print l}'",
             f"python3 -c \"print(open('{world.state_path}', 'rb').read(16))\""]
    for line in lines:
        out = sh.run(line)
        assert "answer-key" not in out and "SQLite" not in out and "root:" not in out, (line, out)


def test_writing_past_the_disk_budget_is_an_error(world: World, mode: str) -> None:
    shell = Shell(toolbox, world, config_for(mode) | {"sandbox_call_disk_mib": 1})
    text = shell.refused("python3 -c \"open('a.bin', 'wb').write(b'x' * 700000)\"; "
                         "python3 -c \"open('b.bin', 'wb').write(b'x' * 700000)\"", "RESOURCE_EXHAUSTED")
    assert "the call wrote more than 1 MiB" in text
    assert not (world.workspace / "a.bin").exists() and not (world.workspace / "b.bin").exists()


def test_same_command_same_output(sh: Shell) -> None:
    line = "sort data/b.csv | uniq; ls -R data; wc -c notes.txt"
    assert sh.run(line) == sh.run(line)


def test_security_rules(sh: Shell, mode: str) -> None:
    text = sh.ok_text("show_security_rules")
    assert "Allowed commands: ls cat head" in text and "curl" not in text
    assert "Blocked flags: find -exec, -execdir, -ok, -okdir" in text
    assert "timeout 60 s; memory 2048 MiB; CPU 61 s" in text and "processes 256" in text
    assert "disk added: 256 MiB per call, 1024 MiB per episode" in text
    assert f"Sandbox: {mode} (" in text


def test_through_an_mcp_client(world: World) -> None:
    runtime = Shell(toolbox, world).runtime

    async def scenario() -> tuple[str, bool]:
        async with Client(runtime.app) as client:
            result = await client.call_tool("run_command", {"command": "wc -l notes.txt"})
            bad = await client.call_tool("run_command", {"command": "curl x"}, raise_on_error=False)
            return result.content[0].text, bad.is_error

    assert asyncio.run(scenario()) == ("3 notes.txt\nexit code: 0", True)


def _one_page_pdf(text: str) -> bytes:
    """A minimal valid PDF with one line of text (offsets computed, no PDF library needed)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_pdftotext(sh: Shell, world: World) -> None:
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext is not installed (Debian package poppler-utils)")
    (world.workspace / "letter.pdf").write_bytes(_one_page_pdf("Dear committee"))
    assert sh.run("pdftotext letter.pdf - | head -1") == "Dear committee\nexit code: 0"

