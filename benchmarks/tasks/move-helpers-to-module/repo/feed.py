"""Write the RSS-like JSON feed of the blog."""

import sys

import utils


def feed_items(posts):
    return [
        {"id": utils.slugify(post["title"]), "title": post["title"], "summary": utils.truncate(post["body"])}
        for post in posts
    ]


if __name__ == "__main__":
    posts = utils.read_json(sys.argv[1] if len(sys.argv) > 1 else "posts.json")
    out = sys.argv[2] if len(sys.argv) > 2 else "build/feed.json"
    utils.write_json(out, {"items": feed_items(posts)})
    print(f"wrote {len(posts)} items to {out}")
