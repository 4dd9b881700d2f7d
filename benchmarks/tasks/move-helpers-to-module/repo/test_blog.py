from blog import index_lines
from feed import feed_items
from utils import slugify, truncate


def test_slugify():
    assert slugify("Git: rebase vs. merge") == "git-rebase-vs-merge"


def test_truncate():
    assert truncate("short") == "short"
    assert truncate("a" * 100, 10) == "aaaaaaa..."


def test_index_and_feed():
    posts = [{"title": "Hi there", "body": "Body"}]
    assert index_lines(posts) == ["/posts/hi-there.html  Body"]
    assert feed_items(posts) == [{"id": "hi-there", "title": "Hi there", "summary": "Body"}]
