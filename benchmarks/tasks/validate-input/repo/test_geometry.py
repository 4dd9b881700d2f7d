from geometry import Rectangle


def test_area_and_perimeter():
    r = Rectangle(2, 3.5)
    assert r.area() == 7.0
    assert r.perimeter() == 11.0


def test_scaled():
    assert Rectangle(1, 2).scaled(3).area() == 18
