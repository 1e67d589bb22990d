"""The program side of an audit of a Python function: imports it and serves it.

Started by the audit tool through the runner script that `mcmcaudit.audit`
writes: `main(spec_path)` claims stdout for the protocol first (so that
whatever the imports print goes to stderr), imports the function by its
module and qualified name, loads the datasets the caller passed, and calls
protocol.serve.
"""

import importlib
import importlib.util
import json
import os
import sys

from . import protocol

# As _tool.ENV_PROGRESS (not imported: the runner needs only the protocol).
ENV_PROGRESS = "MCMCAUDIT_PY_PROGRESS"

# Set while a runner serves: an audit() started from the imported module
# (a script's top-level code run again) is refused with an explanation.
ENV_SERVING = "MCMCAUDIT_PY_SERVING"
MAIN_ALIAS = "__mcmcaudit_main__"


def _resolve(ref):
    module, qualname, path = ref["module"], ref["qualname"], ref.get("file")
    if module == "__main__":
        # The caller's script, imported again under another name so that
        # its `if __name__ == "__main__":` block does not run.
        spec = importlib.util.spec_from_file_location(MAIN_ALIAS, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[MAIN_ALIAS] = mod
        spec.loader.exec_module(mod)
    else:
        mod = importlib.import_module(module)
    obj = mod
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _load(path):
    if path.endswith(".npy"):
        import numpy as np
        return np.load(path, allow_pickle=False)
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _counting(run, path):
    """`run`, appending one byte to the file `path` after each trial it answers (the caller's progress)."""
    f = open(path, "ab", buffering=0)

    def counted(*args):
        out = run(*args)
        try:
            f.write(b".")
        except OSError:
            pass
        return out

    return counted


def main(spec_path):
    """Serve the function described by the JSON file `spec_path` until stdin closes."""
    protocol._claim_stdout()
    os.environ[ENV_SERVING] = "1"
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    for p in reversed(spec["paths"]):
        if p not in sys.path:
            sys.path.insert(0, p)
    run = _resolve(spec["function"])
    load = _resolve(spec["load"]) if spec.get("load") else None
    data = None
    if spec.get("datasets"):
        data = {}
        for side, path in spec["datasets"].items():
            v = _load(path)
            data[side] = load(v) if load else v
    counter = os.environ.get(ENV_PROGRESS)
    if counter:
        run = _counting(run, counter)
    protocol.serve(run, dim=spec["dim"], releases=spec["releases"], load=load, data=data,
                   scores=bool(spec.get("scores")))
