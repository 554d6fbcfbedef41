"""A scripted probe agent for ``cmd:`` (``python reciter.py ANSWERS.json [SLEEP_S]``).

Reads the probe question from ``$HOMEFIELD_PROMPT``, finds its commit message in ANSWERS.json
(``{message: answer}``) and prints the answer, then a usage line (cost 0.001 USD, tokens = words).
A prompt that is not a probe question (a run attempt) gets no answer and no edit. With SLEEP_S it
first sleeps that long while the file ``ANSWERS.json.slow`` exists: a test that interrupts a probe
mid-way creates it and removes it once the probe was cut, so the resumed probe (same agent spec)
runs at full speed.
"""

import json
import os
import sys
import time

answers = json.load(open(sys.argv[1], encoding="utf-8"))
if len(sys.argv) > 2 and os.path.exists(sys.argv[1] + ".slow"):
    time.sleep(float(sys.argv[2]))
prompt = os.environ.get("HOMEFIELD_PROMPT", "")
if "Commit message:\n" not in prompt:
    sys.exit(0)
message = prompt.split("Commit message:\n", 1)[1].split("\n\nSource files changed:", 1)[0].strip()
answer = answers.get(message, "")
print(answer)
print(json.dumps({"cost_usd": 0.001, "input_tokens": len(prompt.split()), "output_tokens": len(answer.split()),
                  "model": "reciter-1"}))
