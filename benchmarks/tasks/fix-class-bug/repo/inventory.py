"""Stock levels of a small warehouse."""


class Inventory:
    """Counts of items in stock."""

    def __init__(self, stock: dict[str, int] = {}) -> None:
        self._stock = stock

    def add(self, item: str, qty: int = 1) -> None:
        if qty <= 0:
            raise ValueError("quantity must be positive")
        self._stock[item] = self._stock.get(item, 0) + qty

    def remove(self, item: str, qty: int = 1) -> None:
        if qty <= 0:
            raise ValueError("quantity must be positive")
        if self._stock.get(item, 0) < qty:
            raise ValueError(f"not enough {item} in stock")
        self._stock[item] -= qty
        if self._stock[item] == 0:
            del self._stock[item]

    def count(self, item: str) -> int:
        return self._stock.get(item, 0)

    def items(self) -> list[str]:
        """Names of the items in stock, sorted."""
        return sorted(self._stock)

    def total(self) -> int:
        return sum(self._stock.values())
