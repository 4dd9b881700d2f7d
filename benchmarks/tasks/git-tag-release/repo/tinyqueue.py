"""A tiny persistent job queue backed by a JSON-lines file."""

import json

__version__ = "0.3.0"


class Queue:
    def __init__(self, path):
        self.path = path

    def push(self, job: dict) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(job) + "\n")

    def pop_all(self) -> list[dict]:
        try:
            with open(self.path, encoding="utf-8") as f:
                jobs = [json.loads(line) for line in f if line.strip()]
        except FileNotFoundError:
            return []
        open(self.path, "w").close()
        return jobs
