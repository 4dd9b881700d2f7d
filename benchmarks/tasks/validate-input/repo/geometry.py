"""Plane shapes."""


class Rectangle:
    """An axis-aligned rectangle."""

    def __init__(self, width: float, height: float) -> None:
        self.width = width
        self.height = height

    def area(self) -> float:
        return self.width * self.height

    def perimeter(self) -> float:
        return 2 * (self.width + self.height)

    def scaled(self, factor: float) -> "Rectangle":
        return Rectangle(self.width * factor, self.height * factor)

    def __repr__(self) -> str:
        return f"Rectangle({self.width!r}, {self.height!r})"
