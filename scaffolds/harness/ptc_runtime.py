"""Runtime of `code_execution`, run as the sandboxed script (standard library only).

argv: the request fd (written here), the answer fd (read here), the code file, the file naming
the callable tools. The code runs as `__main__` with `tools`, `WORKSPACE` and `ToolCallError`
defined; `tools.<name>(**kw)` sends one JSON line and blocks until the harness answers it. At
the end one `done` line carries `result` (JSON, else its repr; capped) and the error, if any.
"""

import json
import linecache
import os
import sys
import traceback

CODE_NAME = "<code>"
RESULT_CHARS = 20_000
TRACEBACK_CHARS = 5_000


class ToolCallError(Exception):
    """A tool call that returned an error result."""

    def __init__(self, code, message, text):
        super().__init__(f"[{code}] {message}")
        self.code = code
        self.message = message
        self.text = text


class _Channel:
    def __init__(self, out_fd, in_fd):
        self._out = os.fdopen(out_fd, "wb", buffering=0)
        self._in = os.fdopen(in_fd, "rb")

    def send(self, message):
        self._out.write((json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8"))

    def ask(self, name, arguments):
        self.send({"op": "call", "name": name, "arguments": arguments})
        line = self._in.readline()
        if not line:
            raise RuntimeError("the harness closed the tool channel")
        return json.loads(line)


class Tools:
    """`tools.<name>(**kw)`, `tools.call(name, **kw)`, `tools.list()`."""

    def __init__(self, channel, names):
        self._channel = channel
        self._names = tuple(names)

    def call(self, name, **arguments):
        reply = self._channel.ask(name, arguments)
        if reply.get("is_error"):
            raise ToolCallError(reply.get("code"), reply.get("message"), reply.get("text"))
        return reply["text"] if reply.get("data") is None else reply["data"]

    def list(self):
        return list(self._names)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda **arguments: self.call(name, **arguments)

    def __dir__(self):
        return [*self._names, "call", "list"]


def _capped(text, limit):
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n…[{len(text) - 2 * half} characters omitted]…\n{text[-half:]}"


def _result(namespace):
    if "result" not in namespace:
        return None
    value = namespace["result"]
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return _capped(repr(value), RESULT_CHARS)
    return value if len(text) <= RESULT_CHARS else _capped(text, RESULT_CHARS)


def _error(exc):
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != CODE_NAME:
        tb = tb.tb_next
    lines = traceback.format_exception(type(exc), exc, tb)
    return {"type": type(exc).__name__, "message": str(exc),
            "traceback": _capped("".join(lines), TRACEBACK_CHARS)}


def main():
    request_fd, answer_fd, code_path, tools_path = sys.argv[1:5]
    channel = _Channel(int(request_fd), int(answer_fd))
    with open(tools_path, encoding="utf-8") as handle:
        names = json.load(handle)
    with open(code_path, encoding="utf-8") as handle:
        source = handle.read()
    linecache.cache[CODE_NAME] = (len(source), None, source.splitlines(True), CODE_NAME)
    namespace = {"__name__": "__main__", "__builtins__": __builtins__,
                 "tools": Tools(channel, names), "ToolCallError": ToolCallError,
                 "WORKSPACE": os.environ.get("WORKSPACE", os.getcwd())}
    error = None
    try:
        exec(compile(source, CODE_NAME, "exec"), namespace)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            error = _error(exc)
    except BaseException as exc:
        error = _error(exc)
    sys.stdout.flush()
    sys.stderr.flush()
    channel.send({"op": "done", "result": _result(namespace), "error": error})


if __name__ == "__main__":
    main()
