"""Simple shapes with area and perimeter."""

import math


class Circle:
    def __init__(self, radius: float) -> None:
        self.radius = radius

    def area(self) -> float:
        return math.pi * self.radius * 2

    def perimeter(self) -> float:
        return 2 * math.pi * self.radius


class Square:
    def __init__(self, side: float) -> None:
        self.side = side

    def area(self) -> float:
        return self.side**2

    def perimeter(self) -> float
        return 4 * self.side


def total_area(shapes: list) -> float:
    return sum(shape.area() for shape in shapes)
