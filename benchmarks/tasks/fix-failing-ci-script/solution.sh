#!/bin/bash
set -e
python3 - <<'PY'
from pathlib import Path

path = Path("convert.py")
text = path.read_text()
text = text.replace("float:   \n", "float:\n")
text = text.replace("return fahrenheit - 32 * 5 / 9", "return (fahrenheit - 32) * 5 / 9")
text = text.replace(
    '    return f"{celsius:.1f} °C / {celsius_to_fahrenheit(celsius):.1f} °F, wind {kmh_to_ms(wind_kmh):.1f} m/s"'
    "  # shown on the dashboard header",
    "    # shown on the dashboard header\n"
    '    fahrenheit = celsius_to_fahrenheit(celsius)\n'
    '    return f"{celsius:.1f} °C / {fahrenheit:.1f} °F, wind {kmh_to_ms(wind_kmh):.1f} m/s"',
)
path.write_text(text)
PY
bash ci.sh
