from pager import page_count, paginate

ITEMS = list(range(1, 11))


def test_page_count():
    assert page_count(10, 3) == 4
    assert page_count(9, 3) == 3
    assert page_count(0, 3) == 0


def test_first_page():
    assert paginate(ITEMS, 1, 3) == [1, 2, 3]


def test_last_page_is_partial():
    assert paginate(ITEMS, 4, 3) == [10]
