"""Quick statistics (count, min, max, mean) for one numeric column of a CSV file."""

import argparse
import csv
import json
import statistics
import sys


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("file", help="CSV file to read ('-' for standard input)")
    parser.add_argument("-c", "--column", required=True, help="name of the column to summarise")
    parser.add_argument("-d", "--delimiter", default=",", help="field separator (default: ',')")
    parser.add_argument("--skip-empty", action="store_true", help="ignore rows where the column is empty")
    parser.add_argument("--json", action="store_true", help="print the result as a JSON object")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    handle = sys.stdin if args.file == "-" else open(args.file, newline="", encoding="utf-8")
    with handle:
        values = []
        for row in csv.DictReader(handle, delimiter=args.delimiter):
            cell = row[args.column].strip()
            if not cell and args.skip_empty:
                continue
            values.append(float(cell))
    result = {"count": len(values), "min": min(values), "max": max(values), "mean": statistics.mean(values)}
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>5}: {value:g}")


if __name__ == "__main__":
    main()
