#!/bin/bash
set -e
git am patches/0001-Add-Spanish-and-Italian-greetings.patch
git log --format='%h %an <%ae> %s' -2
