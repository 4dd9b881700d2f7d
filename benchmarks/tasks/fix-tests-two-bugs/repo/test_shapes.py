import math

from shapes import Circle, Square, total_area


def test_circle():
    c = Circle(2)
    assert math.isclose(c.area(), 4 * math.pi)
    assert math.isclose(c.perimeter(), 4 * math.pi)


def test_square():
    s = Square(3)
    assert s.area() == 9
    assert s.perimeter() == 12


def test_total_area():
    assert math.isclose(total_area([Circle(1), Square(2)]), math.pi + 4)
