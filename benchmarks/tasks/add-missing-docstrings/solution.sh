#!/bin/bash
set -e
python3 - <<'PY'
from pathlib import Path

docs = {
    "def to_cents(amount: str) -> int:\n":
        '    """Parse an amount like "1,234.50" into integer cents, rounding half up."""\n',
    'def format_cents(cents: int, symbol: str = "$") -> str:\n':
        '    """Format cents for display, e.g. -123456 -> "-$1,234.56"."""\n',
    "def add_tax(cents: int, rate_percent: float) -> int:\n":
        '    """Return the amount plus `rate_percent` percent tax, rounded half up to whole cents."""\n',
    "def total(amounts: list[str]) -> int:\n":
        '    """Sum a list of amount strings and return the total in cents."""\n',
}
path = Path("money.py")
text = path.read_text()
for signature, doc in docs.items():
    assert signature in text, signature
    text = text.replace(signature, signature + doc)
path.write_text(text)
PY
python3 -c "import money; help(money)" | head -40
