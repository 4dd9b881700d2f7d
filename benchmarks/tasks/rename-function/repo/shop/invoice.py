"""Plain-text invoices."""

from . import pricing


def render(lines: list[tuple[str, float, int]], tax_rate: float = 0.0) -> str:
    rows = [f"{qty} x {name} @ {price:.2f}" for name, price, qty in lines]
    rows.append(f"subtotal {pricing.calc_subtotal(lines):.2f}")
    rows.append(f"total {pricing.calc_total(lines, tax_rate):.2f}")
    return "\n".join(rows)
