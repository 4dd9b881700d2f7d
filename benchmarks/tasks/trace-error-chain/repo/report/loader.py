"""Read order exports (CSV) into dicts with canonical keys."""

import csv

# Canonical names for the columns of the export, keyed by normalised header.
ALIASES = {
    "order_id": "id",
    "customer": "customer",
    "amount_eur": "amount",
    "date": "date",
}


def normalise(header: str) -> str:
    """A header as a lower-case identifier: "Amount (EUR)" -> "amount_eur"."""
    return header.strip().lower().replace(" ", "_")


def load_orders(path: str) -> list[dict[str, str]]:
    """The rows of the CSV file at `path`, keyed by canonical column names."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        orders = []
        for raw in reader:
            row = {}
            for header, value in raw.items():
                name = normalise(header)
                row[ALIASES.get(name, name)] = value.strip()
            orders.append(row)
    return orders
