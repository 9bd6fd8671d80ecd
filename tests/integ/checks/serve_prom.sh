#!/usr/bin/env bash
# The Prometheus of a serve case, in the case's directory DIR: a free port
# for serve and one for Prometheus (printed "SERVE_PORT PROM_PORT"), and a
# configuration scraping serve every second (DIR/prom.yml), as a user
# would point Prometheus at the agent.
#   serve_prom.sh DIR
set -euo pipefail
dir=$1
read -r sp pp < <(python3 -c 'import socket
a = socket.socket(); a.bind(("127.0.0.1", 0)); b = socket.socket(); b.bind(("127.0.0.1", 0))
print(a.getsockname()[1], b.getsockname()[1])')
cat > "$dir/prom.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: asyncscope
    static_configs:
      - targets: ['127.0.0.1:$sp']
YML
echo "$sp $pp"
