"""The salience weights, as fitted by `python -m bench.fit_salience --write` (do not edit:
re-run the fit). Log-odds per feature of `gitdream.dream.salience.FEATURES`; the bias; the
default threshold (a probability).

Fitted on 1273 labelled entries of ../shared/quality/labels.jsonl that reach the engine;
l2 = 1024.0 (held-out log-loss), threshold = 0.3 (held-out F1).
fitted on Kit's daily logs (777 entries, 78 keep): training precision 0.78, recall 0.68; held out on
BookMinder's diary and the Claude Code transcripts (496, 77 keep): precision 0.67, recall 0.56.
fitted on BookMinder's diary and the Claude Code transcripts (496 entries, 77 keep): training
precision 0.67, recall 0.56; held out on Kit's daily logs (777, 78 keep): precision 0.78, recall
0.68.
fitted on all (1273 entries, 155 keep): precision 0.73, recall 0.62, 132 kept.
"""

from __future__ import annotations

BIAS = -1.83
THRESHOLD = 0.3
L2 = 1024.0
WEIGHTS: dict[str, float] = {
    "lesson-heading": 1.83,
    "lesson-heading-weak": 0.91,
    "lesson-label": 1.83,
    "lesson-label-weak": 0.91,
    "lead-in": 0.00,
    "lead-in-lesson": 0.92,
    "lead-in-plan": -0.92,
    "lead-in-status": -0.91,
    "artifact-heading": 0.92,
    "alert-heading": 0.91,
    "plan-heading": -1.83,
    "status-label": -0.91,
    "event-heading": -1.83,
    "reading": -1.83,
    "tagged": 3.66,
    "keep-cue": 3.66,
    "skip-cue": -3.66,
    "user": 0.00,
    "user-statement": 0.91,
    "assistant": -0.00,
    "output": -3.66,
    "tool-output": -1.83,
    "narration": -1.83,
    "narration-weak": -0.91,
    "question": -1.83,
    "fragment": -0.92,
    "short": -0.92,
    "recount": -0.92,
    "deictic": -0.91,
    "rule": 1.83,
    "rule-weak": 0.91,
    "reason": 0.91,
    "procedure": 0.91,
    "correction": 1.83,
    "limit": 1.83,
    "preference": 1.83,
    "definition": 1.83,
    "definition-weak": 0.92,
    "reference": 1.83,
    "path": 0.46,
    "generic": 0.91,
    "contrast": 0.91,
    "behaviour": 0.91,
    "present": 0.45,
    "emphasis": 0.91,
    "status": -1.83,
    "momentary": -1.83,
    "counts": -1.83,
    "clock": -0.91,
    "date": -0.91,
    "status-mark": -0.91,
    "id": -0.92,
    "activity": -1.83,
    "decision": 1.83,
    "past": -0.46,
    "first-person": -0.46,
    "plan": -3.66,
}
