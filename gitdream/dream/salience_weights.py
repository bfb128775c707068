"""The salience weights, as fitted by `python -m bench.fit_salience --write` (do not edit:
re-run the fit). Log-odds per feature of `gitdream.dream.salience.FEATURES`; the bias; the
default threshold (a probability).

Fitted on 1273 labelled entries of ../shared/quality/labels.jsonl that reach the engine;
l2 = 1024.0 (held-out log-loss), threshold = 0.325 (held-out F1).
fitted on Kit's daily logs (777 entries, 78 keep): training precision 0.79, recall 0.69; held out on
BookMinder's diary and the Claude Code transcripts (496, 77 keep): precision 0.75, recall 0.55.
fitted on BookMinder's diary and the Claude Code transcripts (496 entries, 77 keep): training
precision 0.75, recall 0.55; held out on Kit's daily logs (777, 78 keep): precision 0.79, recall
0.69.
fitted on all (1273 entries, 155 keep): precision 0.77, recall 0.62, 124 kept.
"""

from __future__ import annotations

BIAS = -1.75
THRESHOLD = 0.325
L2 = 1024.0
WEIGHTS: dict[str, float] = {
    "lesson-heading": 1.88,
    "lesson-heading-weak": 0.94,
    "lesson-label": 1.88,
    "lesson-label-weak": 0.94,
    "lead-in": 0.00,
    "lead-in-lesson": 0.94,
    "lead-in-plan": -0.94,
    "lead-in-status": -0.94,
    "artifact-heading": 0.94,
    "alert-heading": 0.94,
    "plan-heading": -1.88,
    "status-label": -0.94,
    "event-heading": -1.88,
    "reading": -1.88,
    "tagged": 3.76,
    "keep-cue": 3.76,
    "skip-cue": -3.76,
    "user": 0.00,
    "user-statement": 0.94,
    "assistant": -0.00,
    "output": -3.76,
    "tool-output": -1.88,
    "narration": -1.88,
    "narration-weak": -0.94,
    "question": -1.88,
    "fragment": -0.94,
    "short": -0.94,
    "recount": -0.94,
    "deictic": -0.94,
    "expectation": -3.76,
    "acknowledgement": -1.88,
    "session-request": -2.82,
    "rule": 1.88,
    "rule-weak": 0.94,
    "reason": 0.94,
    "procedure": 0.94,
    "correction": 1.88,
    "limit": 1.88,
    "preference": 1.88,
    "definition": 1.88,
    "definition-weak": 0.94,
    "reference": 1.88,
    "path": 0.47,
    "generic": 0.94,
    "contrast": 0.94,
    "behaviour": 0.94,
    "present": 0.47,
    "emphasis": 0.94,
    "status": -1.88,
    "momentary": -1.88,
    "counts": -1.88,
    "clock": -0.94,
    "time-bound": -2.82,
    "date": -0.94,
    "status-mark": -0.94,
    "id": -0.94,
    "activity": -1.88,
    "decision": 1.88,
    "speculation": -1.88,
    "past": -0.47,
    "first-person": -0.47,
    "plan": -3.76,
}
