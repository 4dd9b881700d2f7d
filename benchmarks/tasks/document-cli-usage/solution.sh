#!/bin/bash
set -e
python3 - <<'PY'
from pathlib import Path

usage = """## Usage

```
python3 csvstat.py prices.csv --column price
python3 csvstat.py data.tsv -c amount --delimiter '\\t' --skip-empty --json
```

- `file` (required): the CSV file to read; `-` reads standard input.
- `-c`, `--column NAME` (required): the column to summarise.
- `-d`, `--delimiter SEP`: field separator, `,` by default.
- `--skip-empty`: ignore rows where the column is empty (otherwise they are an error).
- `--json`: print the result as one JSON object instead of one line per statistic.

"""
path = Path("README.md")
text = path.read_text()
path.write_text(text.replace("## License", usage + "## License"))
PY
cat README.md
