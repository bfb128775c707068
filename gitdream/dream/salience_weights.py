"""The salience weights, as fitted by `python -m bench.fit_salience --write` (do not edit:
re-run the fit). Log-odds per feature of `gitdream.dream.salience.FEATURES`; the bias; the
default threshold (a probability).

Fitted on 1239 labelled entries of ../shared/quality/labels.jsonl that reach the engine;
l2 = 1024.0 (held-out log-loss), threshold = 0.35 (held-out F1).
fitted on Kit's daily logs (777 entries, 78 keep): training precision 0.79, recall 0.69; held out on
BookMinder's diary and the Claude Code transcripts (462, 77 keep): precision 0.79, recall 0.55.
fitted on BookMinder's diary and the Claude Code transcripts (462 entries, 77 keep): training
precision 0.79, recall 0.55; held out on Kit's daily logs (777, 78 keep): precision 0.79, recall
0.69.
fitted on all (1239 entries, 155 keep): precision 0.79, recall 0.62, 121 kept.
"""

from __future__ import annotations

BIAS = -1.70
THRESHOLD = 0.35
L2 = 1024.0
WEIGHTS: dict[str, float] = {
    "lesson-heading": 1.93,
    "lesson-heading-weak": 0.96,
    "lesson-label": 1.92,
    "lesson-label-weak": 0.96,
    "lead-in": 0.00,
    "lead-in-lesson": 0.96,
    "lead-in-plan": -0.96,
    "lead-in-status": -0.96,
    "artifact-heading": 0.96,
    "alert-heading": 0.96,
    "plan-heading": -1.93,
    "status-label": -0.96,
    "event-heading": -1.93,
    "reading": -1.93,
    "tagged": 3.85,
    "keep-cue": 3.85,
    "skip-cue": -3.85,
    "user": 0.00,
    "user-statement": 0.96,
    "assistant": -0.00,
    "output": -3.85,
    "tool-output": -1.92,
    "narration": -1.93,
    "narration-weak": -0.96,
    "question": -1.92,
    "fragment": -0.96,
    "short": -0.96,
    "recount": -0.96,
    "deictic": -0.96,
    "expectation": -3.85,
    "acknowledgement": -1.93,
    "session-request": -2.89,
    "rule": 1.92,
    "rule-weak": 0.96,
    "reason": 0.96,
    "procedure": 0.96,
    "correction": 1.92,
    "limit": 1.93,
    "preference": 1.93,
    "definition": 1.93,
    "definition-weak": 0.96,
    "reference": 1.93,
    "path": 0.48,
    "generic": 0.96,
    "contrast": 0.96,
    "behaviour": 0.96,
    "present": 0.48,
    "emphasis": 0.96,
    "status": -1.93,
    "momentary": -1.93,
    "counts": -1.93,
    "clock": -0.96,
    "time-bound": -2.89,
    "date": -0.96,
    "status-mark": -0.96,
    "id": -0.96,
    "activity": -1.93,
    "decision": 1.93,
    "speculation": -1.93,
    "past": -0.48,
    "first-person": -0.48,
    "plan": -3.85,
}
