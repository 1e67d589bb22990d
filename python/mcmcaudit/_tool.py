"""Running the `audit` binary: stderr passed through (or turned into a tqdm bar),
Ctrl-C forwarded as SIGINT, failures raised as AuditError."""

from __future__ import annotations

import collections
import json
import os
import re
import signal
import subprocess
import sys
import threading
from typing import Callable, Union

from ._binary import describe, find_binary
from .errors import AuditError

# The plain progress line `audit run` writes every 10 s when stderr is not
# a terminal: "audit: 1488/2000 trials (74%), elapsed 12s, about 4s left".
_PROGRESS = re.compile(r"^audit: (\d+)/(\d+) trials\b")
# Exit codes of the tool.
EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
_EXITS = (EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED)


ProgressArg = Union[bool, Callable[[int, int], None]]
"""What audit() takes as `progress`: True, False, or a function progress(done, total)."""

# The environment variable naming the file to which the runner serving a
# Python function appends one byte per trial it has answered: the trials
# done between the tool's progress lines, which come every 10 s.
ENV_PROGRESS = "MCMCAUDIT_PY_PROGRESS"
# How often the counter file is read, in seconds.
_POLL = 0.25


def _in_notebook():
    return "ipykernel" in sys.modules


class _Progress:
    """The trials done, shown as they complete: to a function progress(done, total), a tqdm bar (when tqdm is
    installed), or one line rewritten in place on a terminal or in a notebook; else the tool's own lines.

    The count is the larger of the tool's last progress line and the
    trials the runner has answered (served()), at most the total.
    """

    def __init__(self, total, enabled):
        self.bar = None
        self.fn = None
        self.inline = False
        self.total = total or 0
        self.tool_done = 0
        self.answered = 0
        self.shown = -1
        if not enabled or not total:
            return
        if callable(enabled):
            self.fn = enabled
            return
        try:
            from tqdm.auto import tqdm
        except ImportError:
            self.inline = _in_notebook() or sys.stderr.isatty()
            return
        self.bar = tqdm(total=total, unit="trial", desc="audit", file=sys.stderr)

    def _own(self):
        return self.bar is not None or self.fn is not None or self.inline

    def line(self, text):
        """Handle one stderr line of the tool: progress updates the count, the rest is printed."""
        m = _PROGRESS.match(text)
        if m and self._own():
            self.tool_done = int(m.group(1))
            self._show()
            return
        if self.bar is not None:
            self.bar.write(text, file=sys.stderr)
            return
        if self.inline and self.shown >= 0:
            sys.stderr.write("\n")
            self.shown = -1
        sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def served(self, n):
        """The runner has answered n trials (determinism checks' re-runs included)."""
        if n > self.answered:
            self.answered = n
            self._show()

    def _show(self, n=None):
        if n is None:
            n = min(self.total, max(self.tool_done, self.answered))
        if n == self.shown:
            return
        self.shown = n
        if self.bar is not None:
            self.bar.n = n
            self.bar.refresh()
        elif self.fn is not None:
            self.fn(n, self.total)
        elif self.inline:
            sys.stderr.write("\raudit: %d/%d trials (%.0f%%)" % (n, self.total, 100.0 * n / self.total))
            sys.stderr.flush()

    def close(self, done):
        if done and self._own():
            self._show(self.total)
        if self.bar is not None:
            self.bar.close()
        elif self.inline and self.shown >= 0:
            sys.stderr.write("\n")
            sys.stderr.flush()


class _Echo:
    """The tool's stderr lines, echoed as they come, except that a line that may be its final message (it
    begins "audit COMMAND: " or "audit: ") is held until another line follows: a failure's message is then
    shown once, in the exception, not also on stderr."""

    def __init__(self, bar, command, enabled):
        self.bar = bar
        self.prefixes = ("audit %s: " % command, "audit: ")
        self.enabled = enabled
        self.held = None

    def line(self, text):
        if not self.enabled:
            return
        if _PROGRESS.match(text):
            self.bar.line(text)
            return
        if self.held is not None:
            self.bar.line(self.held)
            self.held = None
        if text.startswith(self.prefixes):
            self.held = text
        else:
            self.bar.line(text)

    def end(self, shown_elsewhere):
        """The tool has exited: the held line is printed unless the exception raised now carries it."""
        if self.held is not None and not shown_elsewhere:
            self.bar.line(self.held)
        self.held = None


def _message(lines, command, binary, code):
    """The tool's one-line error message: its last stderr line naming the command."""
    prefix = "audit %s: " % command
    for text in reversed(lines):
        if text.startswith(prefix) or text.startswith("audit: "):
            return text
    if lines:
        return lines[-1]
    return "audit %s: %s exited with status %d without a message" % (command, describe(binary), code)


def _clip(text, n=60):
    """The start of `text` for a one-line message: its first line, at most n characters, quoted."""
    first = text.strip().split("\n", 1)[0]
    return repr(first[:n] + ("..." if len(first) > n else ""))


