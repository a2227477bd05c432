#!/usr/bin/env bash
# The action's script (action.yml): install the atlas from the action's own checkout, build its
# rules there, diagnose KB_LOGS, append the Markdown report to the job summary, set the verdict
# output, and exit as `kb diagnose --fail-on` does. Tested by tests/test_action.py.
set -euo pipefail

here="${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set: run this script from action.yml}"
logs="${KB_LOGS:?set the action input 'path' to the logs to diagnose}"
summary="${GITHUB_STEP_SUMMARY:-/dev/stdout}"
python="${KB_PYTHON:-python3}"

if [[ -z "${KB_SKIP_INSTALL:-}" ]]; then
  venv="${RUNNER_TEMP:-/tmp}/gpu-failure-atlas-venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$here"
  python="$venv/bin/python"
fi

rules="${RUNNER_TEMP:-/tmp}/gpu-failure-atlas-rules.json"
(cd "$here" && "$python" -m generator rules --output "$rules" >/dev/null)

read -r -a paths <<< "$logs"
args=(diagnose "${paths[@]}" --rules "$rules")
if [[ -n "${KB_FAIL_ON:-}" ]]; then
  args+=(--fail-on "$KB_FAIL_ON")
fi

status=0
report="$("$python" -m generator "${args[@]}" --format markdown)" || status=$?
if [[ $status -gt 1 ]]; then
  echo "kb diagnose could not run (exit $status)" >&2
  exit "$status"
fi
printf '%s\n' "$report" >> "$summary"
verdict="$("$python" -m generator diagnose "${paths[@]}" --rules "$rules" --format json --jobs 1 \
  | "$python" -c 'import json, sys; print(json.load(sys.stdin)["verdict"])')"
if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
  echo "verdict=$verdict" >> "$GITHUB_OUTPUT"
fi
echo "GPU Failure Atlas: $verdict"
exit "$status"
