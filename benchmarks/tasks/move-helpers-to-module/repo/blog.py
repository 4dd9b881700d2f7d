"""Print the blog's index: one line per post with its URL and a short teaser."""

import sys

from utils import read_json, slugify, truncate


def index_lines(posts):
    lines = []
    for post in posts:
        url = f"/posts/{slugify(post['title'])}.html"
        lines.append(f"{url}  {truncate(post['body'], 40)}")
    return lines


if __name__ == "__main__":
    posts = read_json(sys.argv[1] if len(sys.argv) > 1 else "posts.json")
    print("\n".join(index_lines(posts)))
