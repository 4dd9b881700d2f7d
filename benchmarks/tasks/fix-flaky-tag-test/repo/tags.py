"""Tag helpers for the blog's sidebar."""


def normalize(tag: str) -> str:
    """Tags are compared case-insensitively and without surrounding spaces."""
    return tag.strip().lower()


def unique_tags(posts: list[dict]) -> list[str]:
    """Return every tag used in `posts`, normalized and without repeats,
    in the order in which each tag first appears."""
    seen = set()
    for post in posts:
        for tag in post.get("tags", []):
            seen.add(normalize(tag))
    return list(seen)


def tag_counts(posts: list[dict]) -> dict[str, int]:
    """How many posts use each tag."""
    counts: dict[str, int] = {}
    for post in posts:
        for tag in {normalize(t) for t in post.get("tags", [])}:
            counts[tag] = counts.get(tag, 0) + 1
    return counts
