#!/bin/bash
sed -i 's/"Hello world"/"Hello, world!"/' /app/greet.py
