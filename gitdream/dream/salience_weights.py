"""The salience weights, as fitted by `python -m bench.fit_salience --write` (do not edit:
re-run the fit). Log-odds per feature of `gitdream.dream.salience.FEATURES`; the bias; the
default threshold (a probability).

Fitted on 1273 labelled entries of ../shared/quality/labels.jsonl that reach the engine;
l2 = 1024.0 (held-out log-loss), threshold = 0.325 (held-out F1).
fitted on Kit's daily logs (777 entries, 78 keep): training precision 0.79, recall 0.69; held out on
BookMinder's diary and the Claude Code transcripts (496, 77 keep): precision 0.71, recall 0.57.
fitted on BookMinder's diary and the Claude Code transcripts (496 entries, 77 keep): training
precision 0.71, recall 0.57; held out on Kit's daily logs (777, 78 keep): precision 0.79, recall
0.69.
fitted on all (1273 entries, 155 keep): precision 0.75, recall 0.63, 130 kept.
"""

from __future__ import annotations

BIAS = -1.78
THRESHOLD = 0.325
L2 = 1024.0
WEIGHTS: dict[str, float] = {
    "lesson-heading": 1.85,
    "lesson-heading-weak": 0.92,
    "lesson-label": 1.85,
    "lesson-label-weak": 0.92,
    "lead-in": 0.00,
    "lead-in-lesson": 0.93,
    "lead-in-plan": -0.92,
    "lead-in-status": -0.92,
    "artifact-heading": 0.92,
    "alert-heading": 0.92,
    "plan-heading": -1.85,
    "status-label": -0.92,
    "event-heading": -1.85,
    "reading": -1.85,
    "tagged": 3.69,
    "keep-cue": 3.69,
    "skip-cue": -3.69,
    "user": 0.00,
    "user-statement": 0.92,
    "assistant": -0.00,
    "output": -3.69,
    "tool-output": -1.84,
    "narration": -1.85,
    "narration-weak": -0.92,
    "question": -1.85,
    "fragment": -0.92,
    "short": -0.92,
    "recount": -0.92,
    "deictic": -0.92,
    "expectation": -3.69,
    "acknowledgement": -1.85,
    "session-request": -2.77,
    "rule": 1.84,
    "rule-weak": 0.92,
    "reason": 0.92,
    "procedure": 0.92,
    "correction": 1.84,
    "limit": 1.85,
    "preference": 1.85,
    "definition": 1.85,
    "definition-weak": 0.92,
    "reference": 1.85,
    "path": 0.47,
    "version": 1.85,
    "generic": 0.92,
    "contrast": 0.92,
    "behaviour": 0.92,
    "present": 0.46,
    "emphasis": 0.92,
    "status": -1.85,
    "momentary": -1.85,
    "counts": -1.85,
    "clock": -0.92,
    "time-bound": -2.77,
    "date": -0.92,
    "status-mark": -0.92,
    "id": -0.92,
    "activity": -1.85,
    "decision": 1.85,
    "speculation": -1.85,
    "past": -0.46,
    "first-person": -0.46,
    "plan": -3.69,
}
