"""A minimal static file server for the public/ folder.

Usage: python3 fileserver.py [PORT]
"""

import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import unquote

PUBLIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "public")
TYPES = {".html": "text/html", ".css": "text/css", ".txt": "text/plain"}


def handle(url_path, root=PUBLIC):
    """Answer a GET request for `url_path` with files from the `root` folder.

    Returns (status, body): (200, file contents) or (404, b"not found").
    "/" and folder paths serve the folder's index.html.
    """
    rel = unquote(url_path.split("?", 1)[0]).lstrip("/")
    path = os.path.join(root, rel)
    if os.path.isdir(path):
        path = os.path.join(path, "index.html")
    if not os.path.isfile(path):
        return 404, b"not found"
    with open(path, "rb") as f:
        return 200, f.read()


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        status, body = handle(self.path)
        self.send_response(status)
        ext = os.path.splitext(self.path.split("?", 1)[0])[1]
        self.send_header("Content-Type", TYPES.get(ext, "text/html") if status == 200 else "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8000
    HTTPServer(("127.0.0.1", port), Handler).serve_forever()
