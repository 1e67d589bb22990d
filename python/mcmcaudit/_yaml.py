"""A small YAML writer for scenarios: block mappings, scalars written as JSON (which YAML reads)."""

import json
import math


def _scalar(v):
    if isinstance(v, float) and not math.isfinite(v):
        raise ValueError("scenario values must be finite, got %r" % v)
    return json.dumps(v, ensure_ascii=False, allow_nan=False)


def _flat(v):
    return not isinstance(v, (dict, list, tuple)) or (
        isinstance(v, (list, tuple)) and all(not isinstance(x, (dict, list, tuple)) for x in v))


def dump(obj, indent=0):
    """`obj` (dicts, lists, str, numbers, bools, None) as YAML text."""
    pad = "  " * indent
    lines = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            key = _scalar(str(k)) if not str(k).replace("_", "").isalnum() else str(k)
            if isinstance(v, dict) and v:
                lines.append("%s%s:" % (pad, key))
                lines.append(dump(v, indent + 1))
            elif isinstance(v, (list, tuple)) and not _flat(v):
                lines.append("%s%s:" % (pad, key))
                lines.append(dump(list(v), indent + 1))
            else:
                lines.append("%s%s: %s" % (pad, key, _inline(v)))
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            if isinstance(v, dict) and v:
                body = dump(v, indent + 1).lstrip()
                lines.append("%s- %s" % (pad, body))
            else:
                lines.append("%s- %s" % (pad, _inline(v)))
    else:
        lines.append(pad + _inline(obj))
    return "\n".join(lines)


def _inline(v):
    if isinstance(v, dict):
        return "{" + ", ".join("%s: %s" % (_scalar(str(k)), _inline(x)) for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_inline(x) for x in v) + "]"
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        v = v.item()  # NumPy scalars
    return _scalar(v)