def output_error(command, code, what):
    """AuditError (exit code 3) for a run whose output is not the tool's: `what` says what was wrong.

    The tool always writes its report when it exits 0 or 1; when it did
    not, the binary is most likely not mcmcaudit's `audit` (MCMCAUDIT_BIN
    pointing at another program), and the message says so.
    """
    return AuditError(EXIT_INTERNAL, "audit %s: %s exited with status %d but %s; is it mcmcaudit's audit binary?"
                      % (command, describe(find_binary()), code, what))


def tool_json(text, command, code, key, source="its standard output"):
    """The JSON object the tool wrote (`text`), which holds `key`; else output_error."""
    if not text.strip():
        raise output_error(command, code, "%s is empty" % source)
    try:
        doc = json.loads(text)
    except ValueError:
        raise output_error(command, code, "%s is not JSON: it begins %s" % (source, _clip(text))) from None
    if not isinstance(doc, dict) or key not in doc:
        raise output_error(command, code, "%s is not the tool's (no %r in it): it begins %s" % (source, key, _clip(text)))
    return doc


def read_output(path, command, code):
    """The text of a file the tool was asked to write; output_error when it is missing or unreadable."""
    name = os.path.basename(path)
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        raise output_error(command, code, "wrote no %s" % name) from None
    except (OSError, UnicodeDecodeError) as e:
        raise output_error(command, code, "%s could not be read (%s)" % (name, getattr(e, "strerror", None) or e)) from None


def _count_bytes(path):
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def run_tool(args, command, total=None, progress=True, echo=True, cwd=None, counter=None):
    """Run `audit ARGS...` and return (exit code, stdout text, stderr lines).

    Exit codes 0 and 1 (a refuted claim) are returned; any other raises
    AuditError with the tool's one-line message, which is then not also
    echoed. stderr is echoed to sys.stderr as it comes (when `echo`); the
    trial counts drive `progress` (see _Progress), from the tool's lines
    and from `counter`, a file to which the runner of a Python function
    appends a byte per trial (named to it by $MCMCAUDIT_PY_PROGRESS). A
    KeyboardInterrupt while the tool runs is forwarded to it as SIGINT (as
    Ctrl-C in a terminal would be); the tool stops, keeping its completed
    trials in its checkpoint, and KeyboardInterrupt is raised with the
    tool's message.
    """
    binary = find_binary()
    env = None
    if counter is not None:
        env = dict(os.environ, **{ENV_PROGRESS: counter})
    try:
        proc = subprocess.Popen([binary] + list(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=cwd, env=env, start_new_session=True)
    except OSError as e:
        # Not a program this system can start: a text file without "#!", a
        # script whose interpreter is missing, a file gone since it was found.
        why = e.strerror or str(e)
        if isinstance(e, FileNotFoundError) and os.path.exists(binary):
            why += " (its #! interpreter?)"
        raise AuditError(EXIT_USAGE, "audit %s: %s cannot be started: %s" % (command, describe(binary), why)) from None
    bar = _Progress(total, progress if echo else False)
    shown = _Echo(bar, command, echo)
    tail = collections.deque(maxlen=200)
    out = []
    lock = threading.Lock()

    def read_stderr():
        for raw in proc.stderr:
            text = raw.decode("utf-8", "replace").rstrip("\r\n")
            tail.append(text)
            with lock:
                shown.line(text)

    def read_stdout():
        out.append(proc.stdout.read())

    threads = [threading.Thread(target=read_stderr, daemon=True), threading.Thread(target=read_stdout, daemon=True)]
    for t in threads:
        t.start()
    interrupted = False
    while True:
        try:
            code = proc.wait(timeout=_POLL if counter is not None else None)
            break
        except subprocess.TimeoutExpired:
            with lock:
                bar.served(_count_bytes(counter))
        except KeyboardInterrupt:
            if interrupted:
                # A second Ctrl-C: stop waiting for a clean end.
                proc.kill()
            else:
                interrupted = True
                try:
                    proc.send_signal(signal.SIGINT)
                except ProcessLookupError:
                    pass
    for t in threads:
        t.join()
    proc.stdout.close()
    proc.stderr.close()
    ok = code in (EXIT_OK, EXIT_VIOLATION) and not interrupted
    # The message of a failure or an interruption is the exception's.
    shown.end(not ok and (interrupted or 0 <= code and code in _EXITS))
    bar.close(ok)
    lines = list(tail)
    stdout = b"".join(out).decode("utf-8", "replace")
    if interrupted:
        raise KeyboardInterrupt(_message(lines, command, binary, code))
    if ok:
        return code, stdout, lines
    if code < 0:
        raise AuditError(EXIT_INTERNAL, "audit %s: killed by signal %d" % (command, -code), "\n".join(lines[-20:]))
    if code not in _EXITS:
        raise AuditError(EXIT_INTERNAL, "audit %s: %s exited with status %d, which the audit tool never does; "
                                        "is it mcmcaudit's audit binary?" % (command, describe(binary), code),
                         "\n".join(lines[-20:]))
    raise AuditError(code, _message(lines, command, binary, code), "\n".join(lines[-20:]))
