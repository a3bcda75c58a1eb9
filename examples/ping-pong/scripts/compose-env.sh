#!/bin/sh
# Writes the env file docker-compose.yml loads: granary.env at the repo root (or the path given
# as $1), holding a fresh random GRANARY_SECRET that the nodes authenticate each other with.
# Run it once before `docker compose up`. The file is private (mode 600) and ignored by git and
# by the Docker build context: a secret never goes into the image or the repository.
set -eu
out="${1:-$(cd "$(dirname "$0")/../../.." && pwd)/granary.env}"
umask 077
secret=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
printf 'GRANARY_SECRET=%s\n' "$secret" > "$out"
echo "wrote $out"
