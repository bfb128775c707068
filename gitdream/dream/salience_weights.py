"""The salience weights, as fitted by `python -m bench.fit_salience --write` (do not edit:
re-run the fit). Log-odds per feature of `gitdream.dream.salience.FEATURES`; the bias; the
default threshold (a probability).

Fitted on 1273 labelled entries of ../shared/quality/labels.jsonl that reach the engine;
l2 = 1024.0 (held-out log-loss), threshold = 0.325 (held-out F1).
fitted on Kit's daily logs (777 entries, 78 keep): training precision 0.79, recall 0.69; held out on
BookMinder's diary and the Claude Code transcripts (496, 77 keep): precision 0.71, recall 0.55.
fitted on BookMinder's diary and the Claude Code transcripts (496 entries, 77 keep): training
precision 0.71, recall 0.55; held out on Kit's daily logs (777, 78 keep): precision 0.79, recall
0.69.
fitted on all (1273 entries, 155 keep): precision 0.76, recall 0.62, 127 kept.
"""

from __future__ import annotations

BIAS = -1.74
THRESHOLD = 0.325
L2 = 1024.0
WEIGHTS: dict[str, float] = {
    "lesson-heading": 1.82,
    "lesson-heading-weak": 0.91,
    "lesson-label": 1.81,
    "lesson-label-weak": 0.91,
    "lead-in": 0.00,
    "lead-in-lesson": 0.91,
    "lead-in-plan": -0.91,
    "lead-in-status": -0.91,
    "artifact-heading": 0.91,
    "alert-heading": 0.91,
    "plan-heading": -1.82,
    "status-label": -0.91,
    "event-heading": -1.82,
    "reading": -1.82,
    "tagged": 3.63,
    "keep-cue": 3.63,
    "skip-cue": -3.63,
    "user": 0.00,
    "user-statement": 0.91,
    "assistant": -0.00,
    "output": -3.63,
    "tool-output": -1.81,
    "narration": -1.82,
    "narration-weak": -0.91,
    "question": -1.81,
    "fragment": -0.91,
    "short": -0.91,
    "recount": -0.91,
    "deictic": -0.91,
    "expectation": -3.63,
    "session-request": -2.72,
    "rule": 1.81,
    "rule-weak": 0.91,
    "reason": 0.91,
    "procedure": 0.91,
    "correction": 1.81,
    "limit": 1.82,
    "preference": 1.82,
    "definition": 1.82,
    "definition-weak": 0.91,
    "reference": 1.82,
    "path": 0.46,
    "generic": 0.91,
    "contrast": 0.91,
    "behaviour": 0.91,
    "present": 0.45,
    "emphasis": 0.91,
    "status": -1.82,
    "momentary": -1.82,
    "counts": -1.82,
    "clock": -0.91,
    "time-bound": -2.72,
    "date": -0.91,
    "status-mark": -0.91,
    "id": -0.91,
    "activity": -1.82,
    "decision": 1.82,
    "past": -0.45,
    "first-person": -0.45,
    "plan": -3.63,
}
