#!/bin/bash
set -e
python3 - <<'PY'
from pathlib import Path

utils = Path("utils.py").read_text()
start = utils.index("def slugify")
Path("textutils.py").write_text('"""Text helpers for the blog generator."""\n\nimport re\n\n\n' + utils[start:])
rest = utils[:start].rstrip() + "\n"
rest = rest.replace("import re\n", "")
Path("utils.py").write_text(rest)

blog = Path("blog.py").read_text()
blog = blog.replace("from utils import read_json, slugify, truncate", "from textutils import slugify, truncate\nfrom utils import read_json")
Path("blog.py").write_text(blog)

feed = Path("feed.py").read_text()
feed = feed.replace("import utils\n", "import textutils\nimport utils\n")
feed = feed.replace("utils.slugify(", "textutils.slugify(").replace("utils.truncate(", "textutils.truncate(")
Path("feed.py").write_text(feed)

test = Path("test_blog.py").read_text()
test = test.replace("from utils import slugify, truncate", "from textutils import slugify, truncate")
Path("test_blog.py").write_text(test)
PY
cat utils.py textutils.py
python3 blog.py
