"""The mcmcaudit/1 helper for the examples: a thin alias of `mcmcaudit.protocol`.

The helper itself lives in the `mcmcaudit` Python package, in
python/mcmcaudit/protocol.py (standard library only, self-contained). This
file makes `import mcmcaudit_protocol as mp` work for the examples without
installing anything: it loads that file from this repository, or the
installed package's copy when this file has been moved out of the
repository. Outside the repository, `pip install ./python` and
`from mcmcaudit import protocol as mp`, or copy python/mcmcaudit/protocol.py
next to your sampler as mcmcaudit_protocol.py: both work as this module does.
"""

import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_path = os.path.join(_here, os.pardir, os.pardir, "python", "mcmcaudit", "protocol.py")
if os.path.exists(_path):
    _spec = importlib.util.spec_from_file_location("_mcmcaudit_protocol_impl", _path)
    _impl = importlib.util.module_from_spec(_spec)
    sys.modules[_spec.name] = _impl
    _spec.loader.exec_module(_impl)
else:
    from mcmcaudit import protocol as _impl  # noqa: E402

globals().update({k: v for k, v in vars(_impl).items() if not (k.startswith("__") and k.endswith("__"))})
