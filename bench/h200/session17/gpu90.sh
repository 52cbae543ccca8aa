#!/usr/bin/env bash
# Session 17 GPU run 1: session 16's run 3 (bench/h200/session16/gpu81.sh: adversarial, floor
# diagnostic, honest x0.1 and full size with plain timing, GPU hacks) on the current judge, to run
# session 16's last change (a baseline loses its own window overhead where larger) on the H200.
exec bash "$(dirname "$0")/../session16/gpu81.sh" "$@"
