"""The salience weights, as fitted by `python -m bench.fit_salience --write` (do not edit:
re-run the fit). Log-odds per feature of `gitdream.dream.salience.FEATURES`; the bias; the
default threshold (a probability).

Fitted on 1273 labelled entries of ../shared/quality/labels.jsonl that reach the engine;
l2 = 1024.0 (held-out log-loss), threshold = 0.325 (held-out F1).
fitted on Kit's daily logs (777 entries, 78 keep): training precision 0.79, recall 0.69; held out on
BookMinder's diary and the Claude Code transcripts (496, 77 keep): precision 0.73, recall 0.57.
fitted on BookMinder's diary and the Claude Code transcripts (496 entries, 77 keep): training
precision 0.73, recall 0.57; held out on Kit's daily logs (777, 78 keep): precision 0.79, recall
0.69.
fitted on all (1273 entries, 155 keep): precision 0.77, recall 0.63, 128 kept.
"""

from __future__ import annotations

BIAS = -1.77
THRESHOLD = 0.325
L2 = 1024.0
WEIGHTS: dict[str, float] = {
    "lesson-heading": 1.86,
    "lesson-heading-weak": 0.93,
    "lesson-label": 1.85,
    "lesson-label-weak": 0.93,
    "lead-in": 0.00,
    "lead-in-lesson": 0.93,
    "lead-in-plan": -0.93,
    "lead-in-status": -0.93,
    "artifact-heading": 0.93,
    "alert-heading": 0.93,
    "plan-heading": -1.86,
    "status-label": -0.93,
    "event-heading": -1.86,
    "reading": -1.86,
    "tagged": 3.71,
    "keep-cue": 3.71,
    "skip-cue": -3.71,
    "user": 0.00,
    "user-statement": 0.93,
    "assistant": -0.00,
    "output": -3.71,
    "tool-output": -1.85,
    "narration": -1.86,
    "narration-weak": -0.93,
    "question": -1.86,
    "fragment": -0.93,
    "short": -0.93,
    "recount": -0.93,
    "deictic": -0.93,
    "expectation": -3.71,
    "acknowledgement": -1.86,
    "session-request": -2.78,
    "rule": 1.85,
    "rule-weak": 0.93,
    "reason": 0.93,
    "procedure": 0.93,
    "correction": 1.85,
    "limit": 1.86,
    "preference": 1.86,
    "definition": 1.86,
    "definition-weak": 0.93,
    "reference": 1.86,
    "path": 0.47,
    "version": 1.86,
    "generic": 0.93,
    "contrast": 0.93,
    "behaviour": 0.93,
    "present": 0.46,
    "emphasis": 0.93,
    "status": -1.86,
    "momentary": -1.86,
    "counts": -1.86,
    "clock": -0.93,
    "time-bound": -2.78,
    "date": -0.93,
    "status-mark": -0.93,
    "id": -0.93,
    "activity": -1.86,
    "decision": 1.86,
    "speculation": -1.86,
    "past": -0.46,
    "first-person": -0.46,
    "plan": -3.71,
}
