"""Exceptions raised by the mcmcaudit package."""


class AuditError(Exception):
    """The audit tool failed: bad input (exit code 2), an internal failure (3), ...

    `exit_code` is the tool's exit status and `message` its one-line error
    message from stderr (e.g. "audit run: line 7: sampler.program.timeout:
    ..."). A refuted claim is not an error: it is a Report whose verdict is
    "VIOLATION". `stderr` holds the last lines the tool wrote on stderr.
    """

    exit_code: int
    message: str
    stderr: str

    def __init__(self, exit_code: int, message: str, stderr: str = "") -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.message = message
        self.stderr = stderr

    def __str__(self):
        return "%s (exit code %d)" % (self.message, self.exit_code)


class InputError(AuditError, ValueError):
    """An argument the package refuses before running the tool (exit code 2).

    It is an AuditError, like the tool's own refusal of bad input, and a
    ValueError, like the package's other checks of its arguments, so that
    either `except` catches it. `message` names the argument and what it
    may be, e.g. "epsilon_one_run: canaries: must be an integer in
    [1, 10000000], got 100.5".
    """

    def __init__(self, message: str) -> None:
        super().__init__(2, message)
