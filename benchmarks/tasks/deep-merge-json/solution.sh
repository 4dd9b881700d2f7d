#!/bin/bash
set -e
python3 - <<'PY'
import json


def merge(base, override):
    result = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merge(result[key], value)
        else:
            result[key] = value
    return result


with open("config/defaults.json") as f:
    defaults = json.load(f)
with open("config/local.json") as f:
    local = json.load(f)
with open("config/merged.json", "w") as f:
    json.dump(merge(defaults, local), f, indent=2)
    f.write("\n")
PY
cat config/merged.json
