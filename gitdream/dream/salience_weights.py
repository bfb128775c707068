"""The salience weights, as fitted by `python -m bench.fit_salience --write` (do not edit:
re-run the fit). Log-odds per feature of `gitdream.dream.salience.FEATURES`; the bias; the
default threshold (a probability).

Fitted on 1273 labelled entries of ../shared/quality/labels.jsonl that reach the engine;
l2 = 1024.0 (held-out log-loss), threshold = 0.325 (held-out F1).
fitted on Kit's daily logs (777 entries, 78 keep): training precision 0.79, recall 0.69; held out on
BookMinder's diary and the Claude Code transcripts (496, 77 keep): precision 0.75, recall 0.56.
fitted on BookMinder's diary and the Claude Code transcripts (496 entries, 77 keep): training
precision 0.75, recall 0.56; held out on Kit's daily logs (777, 78 keep): precision 0.79, recall
0.69.
fitted on all (1273 entries, 155 keep): precision 0.78, recall 0.63, 125 kept.
"""

from __future__ import annotations

BIAS = -1.75
THRESHOLD = 0.325
L2 = 1024.0
WEIGHTS: dict[str, float] = {
    "lesson-heading": 1.89,
    "lesson-heading-weak": 0.95,
    "lesson-label": 1.89,
    "lesson-label-weak": 0.95,
    "lead-in": 0.00,
    "lead-in-lesson": 0.95,
    "lead-in-plan": -0.95,
    "lead-in-status": -0.94,
    "artifact-heading": 0.95,
    "alert-heading": 0.95,
    "plan-heading": -1.89,
    "status-label": -0.95,
    "event-heading": -1.89,
    "reading": -1.89,
    "tagged": 3.78,
    "keep-cue": 3.78,
    "skip-cue": -3.78,
    "user": 0.00,
    "user-statement": 0.95,
    "assistant": -0.00,
    "output": -3.78,
    "tool-output": -1.89,
    "narration": -1.89,
    "narration-weak": -0.95,
    "question": -1.89,
    "fragment": -0.95,
    "short": -0.95,
    "recount": -0.95,
    "deictic": -0.95,
    "expectation": -3.78,
    "acknowledgement": -1.89,
    "session-request": -2.84,
    "rule": 1.89,
    "rule-weak": 0.94,
    "reason": 0.95,
    "procedure": 0.95,
    "correction": 1.89,
    "limit": 1.89,
    "preference": 1.89,
    "definition": 1.89,
    "definition-weak": 0.95,
    "reference": 1.89,
    "path": 0.48,
    "generic": 0.94,
    "contrast": 0.94,
    "behaviour": 0.95,
    "present": 0.47,
    "emphasis": 0.95,
    "status": -1.89,
    "momentary": -1.89,
    "counts": -1.89,
    "clock": -0.94,
    "time-bound": -2.84,
    "date": -0.95,
    "status-mark": -0.95,
    "id": -0.95,
    "activity": -1.89,
    "decision": 1.89,
    "speculation": -1.89,
    "past": -0.47,
    "first-person": -0.47,
    "plan": -3.78,
}
