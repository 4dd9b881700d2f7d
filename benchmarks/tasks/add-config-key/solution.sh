#!/bin/bash
set -e
sed -i 's/    "database": "app",/    "database": "app",\n    "timeout": 30,/' settings.py
sed -i "s|/{settings\['database'\]}\"|/{settings['database']}?connect_timeout={settings['timeout']}\"|" db.py
python3 db.py settings.example.json
