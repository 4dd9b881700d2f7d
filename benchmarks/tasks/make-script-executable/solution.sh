#!/bin/bash
set -e
sed -i '1i #!/usr/bin/env python3' scripts/wordcount.py
chmod +x scripts/wordcount.py
echo "one two" | ./scripts/wordcount.py
