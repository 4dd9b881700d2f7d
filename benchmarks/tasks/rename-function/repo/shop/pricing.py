"""Prices of order lines."""

Line = tuple[str, float, int]  # (product, unit price, quantity)


def calc_subtotal(lines: list[Line]) -> float:
    """Sum of unit price times quantity, before tax."""
    return round(sum(price * qty for _, price, qty in lines), 2)


def calc_total(lines: list[Line], tax_rate: float = 0.0) -> float:
    """Subtotal plus tax at `tax_rate` (0.2 for 20 %), rounded to cents."""
    return round(calc_subtotal(lines) * (1 + tax_rate), 2)
