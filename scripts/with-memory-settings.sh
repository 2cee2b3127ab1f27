#!/bin/sh
# Runs a tenure command (`npm start`, the Docker image's) with glibc's malloc set for its storage
# (docs/memory.md, "malloc"). On embedded storage (no DATABASE_URL) blocks of 32 KiB and more are
# given back to the system when freed: what V8's compilers freed after the start (PGlite's
# WebAssembly, ~35 MiB) does not stay with the process, at no cost in throughput. On PostgreSQL it
# saves nothing and costs ~15% of the requests a second (every socket read of 64 KiB becomes a
# map and an unmap), so it is left out there. A value of the operator's own is kept either way.
if [ -z "${DATABASE_URL:-}" ] && [ -z "${MALLOC_MMAP_THRESHOLD_+set}" ]; then
  export MALLOC_MMAP_THRESHOLD_=32768
fi
exec "$@"
