"""A shopping cart."""

from .pricing import calc_total


class Cart:
    def __init__(self, tax_rate: float = 0.0) -> None:
        self.tax_rate = tax_rate
        self.lines: list[tuple[str, float, int]] = []

    def add(self, product: str, price: float, qty: int = 1) -> None:
        self.lines.append((product, price, qty))

    def total(self) -> float:
        return calc_total(self.lines, self.tax_rate)
