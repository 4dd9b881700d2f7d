"""Aggregate orders."""

from collections import defaultdict


def parse_amount(text: str) -> float:
    """'1,250.00' -> 1250.0"""
    return float(text.replace(",", ""))


def revenue_by_customer(orders: list[dict[str, str]]) -> dict[str, float]:
    """Total order amount per customer."""
    totals: dict[str, float] = defaultdict(float)
    for order in orders:
        totals[order["customer"]] += parse_amount(order["amount"])
    return dict(totals)
