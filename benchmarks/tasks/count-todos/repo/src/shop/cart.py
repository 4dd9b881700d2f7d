"""Shopping cart."""

from .catalog import price


class Cart:
    def __init__(self) -> None:
        self.lines: dict[str, int] = {}  # TODO: keep insertion order in receipts

    def add(self, name: str, qty: int = 1) -> None:
        # TODO: reject negative quantities
        self.lines[name] = self.lines.get(name, 0) + qty

    def total(self) -> float:
        todo_items = list(self.lines.items())  # lower-case "todo" here is just a name
        return round(sum(price(n) * q for n, q in todo_items), 2)
