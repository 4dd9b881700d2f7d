from shop.cart import Cart


def test_total():
    # TODO: cover discounts once they exist
    cart = Cart()
    cart.add("apple", 2)
    assert cart.total() == 1.0
