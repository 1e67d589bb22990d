"""Running the `audit` binary: stderr passed through (or turned into a tqdm bar),
Ctrl-C forwarded as SIGINT, failures raised as AuditError."""

import collections
import json
import os
import re
import signal
import subprocess
import sys
import threading

from ._binary import describe, find_binary
from .errors import AuditError

# The plain progress line `audit run` writes every 10 s when stderr is not
# a terminal: "audit: 1488/2000 trials (74%), elapsed 12s, about 4s left".
_PROGRESS = re.compile(r"^audit: (\d+)/(\d+) trials\b")
# Exit codes of the tool.
EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
_EXITS = (EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED)


class _Progress:
    """A tqdm bar when tqdm is installed and progress is wanted, else nothing."""

    def __init__(self, total, enabled):
        self.bar = None
        if enabled and total:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                return
            self.bar = tqdm(total=total, unit="trial", desc="audit", file=sys.stderr)

    def line(self, text):
        """Handle one stderr line of the tool: progress updates the bar, the rest is printed."""
        m = _PROGRESS.match(text)
        if self.bar is not None and m:
            self.bar.n = int(m.group(1))
            self.bar.refresh()
            return
        if self.bar is not None:
            self.bar.write(text, file=sys.stderr)
        else:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()

    def close(self, done):
        if self.bar is not None:
            if done:
                self.bar.n = self.bar.total
                self.bar.refresh()
            self.bar.close()


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


def run_tool(args, command, total=None, progress=True, echo=True, cwd=None):
    """Run `audit ARGS...` and return (exit code, stdout text, stderr lines).

    Exit codes 0 and 1 (a refuted claim) are returned; any other raises
    AuditError with the tool's one-line message. stderr is echoed to
    sys.stderr as it comes (when `echo`), the trial-count lines driving a
    tqdm bar instead when tqdm is installed. A KeyboardInterrupt while the
    tool runs is forwarded to it as SIGINT (as Ctrl-C in a terminal would
    be); the tool stops, keeping its completed trials in its checkpoint,
    and KeyboardInterrupt is raised with the tool's message, which names
    the command that resumes.
    """
    binary = find_binary()
    try:
        proc = subprocess.Popen([binary] + list(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=cwd, start_new_session=True)
    except OSError as e:
        # Not a program this system can start: a text file without "#!", a
        # script whose interpreter is missing, a file gone since it was found.
        why = e.strerror or str(e)
        if isinstance(e, FileNotFoundError) and os.path.exists(binary):
            why += " (its #! interpreter?)"
        raise AuditError(EXIT_USAGE, "audit %s: %s cannot be started: %s" % (command, describe(binary), why)) from None
    bar = _Progress(total, progress and echo)
    tail = collections.deque(maxlen=200)
    out = []

    def read_stderr():
        for raw in proc.stderr:
            text = raw.decode("utf-8", "replace").rstrip("\r\n")
            tail.append(text)
            if echo:
                bar.line(text)

    def read_stdout():
        out.append(proc.stdout.read())

    threads = [threading.Thread(target=read_stderr, daemon=True), threading.Thread(target=read_stdout, daemon=True)]
    for t in threads:
        t.start()
    interrupted = False
    while True:
        try:
            code = proc.wait()
            break
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
    bar.close(code in (EXIT_OK, EXIT_VIOLATION))
    lines = list(tail)
    stdout = b"".join(out).decode("utf-8", "replace")
    if interrupted:
        raise KeyboardInterrupt(_message(lines, command, binary, code))
    if code in (EXIT_OK, EXIT_VIOLATION):
        return code, stdout, lines
    if code < 0:
        raise AuditError(EXIT_INTERNAL, "audit %s: killed by signal %d" % (command, -code), "\n".join(lines[-20:]))
    if code not in _EXITS:
        raise AuditError(EXIT_INTERNAL, "audit %s: %s exited with status %d, which the audit tool never does; "
                                        "is it mcmcaudit's audit binary?" % (command, describe(binary), code),
                         "\n".join(lines[-20:]))
    raise AuditError(code, _message(lines, command, binary, code), "\n".join(lines[-20:]))
