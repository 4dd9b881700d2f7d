"""Split a list of items into numbered pages (page numbers start at 1)."""


def page_count(total: int, per_page: int) -> int:
    """Number of pages needed to show `total` items, `per_page` at a time."""
    if per_page <= 0:
        raise ValueError("per_page must be positive")
    return (total + per_page - 1) // per_page


def paginate(items: list, page: int, per_page: int) -> list:
    """Return the items shown on `page` (1-based); an empty list past the last page."""
    if page < 1:
        raise ValueError("page numbers start at 1")
    start = page * per_page
    return items[start : start + per_page]
