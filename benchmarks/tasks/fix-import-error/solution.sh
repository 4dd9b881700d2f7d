#!/bin/bash
set -e
sed -i 's/^from textutils import slugify$/from helpers.text import slugify/' app.py
python3 app.py "Hello World"
