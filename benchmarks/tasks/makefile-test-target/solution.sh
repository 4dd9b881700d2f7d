#!/bin/bash
set -e
sed -i 's/^\.PHONY: run clean$/.PHONY: run test clean/' Makefile
sed -i 's/^clean:$/test:\n\t$(PYTHON) -m unittest -v\n\nclean:/' Makefile
cat Makefile
