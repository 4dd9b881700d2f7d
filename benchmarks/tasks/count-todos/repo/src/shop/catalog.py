"""Product catalogue."""

PRODUCTS = {"apple": 0.5, "bread": 2.25, "milk": 1.1}


def price(name: str) -> float:
    # TODO: raise a clear error for unknown products
    return PRODUCTS[name]


def search(prefix: str) -> list[str]:
    # TODO: make the search case-insensitive
    return sorted(p for p in PRODUCTS if p.startswith(prefix))
