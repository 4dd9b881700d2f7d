from tags import tag_counts, unique_tags

POSTS = [
    {"title": "Hello", "tags": ["Python", "testing"]},
    {"title": "Branches", "tags": ["git", " python "]},
    {"title": "Rebase", "tags": ["Git"]},
    {"title": "Drafts"},
]


def test_unique_tags():
    assert unique_tags(POSTS) == ["python", "testing", "git"]


def test_unique_tags_empty():
    assert unique_tags([]) == []


def test_tag_counts():
    assert tag_counts(POSTS) == {"python": 2, "testing": 1, "git": 2}
