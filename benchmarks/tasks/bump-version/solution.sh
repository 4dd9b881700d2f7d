#!/bin/bash
set -e
sed -i 's/^version = "1.4.2"$/version = "1.5.0"/' pyproject.toml
sed -i 's/__version__ = "1.4.2"/__version__ = "1.5.0"/' weather/__init__.py
sed -i 's/1\.4\.2/1.5.0/g' README.md
sed -i '0,/^## 1.4.2$/s//## 1.5.0\n\n## 1.4.2/' CHANGELOG.md
python3 -m weather.cli --version
