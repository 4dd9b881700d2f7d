from shop.cart import Cart
from shop.invoice import render
from shop.pricing import calc_subtotal, calc_total

LINES = [("book", 12.5, 2), ("pen", 1.2, 5)]


def test_subtotal():
    assert calc_subtotal(LINES) == 31.0


def test_calc_total_with_tax():
    assert calc_total(LINES, 0.2) == 37.2


def test_cart_total():
    cart = Cart(tax_rate=0.1)
    cart.add("book", 12.5, 2)
    assert cart.total() == 27.5


def test_invoice():
    assert render(LINES).splitlines()[-1] == "total 31.00"
