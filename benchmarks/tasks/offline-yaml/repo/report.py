"""Print who passed: the names in scores.csv whose score reaches the configured threshold."""

import csv

import yaml


def load_config(path: str = "config.yaml") -> dict:
    with open(path) as f:
        return yaml.safe_load(f)


def passed(scores_path: str, threshold: int) -> list[str]:
    with open(scores_path, newline="") as f:
        return [row["name"] for row in csv.DictReader(f) if int(row["score"]) >= threshold]


def main() -> None:
    config = load_config()
    names = passed(config["scores_file"], config["threshold"])
    print(f"{config['title']}: {len(names)} passed (threshold {config['threshold']})")
    for name in names:
        print(f"- {name}")


if __name__ == "__main__":
    main()
