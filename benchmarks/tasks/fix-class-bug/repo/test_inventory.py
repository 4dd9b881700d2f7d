import pytest

from inventory import Inventory


def test_add_and_remove():
    inv = Inventory({"bolt": 5})
    inv.add("nut", 3)
    inv.remove("bolt", 2)
    assert inv.count("bolt") == 3
    assert inv.total() == 6


def test_remove_too_many():
    inv = Inventory({"bolt": 1})
    with pytest.raises(ValueError):
        inv.remove("bolt", 2)


def test_sold_out_items_disappear():
    inv = Inventory({"bolt": 1, "nut": 2})
    inv.remove("bolt")
    assert inv.items() == ["nut"]
