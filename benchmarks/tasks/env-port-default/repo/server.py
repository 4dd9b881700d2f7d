"""Serve the files of the current directory over HTTP."""

from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

HOST = "127.0.0.1"
PORT = 8000


def get_address() -> tuple[str, int]:
    """The (host, port) the server listens on."""
    return (HOST, PORT)


def main() -> None:
    address = get_address()
    with ThreadingHTTPServer(address, SimpleHTTPRequestHandler) as httpd:
        print(f"serving on http://{address[0]}:{address[1]}/")
        httpd.serve_forever()


if __name__ == "__main__":
    main()
