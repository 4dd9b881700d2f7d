#!/bin/bash
set -e
sed -i 's/    def perimeter(self) -> float$/    def perimeter(self) -> float:/' shapes.py
sed -i 's/return math.pi \* self.radius \* 2/return math.pi * self.radius**2/' shapes.py
python3 -m pytest -q
