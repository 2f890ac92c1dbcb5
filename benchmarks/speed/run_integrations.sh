#!/usr/bin/env bash
# Time the harness integrations the way CI meets them — create each framework's virtualenv
# (.venv-inspect, .venv-ragas, .venv-deepeval: torch CPU, the default stack, the extra), run its
# tests — then run the README examples, and write benchmarks/results/speed/integrations.md.
#
#   benchmarks/speed/run_integrations.sh               # cold: removes the three virtualenvs first
#   KEEP_VENVS=1 benchmarks/speed/run_integrations.sh  # reuse them (times the tests and examples only)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=benchmarks/results/speed/integrations.md
LOG=$(mktemp -d)
export HF_HUB_OFFLINE=1 DEEPEVAL_TELEMETRY_OPT_OUT=1 RAGAS_DO_NOT_TRACK=true

secs() { local t0=$SECONDS; "$@" >"$LOG/cmd.out" 2>&1 || { cat "$LOG/cmd.out"; exit 1; }; echo $((SECONDS - t0)); }

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
rows=()
examples=()
total=0
for fw in inspect ragas deepeval; do
  [ -n "${KEEP_VENVS:-}" ] || rm -rf ".venv-$fw"
  t_venv=$(secs make -s ".venv-$fw/.installed")
  t_test=$(secs ".venv-$fw/bin/python" -m pytest -q -p no:cacheprovider \
    tests/integrations/test_common.py "tests/integrations/test_$fw.py")
  result=$(grep -E "passed|failed" "$LOG/cmd.out" | tail -1)
  t_ex=$(secs ".venv-$fw/bin/python" "examples/integrations/${fw}_example.py")
  grep -v "Loading weights" "$LOG/cmd.out" >"$LOG/$fw.example"
  dist=$(case $fw in inspect) echo inspect-ai;; *) echo $fw;; esac)
  ver=$(".venv-$fw/bin/python" -c "from importlib.metadata import version as v; print(v('$dist'), 'transformers', v('transformers'), 'rich', v('rich'), 'click', v('click'))")
  rows+=("| $fw | $ver | $t_venv | $t_test ($result) | $t_ex |")
  total=$((total + t_venv + t_test))
done

{
  echo "# Harness integrations: install and test time, README example output"
  echo
  echo "Command: \`benchmarks/speed/run_integrations.sh\`$([ -n "${KEEP_VENVS:-}" ] && echo ' with KEEP_VENVS=1 (virtualenvs reused)')"
  echo
  echo "Machine: $(nproc) CPU cores, $(awk '/MemTotal/{printf "%.0f", $2/1048576}' /proc/meminfo) GiB RAM, $(uname -sm), no GPU;"
  echo "Python $(python3 -c 'import platform; print(platform.python_version())'); $(date -u +%F). Load average at start: $load_start,"
  echo "at end: $(cut -d' ' -f1-3 /proc/loadavg) (the machine is shared with other engineers' runs)."
  echo
  echo "Seconds per framework: creating its virtualenv (\`make .venv-NAME/.installed\`: venv, pip, torch 2.13.0 CPU"
  echo "from local disk, \`.[default,dev,NAME]\` from the registry), its tests (test_common.py + test_NAME.py, models"
  echo "loaded once), and its README example."
  echo
  echo "| integration | versions installed | virtualenv s | tests s | example s |"
  echo "|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "Virtualenvs + tests together: **${total} s**."
  for fw in inspect ragas deepeval; do
    echo
    echo "## \`.venv-$fw/bin/python examples/integrations/${fw}_example.py\`"
    echo
    echo '```'
    cat "$LOG/$fw.example"
    echo '```'
  done
} >"$OUT"
rm -rf "$LOG"
echo "wrote $OUT"
